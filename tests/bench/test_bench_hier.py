"""`ina bench hier`: the upper-link table (frames per chunk on the switch-to-switch links, and the
switch counters' partial sums and parent RESULTs per chunk, equal to the child switches the job
spans) and the scale sweep against the ring, on small leaf-spines."""

import json

from ina.bench import hier, plots


def test_upper_links_carry_one_partial_sum_and_one_result_per_child_switch(tmp_path, monkeypatch):
    monkeypatch.setattr(hier, "HOSTS_PER_LEAF", 4)
    monkeypatch.setattr(hier, "QUICK_WORKERS", (4, 8))
    monkeypatch.setattr(hier, "QUICK_SIZE", 256)
    monkeypatch.setattr(hier, "LINK_TOPOLOGIES", ("leafspine:2x4,2", "leafspine:4x2,2"))
    drawn = {}
    monkeypatch.setattr(
        plots,
        "lines",
        lambda path, title, xlabel, ylabel, series, ymin: drawn.update({path.name: series}),
    )
    links, scale = hier.bench_hier(tmp_path)
    table = {(r["topo"], r["aggregation"]): r for r in links}
    # single: a generated leaf-spine's job is aggregated at a spine, so each of the 8 workers'
    # UPDATEs and RESULTs crosses one upper link
    assert table["leafspine:2x4,2", "single"]["upper_frames_per_chunk"] == 8 * 2
    assert table["leafspine:4x2,2", "single"]["upper_frames_per_chunk"] == 8 * 2
    for topo, leaves in (("leafspine:2x4,2", 2), ("leafspine:4x2,2", 4)):
        row = table[topo, "hierarchical"]
        assert row["child_switches"] == leaves
        assert row["upper_frames_per_chunk"] == 2 * leaves  # one leaf-spine link each way
        assert row["partials_sent_per_chunk"] == row["parent_results_per_chunk"] == leaves
        assert table[topo, "single"]["partials_sent_per_chunk"] == 0
    assert all(r["verified"] for r in links + scale)
    assert [(r["method"], r["workers"], r["topo"]) for r in scale] == [
        ("hierarchical", 4, "leafspine:1x4,1:hierarchical"),
        ("hierarchical", 8, "leafspine:2x4,2:hierarchical"),
        ("ring", 4, "leafspine:1x4,1:hierarchical"),
        ("ring", 8, "leafspine:2x4,2:hierarchical"),
    ]
    assert drawn["hier_scale.png"] == {  # Gbit/s per worker against workers, each method's line
        method: ([4, 8], [r["goodput_median_bps"] / 1e9 for r in scale if r["method"] == method])
        for method in ("hierarchical", "ring")
    }
    assert json.loads((tmp_path / "hier_links.json").read_text())["results"] == links
    assert len(json.loads((tmp_path / "hier_scale.json").read_text())["results"]) == 4
