"""`ina sim`: bad input refused in one line naming the argument and its range (exit 2), and the same
seed gives the same output and JSON, figure for figure (the wall clock's apart)."""

import io
import json
import subprocess
import sys

import pytest
from scapy.utils import rdpcap

from ina.sim import plots, progress
from ina.sim.cli import main

SMALL = ["--workers", "3", "--size", "2000", "--rate", "10Gbps", "--delay", "2us"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--rate", "0"], "argument --rate: expected a rate > 0 in bit/s"),
        (["--rate=-5Gbps"], "argument --rate: expected a rate > 0 in bit/s"),
        (["--nic-rate", "inf"], "argument --nic-rate: expected a rate > 0 in bit/s"),
        (["--delay=-1us"], "argument --delay: expected a duration >= 0 with a unit"),
        (["--delay", "5"], "argument --delay: expected a duration >= 0 with a unit"),
        (["--pipeline", "1 parsec"], "argument --pipeline: expected a duration >= 0"),
        (
            ["--workers", "33"],
            "argument --topo star: job 0 has 33 workers; a job has 1..32 distinct ones (the "
            "protocol's MAX_WORKERS)",
        ),
        (
            ["--workers", "64", "--jobs", "1"],
            "argument --topo star: job 0 has 64 workers; a job has 1..32",
        ),
        (["--workers", "1"], "argument --workers: expected an integer in 2..8192"),
        (
            ["--topo", "fattree:8", "--jobs", "2"],
            "argument --topo fattree:8: job 0 has 64 workers; a job has 1..32",
        ),
        (
            ["--topo", "fattree:3"],
            "argument --topo fattree:3: fattree:3: K must be even and at least 2",
        ),
        (
            ["--topo", "leafspine", "--workers", "4"],
            "argument --workers: applies to --topo star; leafspine has its hosts",
        ),
        (
            ["--topo", "nowhere.yaml"],
            "argument --topo nowhere.yaml: cannot read topology nowhere.yaml",
        ),
        (["--jobs", "0"], "argument --jobs: expected an integer in 1..256"),
        (["--queue", "-1"], "argument --queue: expected an integer >= 0"),
        (["--elems", "12"], "argument --elems: expected one of 8, 16, 32, 64, 128, 256, got '12'"),
        (["--window", "0"], "argument --window: expected an integer in 1..32768"),
        (["--loss", "1.5"], "argument --loss: expected a number in [0.0, 1.0]"),
        (
            ["--loss", "0.1", "--loss-burst", "0,1,0.1,0.1"],
            "argument --loss-burst: not allowed with argument --loss",
        ),
        (["--host-cost", "1us,2us,3us"], "argument --host-cost: expected COST or SEND,RECV"),
        (["--host-cost=-1ns"], "argument --host-cost: expected a duration >= 0"),
        (["--timeout", "0s"], "argument --timeout: expected a duration in (0, 60s]"),
        (
            ["--workers", "4", "--policy", "quorum:5"],
            "argument --policy: job 0: quorum 5 is out of range 1..4 (its workers)",
        ),
        (
            ["--workers", "8", "--jobs", "2", "--policy", "quorum:5"],
            "argument --policy: job 0: quorum 5 is out of range 1..4",
        ),
        (
            ["--window", "2", "--policy", "stale:2"],
            "argument --policy: stale:2 needs a window above 2",
        ),
        (
            ["--json", "/nonexistent/dir/out.json"],
            "argument --json: cannot write /nonexistent/dir/out.json",
        ),
        (
            ["--plot", "/proc/version/plots"],
            "argument --plot: cannot write into /proc/version/plots: /proc/version is "
            "not a writable directory",
        ),
        (
            ["--pcap", "/proc/1/x"],
            "argument --pcap: cannot write into /proc/1/x: /proc/1 is not a writable directory",
        ),
        (
            ["--plot", "a\0b"],
            "argument --plot: expected a directory's path, got 'a\\x00b' (a path has no NUL byte)",
        ),
        (
            ["--compare", "ring,tree"],
            "argument --compare: expected a comma-separated list of ring, ps, got 'ring,tree'",
        ),
        (
            ["--compare", "ps", "--policy", "quorum:2"],
            "argument --compare: the parameter server runs the sync policy only, not quorum:2",
        ),
        (
            ["--compare", "ring,ps", "--workers", "8", "--jobs", "2"],
            "argument --compare: the parameter server serves one job",
        ),
        (["--mtu", "1500"], "argument --mtu: expected one of 256, 512, 1024, 2048, 4096"),
        (["--ring-chunk", "0"], "argument --ring-chunk: expected an integer in 1..1073741824"),
        (
            ["--workers", "4", "--slow-host", "h5:2x"],
            "argument --slow-host: h5 is not a host of star (hosts h1..h4)",
        ),
        (["--slow-host", "h3:0x"], "argument --slow-host: bad straggler 'h3:0x': use HOST:FACTORx"),
    ],
)
def test_bad_input_is_refused_in_one_line_naming_the_argument(argv, says, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2
    assert err[-1].startswith(f"ina sim: error: {says}"), err
    assert [line for line in err if "error:" in line] == [err[-1]]


def test_the_ina_command_dispatches_sim_and_refuses_without_a_traceback():
    done = subprocess.run(
        [sys.executable, "-m", "ina", "sim", "--rate", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith(
        "ina sim: error: argument --rate: expected a rate > 0"
    )


def run(tmp_path, name: str, argv: list[str], capsys) -> tuple[list[str], dict]:
    path = tmp_path / name
    assert main([*argv, "--json", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    return out, json.loads(path.read_text())


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_same_seed_gives_the_same_output_and_json(tmp_path, capsys, monkeypatch):
    argv = [
        *SMALL,
        "--loss",
        "0.02",
        "--queue",
        "20000",
        "--ecn",
        "3000",
        "--host-cost",
        "50ns,80ns",
        "--pipeline",
        "400ns",
        "--seed",
        "7",
    ]
    files = {
        name: ["--plot", str(tmp_path / name / "plots"), "--pcap", str(tmp_path / name / "pcap")]
        for name in ("a", "b")
    }
    out_a, json_a = run(tmp_path, "a.json", [*argv, *files["a"]], capsys)
    terminal = (
        Terminal()
    )  # run b draws its progress line as on a terminal, every 64 frames toward a worker
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(progress, "REFRESH_S", 0.0)
    out_b, json_b = run(tmp_path, "b.json", [*argv, *files["b"]], capsys)
    drawn = terminal.getvalue().split("\r")
    assert (
        len(drawn) > 2
        and drawn[-1].startswith("ina sim [########################] 100%  ")
        and drawn[-1][-1] == "\n"
    )
    wall_a, wall_b = json_a.pop("wall"), json_b.pop("wall")
    assert json.dumps(json_a, sort_keys=True) == json.dumps(json_b, sort_keys=True)
    written = sorted(path.relative_to(tmp_path / "a") for path in (tmp_path / "a").rglob("*.*"))
    assert len(written) == 6 + len(
        plots.FILES
    )  # a pcap per link direction, the plots and their data
    assert written == sorted(
        path.relative_to(tmp_path / "b") for path in (tmp_path / "b").rglob("*.*")
    )
    for path in written:  # pcaps, PNGs and plots.json alike, byte for byte
        assert (tmp_path / "a" / path).read_bytes() == (tmp_path / "b" / path).read_bytes(), path
    assert wall_a["run_s"] > 0 and wall_b["arrivals_per_s"] > 0
    machine = ("wall ", "wrote ")  # the wall clock, and the file's own name
    assert [line for line in out_a if not line.startswith(machine)] == [
        line for line in out_b if not line.startswith(machine)
    ]
    results = json_a["results"]
    assert (
        results["verified"]
        and sum(link["up"]["lost"] + link["down"]["lost"] for link in results["links"]) > 0
    )
    assert json_a["config"]["link"] == {
        "rate": 10e9,
        "delay": 2e-6,
        "queue": 20000,
        "ecn": 3000,
        "loss": 0.02,
    }
    assert json_a["config"]["host"] == {"nic_rate": 10e9, "send_cost": 50e-9, "recv_cost": 80e-9}
    assert json_a["seed"] == 7 and json_a["git"]
    # Another seed loses other frames: the seed reaches every link.
    _out, json_c = run(tmp_path, "c.json", [*argv[:-1], "8"], capsys)
    assert json_c["results"]["links"] != results["links"]


def test_the_output_names_the_time_goodput_and_every_link(capsys):
    assert main(SMALL) == 0
    out = capsys.readouterr().out
    assert (
        "ina sim: 3 workers in 1 job(s) x 2000 int32" in out
        and "star at 10 Gbit/s, 2 us per link" in out
    )
    assert "switch s1     job 0   accepted 96, completed 32, results_sent 96" in out
    assert "communication time" in out and "lossless bound" in out and "goodput per worker" in out
    assert "every sum bit-exact" in out and "arrivals per wall second" in out
    assert [line.split()[:2] for line in out.splitlines() if line.startswith("h")] == [
        ["h1-s1", "up"],
        ["h1-s1", "down"],
        ["h2-s1", "up"],
        ["h2-s1", "down"],
        ["h3-s1", "up"],
        ["h3-s1", "down"],
    ]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        (
            "switches: {s1: {aggregator: true}}\nhosts: [h1, h2, h3]\nlinks: [[h1, s1], [h2, s1]]\n",
            "host h3 is linked to no switch",
        ),
        (
            "switches: {s1: {aggregator: true}, s2: {}}\nhosts: [h1, h2, h3]\nlinks: [[h1, s1], [h2, s1], [h3, s2]]\n",
            "switch s2 is not reachable from s1 over switch links",
        ),
    ],
)
def test_a_topology_with_a_host_no_switch_reaches_is_refused(spec, says, tmp_path, capsys):
    path = tmp_path / "cut.yaml"
    path.write_text(spec)
    with pytest.raises(SystemExit) as exit_:
        main(["--topo", str(path), "--jobs", "1"])
    assert exit_.value.code == 2
    assert (
        capsys.readouterr().err.strip().splitlines()[-1]
        == f"ina sim: error: argument --topo {path}: {says}"
    )


def test_a_topology_file_without_jobs_is_refused_unless_jobs_are_dealt(tmp_path, capsys):
    path = tmp_path / "pair.yaml"
    path.write_text(
        "switches: {s1: {aggregator: true}}\nhosts: [h1, h2]\nlinks: [[h1, s1], [h2, s1]]\n"
    )
    with pytest.raises(SystemExit) as exit_:
        main(["--topo", str(path)])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"ina sim: error: argument --topo {path}: the topology has no jobs (declare them in the file, or give --jobs)"
    )
    assert main(["--topo", str(path), "--jobs", "1", "--size", "100"]) == 0
    assert "ina sim: 2 workers in 1 job(s) x 100 int32" in capsys.readouterr().out


def test_no_progress_line_off_a_terminal_or_with_quiet(capsys, monkeypatch):
    monkeypatch.setattr(
        progress, "REFRESH_S", 0.0
    )  # a line, if any, at every 64 frames toward a worker
    assert main(SMALL) == 0
    assert capsys.readouterr().err == ""  # pytest's stderr is no terminal
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main([*SMALL, "--quiet"]) == 0
    assert terminal.getvalue() == ""
    assert main(SMALL) == 0
    assert terminal.getvalue().startswith("\rina sim [")


def test_a_file_that_cannot_be_written_after_the_run_is_one_line(tmp_path, capsys):
    (tmp_path / "plots.json").mkdir()
    assert main([*SMALL, "--plot", str(tmp_path)]) == 1
    assert (
        capsys.readouterr().err
        == f"ina sim: cannot write {tmp_path / 'plots.json'}: Is a directory\n"
    )


def test_compare_sets_the_switch_the_ring_and_the_server_side_by_side(tmp_path, capsys):
    plots_dir, pcap_dir = tmp_path / "plots", tmp_path / "pcap"
    argv = [*SMALL, "--compare", "ring,ps", "--mtu", "1024", "--ring-chunk", "2048"]
    argv += ["--plot", str(plots_dir), "--pcap", str(pcap_dir)]
    out, report = run(tmp_path, "compare.json", argv, capsys)
    rows = [line.split()[0] for line in out if line.split()[-1:] == ["verified"]]
    assert rows == ["switch", "ring", "ps"]
    assert set(report["compare"]) == {"ring", "ps"} and report["results"]["verified"]
    ring, ps = report["compare"]["ring"], report["compare"]["ps"]
    assert (
        ring["verified"]
        and ps["verified"]
        and ring["lossless_bound_s"] > 0
        and ps["lossless_bound_s"] is None
    )
    assert ring["transport"] == {
        "kind": "roce",
        "mtu": 1024,
        "window": 64,
        "ack_every": 8,
        "timeout": 4.096e-6 * 2**14,
        "retries": 7,
        "chunk_bytes": 2048,
    }
    assert ps["server"]["received"] == 3 * 32 and len(ps["links"]) == 4 and len(ring["links"]) == 3
    # Each method's plots and pcaps in its own directory, the iteration time per method beside them.
    assert sorted(p.name for p in plots_dir.iterdir()) == sorted(
        ["switch", "ring", "ps", *plots.METHODS_FILES]
    )
    methods = {"switch": report["results"], "ring": ring, "ps": ps}
    assert json.loads((plots_dir / "methods.json").read_text()) == {
        "iteration_s": {m: r["communication_s"] for m, r in methods.items()}
    }
    for method, results in methods.items():
        assert sorted(p.name for p in (plots_dir / method).iterdir()) == sorted(plots.FILES)
        drawn = json.loads((plots_dir / method / "plots.json").read_text())
        assert drawn["goodput"]["bps"] == results["goodput_bps"]
        frames = sum(link["up"]["frames"] + link["down"]["frames"] for link in results["links"])
        captures = list((pcap_dir / method).iterdir())
        assert len(captures) == 2 * len(results["links"])
        assert sum(len(rdpcap(str(path))) for path in captures) == frames


def test_the_ring_runs_over_tcp_when_asked(tmp_path, capsys):
    out, report = run(
        tmp_path, "tcp.json", [*SMALL, "--compare", "ring", "--ring-transport", "tcp"], capsys
    )
    assert [line.split()[0] for line in out if line.split()[-1:] == ["verified"]] == [
        "switch",
        "ring",
    ]
    ring = report["compare"]["ring"]
    assert ring["verified"] and ring["lossless_bound_s"] is None
    assert ring["transport"] == {
        "kind": "tcp",
        "mss": 1448,
        "initial_window": 10,
        "receive_window": 3 << 20,
        "delayed_ack": 0.04,
        "min_rto": 0.2,
        "initial_rto": 1.0,
        "retries": 15,
        "host_queue": 64 << 10,
        "chunk_bytes": 32768,
    }


def test_compare_gives_the_same_figures_for_the_same_seed(tmp_path, capsys):
    argv = [
        *SMALL,
        "--compare",
        "ring,ps",
        "--mtu",
        "1024",
        "--ring-chunk",
        "2048",
        "--loss",
        "0.05",
        "--seed",
        "3",
    ]
    (_out_a, a), (_out_b, b) = (
        run(tmp_path, "a.json", argv, capsys),
        run(tmp_path, "b.json", argv, capsys),
    )
    for report in (a, b):
        report.pop("wall")
        for method in report["compare"].values():
            method.pop("wall")
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert all(
        sum(link["up"]["lost"] + link["down"]["lost"] for link in method["links"]) > 0
        for method in a["compare"].values()
    )
