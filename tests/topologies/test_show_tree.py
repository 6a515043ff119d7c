"""`ina ctl show-tree JOB`: the job's tree from the topology, switch by switch, beside what each
switch holds for the job, read back from real P4Runtime servers; bad arguments exit 2 in one line."""

import json
import socket
import threading

import pytest

from ina.controller.aggregation import Aggregation, Worker
from ina.controller.cli import main
from ina.controller.client import SwitchConnection
from ina.hosts.inprocess import program
from ina.switch.engine import Switch
from ina.switch.p4runtime.server import P4RuntimeService, serve
from ina.topologies.show_tree import reader, render, tree_report
from ina.topologies.topo import load
from ina.topologies.topology_setup import program_topology


@pytest.fixture
def leafspine():
    """leafspine.yaml's switches as in-process P4Runtime servers, programmed as ina run does."""
    topo = load("leafspine")
    servers = {
        n: serve(P4RuntimeService(Switch(engine="python"), threading.Lock()), "127.0.0.1:0")
        for n in topo.switches
    }
    topo = topo.with_grpc({n: f"127.0.0.1:{s.bound_port}" for n, s in servers.items()})
    compiled = program(8, 256)
    program_topology(topo, compiled.bmv2, compiled.p4info)
    yield topo
    for server in servers.values():
        server.stop(None)


def test_a_programmed_single_job_reads_back_as_its_tree(leafspine):
    topo = leafspine
    report = tree_report(topo, topo.jobs[0], reader(0, 5.0))
    [s1] = report["switches"]
    assert (report["root"], report["workers"], report["aggregation"]) == ("s1", 4, "single")
    assert [(c["name"], c["rank"], c["port"]) for c in s1["children"]] == [
        ("h1", 0, 1),
        ("h2", 1, 2),
        ("h3", 2, 3),
        ("h4", 3, 3),
    ]
    assert s1["differences"] == [] and s1["parent"] is None
    assert (
        render(report)
        .splitlines()[1]
        .startswith("s1 (root; 4 workers below)  read back: as the tree says (epoch 0x")
    )
    # A switch holding the job otherwise: the differences name the rank and both sides.
    with SwitchConnection(topo.switches["s1"].grpc, election_id=2) as conn:
        agg = Aggregation(conn)
        job = agg.job(0)
        agg.remove_job(0)
        moved = [w if w.rank != 1 else Worker(1, 4, w.mac, w.ip) for w in job.workers[:3]]
        agg.add_job(0, moved, job.num_slots, job.epoch, job.policy)
    [s1] = tree_report(topo, topo.jobs[0], reader(0, 5.0))["switches"]
    h2, h4 = topo.hosts["h2"].ip, topo.hosts["h4"].ip
    assert s1["differences"] == [
        f"rank 1: the tree has h2 (port 2, {h2}, weight 0), the switch port 4, {h2}, weight 0",
        f"rank 3: the tree has h4 (port 3, {h4}, weight 0), the switch has none",
    ]
    with SwitchConnection(topo.switches["s1"].grpc, election_id=3) as conn:
        Aggregation(conn).remove_job(0)
    [s1] = tree_report(topo, topo.jobs[0], reader(0, 5.0))["switches"]
    assert s1["read_back"] == {"missing": True}


def test_show_tree_prints_the_tree_top_down_and_as_json(capsys):
    assert main(["show-tree", "1", "--topo", "fattree4", "--no-read-back"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == [
        "job 1: hierarchical, 8 workers, root s3 (topology fattree4)",
        "s3 (root; 8 workers below)",
        "  s10 (rank 0 at s3, uplink port 3; 4 workers below)",
        "    s17 (rank 0 at s10, uplink port 4; 2 workers below)",
    ]
    assert lines[4:6] == ["      h9 (rank 0, port 1)", "      h10 (rank 1, port 2)"]
    assert len(lines) == 1 + 7 + 8
    assert main(["--json", "show-tree", "0", "--topo", "leafspine_hier", "--no-read-back"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(n["switch"], n["parent"] and n["parent"]["parent"]) for n in report["switches"]] == [
        ("s3", None),
        ("s1", "s3"),
        ("s2", "s3"),
    ]
    assert report["switches"][0]["children"][1] == {
        "name": "s2",
        "rank": 1,
        "port": 2,
        "mac": "02:aa:00:00:00:02",
        "ip": "10.0.255.253",
        "is_switch": True,
        "workers": 2,
    }


def test_an_unreachable_switch_is_named_and_the_rest_still_shown():
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        address = f"127.0.0.1:{closed.getsockname()[1]}"
        topo = load("leafspine_hier").with_grpc({"s2": address})
        report = tree_report(topo, topo.jobs[0], reader(0, 0.2))
    assert [n["read_back"] for n in report["switches"]][2] == {
        "error": f"no P4Runtime server answers at {address} within 0.2 s (is the switch running? "
        "is it TLS-only?)"
    }
    assert render(report).splitlines()[5] == (
        f"  s2 (rank 1 at s3, uplink port 3; 2 workers below)  read back: unreachable (no "
        f"P4Runtime server answers at {address} within 0.2 s (is the switch running? is it "
        "TLS-only?))"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["show-tree", "3", "--topo", "leafspine"],
            "argument job: job 3 is not in topology leafspine (its jobs: 0)",
        ),
        (
            ["show-tree", "0", "--topo", "leafspine:33x2,1:hierarchical"],
            "argument --topo leafspine:33x2,1:hierarchical: job 0: switch s34 would aggregate 33 "
            "children (workers and child switches); a switch aggregates at most 32 (the "
            "protocol's MAX_WORKERS)",
        ),
        (["show-tree", "256"], "argument job: expected an integer in 0..255, got '256'"),
        (
            ["show-tree", "0", "--topo", "fattree:3"],
            "argument --topo fattree:3: fattree:3: K must be even and at least 2",
        ),
    ],
)
def test_bad_arguments_exit_2_in_one_line(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].endswith(f"error: {message}") and "Traceback" not in err
