import os
import shutil

import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.netns)


@pytest.fixture(autouse=True)
def needs_root_and_mininet():
    if os.geteuid() != 0 or not shutil.which("mnexec"):
        pytest.fail("end-to-end tests need root and Mininet's mnexec (run `make test` as root)")
