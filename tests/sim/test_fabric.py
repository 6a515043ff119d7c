"""Multi-switch fabrics in virtual time: every switch runs the program as the controller's topology
setup programmed it, frames take exactly the path its forwarding says, several jobs at once each get
their sums bit-exact."""

import numpy as np
import pytest

from ina.hosts.cli import make_array
from ina.sim.allreduce import AllReduceConfig, simulate
from ina.sim.links import LinkSpec

RATE = 100e9


def sums(config: AllReduceConfig, result) -> None:
    """Every worker of every job got the numpy sum of its job's arrays, bit-exact."""
    for job in {j for j, _r, _h in result.workers}:
        ranks = [r for j, r, _h in result.workers if j == job]
        total = np.sum(
            [make_array(config.seed + job, r, config.size, "int32") for r in ranks],
            axis=0,
            dtype=np.int32,
        )
        got = [a for (j, _r, _h), a in zip(result.workers, result.results, strict=True) if j == job]
        assert all(np.array_equal(a, total) for a in got), job


def test_leafspine_frames_take_the_path_the_forwarding_installs():
    # leafspine.yaml: s1 (leaf of h1, h2) aggregates; s2 (leaf of h3, h4) reaches s1 through its
    # first spine, s3 (port 3), and s1 answers h3 and h4 through s3 too; s4 carries nothing.
    config = AllReduceConfig(topo="leafspine", size=1024)
    result = simulate(config)
    chunks = 1024 // 64
    sums(config, result)
    assert result.verified and sum(result.retransmissions) == 0
    frames = {name: (up.frames, down.frames) for name, up, down in result.links}
    assert frames == {
        "h1-s1": (chunks, chunks),
        "h2-s1": (chunks, chunks),
        "h3-s2": (chunks, chunks),
        "h4-s2": (chunks, chunks),
        "s1-s3": (2 * chunks, 2 * chunks),
        "s1-s4": (0, 0),
        "s2-s3": (2 * chunks, 2 * chunks),
        "s2-s4": (0, 0),
    }
    assert result.switch == {
        "s1": {
            "jobs": {0: {"accepted": 4 * chunks, "completed": chunks, "results_sent": 4 * chunks}},
            "ports": {},
        }
    }


@pytest.mark.parametrize(("topo", "hops"), [("leafspine", None), ("fattree:4", 3)])
def test_two_jobs_at_once_each_exact(topo, hops):
    config = AllReduceConfig(topo=topo, jobs=2, size=700, seed=5)
    result = simulate(config)
    sums(config, result)
    jobs = [j for j, _r, _h in result.workers]
    assert result.verified and sorted(set(jobs)) == [0, 1] and jobs.count(0) == jobs.count(1)
    chunks = -(-700 // 64)
    counted = {(name, job): c for name, s in result.switch.items() for job, c in s["jobs"].items()}
    per_job = len(jobs) // 2
    aggregators = (
        ["s1", "s1"] if topo == "leafspine" else ["s1", "s2"]
    )  # a fat-tree's jobs on two cores
    assert counted == {
        (aggregators[j], j): {
            "accepted": per_job * chunks,
            "completed": chunks,
            "results_sent": per_job * chunks,
        }
        for j in (0, 1)
    }
    if hops:  # host -> edge -> aggregation -> core and back: every frame crosses 3 links each way
        assert result.arrivals == 2 * hops * len(jobs) * chunks


def test_jobs_sharing_an_aggregator_share_its_pool():
    # Three jobs of 2 on the star's one switch need 3 x 128 slots: the pool is sized for all of them.
    config = AllReduceConfig(workers=6, jobs=3, size=300)
    result = simulate(config)
    sums(config, result)
    assert result.verified and sorted(result.switch["s1"]["jobs"]) == [0, 1, 2]


@pytest.mark.parametrize(
    ("topo", "jobs", "sharing", "behind_leaf"),
    [("leafspine:1x4,1", 1, 4, 4), ("leafspine:2x4,2", 4, 2, 1), ("leafspine:2x8,2", 4, 4, 2)],
)
def test_a_shared_uplink_sets_the_time(topo, jobs, sharing, behind_leaf):
    # docs/simulation.md: the N workers whose UPDATEs share a leaf's uplink to their spine keep it
    # busy: T = N C s + (2 + m) s + 4 d, m the job's workers behind one leaf (the spine's RESULT
    # burst on the way down), to float rounding.
    link = LinkSpec(rate=RATE, delay=1e-6, queue=1 << 20)
    config = AllReduceConfig(topo=topo, jobs=jobs, size=64 * 512, link=link)
    s = (14 + 20 + 8 + 22 + 4 * 64 + 24) * 8 / RATE
    result = simulate(config)
    assert result.verified and sum(result.retransmissions) == 0
    assert result.communication_s == pytest.approx(
        sharing * 512 * s + (2 + behind_leaf) * s + 4 * 1e-6, rel=1e-9
    )
