"""Narrow lanes end to end: 32 workers' cores against the real switch built with -DLANE_BITS=16 or 8
(both engines), values chosen to saturate the first pass's lanes, and every rank's result bit-exact
against a numpy model of the codec: first pass at ceil(sqrt(n)) workers' headroom, the saturated
chunks redone at n's."""

import numpy as np
import pytest

from ina.hosts import cli
from ina.hosts.core import AllReduceCore, WorkerError
from ina.hosts.inprocess import RESULT, UPDATE, Drop, InProcessSwitch
from ina.hosts.quantize import chunk_exponents, headroom, lane_max, quantize, scale_for
from ina.p4src.protocol import Policy, lane_values

WORKERS = 32
ELEMS = 8  # the switch's 32-bit words per packet


def arrays(bits: int, seed: int = 5) -> list[np.ndarray]:
    """Four chunks per worker: all positive and near the chunk's maximum (saturates), rank 0's one
    large value among tiny ones (cannot saturate in any order), all negative (saturates), zeros."""
    values = lane_values(ELEMS, bits)
    rng = np.random.default_rng(seed)
    out = []
    for rank in range(WORKERS):
        a = np.zeros(4 * values)
        a[:values] = 0.5 + 0.4 * rng.random(values)
        a[values : 2 * values] = 0.01 * rng.standard_normal(values).clip(-1, 1)
        if rank == 0:
            a[values] = 1.0
        a[2 * values : 3 * values] = -(0.5 + 0.4 * rng.random(values))
        out.append(a)
    return out


def model(
    arrays: list[np.ndarray], bits: int, entered: list[int] | None = None
) -> tuple[np.ndarray, int]:
    """The sum every rank must get, of the ranks `entered` (default all: the job's n sets the
    scales either way), and how many chunks were redone. A chunk is redone when its exact
    first-pass sum leaves the lane: the cases above never pass a lane's limit part way."""
    n = len(arrays)
    ranks = range(n) if entered is None else entered
    chunks = np.stack([a.reshape(-1, lane_values(ELEMS, bits)) for a in arrays])
    exponents = np.max([chunk_exponents(chunks[r]) for r in ranks], axis=0)
    room, redone, out = headroom(n, bits), 0, []
    for c, e in enumerate(exponents.tolist()):
        scale = scale_for(e, room, bits)
        total = sum(quantize(chunks[r, c], scale) for r in ranks)
        if np.abs(total).max() > lane_max(bits):
            redone += 1
            scale = scale_for(e, n, bits)
            total = sum(quantize(chunks[r, c], scale) for r in ranks)
        out.append(total.astype(np.float64) / scale)
    return np.concatenate(out), redone


@pytest.mark.parametrize("engine", ["native", "python"])
@pytest.mark.parametrize("bits", [16, 8])
def test_saturated_chunks_are_redone_and_every_sum_is_exact(engine: str, bits: int) -> None:
    data = arrays(bits)
    expected, redone = model(data, bits)
    assert redone == 2  # the positive and the negative chunk
    with InProcessSwitch(elems=ELEMS, engine=engine, bits=bits) as net:
        net.add_job(0, WORKERS, window=4)
        results = net.allreduce({0: data})
        for got in results[0]:
            assert np.array_equal(got, expected)
        assert [m.core.stats.redone for m in net.jobs[0]] == [redone] * WORKERS
        # each redo is one more use of its slot: one UPDATE per worker, one RESULT multicast
        assert [m.core.stats.packets_sent for m in net.jobs[0]] == [4 + 4 + redone] * WORKERS
        assert net.stray == []


@pytest.mark.parametrize(
    ("policy", "bits", "missing"),
    [(Policy(quorum=30), 8, [30, 31]), (Policy(timeout_us=50), 16, [31])],
    ids=["quorum:30", "timeout:50us"],
)
def test_a_quorum_or_timeout_sums_exactly_the_workers_that_entered_and_redoes_without_the_others(
    policy: Policy, bits: int, missing: list[int]
) -> None:
    """The `missing` ranks' UPDATEs never reach the switch: each slot completes without them (by
    the quorum, or a resend past the deadline), the first pass's sums of the others saturate and
    are redone with the others alone, and the missing ranks take every RESULT (OVERFLOW too) and
    redo in step. Every rank gets the others' sum bit-exact, each chunk naming exactly them."""
    data = arrays(bits)
    entered = [r for r in range(WORKERS) if r not in missing]
    expected, redone = model(data, bits, entered)
    assert redone == 2
    loss = [Drop(UPDATE, job=0, rank=r) for r in missing]
    with InProcessSwitch(elems=ELEMS, bits=bits, loss=loss) as net:
        net.add_job(0, WORKERS, window=4, policy=policy)
        results = net.allreduce({0: data})[0]
        for member, got in zip(net.jobs[0], results, strict=True):
            counted = member.core.contributors()
            assert counted.bitmaps.tolist() == [sum(1 << r for r in entered)] * 4
            assert counted.counts.tolist() == [len(entered)] * 4
            assert np.array_equal(got, expected)
        assert [m.core.stats.redone for m in net.jobs[0]] == [redone] * WORKERS


def test_a_worker_told_that_uses_went_by_without_it_fails_naming_the_lanes() -> None:
    """Rank 3 is 100 us late and loses slot 0's first RESULT: the switch says the use is gone. At
    32 bits its chunk just has no sum (tests/hosts/test_inprocess.py); in narrow lanes a gone use
    may have been a redo, so which chunk the slot carries next is unknown: a clear error."""
    loss = [Drop(RESULT, job=0, rank=3, slot=0, use=0, transmission=0)]
    data = [np.full(100 * lane_values(ELEMS, 16), 0.25 * r) for r in range(4)]
    with InProcessSwitch(elems=ELEMS, bits=16, loss=loss) as net:
        net.add_job(0, 4, window=4, policy=Policy(quorum=3), delays={3: 100e-6})
        with pytest.raises(
            WorkerError,
            match=r"^job 0 rank 3: slot 0 skipped uses done without this worker, which 16-bit "
            r"lanes cannot do .*: run narrow lanes with the sync policy",
        ):
            net.allreduce({0: data})


def test_without_the_redo_a_saturated_sum_would_be_wrong() -> None:
    """The first pass alone saturates: what the redo repairs is real (the model's own check)."""
    data = arrays(8)
    chunks = np.stack([a.reshape(-1, lane_values(ELEMS, 8)) for a in data])
    e = int(np.max(chunk_exponents(chunks[:, 0])))
    total = sum(
        quantize(chunks[r, 0], scale_for(e, headroom(WORKERS, 8), 8)) for r in range(WORKERS)
    )
    assert total.min() > lane_max(8)


def test_int32_arrays_need_32_bit_lanes() -> None:
    core = AllReduceCore(0, 0, 2, 1, ELEMS, 4, 1e-3, 3, ("10.0.0.254", 0xBEE0), bits=8)
    with pytest.raises(
        WorkerError, match=r"int32 arrays are summed in 32-bit lanes only \(bits = 8\)"
    ):
        core.start(np.zeros(10, dtype=np.int32), 0.0)


@pytest.mark.parametrize("bits", [0, 4, 24, 64])
def test_a_lane_width_the_switch_has_not_is_refused(bits: int) -> None:
    with pytest.raises(ValueError, match=rf"bits = {bits}: expected one of \(32, 16, 8\)"):
        AllReduceCore(0, 0, 2, 1, ELEMS, 4, 1e-3, 3, ("10.0.0.254", 0xBEE0), bits=bits)


def test_workers_of_another_width_than_the_switch_fail_naming_the_lanes() -> None:
    """A switch built for 16-bit lanes drops 32-bit workers' UPDATEs as malformed (counted); the
    workers give up with an error that names their width and the switch's -DLANE_BITS."""
    with InProcessSwitch(elems=ELEMS, bits=16) as net:
        net.bits = 32  # the workers' lanes, not the switch's
        net.add_job(0, 2, window=1, max_retries=1)
        with pytest.raises(
            WorkerError,
            match=r"no answer from the switch .* built for other lanes than this worker's 32-bit "
            r"ones \(-DLANE_BITS; it drops their UPDATEs as malformed\)",
        ):
            net.allreduce({0: [np.ones(lane_values(ELEMS, 32))] * 2})
        malformed = net.controller.stats()["ports"]
        assert {port: c["malformed"] for port, c in malformed.items()} == {1: 2, 2: 2}


def test_ina_worker_verifies_a_sum_against_its_lanes_bound() -> None:
    """`ina worker --bits 8 --verify` accepts an 8-bit sum, bounded per chunk of its ELEMS x 4
    values (a bound per ELEMS values refuses it), and 32-bit lanes' bound refuses it too."""
    argv = "--job 0 --rank 0 --workers 4 --switch 10.0.0.1 --size 3000 --dtype float32 --verify"
    args = cli.build_parser().parse_args([*argv.split(), "--elems", str(ELEMS), "--bits", "8"])
    data = [cli.make_array(args.seed, r, args.size, args.dtype) for r in range(4)]
    with InProcessSwitch(elems=ELEMS, bits=8) as net:
        net.add_job(0, 4, window=4)
        core = net.start(0, 0, data[0])
        for rank in range(1, 4):
            net.start(0, rank, data[rank])
        net.run()
        reduced = (core.result(), core.contributors())
    outcome = cli.Outcome(args)
    outcome.add(0, reduced)
    assert outcome.ok and outcome.max_error > 0
    args.bits = 32
    wide = cli.Outcome(args)
    wide.add(0, reduced)
    assert wide.failed == [0]
