"""bench/pool_emu.py in Mininet: preemption and a short churn of jobs through `ina ctl` against
ina's switch. Job 0 is shrunk by a preemption, then preempted onto its host fallback server, then
added again; after every step the switch's jobs read back equal the commands' view, and every
worker of every step verifies its sums."""

from ina.bench.pool_emu import STEPS, placements, pool_emu_run


def test_preemption_and_churn_through_ina_ctl_keep_sums_exact_and_the_tables_equal(tmp_path):
    result, record = pool_emu_run(str(tmp_path))
    assert result.ok, (result.workers, result.switch_stats)
    assert sorted((w["step"], w["job"]) for w in result.workers) == [
        (1, 0), (1, 0),
        (2, 0), (2, 0), (2, 1), (2, 1),
        (3, 0), (3, 0), (3, 1), (3, 1), (3, 2), (3, 2),
        (4, 0), (4, 0), (4, 2), (4, 2),
    ]  # fmt: skip
    assert all(w["verified"] for w in result.workers)
    assert [row["read_back_equal"] for row in record] == [True] * len(STEPS)
    assert [placements(row) for row in record] == [
        {0: (0, 8, False)},
        {0: (0, 4, False), 1: (4, 4, False)},
        {0: (0, 4, True), 1: (4, 4, False), 2: (0, 4, False)},
        {0: (4, 4, False), 2: (0, 4, False)},
        {},
    ]
