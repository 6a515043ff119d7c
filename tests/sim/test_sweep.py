"""`ina sim --sweep`: the grid of points, each refused or run as a single run would be; the same
figures from this process, a pool of processes and a Dask cluster; the table, JSON and plot."""

import json
from concurrent.futures import ProcessPoolExecutor

import pytest

from ina.bench import plots
from ina.sim import sweep
from ina.sim.cli import main

SMALL = ["--size", "2000", "--rate", "10Gbps", "--delay", "2us"]
GRID = [*SMALL, "--sweep", "workers=2,3", "--sweep", "policy=sync,quorum:2"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ["--sweep", "workers"],
            "argument --sweep: expected NAME=V1,V2,... with NAME one of topo, workers, jobs, size, "
            "dtype, elems, bits, window, policy, rate, delay, queue, ecn, loss, pipeline, nic-rate, "
            "timeout, slow-host, seed, got 'workers'",
        ),
        (
            ["--sweep", "json=a.json"],
            "argument --sweep: expected NAME=V1,V2,... with NAME one of topo,",
        ),
        (
            ["--sweep", "host-cost=1ns"],
            "argument --sweep: expected NAME=V1,V2,... with NAME one of topo,",
        ),
        (["--sweep", "workers="], "argument --sweep: expected NAME=V1,V2,..."),
        (
            ["--sweep", "workers=2,1"],
            "argument --sweep: workers=1: expected an integer in 2..8192, got '1'",
        ),
        (["--sweep", "rate=0,1Gbps"], "argument --sweep: rate=0: expected a rate > 0 in bit/s"),
        (
            ["--sweep", "delay=1us,-1us"],
            "argument --sweep: delay=-1us: expected a duration >= 0 with a unit",
        ),
        (["--sweep", "loss=0,2"], "argument --sweep: loss=2: expected a number in [0.0, 1.0]"),
        (["--sweep", "policy=sync,quorum"], "argument --sweep: policy=quorum: "),
        (
            ["--sweep", "workers=2", "--sweep", "workers=4"],
            "argument --sweep: workers is swept twice",
        ),
        (
            ["--sweep", "workers=4,33"],
            "argument --topo star: job 0 has 33 workers; a job has 1..32 distinct ones (the "
            "protocol's MAX_WORKERS) (at --sweep point workers=33)",
        ),
        (
            ["--workers", "4", "--sweep", "policy=quorum:4,quorum:5"],
            "argument --policy: job 0: quorum 5 is out of range 1..4 (its workers) (at --sweep point policy=quorum:5)",
        ),
        (
            ["--sweep", "slow-host=h2:2x,h9:2x", "--workers", "4"],
            "argument --slow-host: h9 is not a host of star (hosts h1..h4) (at --sweep point slow-host=h9:2x)",
        ),
        (["--parallel", "2"], "argument --parallel: applies to --sweep"),
        (
            ["--sweep", "workers=2,4", "--compare", "ring"],
            "argument --compare: applies to a single run, not to --sweep",
        ),
        (
            ["--sweep", "workers=2,4", "--pcap", "x"],
            "argument --pcap: applies to a single run, not to --sweep",
        ),
        (
            ["--sweep", "workers=2,4", "--model", "resnet50"],
            "argument --model: applies to a single run, not to --sweep",
        ),
        (["--sweep-plot", "a.png"], "argument --sweep-plot: applies to --sweep"),
        (
            ["--sweep", "workers=2", "--parallel", "0"],
            "argument --parallel: expected an integer in 1..256",
        ),
        (
            ["--sweep", "workers=2", "--dask", "localhost"],
            "argument --dask: expected a Dask scheduler's address SCHEME://HOST:PORT",
        ),
        (
            ["--sweep", "workers=2", "--dask", "tcp://127.0.0.1:8786", "--parallel", "2"],
            "argument --parallel: not allowed with argument --dask",
        ),
        (
            ["--sweep", "workers=2", "--sweep-plot", "/nonexistent/dir/a.png"],
            "argument --sweep-plot: cannot write /nonexistent/dir/a.png",
        ),
    ],
)
def test_a_bad_sweep_is_refused_in_one_line_before_anything_runs(argv, says, capsys, monkeypatch):
    monkeypatch.setattr(sweep, "run", lambda *a, **k: pytest.fail("ran"))
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2
    assert err[-1].startswith(f"ina sim: error: {says}"), err
    assert [line for line in err if "error:" in line] == [err[-1]]


def run(tmp_path, name: str, argv: list[str], capsys) -> tuple[list[str], dict]:
    path = tmp_path / name
    assert main([*argv, "--json", str(path)]) == 0
    return capsys.readouterr().out.splitlines(), json.loads(path.read_text())


def without_wall(report: dict) -> dict:
    return {
        "points": [{k: v for k, v in point.items() if k != "wall"} for point in report["points"]],
        "sweep": report["sweep"],
    }


def test_the_grid_runs_every_point_and_prints_a_line_for_each(tmp_path, capsys):
    out, report = run(tmp_path, "grid.json", [*GRID, "--parallel", "1"], capsys)
    assert report["sweep"] == {"workers": ["2", "3"], "policy": ["sync", "quorum:2"]}
    points = report["points"]
    assert [p["point"] for p in points] == [
        {"workers": "2", "policy": "sync"},
        {"workers": "2", "policy": "quorum:2"},
        {"workers": "3", "policy": "sync"},
        {"workers": "3", "policy": "quorum:2"},
    ]
    assert [(p["config"]["workers"], p["config"]["policy"]) for p in points] == [
        (2, "sync"),
        (2, "quorum:2"),
        (3, "sync"),
        (3, "quorum:2"),
    ]
    assert all(p["results"]["verified"] and p["seed"] == 1 and p["git"] for p in points)
    # Sync, lossless, on a star: the time is docs/simulation.md's bound, whatever the workers.
    assert [
        p["results"]["communication_s"]
        == pytest.approx(p["results"]["lossless_bound_s"], rel=1e-12)
        for p in points
    ] == [True, True, True, False]
    assert out[0].split() == [
        "workers",
        "policy",
        "workers",
        "time",
        "lossless",
        "bound",
        "goodput",
        "min",
        "median",
        "resends",
        "result",
        "wall",
        "s",
    ]
    assert [line.rsplit(maxsplit=1)[0] for line in out[1:4]] == [
        "2       sync            2   13.0816 us     13.0816 us   4.892 Gbit/s   4.892 Gbit/s        0 verified",
        "2       quorum:2        2   13.0816 us     13.0816 us   4.892 Gbit/s   4.892 Gbit/s        0 verified",
        "3       sync            3   13.0816 us     13.0816 us   4.892 Gbit/s   4.892 Gbit/s        0 verified",
    ]
    assert out[4].startswith("3       quorum:2        3 ")
    assert out[5] == f"wrote {tmp_path / 'grid.json'}"


def test_the_same_seed_gives_the_same_figures_in_processes_as_in_this_one(
    tmp_path, capsys, monkeypatch
):
    pools = []

    class Pool(ProcessPoolExecutor):
        def __init__(self, workers, **kwargs):
            pools.append(workers)
            super().__init__(workers, **kwargs)

    monkeypatch.setattr(sweep, "ProcessPoolExecutor", Pool)
    _out, here = run(
        tmp_path, "here.json", [*GRID, "--parallel", "1", "--loss", "0.02", "--seed", "5"], capsys
    )
    assert pools == []
    _out, pool = run(
        tmp_path, "pool.json", [*GRID, "--parallel", "2", "--loss", "0.02", "--seed", "5"], capsys
    )
    assert pools == [2]
    assert without_wall(here) == without_wall(pool)
    assert (
        sum(sum(p["results"]["retransmissions"]) for p in here["points"]) > 0
    )  # the loss reached every executor


def test_the_same_seed_gives_the_same_figures_on_a_dask_cluster(tmp_path, capsys):
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (the extra dask)"
    )
    argv = [*SMALL, "--sweep", "workers=2,3", "--loss", "0.02", "--seed", "5"]
    _out, here = run(tmp_path, "here.json", [*argv, "--parallel", "1"], capsys)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        _out, remote = run(
            tmp_path, "dask.json", [*argv, "--dask", cluster.scheduler_address], capsys
        )
        assert (
            cluster.scheduler.task_prefixes["run_point"].state_counts["memory"] == 2
        )  # the cluster ran both
    assert without_wall(here) == without_wall(remote)


def test_an_unreachable_dask_scheduler_fails_in_one_line(capsys, monkeypatch):
    pytest.importorskip("distributed", reason="dask.distributed is not installed (the extra dask)")
    monkeypatch.setattr(sweep, "DASK_TIMEOUT_S", 1)
    assert main([*SMALL, "--sweep", "workers=2", "--dask", "tcp://127.0.0.1:9"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "ina sim: cannot reach the Dask scheduler at tcp://127.0.0.1:9: "
    )


def test_a_cluster_whose_workers_fail_is_reported_in_one_line(capsys, monkeypatch):
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (the extra dask)"
    )

    def missing(config, git):  # as a worker without ina fails to load the task
        raise ModuleNotFoundError("No module named 'ina'")

    monkeypatch.setattr(sweep, "run_point", missing)
    with distributed.LocalCluster(
        n_workers=1, processes=False, protocol="tcp://", dashboard_address=None
    ) as cluster:
        assert main([*SMALL, "--sweep", "workers=2", "--dask", cluster.scheduler_address]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        f"ina sim: the Dask cluster at {cluster.scheduler_address} could not run the points: "
        "ModuleNotFoundError: No module named 'ina'"
    )
    assert not [line for line in err if "Traceback" in line]


def test_the_plot_has_a_line_per_combination_of_the_other_axes(tmp_path, capsys, monkeypatch):
    drawn = {}
    monkeypatch.setattr(
        plots,
        "lines",
        lambda path, title, xlabel, ylabel, series, ymin: (
            drawn.update(
                path=path, title=title, xlabel=xlabel, ylabel=ylabel, series=series, ymin=ymin
            )
            or path
        ),
    )
    _out, report = run(
        tmp_path,
        "plot.json",
        [*GRID, "--parallel", "1", "--sweep-plot", str(tmp_path / "p.png")],
        capsys,
    )
    goodput = [
        sorted(p["results"]["goodput_bps"])[len(p["results"]["goodput_bps"]) // 2] / 1e9
        for p in report["points"]
    ]
    assert drawn == {
        "path": tmp_path / "p.png",
        "title": "ina sim: goodput per worker against workers",
        "xlabel": "workers",
        "ylabel": "goodput per worker, median (Gbit/s)",
        "ymin": 0,
        "series": {
            "policy=sync": ([2, 3], [goodput[0], goodput[2]]),
            "policy=quorum:2": ([2, 3], [goodput[1], goodput[3]]),
        },
    }


def test_a_categorical_axis_is_plotted_as_categories(tmp_path, capsys):
    path = tmp_path / "policies.png"
    assert (
        main(
            [
                *SMALL,
                "--workers",
                "3",
                "--sweep",
                "policy=sync,quorum:2",
                "--parallel",
                "1",
                "--sweep-plot",
                str(path),
            ]
        )
        == 0
    )
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert capsys.readouterr().out.splitlines()[-1] == f"wrote {path}"


def test_a_point_whose_all_reduce_fails_is_reported_and_the_rest_run(capsys):
    # Every frame lost: no slot completes, the workers give up after their retries.
    assert (
        main(
            [*SMALL, "--workers", "2", "--sweep", "loss=0,1", "--timeout", "1us", "--parallel", "1"]
        )
        == 1
    )
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[:3] == ["0", "2", "13.0816"]
    assert out[2].startswith("1     the all-reduce failed: ")
