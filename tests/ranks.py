"""Running one function per worker rank in threads, as the tests' workers do beside one another."""

import threading
from collections.abc import Callable


def run_ranks(
    work: Callable[[int], None], ranks: int | range | list[int], timeout: float | None = None
) -> None:
    """Call work(rank) for every rank, each in its own thread, and wait for all of them (each join
    bounded by `timeout` seconds, so a stuck rank fails the test instead of hanging it)."""
    threads = [
        threading.Thread(target=work, args=(r,))
        for r in (range(ranks) if isinstance(ranks, int) else ranks)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
