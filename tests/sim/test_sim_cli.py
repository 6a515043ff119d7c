"""`ina sim`: bad input refused in one line naming the argument and its range (exit 2), and the same
seed gives the same output and JSON, figure for figure (the wall clock's apart)."""

import json
import subprocess
import sys

import pytest

from ina.sim.cli import main

SMALL = ["--workers", "3", "--size", "2000", "--rate", "10Gbps", "--delay", "2us"]


@pytest.mark.parametrize(("argv", "says"), [
    (["--rate", "0"], "argument --rate: expected a rate > 0 in bit/s"),
    (["--rate=-5Gbps"], "argument --rate: expected a rate > 0 in bit/s"),
    (["--nic-rate", "inf"], "argument --nic-rate: expected a rate > 0 in bit/s"),
    (["--delay=-1us"], "argument --delay: expected a duration >= 0 with a unit"),
    (["--delay", "5"], "argument --delay: expected a duration >= 0 with a unit"),
    (["--pipeline", "1 parsec"], "argument --pipeline: expected a duration >= 0"),
    (["--workers", "33"], "argument --topo star: job 0 has 33 workers; a job has 1..32 distinct ones (the "
                          "protocol's MAX_WORKERS)"),
    (["--workers", "64", "--jobs", "1"], "argument --topo star: job 0 has 64 workers; a job has 1..32"),
    (["--workers", "1"], "argument --workers: expected an integer in 2..8192"),
    (["--topo", "fattree:8", "--jobs", "2"], "argument --topo fattree:8: job 0 has 64 workers; a job has 1..32"),
    (["--topo", "fattree:3"], "argument --topo fattree:3: fattree:3: K must be even and at least 2"),
    (["--topo", "leafspine", "--workers", "4"], "argument --workers: applies to --topo star; leafspine has its hosts"),
    (["--topo", "nowhere.yaml"], "argument --topo nowhere.yaml: cannot read topology nowhere.yaml"),
    (["--jobs", "0"], "argument --jobs: expected an integer in 1..256"),
    (["--queue", "-1"], "argument --queue: expected an integer >= 0"),
    (["--elems", "12"], "argument --elems: expected one of 8, 16, 32, 64"),
    (["--window", "0"], "argument --window: expected an integer in 1..32768"),
    (["--loss", "1.5"], "argument --loss: expected a number in [0.0, 1.0]"),
    (["--loss", "0.1", "--loss-burst", "0,1,0.1,0.1"], "argument --loss-burst: not allowed with argument --loss"),
    (["--host-cost", "1us,2us,3us"], "argument --host-cost: expected COST or SEND,RECV"),
    (["--host-cost=-1ns"], "argument --host-cost: expected a duration >= 0"),
    (["--timeout", "0s"], "argument --timeout: expected a duration in (0, 60s]"),
    (["--workers", "4", "--policy", "quorum:5"], "argument --policy: job 0: quorum 5 is out of range 1..4 (its "
                                                 "workers)"),
    (["--workers", "8", "--jobs", "2", "--policy", "quorum:5"], "argument --policy: job 0: quorum 5 is out of range 1..4"),
    (["--window", "2", "--policy", "stale:2"], "argument --policy: stale:2 needs a window above 2"),
    (["--json", "/nonexistent/dir/out.json"], "argument --json: cannot write /nonexistent/dir/out.json"),
    (["--workers", "4", "--slow-host", "h5:2x"], "argument --slow-host: h5 is not a host of star (hosts h1..h4)"),
    (["--slow-host", "h3:0x"], "argument --slow-host: bad straggler 'h3:0x': use HOST:FACTORx"),
])
def test_bad_input_is_refused_in_one_line_naming_the_argument(argv, says, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2
    assert err[-1].startswith(f"ina sim: error: {says}"), err
    assert [line for line in err if "error" in line] == [err[-1]]


def test_the_ina_command_dispatches_sim_and_refuses_without_a_traceback():
    done = subprocess.run([sys.executable, "-m", "ina", "sim", "--rate", "0"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith("ina sim: error: argument --rate: expected a rate > 0")


def run(tmp_path, name: str, argv: list[str], capsys) -> tuple[list[str], dict]:
    path = tmp_path / name
    assert main([*argv, "--json", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    return out, json.loads(path.read_text())


def test_the_same_seed_gives_the_same_output_and_json(tmp_path, capsys):
    argv = [*SMALL, "--loss", "0.02", "--queue", "20000", "--ecn", "3000", "--host-cost", "50ns,80ns",
            "--pipeline", "400ns", "--seed", "7"]
    out_a, json_a = run(tmp_path, "a.json", argv, capsys)
    out_b, json_b = run(tmp_path, "b.json", argv, capsys)
    wall_a, wall_b = json_a.pop("wall"), json_b.pop("wall")
    assert json.dumps(json_a, sort_keys=True) == json.dumps(json_b, sort_keys=True)
    assert wall_a["run_s"] > 0 and wall_b["arrivals_per_s"] > 0
    machine = ("wall ", "wrote ")  # the wall clock, and the file's own name
    assert [line for line in out_a if not line.startswith(machine)] == \
           [line for line in out_b if not line.startswith(machine)]
    results = json_a["results"]
    assert results["verified"] and sum(link["up"]["lost"] + link["down"]["lost"] for link in results["links"]) > 0
    assert json_a["config"]["link"] == {"rate": 10e9, "delay": 2e-6, "queue": 20000, "ecn": 3000, "loss": 0.02}
    assert json_a["config"]["host"] == {"nic_rate": 10e9, "send_cost": 50e-9, "recv_cost": 80e-9}
    assert json_a["seed"] == 7 and json_a["git"]
    # Another seed loses other frames: the seed reaches every link.
    _out, json_c = run(tmp_path, "c.json", [*argv[:-1], "8"], capsys)
    assert json_c["results"]["links"] != results["links"]


def test_the_output_names_the_time_goodput_and_every_link(capsys):
    assert main(SMALL) == 0
    out = capsys.readouterr().out
    assert "ina sim: 3 workers in 1 job(s) x 2000 int32" in out and "star at 10 Gbit/s, 2 us per link" in out
    assert "switch s1     job 0   accepted 96, completed 32, results_sent 96" in out
    assert "communication time" in out and "lossless bound" in out and "goodput per worker" in out
    assert "every sum bit-exact" in out and "arrivals per wall second" in out
    assert [line.split()[:2] for line in out.splitlines() if line.startswith("h")] == [
        ["h1-s1", "up"], ["h1-s1", "down"], ["h2-s1", "up"], ["h2-s1", "down"], ["h3-s1", "up"], ["h3-s1", "down"]]


@pytest.mark.parametrize(("spec", "says"), [
    ("switches: {s1: {aggregator: true}}\nhosts: [h1, h2, h3]\nlinks: [[h1, s1], [h2, s1]]\n",
     "host h3 is linked to no switch"),
    ("switches: {s1: {aggregator: true}, s2: {}}\nhosts: [h1, h2, h3]\nlinks: [[h1, s1], [h2, s1], [h3, s2]]\n",
     "switch s2 is not reachable from s1 over switch links"),
])
def test_a_topology_with_a_host_no_switch_reaches_is_refused(spec, says, tmp_path, capsys):
    path = tmp_path / "cut.yaml"
    path.write_text(spec)
    with pytest.raises(SystemExit) as exit_:
        main(["--topo", str(path), "--jobs", "1"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"ina sim: error: argument --topo {path}: {says}"


def test_a_topology_file_without_jobs_is_refused_unless_jobs_are_dealt(tmp_path, capsys):
    path = tmp_path / "pair.yaml"
    path.write_text("switches: {s1: {aggregator: true}}\nhosts: [h1, h2]\nlinks: [[h1, s1], [h2, s1]]\n")
    with pytest.raises(SystemExit) as exit_:
        main(["--topo", str(path)])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"ina sim: error: argument --topo {path}: the topology has no jobs (declare them in the file, or give --jobs)")
    assert main(["--topo", str(path), "--jobs", "1", "--size", "100"]) == 0
    assert "ina sim: 2 workers in 1 job(s) x 100 int32" in capsys.readouterr().out
