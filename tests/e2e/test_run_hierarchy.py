"""Hierarchical jobs in Mininet (issue 31): leaves sum their racks, send partial sums up, the root
sums and its RESULT comes down, on ina's switch and on real simple_switch_grpc, with loss on every
link (host links and switch-to-switch links) from the switch's drop simulator."""

import math
import os

import pytest
from toolchain import P4C, SIMPLE_SWITCH_GRPC_BIN, missing

from ina.p4src.protocol import Policy
from ina.topologies.runner import RunOptions, RunResult, run
from ina.topologies.topo import load
from ina.topologies.tree import job_trees

ELEMS = 16  # small packets: many chunks per run, so the 1% loss hits every kind of packet
LEAVES, ROOT = ("s1", "s2"), "s3"  # leafspine_hier's tree: two leaves of two workers, root s3
UPLINK = 3  # each leaf's port toward s3 (its first spine)


def run_hier(
    tmp_path,
    target: str,
    size: int,
    dtype: str = "int32",
    loss: float = 0.0,
    topo: str = "leafspine_hier",
    policy: Policy | None = None,
) -> RunResult:
    result = run(
        RunOptions(
            topo=topo,
            workers=None,
            target=target,
            size=size,
            dtype=dtype,
            elems=ELEMS,
            pool_size=256,
            slots=32,
            loss=loss or None,
            loss_mode="switch",
            policy=policy,
            run_dir=str(tmp_path),
        )
    )
    assert result.ok, (result.workers, result.switch_stats)
    assert sorted((w["host"], w["elements"]) for w in result.workers) == sorted(
        (h, size) for h in load(topo).hosts
    )
    return result


def assert_tree_counts(result: RunResult, chunks: int, exact_uses: bool = True) -> None:
    """Exact whatever was lost: per use of a slot (one per chunk for int32; a float chunk whose
    exponent the switch's maximum changed is sent again, in a use of its own) the root took two
    partial sums (one per leaf, not one per worker), and each leaf completed it once and took the
    root's RESULT once."""
    stats = {name: result.switch_stats[name]["jobs"][0] for name in (*LEAVES, ROOT)}
    uses = stats[ROOT]["completed"]
    assert uses == chunks if exact_uses else uses >= chunks
    assert stats[ROOT]["accepted"] == len(LEAVES) * uses
    assert "partials_sent" not in stats[ROOT]
    for leaf in LEAVES:
        assert stats[leaf]["accepted"] == 2 * uses
        assert stats[leaf]["completed"] == uses
        assert stats[leaf]["parent_results"] == uses
        assert stats[leaf]["partials_sent"] >= uses


def lost_on_uplinks(result: RunResult) -> int:
    """Packets the leaves' drop simulators lost on their way to the root."""
    return sum(
        result.switch_stats[leaf]["ports"].get(UPLINK, {}).get("drop_sim_out", 0) for leaf in LEAVES
    )


def test_hierarchical_job_on_ina_switch_is_exact_and_sends_one_partial_per_leaf(tmp_path):
    size = 4096
    result = run_hier(tmp_path, "builtin", size)
    assert_tree_counts(result, math.ceil(size / ELEMS))


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_hierarchical_job_on_ina_switch_recovers_loss_on_every_link(tmp_path, dtype):
    # 1% each way on every link: the leaves' uplinks lose partial sums and the root's RESULTs too.
    size = 16384
    result = run_hier(tmp_path, "builtin", size, dtype, loss=0.01)
    assert result.loss_mode == "switch"
    assert_tree_counts(result, math.ceil(size / ELEMS), exact_uses=dtype == "int32")
    assert lost_on_uplinks(result) > 0  # ~20 expected (2048 upward partials at 1%)


def test_hierarchical_job_on_real_bmv2_recovers_loss_on_every_link(tmp_path, monkeypatch):
    reason = missing(SIMPLE_SWITCH_GRPC_BIN, P4C)
    if reason:
        pytest.skip(reason)
    monkeypatch.setenv("PATH", f"{SIMPLE_SWITCH_GRPC_BIN.parent}:{P4C.parent}:{os.environ['PATH']}")
    size = 8192
    result = run_hier(tmp_path, "bmv2", size, loss=0.01)
    assert result.toolchain["simple_switch_grpc"]["path"] == str(SIMPLE_SWITCH_GRPC_BIN)
    assert_tree_counts(result, math.ceil(size / ELEMS))
    assert lost_on_uplinks(result) > 0  # ~10 expected (1024 upward partials at 1%)


def test_three_level_trees_of_a_fat_tree_recover_loss_on_every_link(tmp_path):
    # fattree4: two jobs of 8 on disjoint trees (core -> 2 aggregation -> 4 edge switches). Every
    # switch of a tree completes each chunk once and takes its parent's RESULT once, and sums two
    # children per chunk (two workers, two edges or two aggregation switches), whatever was lost.
    size = 2048
    chunks = math.ceil(size / ELEMS)
    result = run_hier(tmp_path, "builtin", size, loss=0.01, topo="fattree4")
    for tree in job_trees(load("fattree4")):
        for name, node in tree.nodes.items():
            counts = result.switch_stats[name]["jobs"][tree.job]
            assert (counts["accepted"], counts["completed"]) == (2 * chunks, chunks), name
            assert len(node.children) == 2
            if node.uplink is None:
                assert "parent_results" not in counts, name
            else:
                assert counts["parent_results"] == chunks, name
                assert counts["partials_sent"] >= chunks, name


def test_a_quorums_partial_sums_are_checked_rank_by_rank_across_leaves(tmp_path):
    # quorum:2 of 4: each leaf completes with one of its two workers and the root with two leaves,
    # so sums hold 2 to 4 workers, named across leaves only by every worker's RESULTs together:
    # the runner checks each worker's saved sums with them (job_sums.py), not the worker alone.
    result = run_hier(tmp_path, "builtin", 2048, policy=Policy.parse("quorum:2"))
    assert sum(w["partial_chunks"] for w in result.workers) > 0
    assert sorted(p.name for p in (tmp_path / "sums" / "job0").iterdir()) == [
        f"rank{r}-iteration0.npz" for r in range(4)
    ]
