"""`ina train`'s refusals before anything starts (exit 2 with the choices), and a worker process that
gets no answer from its aggregator: it fails within its retry bound, naming the aggregator and job."""

import subprocess
import sys

import pytest

from ina.cli import main as ina
from ina.train.cli import main


@pytest.mark.parametrize(("argv", "listed"), [
    (["--model", "cnn"], "choose from 'softmax', 'mlp'"),
    (["--dataset", "mnist"], "choose from 'digits', 'iris', 'wine', 'breast_cancer'"),
    (["--batch", "30", "--workers", "4"], "use a multiple of 4"),
])
def test_bad_input_lists_the_choices(capsys, argv, listed):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert listed in capsys.readouterr().err


def test_ina_dispatches_train(capsys):
    with pytest.raises(SystemExit) as exit_info:
        ina(["train", "--model", "cnn"])
    assert exit_info.value.code == 2
    assert "ina train: error" in capsys.readouterr().err


def test_worker_without_an_aggregator_fails_naming_it_and_the_job():
    """Nothing answers on 127.0.0.1: the first all-reduce gives up after --max-retries."""
    done = subprocess.run([sys.executable, "-m", "ina.train.worker_main", "--job", "3", "--rank", "1",
                           "--workers", "2", "--epoch", "9", "--switch", "127.0.0.1", "--aggregator", "switch s1",
                           "--timeout", "0.01", "--max-retries", "1", "--epochs", "1"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith("ina train: worker 1 of job 3 lost switch s1 (127.0.0.1): job 3 rank 1: "
                                  "no answer from the switch at 127.0.0.1 after 1 retransmissions")
    assert done.stdout == ""
