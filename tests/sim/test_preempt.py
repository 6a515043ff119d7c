"""Priority preemption (controller/pool.py `preempt`, sim/preempt.py): the victim chosen, the pool
left unchanged on refusal, and packet by packet the high job starting within one of the low job's
iterations with every sum exact."""

import pytest

from ina.controller.aggregation import Aggregation, Worker
from ina.controller.allocators import PoolFull, Range, plan_preemption
from ina.controller.client import ControllerError
from ina.controller.pool import preempt
from ina.hosts.inprocess import InProcessSwitch
from ina.sim.preempt import main, preemption_run


def test_the_victim_is_the_shortest_range_longer_than_the_request_and_keeps_its_lower_part():
    victims = {1: Range(0, 8), 2: Range(8, 6), 3: Range(14, 2)}
    assert plan_preemption(victims, 4) == (2, Range(8, 2), Range(10, 4))
    assert plan_preemption(victims, 6) == (1, Range(0, 2), Range(2, 6))
    with pytest.raises(PoolFull, match="no job of lower priority holds more than 8 slots"):
        plan_preemption(victims, 8)  # a victim keeps at least one slot


def test_preempt_moves_the_victim_with_a_fresh_epoch_and_refuses_changing_nothing():
    with InProcessSwitch(elems=8, pool_size=8, engine="python", record=False) as net:
        agg: Aggregation = net.controller
        agg.add_job(0, [Worker(0, 1, "02:00:00:00:00:01", "10.0.0.1")], 8, epoch=0x11)
        with pytest.raises(ControllerError, match="no job 5 on this switch"):
            preempt(agg, [5], 4)
        with pytest.raises(PoolFull):
            preempt(agg, [0], 8)
        assert [(j.base, j.num_slots, j.epoch) for j in agg.jobs()] == [(0, 8, 0x11)]
        moved, freed = preempt(agg, [0], 3)
        assert (moved.base, moved.num_slots, freed) == (0, 5, Range(5, 3))
        assert moved.epoch != 0x11
        assert [(j.base, j.num_slots, j.epoch) for j in agg.jobs()] == [(0, 5, moved.epoch)]


def test_the_high_job_starts_within_one_iteration_and_every_sum_stays_exact():
    o = preemption_run(size=512, iterations=2, engine="python", loss=0.02, seed=3)
    assert (o.low_before, o.low_after, o.high) == ((0, 8), (0, 4), (4, 4))
    assert o.exact
    assert 0 < o.delay_iterations <= 1


def test_the_cli_refuses_a_high_job_as_large_as_the_pool(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--pool-size", "8", "--high-slots", "8"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "python -m ina.sim.preempt: error: argument --high-slots: expected an integer in 1..7 "
        "(below --pool-size: the preempted job keeps at least one slot), got 8"
    )
