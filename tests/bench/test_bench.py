"""The benchmarks run on tiny configurations and write well-formed JSON, PNG plots and a summary."""

import json

import pytest

from ina.bench import cli
from ina.bench.cli import (
    bench_allreduce,
    bench_compile,
    bench_profile,
    bench_switch,
    main,
    markdown,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_compile_benchmark_writes_json_and_png(tmp_path):
    rows = bench_compile(tmp_path, reps=1)
    data = json.loads((tmp_path / "compile.json").read_text())
    assert data["benchmark"] == "compile" and data["machine"]["cores"] >= 1 and data["git"]
    assert data["results"] == rows and [r["elems"] for r in rows][:3] == [16, 32, 64]
    for r in rows:  # one rep: its one measurement is every statistic
        s = r["seconds"]
        assert (s["reps"], s["values"]) == (1, [s["median"]]) and s["min"] == s["median"] == s[
            "max"
        ]
    assert (tmp_path / "compile.png").read_bytes()[:8] == PNG_MAGIC


def test_switch_benchmark_in_process(tmp_path):
    configs = [("forward", 8), ("aggregate", 16)]  # each a program compiled per engine and rep
    rows = bench_switch(tmp_path, reps=2, seconds=0.05, veth=False, configs=configs)
    assert [(r["engine"], r["kind"], r["elems"]) for r in rows] == [
        (engine, kind, elems) for engine in ("native", "python") for kind, elems in configs
    ]
    for r in rows:
        stats = r["packets_per_s"]
        assert stats["reps"] == 2 and stats["min"] <= stats["median"] <= stats["max"]
    assert (tmp_path / "switch.png").read_bytes()[:8] == PNG_MAGIC
    summary = markdown(tmp_path, {"switch": rows}).read_text()
    assert "| in-process | native | aggregate | 16 |" in summary
    assert "| in-process | python | aggregate | 16 |" in summary


def test_cli_target_bmv2_without_bmv2_says_where_to_get_it(capsys, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")  # no simple_switch_grpc, whatever the machine has
    assert main(["switch", "--target", "bmv2", "--no-veth"]) == 1
    assert "--target bmv2 needs simple_switch_grpc and p4c-bm2-ss" in capsys.readouterr().out


def test_cli_refuses_unknown_benchmark(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["nonsense"])
    assert exit_.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_profile_splits_native_time_by_stage_and_profiles_python(tmp_path):
    text = bench_profile(tmp_path, seconds=0.05, elems=8)
    assert "in-process aggregate E=8" in text and "packets/s under the profiler" in text
    assert "act_" in text and "engine.py" in text  # the Python engine's generated functions
    rows = json.loads((tmp_path / "profile_native.json").read_text())["results"]
    assert [(r["mode"], r["kind"]) for r in rows] == [
        ("in-process", "forward"),
        ("in-process", "aggregate"),
    ]
    for r in rows:  # the profiled build counted every stage a packet crosses
        assert r["packets"] > 0 and all(r[s] > 0 for s in ("parse", "lookup", "actions", "deparse"))
    assert (tmp_path / "profile_native.png").read_bytes()[:8] == PNG_MAGIC


@pytest.mark.netns
def test_profile_over_veth_counts_the_port_loop(tmp_path):
    bench_profile(tmp_path, seconds=0.5, elems=8, veth=True)
    rows = json.loads((tmp_path / "profile_native.json").read_text())["results"]
    veth = [r for r in rows if r["mode"] == "veth"]
    assert [r["kind"] for r in veth] == ["forward", "aggregate"]
    for r in veth:  # ina switch --profile wrote the pipeline's and the port loop's ticks
        assert r["packets"] > 0 and r["io_receive"] > 0 and r["io_send"] > 0 and r["parse"] > 0


@pytest.mark.netns
@pytest.mark.slow
def test_allreduce_benchmark_sweeps_in_mininet(tmp_path, capsys):
    rows = bench_allreduce(
        tmp_path,
        reps=1,
        sweeps={"workers": [2], "elems": [16], "loss": [0.05]},
        base={"size": 8192},
    )
    assert "failed verification" not in capsys.readouterr().out
    assert [
        (r["target"], r["sweep"], r["workers"], r["elems"], r["aggregation"]) for r in rows
    ] == [
        ("builtin", "workers", 2, 64, "in-network"),
        ("builtin", "workers", 2, 64, "host baseline"),
        ("builtin", "elems", 2, 16, "in-network"),
        ("builtin", "loss", 2, 64, "in-network"),
    ]
    data = json.loads((tmp_path / "allreduce.json").read_text())
    assert len(data["results"]) == 4
    for r in rows:  # each figure is exactly what its run recorded in result.json (one rep)
        config = {k: r[k] for k in ("elems", "jobs", "loss", "size", "slots", "target", "workers")}
        tag = "-".join(f"{k}{v}" for k, v in config.items()) + (
            "-baseline" if r["aggregation"] == "host baseline" else ""
        )
        run = json.loads((tmp_path / "runs" / f"{tag}-0" / "result.json").read_text())
        workers = run["workers"]
        assert len(workers) == r["workers"] and all(w["verified"] for w in workers)
        goodput = sum(w["goodput_elements_per_s"] for w in workers) / len(workers)
        assert r["goodput_elements_per_s_per_worker"]["values"] == [goodput]
        assert r["gbps_per_worker"]["values"] == [goodput * 32 / 1e9]
        assert r["seconds"]["values"] == [max(w["elapsed_s"] for w in workers)]
        assert r["retransmissions"]["values"] == [sum(w["retransmissions"] for w in workers)]
        assert r["switch_cpu_s"]["values"] == [sum(run["switch_cpu_s"].values())]
        ports = run["switch_stats"]["s1"]["ports"]
        lost = sum(c.get("drop_sim_in", 0) + c.get("drop_sim_out", 0) for c in ports.values())
        assert r["lost_packets"]["values"] == [lost] and (lost > 0) == (
            r["loss"] > 0
        )  # ~26 expected at 5%
        if lost:
            assert r["resends_per_lost"]["values"] == [r["retransmissions"]["values"][0] / lost]
        else:
            assert "resends_per_lost" not in r
    for name in ("vs_workers", "vs_elems", "vs_loss", "resends_vs_loss"):
        assert (tmp_path / f"allreduce_{name}.png").read_bytes()[:8] == PNG_MAGIC


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compile", "--reps", "0"], "argument --reps: expected an integer in 1..1000, got '0'"),
        (
            ["compile", "--reps", "1001"],
            "argument --reps: expected an integer in 1..1000, got '1001'",
        ),
        (
            ["switch", "--seconds", "nan"],
            "argument --seconds: expected a number in (0.0, 3600.0], got 'nan'",
        ),
        (
            ["switch", "--seconds", "-2"],
            "argument --seconds: expected a number in (0.0, 3600.0], got '-2'",
        ),
        (
            ["switch", "--seconds", "1e300"],
            "argument --seconds: expected a number in (0.0, 3600.0], got '1e300'",
        ),
        (
            ["allreduce", "--workers", "1"],
            "argument --workers: expected an integer in 2..16, got '1'",
        ),
    ],
)
def test_cli_bad_numbers_are_one_line_usage_errors(monkeypatch, capsys, argv, message):
    def refuse(*args, **kwargs):
        raise AssertionError("ina bench went past argument checking")

    monkeypatch.setattr(cli, "bench_compile", refuse)
    monkeypatch.setattr(cli, "bench_switch", refuse)
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 2
    assert capsys.readouterr().err.rstrip("\n").splitlines()[-1] == f"ina bench: error: {message}"


def test_cli_out_that_cannot_be_created_is_a_usage_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SystemExit) as exit_:
        cli.main(["compile", "--out", str(blocker / "sub")])
    assert exit_.value.code == 2
    assert (
        f"argument --out: cannot create {blocker / 'sub'}: Not a directory"
        in capsys.readouterr().err
    )


def test_p4runtime_benchmark_sizes_and_big_writes(tmp_path):
    """The pipeline at ELEMS=64 fits the limit; the issue's 12.6 MB Write is over it, the largest
    accepted one is refused for its sender, who is not the primary."""
    from ina.bench.p4runtime_load import PROBES, bench_p4runtime
    from ina.p4rt.proto import MAX_MESSAGE_BYTES

    rows = bench_p4runtime(tmp_path, reps=1)
    assert json.loads((tmp_path / "p4runtime.json").read_text())["results"] == rows
    sizes = [r for r in rows if r["what"] == "size"]
    assert sizes[-2]["message"].startswith("Write of 256 ") and sizes[-1]["message"].startswith(
        "Read page of 4096 "
    )
    assert all(0 < r["bytes"] < MAX_MESSAGE_BYTES and r["share_of_limit"] < 1 for r in sizes)
    issue, limit = rows[len(sizes) :]
    assert 12_600_000 - 100 < issue["bytes"] <= 12_600_000 and issue["write_codes"] == [
        "RESOURCE_EXHAUSTED"
    ]
    assert limit["write_codes"] == ["PERMISSION_DENIED"] and limit["bytes"] <= MAX_MESSAGE_BYTES
    assert issue["protobuf"] == "upb" and 0 <= limit["probes_answered"]["median"] <= PROBES
