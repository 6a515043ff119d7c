import pytest

from ina.hosts import batch


@pytest.fixture(params=["batch", "datagram"])
def worker_io(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test once on each of the worker's I/O paths (INA_WORKER_IO, read by Worker); the
    batched one fails rather than skips where its helper cannot be built."""
    if request.param == "batch":
        assert batch.helper() is not None, batch.refusal()
    monkeypatch.setenv("INA_WORKER_IO", request.param)
    return request.param
