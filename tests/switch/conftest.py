import functools
from pathlib import Path

import pytest

from ina.compiler import compile_file

P4_DIR = Path(__file__).resolve().parents[1] / "p4"


@functools.cache
def _compiled(name: str) -> dict:
    return compile_file(P4_DIR / f"{name}.p4").bmv2


@pytest.fixture
def compiled():
    """Compile tests/p4/<name>.p4 once per session; returns a fresh copy of its BMv2 JSON."""
    import copy

    return lambda name: copy.deepcopy(_compiled(name))
