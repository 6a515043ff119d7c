"""`ina train`'s refusals before anything starts (exit 2 with the choices), and a worker process that
gets no answer from its aggregator: it fails within its retry bound, naming the aggregator and job."""

import subprocess
import sys
from types import SimpleNamespace

import pytest

from ina.cli import main as ina
from ina.topologies import lock
from ina.train import cli, worker_main
from ina.train.cli import main
from ina.train.feedback import ErrorFeedback
from ina.train.options import lanes_argv

Epoch = SimpleNamespace(test_accuracy=0.9)  # the reference's last epoch


@pytest.mark.parametrize(
    ("argv", "listed"),
    [
        (["--model", "cnn"], "choose from 'softmax', 'mlp'"),
        (["--dataset", "mnist"], "choose from 'digits', 'iris', 'wine', 'breast_cancer'"),
        (
            ["--batch", "3", "--workers", "4"],
            "batch 3 leaves 1 of the 4 workers without a sample: use at least 4",
        ),
    ],
)
def test_bad_input_lists_the_choices(capsys, argv, listed):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert listed in capsys.readouterr().err


@pytest.fixture
def nothing_trains(monkeypatch, tmp_path):
    """Past the argument checks `ina train` trains its reference, then starts Mininet: fail instead.
    As root it takes the machine lock first: its own file, so a live run elsewhere changes nothing."""
    monkeypatch.setenv(lock.PATH_VARIABLE, str(tmp_path / "machine.lock"))

    def refuse(*args, **kwargs):
        raise AssertionError("ina train went past its argument checks")

    monkeypatch.setattr(cli, "train", refuse)
    monkeypatch.setattr(cli, "run", refuse)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # the MLP's arrays per hidden unit on digits (1437 training rows, 64 features, 10 classes):
        # 8 * 3 * 1437 + 96 * (64 + 1 + 10) = 41688 bytes per worker, 4 workers by default, within 4 GiB
        (
            ["--hidden", "1000000000"],
            "argument --hidden: expected an integer in 1..25756 (166752 bytes per hidden unit "
            "on digits over 4 workers, at most 4 GiB), got '1000000000'",
        ),
        (
            ["--hidden", "25757"],
            "argument --hidden: expected an integer in 1..25756 (166752 bytes per hidden unit on "
            "digits over 4 workers, at most 4 GiB), got '25757'",
        ),
        (
            ["--hidden", "103027", "--workers", "1", "--batch", "32"],
            "argument --hidden: expected an integer in 1..103026 (41688 bytes per hidden unit on digits, at most 4 GiB), "
            "got '103027'",
        ),
        (["--bw", "1001"], "argument --bw: expected a number in (0.0, 1000], got '1001'"),
        (
            ["--elems", "512"],
            "argument --elems: expected one of 8, 16, 32, 64, 128, 256, got '512'",
        ),
        (["--bits", "4"], "argument --bits: expected one of 32, 16, 8, got '4'"),
        (
            ["--bits", "16", "--aggregation", "ring"],
            "argument --bits/--error-feedback: lanes and their residuals are the switch's; "
            "--aggregation ring has none",
        ),
        (
            ["--error-feedback", "--aggregation", "ps"],
            "argument --bits/--error-feedback: lanes and their residuals are the switch's; "
            "--aggregation ps has none",
        ),
        (
            ["--error-feedback", "--replay", "resnet50"],
            "argument --error-feedback: a replay sends no gradients to carry a residual of",
        ),
        (
            ["--straggler", "h2:5x"],
            "argument --straggler: h2:5x slows the emulated compute, and there is none "
            "(--compute-ms is 0): add --compute-ms MS, e.g. --compute-ms 20",
        ),
    ],
)
def test_memory_and_link_arguments_are_refused_before_training(
    nothing_trains, capsys, argv, message
):
    """These ended in MemoryError (--hidden) or a link Mininet silently left unlimited (--bw)."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"ina train: error: {message}"


@pytest.mark.parametrize(
    "argv", [["--hidden", "25756"], ["--model", "softmax", "--hidden", "1000000000"]]
)
def test_a_model_within_the_memory_budget_reaches_training(nothing_trains, tmp_path, argv):
    with pytest.raises(AssertionError, match="went past its argument checks"):
        main([*argv, "--out", str(tmp_path / "run")])
    assert (tmp_path / "run").is_dir()


@pytest.mark.parametrize("replay", [[], ["--replay", "resnet50"]])
def test_a_run_directory_that_cannot_be_made_is_refused_before_training(
    nothing_trains, tmp_path, capsys, replay
):
    """It was made only in Mininet, after the reference had trained: a traceback then."""
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit) as exit_info:
        main([*replay, "--out", str(tmp_path / "file" / "run")])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"ina train: error: argument --out: cannot create {tmp_path / 'file' / 'run'}: Not a directory"
    )


def test_ina_dispatches_train(capsys):
    with pytest.raises(SystemExit) as exit_info:
        ina(["train", "--model", "cnn"])
    assert exit_info.value.code == 2
    assert "ina train: error" in capsys.readouterr().err


def test_worker_without_an_aggregator_fails_naming_it_and_the_job():
    """Nothing answers on 127.0.0.1: the first all-reduce gives up after --max-retries."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ina.train.worker_main",
            "--job",
            "3",
            "--rank",
            "1",
            "--workers",
            "2",
            "--epoch",
            "9",
            "--switch",
            "127.0.0.1",
            "--aggregator",
            "switch s1",
            "--timeout",
            "0.01",
            "--max-retries",
            "1",
            "--epochs",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.startswith(
        "ina train: worker 1 of job 3 lost switch s1 (127.0.0.1): job 3 rank 1: "
        "no answer from the switch at 127.0.0.1 after 1 retransmissions"
    )
    assert done.stdout == ""


def test_lanes_and_error_feedback_reach_the_run_and_each_worker(nothing_trains, monkeypatch):
    """`ina train --bits 8 --error-feedback`: the run's options, the argv each worker process gets
    (lanes_argv) and, in the worker, Worker(bits=8) and an 8-bit ErrorFeedback for the job's n."""
    seen = {}
    monkeypatch.setattr(
        cli, "train_and_compare", lambda args, opts, *_: seen.setdefault("opts", opts)
    )
    main(["--bits", "8", "--error-feedback", "--workers", "2", "--epochs", "1"])
    assert (seen["opts"].bits, seen["opts"].error_feedback) == (8, True)

    class Worker:
        allreduce = None

        def __init__(self, *args, **kwargs):
            seen["bits"] = kwargs["bits"]

        def start(self):
            pass

        def close(self):
            pass

    def train(*args, feedback, **kwargs):
        seen["feedback"] = feedback
        raise KeyboardInterrupt  # stop before any all-reduce

    monkeypatch.setattr(worker_main, "Worker", Worker)
    monkeypatch.setattr(worker_main, "train", train)
    common = [
        "--job",
        "0",
        "--rank",
        "1",
        "--workers",
        "9",
        "--epoch",
        "1",
        "--switch",
        "10.0.0.1",
        "--elems",
        "64",
    ]
    with pytest.raises(KeyboardInterrupt):
        worker_main.main([*common, *lanes_argv(seen["opts"].bits, seen["opts"].error_feedback)])
    feedback = seen["feedback"]
    assert isinstance(feedback, ErrorFeedback)
    assert (seen["bits"], feedback.bits, feedback.room, feedback.values) == (8, 8, 3, 256)
    with pytest.raises(KeyboardInterrupt):
        worker_main.main([*common, *lanes_argv(16, False)])
    assert (seen["bits"], seen["feedback"]) == (16, None)


def test_a_switch_that_cannot_be_programmed_ends_the_run_in_one_line(monkeypatch, tmp_path, capsys):
    """A ControllerError (a native build slower than the controller's wait) was a traceback."""
    from ina.controller.client import ControllerError
    from ina.train import runner

    monkeypatch.setenv(lock.PATH_VARIABLE, str(tmp_path / "machine.lock"))
    monkeypatch.setattr(runner.os, "geteuid", lambda: 0)

    def hung(*_args):
        raise ControllerError("127.0.0.1:9559: no answer to set pipeline within 30.0 s")

    monkeypatch.setattr(runner, "_run_on_machine", hung)
    monkeypatch.setattr(cli, "train", lambda *_a, **_k: (None, SimpleNamespace(epochs=[Epoch])))
    assert main(["--epochs", "1", "--out", str(tmp_path / "run")]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        "ina train: programming the switch: 127.0.0.1:9559: no answer to set pipeline within 30.0 s"
    )
