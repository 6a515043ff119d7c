"""The drop simulator's loss models: measured on the switch (many seeded packets through
Switch.process on the Python engine, whose random() is Python's `random`, so a seed fixes every
draw) against the Gilbert-Elliott formulas within bounds computed for the sample size; and where
`ina run` puts them (the switch's ports and directions, netem's arguments)."""

import functools
import math
import random
import threading

import pytest

from ina.compiler import compile_file
from ina.controller.aggregation import Aggregation, BurstLoss, drop_threshold
from ina.controller.client import SwitchConnection
from ina.p4src import AGGREGATE_P4
from ina.switch.engine import Switch
from ina.switch.p4runtime.server import P4RuntimeService, serve
from ina.topologies.runner import LossyEnd, RunError, emulate_loss, loss_ends, netem_args
from ina.topologies.topo import load

PACKETS = 20_000
Z = 5.0  # bounds are Z standard errors: a correct model fails one seed in millions
FRAME = bytes.fromhex("02000000000202000000000188b5") + b"loss model"  # port 1 -> port 2, L2 only


@functools.cache
def program() -> dict:
    return compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"}).bmv2


def losses(model: BurstLoss, direction: str, seed: int) -> list[bool]:
    """Whether each of PACKETS frames from port 1 to port 2 was lost, the model on that direction."""
    sw = Switch(engine="python")
    sw.load(program())
    sw.tables["InaIngress.l2_forward"].add([0x020000000002], "InaIngress.forward", [2])
    table, port = (
        ("InaIngress.drop_sim_in", 1) if direction == "ingress" else ("InaEgress.drop_sim_out", 2)
    )
    args = [drop_threshold(p) for p in (model.loss_good, model.loss_bad, model.p_gb, model.p_bg)]
    sw.tables[table].add([port], table.split(".")[0] + ".set_burst_loss", args)
    random.seed(seed)
    return [not sw.process(1, FRAME) for _ in range(PACKETS)]


def stationary_bad(m: BurstLoss) -> float:
    return m.p_gb / (m.p_gb + m.p_bg)


@pytest.mark.parametrize("direction", ["ingress", "egress"])
def test_burst_model_mean_loss_matches_the_stationary_chain(direction):
    m = BurstLoss(loss_good=0.02, loss_bad=0.6, p_gb=0.05, p_bg=0.3)
    bad = stationary_bad(m)
    mean = (1 - bad) * m.loss_good + bad * m.loss_bad
    # Loss indicators are correlated through the state: Cov(X_0, X_k) = c * lam^k for k >= 1, with
    # lam = 1 - p_gb - p_bg and c the variance of the state's loss probability, so the sample
    # mean's variance is (mean (1 - mean) + 2 c lam / (1 - lam)) / n.
    lam = 1 - m.p_gb - m.p_bg
    c = bad * (1 - bad) * (m.loss_bad - m.loss_good) ** 2
    bound = Z * math.sqrt((mean * (1 - mean) + 2 * c * lam / (1 - lam)) / PACKETS)
    measured = sum(losses(m, direction, seed=14)) / PACKETS
    assert abs(measured - mean) <= bound, (measured, mean, bound)


@pytest.mark.parametrize("direction", ["ingress", "egress"])
def test_gilbert_bursts_last_one_over_p_bg_packets(direction):
    """loss_good = 0 and loss_bad = 1: a burst is one stay in the bad state, geometric with mean
    1 / p_bg and variance (1 - p_bg) / p_bg^2; lost share = the bad state's stationary share."""
    m = BurstLoss(loss_good=0.0, loss_bad=1.0, p_gb=0.02, p_bg=0.25)
    lost = losses(m, direction, seed=15)
    bursts = [len(run) for run in "".join("x" if x else " " for x in lost).split()]
    assert bursts, "no packet was lost"
    mean_burst = 1 / m.p_bg
    bound = Z * math.sqrt(1 - m.p_bg) / m.p_bg / math.sqrt(len(bursts))
    assert abs(sum(bursts) / len(bursts) - mean_burst) <= bound, (sum(bursts) / len(bursts), bound)
    bad = stationary_bad(m)
    lam = 1 - m.p_gb - m.p_bg
    share_bound = Z * math.sqrt(bad * (1 - bad) * (1 + 2 * lam / (1 - lam)) / PACKETS)
    assert abs(sum(lost) / PACKETS - bad) <= share_bound, (sum(lost) / PACKETS, bad, share_bound)


def test_netem_gets_the_same_chain_as_gemodel_and_uniform_loss_as_random():
    # netem's gemodel takes p (good->bad), r (bad->good), 1-h (loss when bad), 1-k (loss when good)
    assert netem_args(BurstLoss(0.01, 0.5, 0.02, 0.25)) == [
        "loss",
        "gemodel",
        "2%",
        "25%",
        "50%",
        "1%",
    ]
    assert netem_args(0.05) == ["loss", "random", "5%"]


@pytest.mark.parametrize(
    ("link", "direction", "expected"),
    [
        (
            None,
            "both",
            {(1, "ingress"): 0.1, (1, "egress"): 0.1, (2, "ingress"): 0.1, (2, "egress"): 0.1},
        ),
        ("h2", "up", {(2, "ingress"): 0.1}),
        ("h1", "down", {(1, "egress"): 0.1}),
    ],
)
def test_ina_run_puts_switch_loss_on_the_chosen_link_and_direction(link, direction, expected):
    sw = Switch()
    srv = serve(P4RuntimeService(sw, threading.Lock()), "127.0.0.1:0")
    try:
        address = f"127.0.0.1:{srv.bound_port}"
        with SwitchConnection(address, election_id=1) as conn:
            compiled = compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"})
            conn.set_pipeline(compiled.bmv2, compiled.p4info)
        topo = load("star", workers=2).with_grpc({"s1": address})
        emulate_loss(topo, loss_ends(topo, link, direction), 0.1)
        with SwitchConnection(address, election_id=None) as conn:
            assert Aggregation(conn).drops() == expected
        with pytest.raises(RunError, match=r"--loss-link h9: no such host \(hosts: h1, h2\)"):
            loss_ends(topo, "h9", "both")
    finally:
        srv.stop(None)


def test_loss_on_every_link_covers_switch_links_once_per_direction():
    # leafspine_hier: host links lose both ways at the leaf's port; each switch-to-switch link
    # loses on each end's sends, so a packet crossing it meets the loss once.
    topo = load("leafspine_hier")
    host_ends = [
        LossyEnd("s1", 1, "h1", True, True),
        LossyEnd("s1", 2, "h2", True, True),
        LossyEnd("s2", 1, "h3", True, True),
        LossyEnd("s2", 2, "h4", True, True),
    ]
    assert loss_ends(topo, None, "both") == [
        *host_ends,
        LossyEnd("s1", 3, "s3", False, True),
        LossyEnd("s1", 4, "s4", False, True),
        LossyEnd("s2", 3, "s3", False, True),
        LossyEnd("s2", 4, "s4", False, True),
        LossyEnd("s3", 1, "s1", False, True),
        LossyEnd("s3", 2, "s2", False, True),
        LossyEnd("s4", 1, "s1", False, True),
        LossyEnd("s4", 2, "s2", False, True),
    ]
    assert loss_ends(topo, None, "up") == [
        LossyEnd(e.switch, e.port, e.peer, True, False) for e in host_ends
    ]
    assert loss_ends(topo, "h3", "both") == [host_ends[2]]
