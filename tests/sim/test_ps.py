"""sim/ps.py: the host parameter server (hosts/baseline.py's ServerCore) on the simulated star, the
workers' real cores sending to it: int32 sums bit-exact with and without loss, its counters exact,
its CPU cost setting the pace, and what it cannot serve refused."""

import numpy as np
import pytest

from ina.hosts.cli import make_array
from ina.p4src.protocol import Policy
from ina.sim.allreduce import AllReduceConfig
from ina.sim.links import LinkSpec
from ina.sim.nodes import HostSpec
from ina.sim.ps import ServerRefused, simulate_ps


@pytest.mark.parametrize("loss", [0.0, 0.02])
def test_int32_sums_are_bit_exact_with_and_without_loss(loss):
    config = AllReduceConfig(
        workers=3,
        size=2000,
        elems=16,
        window=32,
        link=LinkSpec(10e9, 2e-6, 1 << 20, loss=loss),
        seed=4,
    )
    result, server = simulate_ps(config)
    expected = np.sum([make_array(4, r, 2000, "int32") for r in range(3)], axis=0, dtype=np.int32)
    assert result.verified and all(np.array_equal(r, expected) for r in result.results)
    assert [name for name, _up, _down in result.links] == [
        "h1-s1",
        "h2-s1",
        "h3-s1",
        "h4-s1",
    ]  # h4: the server
    chunks = 2000 // 16
    if loss:
        assert sum(result.retransmissions) > 0 and server["received"] > 3 * chunks
    else:
        assert server == {
            "received": 3 * chunks,
            "results_sent": 3 * chunks,
            "retransmissions_answered": 0,
            "duplicates": 0,
            "stale": 0,
            "refused": 0,
        }
        server_link = result.links[3]
        assert (server_link[1].frames, server_link[2].frames) == (
            3 * chunks,
            3 * chunks,
        )  # all through its link


def test_the_servers_cpu_sets_the_pace():
    """Each UPDATE costs the server's CPU recv_cost and each RESULT copy send_cost: N x C of each."""
    cost = 200e-9
    config = AllReduceConfig(
        workers=4,
        size=64 * 256,
        link=LinkSpec(100e9, 1e-6, 1 << 20),
        host=HostSpec(100e9, cost, cost),
    )
    result, _server = simulate_ps(config)
    work = 4 * 256 * 2 * cost
    assert result.verified and work <= result.communication_s <= 1.02 * work


@pytest.mark.parametrize(
    ("config", "says"),
    [
        (
            AllReduceConfig(workers=4, policy=Policy(quorum=3)),
            "the parameter server runs the sync policy only, not quorum:3",
        ),
        (
            AllReduceConfig(workers=4, jobs=2),
            "the parameter server serves one job (as ina run --baseline)",
        ),
    ],
)
def test_what_it_cannot_serve_is_refused(config, says):
    with pytest.raises(ServerRefused, match=rf"^{says}$".replace("(", r"\(").replace(")", r"\)")):
        simulate_ps(config)
