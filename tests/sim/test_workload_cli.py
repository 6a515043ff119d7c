"""`ina sim --model` and `--train`: bad values refused in one line naming the argument (exit 2),
per-iteration compute, communication and iteration time in the text and the JSON, the same seed
giving the same figures; --model's plots (with iterations.png) and pcaps."""

import json

import pytest
from scapy.utils import rdpcap

from ina.sim import plots
from ina.sim.cli import main

REPLAY = ["--model", "resnet50", "--scale", "0.0002", "--iterations", "2", "--workers", "3"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ["--model", "resnet50", "--iterations", "0"],
            "argument --iterations: expected an integer in 1..100000",
        ),
        (
            ["--model", "resnet50", "--scale", "0"],
            "argument --scale: expected a number in (0.0, 1.0]",
        ),
        (["--model", "alexnet"], "argument --model: invalid choice: 'alexnet'"),
        (["--train", "mlp:mnist"], "argument --train: expected MODEL:DATASET with MODEL one of"),
        (
            ["--train", "mlp:digits", "--model", "resnet50"],
            "argument --model: not allowed with argument --train",
        ),
        (
            ["--train", "mlp:digits", "--dtype", "int32"],
            "argument --dtype: --train all-reduces its gradients as float32",
        ),
        (
            ["--train", "mlp:digits", "--workers", "8", "--batch", "4"],
            "argument --batch: job 0 has 8 workers: batch 4 "
            "leaves 4 of the 8 workers without a sample: use at "
            "least 8",
        ),
        (
            ["--train", "mlp:digits", "--epochs", "0"],
            "argument --epochs: expected an integer in 1..10000",
        ),
        (["--train", "mlp:digits", "--lr", "0"], "argument --lr: expected a number in (0.0, 10.0]"),
        (
            ["--model", "resnet50", "--straggler", "h9:3x"],
            "argument --straggler h9: not a worker host (workers: h1, h2,",
        ),
        (
            ["--model", "resnet50", "--straggler", "h2:0x"],
            "argument --straggler: bad straggler 'h2:0x'",
        ),
        (
            ["--model", "resnet50", "--straggler-dist", "exp"],
            "argument --straggler-dist: bad distribution 'exp'",
        ),
        (
            ["--model", "resnet50", "--compute=-1ms"],
            "argument --compute: expected a duration >= 0 with a unit",
        ),
        (
            ["--model", "resnet50", "--compute", "2h"],
            "argument --compute: expected a duration >= 0 with a unit",
        ),
        (
            ["--model", "resnet50", "--compute", "3601s"],
            "argument --compute: expected a duration in [0, 3600s]",
        ),
        (["--model", "resnet50", "--epochs", "3"], "argument --epochs: applies to --train"),
        (["--train", "mlp:digits", "--scale", "0.1"], "argument --scale: applies to --model"),
        (["--iterations", "3"], "argument --iterations: applies to --model"),
        (
            ["--model", "resnet50", "--compare", "ring"],
            "argument --compare: applies to the plain all-reduce, not to --model or --train",
        ),
        (
            ["--train", "mlp:digits", "--pcap", "x"],
            "argument --pcap: applies to the plain all-reduce and --model, not to --train",
        ),
        (["--straggler", "h1:2x"], "argument --straggler: applies to --model or --train"),
    ],
)
def test_bad_values_are_refused_in_one_line(argv, says, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2
    assert len([line for line in err if "error:" in line]) == 1
    assert err[-1].startswith(f"ina sim: error: {says}"), err[-1]


def run(tmp_path, name: str, argv: list[str], capsys) -> tuple[list[str], dict]:
    path = tmp_path / name
    assert main([*argv, "--json", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    return [line for line in out if not line.startswith(("wall", "wrote"))], json.loads(
        path.read_text()
    )


def test_replay_prints_and_writes_each_iterations_split(tmp_path, capsys):
    argv = [*REPLAY, "--dtype", "int32", "--compute", "50us", "--straggler", "h3:2x", "--seed", "4"]
    out, data = run(tmp_path, "a.json", argv, capsys)
    assert out[0].startswith(
        "ina sim: resnet50 at scale 0.0002, 5 buckets of 5,114 elements per iteration, 50 us "
        "compute; 3 workers in 1 job(s), star at 100 Gbit/s, 1 us per link, int32, sync, seed 4"
    )
    assert out[1:3] == [
        "stragglers          h3 2x",
        "result              every sum verified (bit-exact)",
    ]
    iterations = data["results"]["iterations"]
    assert [(it["job"], it["iteration"], it["verified"]) for it in iterations] == [
        (0, 1, True),
        (0, 2, True),
    ]
    for it in iterations:
        assert it["compute_s"] == pytest.approx(100e-6, abs=1e-15)
        assert it["iteration_s"] == pytest.approx(
            it["compute_s"] + it["communication_s"], abs=1e-15
        )
        row = next(line for line in out if line.split()[:2] == [str(it["iteration"]), "0"])
        assert row.split()[2:4] == ["100", "us"]
    assert data["config"]["model"] == "resnet50" and data["config"]["stragglers"] == {"h3": 2.0}
    assert data["results"]["buckets"] == [410, 1576, 1313, 1328, 487]
    assert [len(w["iterations"]) for w in data["results"]["workers"]] == [2, 2, 2]
    out_b, data_b = run(tmp_path, "b.json", argv, capsys)
    del data["wall"], data_b["wall"]
    assert (out_b, data_b) == (out, data)


def test_train_reports_time_to_accuracy_in_simulated_seconds(tmp_path, capsys):
    out, data = run(
        tmp_path,
        "t.json",
        [
            "--train",
            "softmax:iris",
            "--epochs",
            "3",
            "--batch",
            "16",
            "--workers",
            "2",
            "--compute",
            "1ms",
        ],
        capsys,
    )
    results = data["results"]
    assert out[0].startswith(
        "ina sim: training softmax on iris, 3 epochs of 7 iterations (batch 16, lr 0.1), 1 ms "
        "compute per iteration; 2 workers in 1 job(s)"
    )
    assert results["weights_identical"] and len(results["epochs"]) == 3
    assert [e["compute_s"] for e in results["epochs"]] == pytest.approx([7e-3] * 3, abs=1e-12)
    assert data["config"]["train"] == "softmax:iris" and data["config"]["sgd"]["epochs"] == 3
    reached = next(
        (
            e["wall_s"]
            for e in results["epochs"]
            if e["test_accuracy"] >= results["target_accuracy"]
        ),
        None,
    )
    assert results["time_to_target_s"] == reached


def test_replay_writes_its_plots_and_a_pcap_per_link_direction(tmp_path, capsys):
    plots_dir, pcap_dir = tmp_path / "plots", tmp_path / "pcap"
    argv = [*REPLAY, "--compute", "20us", "--plot", str(plots_dir), "--pcap", str(pcap_dir)]
    _out, data = run(tmp_path, "a.json", argv, capsys)
    assert sorted(p.name for p in plots_dir.iterdir()) == sorted(
        [*plots.FILES, *plots.WORKLOAD_FILES]
    )
    assert len(list(pcap_dir.iterdir())) == 6  # 3 links, both ways
    drawn = json.loads((plots_dir / "plots.json").read_text())
    results = data["results"]
    assert drawn["iterations"] == {
        "0": [it["iteration_s"] for it in results["iterations"] if it["job"] == 0]
    }
    assert drawn["goodput"]["host"] == [w["host"] for w in results["workers"]]
    frames = sum(link["up"]["frames"] + link["down"]["frames"] for link in results["links"])
    captured = sum(len(rdpcap(str(path))) for path in pcap_dir.iterdir())
    assert captured == frames
