"""`ina run` and the Aggregation API against ina's switch answering P4Runtime as simple_switch_grpc
(`--p4runtime-compat simple_switch_grpc`): the controller must work on BMv2's P4Runtime surface
(no register reads or writes, PI's election), checked in CI without BMv2."""

import subprocess
import sys

import pytest

from ina.controller.aggregation import Aggregation
from ina.controller.client import SwitchConnection, UnsupportedError
from ina.topologies.net import Network
from ina.topologies.runner import RunOptions, compile_program, run
from ina.topologies.topo import load
from ina.topologies.topology_setup import program_topology

COMPAT = "simple_switch_grpc"


@pytest.mark.parametrize(
    ("workers", "dtype", "loss", "jobs"),
    [
        (2, "int32", 0.01, 1),
        (4, "float32", None, 2),
    ],
)
def test_run_against_simple_switch_grpc_surface_is_verified(tmp_path, workers, dtype, loss, jobs):
    result = run(
        RunOptions(
            workers=workers,
            dtype=dtype,
            loss=loss,
            jobs=jobs,
            size=2048,
            elems=16,
            pool_size=256,
            slots=32,
            run_dir=str(tmp_path),
            p4runtime_compat=COMPAT,
        )
    )
    assert result.ok, (result.workers, result.switch_stats)
    assert sorted((w["job"], w["elements"]) for w in result.workers) == sorted(
        (i % jobs, 2048) for i in range(workers)
    )
    assert f"P4Runtime as {COMPAT}" in (tmp_path / "s1.log").read_text()


def _allreduce(
    net: Network, job_id: int, epoch: int, hosts: list[str]
) -> list[subprocess.CompletedProcess]:
    procs = [
        net.host(h).popen(
            [
                sys.executable,
                "-m",
                "ina",
                "worker",
                "--job",
                str(job_id),
                "--rank",
                str(rank),
                "--workers",
                str(len(hosts)),
                "--switch",
                "10.0.255.254",
                "--size",
                "512",
                "--elems",
                "16",
                "--window",
                "8",
                "--epoch",
                str(epoch),
                "--seed",
                str(job_id),
                "--verify",
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank, h in enumerate(hosts)
    ]
    return [
        subprocess.CompletedProcess(p.args, p.wait(timeout=120), *p.communicate()) for p in procs
    ]


def test_add_remove_add_on_the_same_slots(tmp_path):
    """A job runs, is removed, and another job on the same (now dirty) slots runs correctly:
    no register write is needed, and slot state says it cannot be read instead of failing later."""
    topo = load("star", workers=2, slots=8)
    bmv2, p4info = compile_program("builtin", 16, 64, tmp_path)
    net = Network(topo, str(tmp_path), run_id="test-compat", p4runtime_compat=COMPAT)
    try:
        net.start()
        [first] = program_topology(topo, bmv2, p4info)["s1"]
        assert [d.returncode for d in _allreduce(net, first.job_id, first.epoch, ["h1", "h2"])] == [
            0,
            0,
        ]
        with SwitchConnection(topo.switches["s1"].grpc, election_id=1) as conn:
            agg = Aggregation(conn)
            agg.remove_job(first.job_id)
            assert agg.jobs() == []
            second = agg.add_job(7, first.workers, first.num_slots)
            assert (second.base, second.num_slots) == (first.base, first.num_slots)
            assert second.epoch != first.epoch
            with pytest.raises(UnsupportedError, match="RegisterEntry reads"):
                agg.slot(7, 0, 0)
        done = _allreduce(net, 7, second.epoch, ["h1", "h2"])
        assert [d.returncode for d in done] == [0, 0], [d.stderr[-500:] for d in done]
        with SwitchConnection(topo.switches["s1"].grpc, election_id=None) as conn:
            stats = Aggregation(conn).stats()["jobs"]
        assert stats[7]["accepted"] == 2 * 512 // 16 and "wrong_epoch" not in stats[7]
    finally:
        net.stop()
