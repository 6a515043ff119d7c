"""`ina run --best-effort` for real: two jobs on one switch whose pool holds one, each job's host
fallback server on the extra host; the collided chunks are summed there and every sum is exact."""

from ina.topologies.runner import RunOptions, run

SIZE, ELEMS = 8192, 16
CHUNKS = SIZE // ELEMS


def test_two_jobs_on_a_pool_for_one_finish_exact_with_the_host_summing_the_collisions(tmp_path):
    result = run(
        RunOptions(
            workers=4,
            jobs=2,
            size=SIZE,
            elems=ELEMS,
            pool_size=8,
            slots=8,  # each job asks for the whole pool: the second shares the first's range
            best_effort=True,
            run_dir=str(tmp_path),
        )
    )
    assert result.ok, (result.workers, result.switch_stats)
    assert sorted((w["job"], w["verified"]) for w in result.workers) == [
        (0, True),
        (0, True),
        (1, True),
        (1, True),
    ]
    jobs = result.switch_stats["s1"]["jobs"]
    for job in (0, 1):
        # both jobs collided: the switch sent chunks of each on to its server ...
        assert jobs[job]["fallback_notices"] > 0 and jobs[job]["fallback_forwarded"] > 0
        # ... and summed the rest itself: every chunk was summed in one place or the other
        shares = [w["fallbacks"] for w in result.workers if w["job"] == job]
        assert all(0 < n < CHUNKS for n in shares)
        assert jobs[job]["completed"] + max(shares) >= CHUNKS
