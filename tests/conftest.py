"""Options shared by every test folder.

`--fuzz-scale X` (or INA_FUZZ_SCALE=X) multiplies the case count of every fuzz test: the default
run stays bounded and seeded, a longer hunt is `pytest -m fuzz --fuzz-scale 50`.
"""

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--fuzz-scale", type=float, default=None,
                     help="multiply the case count of fuzz tests (default 1, or INA_FUZZ_SCALE)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fuzz: seeded, bounded fuzzing; longer with --fuzz-scale")


@pytest.fixture
def fuzz_cases(request: pytest.FixtureRequest):
    """fuzz_cases(n) -> the number of cases to run: n times the fuzz scale, at least 1."""
    scale = request.config.getoption("--fuzz-scale")
    if scale is None:
        scale = float(os.environ.get("INA_FUZZ_SCALE", "1"))
    return lambda n: max(1, int(n * scale))
