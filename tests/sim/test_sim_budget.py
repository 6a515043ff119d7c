"""sim/budget.py: a run whose memory estimate is above what the machine has available is refused
before anything runs, naming --size (or --parallel for a sweep's points at once), the estimate,
what is available and the most that fits."""

import pytest

from ina.sim import budget
from ina.sim.allreduce import AllReduceConfig
from ina.sim.cli import main


def runs(*configs: AllReduceConfig) -> list[tuple[AllReduceConfig, object]]:
    return [(config, config.plain_topology()) for config in configs]


def test_the_estimate_counts_each_part_of_the_run():
    # 4 workers of 1000 int32: 16 packets each, so 16 of the 128 slots in use; one switch of 256 slots.
    [(config, topo)] = runs(AllReduceConfig(workers=4, size=1000, window=128))
    estimate = budget.estimate(config, topo)
    assert estimate == (
        budget.BASE
        + budget.PER_POOL_SLOT * 256
        + 4 * (budget.PER_SLOT * 16 + budget.PER_ELEMENT["int32"] * 1000)
        + budget.CHECK_PER_ELEMENT * 1000
    )
    # Three switches more, the same workers: each switch and its pool.
    [(more, more_topo)] = runs(AllReduceConfig(topo="leafspine:2x2,2", size=1000, window=128))
    assert budget.estimate(more, more_topo) == pytest.approx(
        estimate + 3 * (budget.PER_SWITCH + budget.PER_POOL_SLOT * 256), rel=1e-12
    )
    # A window past the packets adds nothing but the pool it takes on every switch; float32 costs more.
    [(wide, wide_topo)] = runs(AllReduceConfig(workers=4, size=1000, window=1024))
    assert budget.estimate(wide, wide_topo) == pytest.approx(
        estimate + budget.PER_POOL_SLOT * (1024 - 256), rel=1e-12
    )
    [(floats, floats_topo)] = runs(
        AllReduceConfig(workers=4, size=1000, window=128, dtype="float32")
    )
    assert budget.estimate(floats, floats_topo) == pytest.approx(
        estimate + 4 * (budget.PER_SLOT * 16 + 6 * 1000), rel=1e-12
    )  # 16 more packets: one per slot in use


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_a_run_is_refused_exactly_above_what_is_available_and_told_the_largest_size_that_fits(
    dtype,
):
    config = AllReduceConfig(workers=8, size=1 << 20, dtype=dtype)
    [(_c, topo)] = runs(config)
    need = budget.estimate(config, topo)
    assert budget.refusal(config, topo, free=need) is None
    refused = budget.refusal(config, topo, free=need - 1)
    largest = int(refused.split("--size at most ")[1].split(" here")[0].replace(",", ""))
    assert refused == (
        f"argument --size: 1,048,576 {dtype} x 8 workers needs an estimated {need / 1e9:.2f} GB of "
        f"memory, above the {(need - 1) / 1e9:.2f} GB available; --size at most {largest:,} here "
        "(sim/budget.py)"
    )
    fits = AllReduceConfig(workers=8, size=largest, dtype=dtype)
    over = AllReduceConfig(workers=8, size=largest + 1, dtype=dtype)
    assert budget.estimate(fits, topo) <= need - 1 < budget.estimate(over, topo)


def test_a_machine_too_small_at_any_size_says_so():
    config = AllReduceConfig(workers=8, size=1000)
    [(_c, topo)] = runs(config)
    assert budget.refusal(config, topo, free=budget.BASE).endswith(
        "; --size too large here at any size (fewer workers or switches) (sim/budget.py)"
    )


def test_ina_sim_refuses_a_run_above_the_available_memory_before_anything_runs(capsys, monkeypatch):
    monkeypatch.setattr(budget, "available", lambda: 1e9)
    monkeypatch.setattr("ina.sim.output.simulate", lambda *args, **kwargs: pytest.fail("ran"))
    with pytest.raises(SystemExit) as exit_:
        main(["--workers", "32", "--size", "100000000"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and len([line for line in err if "error:" in line]) == 1
    assert err[-1].startswith(
        "ina sim: error: argument --size: 100,000,000 int32 x 32 workers needs an estimated "
    )
    # (1 GB - base - one switch's pool of 256 slots - 32 workers x 128 slots) / (32 x 21 + 24 bytes per element)
    assert (1e9 - 81.4e6 - 256 * 3.5e3 - 32 * 128 * 2.6e3) // (32 * 21 + 24) == 1_303_239
    assert err[-1].endswith(
        " GB of memory, above the 1.00 GB available; --size at most 1,303,239 here (sim/budget.py)"
    )


def test_the_points_a_sweep_runs_at_once_must_fit_together(capsys, monkeypatch):
    small, large = AllReduceConfig(workers=2, size=1000), AllReduceConfig(workers=2, size=1 << 20)
    together = runs(small, large, large)
    needs = sorted(budget.estimate(c, t) for c, t in together)
    assert budget.most_at_once(together, free=needs[2] + needs[1]) == 2
    assert budget.most_at_once(together, free=needs[2] + needs[1] - 1) == 1
    assert budget.most_at_once(together, free=sum(needs)) == 3
    assert budget.parallel_refusal(together, 2, free=needs[2] + needs[1]) is None
    assert budget.parallel_refusal(together, 2, free=needs[2] + needs[1] - 1) == (
        f"argument --parallel: 2 points at once need an estimated {(needs[2] + needs[1]) / 1e9:.2f} GB of memory, "
        f"above the {(needs[2] + needs[1] - 1) / 1e9:.2f} GB available; --parallel at most 1 here (sim/budget.py)"
    )
    # Through ina sim: --parallel given and too many refused; left out, as many as fit run at once.
    monkeypatch.setattr(budget, "available", lambda: needs[2] + needs[1] - 1)
    with pytest.raises(SystemExit):
        main(["--workers", "2", "--sweep", "size=1000,1048576,1048577", "--parallel", "2"])
    assert (
        "ina sim: error: argument --parallel: 2 points at once need an estimated"
        in capsys.readouterr().err
    )
    ran = []
    monkeypatch.setattr(
        "ina.sim.sweep.run", lambda grid, git, parallel, dask: ran.append(parallel) or []
    )
    monkeypatch.setattr("ina.sim.sweep.table", lambda grid, reports: "")
    assert main(["--workers", "2", "--sweep", "size=1000,1048576,1048577"]) == 0
    assert ran == [1]
