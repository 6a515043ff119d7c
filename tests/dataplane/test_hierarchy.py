"""Hierarchical aggregation end to end (#31): two leaf switches and a root, each a real Switch
behind its own P4Runtime server programmed through the controller's API, four real worker cores,
frames carried hop by hop on a virtual clock; int32 sums bit-exact against numpy, with 0% and 1%
loss on the switch-to-switch links.

Until hiertree's trees and the harness wire hierarchical jobs (hosts/inprocess.py, ina sim), this
test carries the frames itself: every hop takes LATENCY virtual seconds, a frame on an uplink is
lost with the test's probability (seeded), and a worker's timer is its core's deadline.
"""

import heapq
import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from ina.controller.aggregation import Aggregation, Parent, Worker
from ina.controller.client import SwitchConnection
from ina.hosts.core import AllReduceCore
from ina.hosts.inprocess import program, update_frame_header
from ina.p4src.protocol import UDP_PORT, Policy
from ina.sim.frames import udp_source
from ina.switch.engine import Switch
from ina.switch.p4runtime.server import P4RuntimeService, serve

ELEMS, POOL, WINDOW, JOB, EPOCH = 8, 64, 16, 1, 0x5EED0031
LATENCY = 10e-6
UPLINK = 9  # each leaf's port toward the root; the root's port i + 1 faces leaf i
FRAME_HEADERS = 14 + 20 + 8
ROOT = ("02:aa:00:00:00:10", "10.0.9.254")
LEAVES = [(f"02:aa:00:00:00:{0x11 + i:02x}", f"10.0.{i + 1}.254") for i in range(3)]


def workers_of(leaf: int) -> list[Worker]:
    """Leaf `leaf`'s two workers, on its ports 1 and 2."""
    return [
        Worker(
            rank,
            rank + 1,
            f"02:00:00:00:{leaf + 1:02x}:{rank + 1:02x}",
            f"10.0.{leaf + 1}.{rank + 1}",
        )
        for rank in range(2)
    ]


@contextmanager
def switches(n: int, engine: str) -> Iterator[list[tuple[Switch, Aggregation]]]:
    """`n` switches running aggregate.p4, each with a P4Runtime server and a controller."""
    compiled = program(ELEMS, POOL)
    made, servers, conns = [], [], []
    try:
        for _ in range(n):
            sw = Switch(engine=engine)
            servers.append(serve(P4RuntimeService(sw, threading.Lock()), "127.0.0.1:0"))
            conns.append(SwitchConnection(f"127.0.0.1:{servers[-1].bound_port}", election_id=1))
            conns[-1].set_pipeline(compiled.bmv2, compiled.p4info)
            made.append((sw, Aggregation(conns[-1])))
        yield made
    finally:
        for conn in conns:
            conn.close()
        for server in servers:
            server.stop(None)


def hierarchical_allreduce(
    arrays: list[np.ndarray],
    uplink_loss: float,
    seed: int,
    engine: str,
    policy: Policy | None = None,
    cut: tuple[int, float] | None = None,
) -> tuple[list[AllReduceCore], dict]:
    """All-reduce arrays[w] (worker w = leaf w // 2, rank w % 2; two leaves per four arrays, three
    per six) through the tree under `policy` (sync); the finished cores, and the uplinks' frame
    counts and drops, and each switch's counters. `cut` = (leaf, until): every frame between that
    leaf and the root is lost until virtual time `until`."""
    rng = random.Random(seed)
    n_leaves, n = len(arrays) // 2, len(arrays)
    with switches(1 + n_leaves, engine) as ((root_sw, root), *leaves):
        root.set_switch_address(*ROOT)
        children = [
            Worker(i, i + 1, mac, ip, aggregates=2) for i, (mac, ip) in enumerate(LEAVES[:n_leaves])
        ]
        root.add_job(JOB, children, num_slots=WINDOW, epoch=EPOCH, policy=policy or Policy())
        for i, (_sw, leaf) in enumerate(leaves):
            leaf.set_switch_address(*LEAVES[i])
            leaf.add_job(
                JOB,
                workers_of(i),
                num_slots=WINDOW,
                epoch=EPOCH,
                policy=policy or Policy(),
                parent=Parent(UPLINK, *ROOT, rank=i),
                job_workers=n,
            )
        cores = [
            AllReduceCore(
                JOB,
                w % 2,
                2,
                EPOCH,
                ELEMS,
                WINDOW,
                1e-3,
                20,
                (LEAVES[w // 2][1], UDP_PORT),
                min_rto=0.0,
                job_workers=n,
            )
            for w in range(n)
        ]
        headers = [
            update_frame_header(workers_of(w // 2)[w % 2], cores[w].datagram_size, *LEAVES[w // 2])
            for w in range(n)
        ]
        events: list = []  # (time, order, switch index or None, port or worker, frame)
        order = iter(range(1 << 62))
        uplinks = {"frames": 0, "dropped": 0}

        def send_from_worker(now: float, w: int, datagrams) -> None:
            for d in datagrams:
                heapq.heappush(
                    events,
                    (now + LATENCY, next(order), 1 + w // 2, 1 + w % 2, headers[w] + bytes(d)),
                )

        def out_of(now: float, at: int, port: int, frame: bytes) -> None:
            """Where a frame leaving switch `at` (0 root, 1 and 2 leaves) by `port` goes next."""
            if at == 0 or port == UPLINK:
                uplinks["frames"] += 1
                leaf = port - 1 if at == 0 else at - 1
                if rng.random() < uplink_loss or (cut and leaf == cut[0] and now < cut[1]):
                    uplinks["dropped"] += 1
                    return
                target = (port, UPLINK) if at == 0 else (0, at)
                heapq.heappush(events, (now + LATENCY, next(order), *target, frame))
            else:
                heapq.heappush(
                    events, (now + LATENCY, next(order), None, 2 * (at - 1) + port - 1, frame)
                )

        for w, core in enumerate(cores):
            send_from_worker(0.0, w, core.start(arrays[w], 0.0))
        sws = [root_sw] + [sw for sw, _ in leaves]
        while not all(c.finished for c in cores):
            timers = [(c.deadline, w) for w, c in enumerate(cores) if not c.finished]
            due, w = min(timers)
            if events and events[0][0] <= due:
                now, _o, at, port, frame = heapq.heappop(events)
                if at is None:
                    reply = cores[port].receive(frame[FRAME_HEADERS:], udp_source(frame), now)
                    send_from_worker(now, port, [reply] if reply is not None else [])
                else:
                    for out_port, out in sws[at].process(port, frame):
                        out_of(now, at, out_port, out)
            else:
                assert due < 10.0, "the all-reduce stalled"
                send_from_worker(due, w, cores[w].expire(due))
        stats = [agg.stats()["jobs"].get(JOB, {}) for agg in (root, *(a for _s, a in leaves))]
        return cores, {"uplinks": uplinks, "switches": stats}


@pytest.mark.parametrize("engine", ["native", "python"])
def test_two_leaves_and_a_root_sum_exactly_and_the_uplinks_carry_one_frame_per_child(engine):
    """Lossless: every sum exact, and each chunk crosses the upper links once per child switch each
    way (2 partial sums up, 2 RESULTs down), not once per worker."""
    rng = np.random.default_rng(31)
    arrays = [
        rng.integers(-(2**31), 2**31, 2000, dtype=np.int64).astype(np.int32) for _ in range(4)
    ]
    cores, counts = hierarchical_allreduce(arrays, 0.0, 1, engine)
    results = [c.result() for c in cores]
    expected = np.sum(np.stack(arrays), axis=0, dtype=np.int32)
    assert all(np.array_equal(r, expected) for r in results)
    chunks = 2000 // ELEMS
    root, leaf0, leaf1 = counts["switches"]
    assert counts["uplinks"] == {"frames": 4 * chunks, "dropped": 0}
    assert (root["completed"], root["results_sent"]) == (chunks, 2 * chunks)
    for leaf in (leaf0, leaf1):
        assert (leaf["partials_sent"], leaf["parent_results"], leaf["results_sent"]) == (
            chunks,
            chunks,
            2 * chunks,
        )
        assert "parent_refused" not in leaf


@pytest.mark.parametrize("seed", [1, 2])
def test_one_percent_loss_between_the_switches_is_recovered_and_every_sum_stays_exact(seed):
    rng = np.random.default_rng(seed)
    arrays = [
        rng.integers(-(2**31), 2**31, 4000, dtype=np.int64).astype(np.int32) for _ in range(4)
    ]
    cores, counts = hierarchical_allreduce(arrays, 0.01, seed, "native")
    results = [c.result() for c in cores]
    expected = np.sum(np.stack(arrays), axis=0, dtype=np.int32)
    assert counts["uplinks"]["dropped"] > 0
    assert all(np.array_equal(r, expected) for r in results)
    root = counts["switches"][0]
    assert root["completed"] == 4000 // ELEMS  # each use completed once: nothing added twice


def test_the_roots_status_reaches_the_counted_workers_while_another_leaf_is_cut_off():
    """Leaf 1 cut off from the root for 5 ms: leaf 0's partial sums wait at the root, and leaf 0's
    workers' resends (resent partial sums) get the root's STATUS, which leaf 0 relays down with
    its own bitmap: every one of its workers hears it is counted (a leaf that dropped it left
    them without an answer, backing their RTOs off). Exact once leaf 1 is back."""
    rng = np.random.default_rng(7)
    arrays = [rng.integers(-1000, 1000, 400, dtype=np.int32) for _ in range(4)]
    cores, counts = hierarchical_allreduce(arrays, 0.0, 1, "native", cut=(1, 5e-3))
    expected = np.sum(np.stack(arrays), axis=0, dtype=np.int32)
    assert all(np.array_equal(c.result(), expected) for c in cores)
    root, leaf0, _leaf1 = counts["switches"]
    assert root["duplicates"] > 0
    assert leaf0["status_relayed"] == root["duplicates"]  # every STATUS the root sent it
    assert all(c.stats.statuses > 0 for c in cores[:2])


@pytest.mark.parametrize("engine", ["native", "python"])
def test_a_leaf_whose_uses_the_root_replaced_under_a_quorum_skips_them_and_finishes(engine):
    """Quorum 4 of 6 on three leaves of two: the root completes with any two leaves. Leaf 2 is cut
    off for 3 ms, so the root completes and replaces its uses without it and its RESULT copies are
    lost; when leaf 2 is back, the root refuses its stale partial sums with a STATUS of the later
    round, which leaf 2 relays down (a leaf that dropped it stalled the job until max_retries).
    Every sum a worker gets is exactly that of the leaves the RESULTs name; the uses leaf 2
    skipped have no sum there."""
    rng = np.random.default_rng(5)
    arrays = [rng.integers(-1000, 1000, 2000, dtype=np.int32) for _ in range(6)]
    cores, counts = hierarchical_allreduce(
        arrays, 0.0, 1, engine, policy=Policy.parse("quorum:4"), cut=(2, 3e-3)
    )
    chunks = 2000 // ELEMS
    bitmaps = np.stack([c.contributors().bitmaps for c in cores])
    totals = np.stack([c.contributors().counts for c in cores])
    in_sum = np.zeros((chunks, 3), dtype=bool)  # per chunk, the leaves its sum holds
    for leaf in range(3):
        got = totals[2 * leaf] > 0
        assert np.array_equal(got, totals[2 * leaf + 1] > 0)
        assert np.array_equal(bitmaps[2 * leaf][got], bitmaps[2 * leaf + 1][got])
        assert set(bitmaps[2 * leaf][got]) <= {0, 0b11}  # a leaf's share is both its workers
        in_sum[:, leaf] = got & (bitmaps[2 * leaf] == 0b11)
    skipped = totals[4] == 0
    assert skipped.sum() > 0 and not (totals[:4] == 0).any()
    # a leaf none of whose workers got the sum is in it when the count says the others are not all
    in_sum[skipped, 2] = totals[0][skipped] - 2 * in_sum[skipped, :2].sum(axis=1) == 2
    for w, core in enumerate(cores):
        got = totals[w] > 0
        assert np.array_equal(totals[w][got], 2 * in_sum[got].sum(axis=1))
        for c in np.flatnonzero(got):
            part = slice(c * ELEMS, (c + 1) * ELEMS)
            leaves = np.flatnonzero(in_sum[c])
            want = sum(arrays[2 * leaf][part] + arrays[2 * leaf + 1][part] for leaf in leaves)
            assert np.array_equal(core.result()[part], want)
        assert not core.result()[np.repeat(~got, ELEMS)].any()
    _root, _leaf0, _leaf1, leaf2 = counts["switches"]
    assert leaf2["status_relayed"] > 0
