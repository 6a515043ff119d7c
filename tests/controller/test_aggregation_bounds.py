"""controller/aggregation.py at the exact limits its mutants showed untested (scripts/mutation.py,
#35): range checks at both ends with their messages, int32 register values, the flood group
rewritten, and what its records refuse."""

import argparse
import dataclasses

import pytest
from test_aggregation import SWITCH_IP, SWITCH_MAC, W0, W1, switch, update_packet  # noqa: F401

from ina.controller.aggregation import Aggregation, BurstLoss, SlotState
from ina.controller.allocators import ALLOCATORS, allocator
from ina.controller.client import ControllerError
from ina.p4src.protocol import EPOCH_MAX, FLOOD_GROUP, MAX_JOBS


def test_job_ids_and_epochs_are_taken_to_their_last_value_and_refused_past_it(switch):  # noqa: F811
    _sw, conn, _ = switch
    agg = Aggregation(conn)
    assert agg.add_job(MAX_JOBS - 1, [W0], num_slots=1, epoch=EPOCH_MAX).epoch == EPOCH_MAX
    assert agg.reset_job(MAX_JOBS - 1, epoch=1).epoch == 1
    assert agg.reset_job(MAX_JOBS - 1, epoch=EPOCH_MAX).epoch == EPOCH_MAX
    refusals = [
        (lambda: agg.add_job(MAX_JOBS, [W0], 1, epoch=5), "job id 256 is out of range 0..255"),
        (lambda: agg.add_job(-1, [W0], 1, epoch=5), "job id -1 is out of range 0..255"),
        (lambda: agg.add_job(0, [W0], 1, epoch=0), "epoch 0 is out of range 1..4294967295"),
        (
            lambda: agg.add_job(0, [W0], 1, epoch=EPOCH_MAX + 1),
            "epoch 4294967296 is out of range 1..4294967295",
        ),
        (lambda: agg.reset_job(MAX_JOBS - 1, epoch=0), "epoch 0 is out of range 1..4294967295"),
        (
            lambda: agg.reset_job(MAX_JOBS - 1, epoch=EPOCH_MAX + 1),
            "epoch 4294967296 is out of range 1..4294967295",
        ),
    ]
    for call, message in refusals:
        with pytest.raises(ControllerError) as err:
            call()
        assert str(err.value) == message
    assert agg.add_job(0, [W0], num_slots=1, epoch=1).epoch == 1
    assert [(j.job_id, j.epoch) for j in agg.jobs()] == [(0, 1), (MAX_JOBS - 1, EPOCH_MAX)]


def test_a_job_without_its_jobs_entry_is_not_listed_and_hides_no_other_jobs_workers(
    switch,  # noqa: F811
):
    """Admission entries whose job has no jobs entry (another controller's, or a removal cut short)
    are skipped, and the workers read after them still join their jobs."""
    _sw, conn, _ = switch
    agg = Aggregation(conn)
    agg.add_job(0, [W0], num_slots=1, epoch=1)
    agg.add_job(1, [W0, W1], num_slots=1, epoch=2)
    conn.delete("InaIngress.jobs", {"hdr.agg.job_id": 0})
    assert [(j.job_id, [w.rank for w in j.workers]) for j in agg.jobs()] == [(1, [0, 1])]


@pytest.mark.parametrize("name", ALLOCATORS)
def test_a_job_of_no_slots_is_refused_by_every_allocator(name):
    place = allocator(name).place
    with pytest.raises(ControllerError) as err:
        place([], 0, 16)
    assert str(err.value) == "a job needs at least one slot"
    assert place([], 1, 16).base == 0


def test_slot_state_reads_int32_sums_and_refuses_slots_and_sets_out_of_range(switch):  # noqa: F811
    sw, conn, _ = switch
    agg = Aggregation(conn)
    agg.set_switch_address(SWITCH_MAC, SWITCH_IP)
    agg.add_job(3, [W0, W1], num_slots=2, epoch=0x77)
    edge = [-1, -(2**31), 2**31 - 1, 2**30, -(2**30), 0, 1, -2]
    assert sw.process(W0.port, update_packet(W0, 3, 0, edge, 0x77)) == []
    state = agg.slot(3, 0, 0)
    assert (state.values, state.count, state.bitmap) == (edge, 1, 0b1)
    assert agg.slot(3, 1, 1).values == [0] * 8
    for index, pool_set, message in [
        (-1, 0, "job 3 has slots 0..1; -1 is out of range"),
        (2, 0, "job 3 has slots 0..1; 2 is out of range"),
        (0, 2, "the set is 0 or 1"),
        (0, -1, "the set is 0 or 1"),
    ]:
        with pytest.raises(ControllerError) as err:
            agg.slot(3, index, pool_set)
        assert str(err.value) == message
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.count = 0  # type: ignore[misc]
    assert isinstance(state, SlotState)


def test_the_flood_group_is_created_then_rewritten(switch):  # noqa: F811
    _sw, conn, _ = switch
    agg = Aggregation(conn)
    agg.install_forwarding([(W0.mac, W0.port)], flood_ports=[1, 2])
    assert conn.read_multicast_groups()[FLOOD_GROUP] == [(1, 0), (2, 0)]
    agg.install_forwarding([(W1.mac, W1.port)], flood_ports=[3])
    assert conn.read_multicast_groups()[FLOOD_GROUP] == [(3, 0)]


def test_a_bad_burst_model_is_shown_whole_up_to_40_characters_and_models_are_frozen():
    exact, longer = "0.1," * 9 + "0.1x", "0.1," * 10 + "1"
    assert (len(exact), len(longer)) == (40, 41)
    for text, shown in [(exact, exact), (longer, longer[:40] + "...")]:
        with pytest.raises(argparse.ArgumentTypeError) as err:
            BurstLoss.parse(text)
        assert str(err.value) == (
            f"expected GOOD,BAD,P_GB,P_BG: four numbers in [0.0, 1.0], got {shown!r}"
        )
    model = BurstLoss.parse("0,0.5,0.01,0.2")
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.p_gb = 1.0  # type: ignore[misc]
