"""sim/best_effort.py: two best-effort jobs on one pool too small for both (each asks for all 8
slots), each with a host fallback server: the second shares the first's range, the chunks whose
slot/set the other job holds are summed by the servers, and every rank's sum is exact, with and
without loss (docs/protocol.md, "Best effort and the host fallback")."""

import numpy as np
import pytest

from ina.hosts.baseline import ServerCore
from ina.hosts.packets import datagram, parse_header
from ina.p4src.protocol import MSG_RESULT, MSG_STATUS, MSG_UPDATE
from ina.sim.best_effort import best_effort_run, main


@pytest.mark.parametrize("loss", [0.0, 0.05])
def test_two_jobs_on_a_pool_too_small_for_both_get_exact_sums_through_the_host(loss):
    outcomes = best_effort_run(jobs=2, workers=2, slots=8, pool_size=8, size=2048, loss=loss)
    assert [(o.job, o.base, o.num_slots, o.chunks) for o in outcomes] == [
        (0, 0, 8, 256),
        (1, 0, 8, 256),  # no free slot: the request itself, at the base job 1 hashes to
    ]
    assert all(o.exact for o in outcomes)
    # both jobs fell back on slots the other held, and neither lost the switch altogether
    assert all(0 < o.host_sums < o.chunks for o in outcomes)


def test_the_fallback_server_replaces_a_use_it_never_completed():
    """The switch completed that use; the baseline server refuses a later round over it."""
    values = np.arange(8)

    def update(rank: int, round_: int) -> bytes:
        return datagram(MSG_UPDATE, 7, values, rank=rank, job=1, round_=round_)

    for fallback, answer in ((True, None), (False, MSG_STATUS)):
        server = ServerCore(1, 2, 7, elems=8, fallback=fallback)
        assert server.handle(update(0, 0), ("10.0.0.1", 1)) == []  # round 0: rank 0 alone
        answers = server.handle(update(0, 2), ("10.0.0.1", 1))  # round 2 of the same set
        assert [parse_header(a).msg_type for a, _ in answers] == ([answer] if answer else [])
    server = ServerCore(1, 2, 7, elems=8, fallback=True)
    server.handle(update(0, 0), ("10.0.0.1", 1))
    server.handle(update(0, 2), ("10.0.0.1", 1))
    done = server.handle(update(1, 2), ("10.0.0.2", 1))
    assert [(parse_header(a).msg_type, parse_header(a).round, to) for a, to in done] == [
        (MSG_RESULT, 2, ("10.0.0.1", 1)),
        (MSG_RESULT, 2, ("10.0.0.2", 1)),
    ]


def test_the_command_prints_each_job_and_a_job_on_fewer_slots_never_falls_back(capsys):
    # 12 slots: job 1 gets the 4 left (half its request), its own: nothing to fall back from
    assert main(["--pool-size", "12", "--size", "1024"]) == 0
    assert capsys.readouterr().out == (
        "job  base  slots  chunks  host-summed  host share  exact\n"
        "0    0     8      128     0            0.000       yes\n"
        "1    8     4      128     0            0.000       yes\n"
    )
    with pytest.raises(SystemExit) as bad:
        main(["--jobs", "17"])
    assert bad.value.code == 2
    assert "argument --jobs: expected an integer in 1..16, got '17'" in capsys.readouterr().err
