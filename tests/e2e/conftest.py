"""Every test here builds a Mininet network: marked `netns` (tests/conftest.py skips them when not
root); as root, a missing Mininet is a broken set-up and fails rather than skips."""

import shutil
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A conftest hook sees every collected item: mark only this folder's."""
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.netns)


@pytest.fixture(autouse=True)
def needs_mininet() -> None:
    if not shutil.which("mnexec"):
        pytest.fail("end-to-end tests need Mininet's mnexec (`make setup` installs it)")
