"""bench/pool_emu.py's steps against the in-process switch over gRPC, its workers stubbed and its
`ina ctl` commands run in this process (the Mininet run, with `ina ctl` processes, is
tests/e2e/test_pool_emu.py): every command it makes succeeds, the jobs
read back equal the view the commands' answers built after every step, and each step's jobs run
with the epochs, servers and windows the switch holds, job 0 through its server once preempted
onto it."""

import contextlib
import io
import json

from ina.bench.pool_emu import STEPS, churn_scenario, placements
from ina.controller.cli import main as ctl_main
from ina.topologies.runner import RunOptions
from ina.topologies.topo import load


def test_the_steps_keep_the_switch_equal_to_the_view_and_run_each_job_where_it_is(
    served, monkeypatch
):
    conn, address = served  # a pool of 16 slots: "all" is 16, "half" 8
    conn.close()  # the scenario's commands take the primary, as after ina run's programming
    topo = load("star", 6, 3, slots=16, extra_host=True).with_grpc({"s1": address})
    runs = []

    def run_workers(network, topo, opts, epochs, run_dir, fallbacks, slots, on_host):
        runs.append(
            (
                [j.id for j in topo.jobs],
                {j: e != 0 for j, e in epochs.items()},
                sorted(fallbacks),
                slots,
                sorted(on_host),
            )
        )
        return [{"job": j.id, "verified": True, "elapsed_s": 0.5} for j in topo.jobs]

    monkeypatch.setattr("ina.bench.pool_emu.run_workers", run_workers)

    def in_process(argv: list[str]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert ctl_main(argv) == 0
        return json.loads(out.getvalue())

    record: list[dict] = []
    reports = churn_scenario(RunOptions(), record, in_process)(None, topo, None)
    assert [r["step"] for r in reports] == [1, 2, 2, 3, 3, 3, 4, 4]
    assert [row["read_back_equal"] for row in record] == [True] * len(STEPS)
    assert [placements(row) for row in record] == [
        {0: (0, 16, False)},
        {0: (0, 8, False), 1: (8, 8, False)},
        {0: (0, 8, True), 1: (8, 8, False), 2: (0, 8, False)},
        {0: (8, 8, False), 2: (0, 8, False)},
        {},
    ]
    assert runs == [
        ([0], {0: True}, [0], {0: 16}, []),
        ([0, 1], {0: True, 1: True}, [0], {0: 8, 1: 8}, []),
        ([0, 1, 2], {0: True, 1: True, 2: True}, [0], {0: 8, 1: 8, 2: 8}, [0]),
        ([0, 2], {0: True, 2: True}, [0], {0: 8, 2: 8}, []),
    ]
    assert record[-1]["pool"]["used"] == 0
