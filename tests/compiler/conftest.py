"""Helpers shared by the compiler tests: compile a program from tests/p4 or from inline text."""

import pytest
from compiler_helpers import P4_DIR

from ina.compiler import compile_file


@pytest.fixture
def compile_p4():
    """compile_p4("name") compiles tests/p4/name.p4."""

    def run(name: str, **kwargs):
        return compile_file(P4_DIR / f"{name}.p4", **kwargs)

    return run


@pytest.fixture
def compile_text(tmp_path):
    """compile_text(source) compiles P4 text written to a temporary file prog.p4."""

    def run(source: str, **kwargs):
        path = tmp_path / "prog.p4"
        path.write_text(source)
        return compile_file(path, **kwargs)

    return run
