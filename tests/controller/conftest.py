"""The in-process switch with ina's aggregation program (8 elements, 16 slots) behind a real
P4Runtime server, for the pool's tests."""

import functools
import threading

import pytest

from ina.compiler import compile_file
from ina.controller.client import SwitchConnection
from ina.p4src import AGGREGATE_P4
from ina.switch.engine import Switch
from ina.switch.p4runtime.server import P4RuntimeService, serve


@functools.cache
def small_program():
    return compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"})


@pytest.fixture
def served():
    """(a primary connection with election id 10, the server's address)."""
    srv = serve(P4RuntimeService(Switch(), threading.Lock()), "127.0.0.1:0")
    address = f"127.0.0.1:{srv.bound_port}"
    conn = SwitchConnection(address, election_id=10)
    conn.set_pipeline(small_program().bmv2, small_program().p4info)
    yield conn, address
    conn.close()
    srv.stop(None)
