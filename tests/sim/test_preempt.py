"""Priority preemption (controller/pool.py `preempt`, sim/preempt.py): the victim chosen, the pool
left unchanged on refusal, and packet by packet the high job starting within one of the low job's
iterations with every sum exact, the low job shrunk or, with a host fallback server, gone to it."""

import pytest

from ina.controller.aggregation import Aggregation, Fallback, Worker
from ina.controller.allocators import PoolFull, Range, plan_preemption
from ina.controller.client import ControllerError
from ina.controller.pool import admit_preempting, preempt
from ina.hosts.inprocess import InProcessSwitch
from ina.sim.preempt import main, preemption_run


def test_the_victim_is_the_shortest_range_longer_than_the_request_and_keeps_its_lower_part():
    victims = {1: Range(0, 8), 2: Range(8, 6), 3: Range(14, 2)}
    assert plan_preemption(victims, 4) == (2, Range(8, 2), Range(10, 4))
    assert plan_preemption(victims, 6) == (1, Range(0, 2), Range(2, 6))
    with pytest.raises(PoolFull, match="no job of lower priority holds more than 8 slots"):
        plan_preemption(victims, 8)  # a victim keeps at least one slot
    # ... unless it has a host fallback server: then it may give all, exactly the request
    assert plan_preemption(victims, 8, hosted={1, 2}) == (1, None, Range(0, 8))
    assert plan_preemption(victims, 2, hosted={3}) == (2, Range(8, 4), Range(12, 2))  # shrink first
    assert plan_preemption({4: Range(6, 2), 3: Range(14, 2), 5: Range(0, 2)}, 2, {3, 4}) == (
        4,
        None,
        Range(6, 2),
    )
    with pytest.raises(PoolFull, match="nor exactly 8 with a host fallback server"):
        plan_preemption(victims, 8, hosted={2, 3})  # 6 and 2 slots: too few to give


def test_preempt_moves_the_victim_with_a_fresh_epoch_and_refuses_changing_nothing():
    with InProcessSwitch(elems=8, pool_size=8, engine="python", record=False) as net:
        agg: Aggregation = net.controller
        agg.add_job(0, [Worker(0, 1, "02:00:00:00:00:01", "10.0.0.1")], 8, epoch=0x11)
        with pytest.raises(ControllerError, match="no job 5 on this switch"):
            preempt(agg, [5], 4)
        with pytest.raises(PoolFull):
            preempt(agg, [0], 8)
        assert [(j.base, j.num_slots, j.epoch) for j in agg.jobs()] == [(0, 8, 0x11)]
        done = preempt(agg, [0], 3)
        moved = done.victim
        assert (moved.base, moved.num_slots, done.freed, done.on_host) == (0, 5, Range(5, 3), False)
        assert moved.epoch != 0x11
        assert [(j.base, j.num_slots, j.epoch) for j in agg.jobs()] == [(0, 5, moved.epoch)]


def test_a_victim_with_a_fallback_server_leaves_the_switch_and_a_failed_admission_restores_it():
    """`preempt` removes a victim giving all its slots (its run goes on at its server with a fresh
    epoch); `admit_preempting` puts the victim back as it was when the new job's add fails."""
    with InProcessSwitch(elems=8, pool_size=8, engine="python", record=False) as net:
        agg: Aggregation = net.controller
        w0 = Worker(0, 1, "02:00:00:00:00:01", "10.0.0.1")
        server = Fallback(5, "02:cc:00:00:00:05", "10.0.0.100", 40000)
        agg.add_job(1, [w0], 4, epoch=0x11, fallback=server)
        agg.add_job(2, [w0], 4, epoch=0x12)
        before = agg.jobs()
        bad = [Worker(1, 2, "02:00:00:00:00:02", "10.0.0.2")]  # rank 1 alone: add_job refuses it
        for want in (2, 4):  # the victim shrunk, or gone to its server: put back either way
            with pytest.raises(ControllerError, match=r"worker ranks must be 0..0, each once"):
                admit_preempting(agg, [1, 2], 3, bad, want)
            assert agg.jobs() == before
        fallbacks = agg.conn.read_table("InaIngress.job_fallback")
        assert [e.params["udp_port"] for e in fallbacks] == [40000]
        with pytest.raises(ControllerError, match="job 2 already exists"):
            admit_preempting(agg, [1], 2, [w0], 4)
        assert agg.jobs() == before
        done, job = admit_preempting(agg, [1, 2], 3, [w0], 4, epoch=0x13)
        assert (done.on_host, done.was, done.freed) == (True, before[0], Range(0, 4))
        assert done.victim.epoch not in (0, 0x11) and done.victim.fallback == server
        assert [(j.job_id, j.base, j.num_slots, j.epoch) for j in agg.jobs()] == [
            (2, 4, 4, 0x12),
            (3, 0, 4, 0x13),
        ]
        assert (job.base, job.num_slots) == (0, 4)
        assert agg.conn.read_table("InaIngress.job_fallback") == []


def test_the_high_job_starts_within_one_iteration_and_every_sum_stays_exact():
    o = preemption_run(size=512, iterations=2, engine="python", loss=0.02, seed=3)
    assert (o.low_before, o.low_after, o.high, o.host_sums) == ((0, 8), (0, 4), (4, 4), 0)
    assert o.exact
    assert 0 < o.delay_iterations <= 1


def test_a_job_preempted_onto_its_host_fallback_server_keeps_every_sum_exact():
    """The high job takes the whole pool; the low job's every chunk of its two later iterations
    (64 each) is summed by its server, exact under 2% loss."""
    o = preemption_run(
        size=512, iterations=2, engine="python", loss=0.02, seed=3, high_slots=8, host_fallback=True
    )
    assert (o.low_before, o.low_after, o.high, o.host_sums) == ((0, 8), None, (0, 8), 128)
    assert o.exact
    assert 0 < o.delay_iterations <= 1


def test_the_cli_refuses_a_high_job_as_large_as_the_pool(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--pool-size", "8", "--high-slots", "8"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "python -m ina.sim.preempt: error: argument --high-slots: expected an integer in 1..7 "
        "(below --pool-size: without --host-fallback the preempted job keeps at least one slot), "
        "got 8"
    )
    with pytest.raises(SystemExit) as exit_:
        main(["--pool-size", "8", "--high-slots", "9", "--host-fallback"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "python -m ina.sim.preempt: error: argument --high-slots: expected an integer in 1..8 "
        "(at most --pool-size), got 9"
    )
