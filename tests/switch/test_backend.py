"""The two backends behind Switch: each built from the program model alone, each the one owner of
its state, both with the interface of backend.py."""

import inspect

import pytest

from ina.switch.engine import Switch
from ina.switch.model.errors import PipelineError
from ina.switch.model.load import load_program
from ina.switch.native import datapath
from ina.switch.native.datapath import NativeBackend
from ina.switch.native.views import NativeMulticast, NativeTable
from ina.switch.python import pipeline
from ina.switch.python.backend import PythonBackend
from ina.switch.state.backend import Backend

IPV4_TO_10_0_1_5 = bytes.fromhex(
    "00000000000100000000000208004500002100010000401165c60a0000010a00010503e807d0000d9b4468656c6c6f"
)
ROUTE = ([("lpm", 0x0A000100, 24)], "MyIngress.ipv4_forward", [0x0A0A0A0A0A0A, 3])


def _interface() -> set[str]:
    members = set(Backend.__annotations__)
    members |= {name for name, _ in inspect.getmembers(Backend) if not name.startswith("_")}
    return members


@pytest.mark.parametrize("cls", [PythonBackend, NativeBackend])
def test_each_backend_has_the_whole_interface(compiled, cls) -> None:
    backend = cls(*load_program(compiled("basic_forward")), 511)
    missing = {name for name in _interface() if not hasattr(backend, name)}
    assert not missing
    assert backend.name in ("python", "native") and backend.max_port == 511
    assert backend.program["pipelines"]


def test_the_native_backend_needs_no_python_pipeline(compiled, monkeypatch) -> None:
    def never(*_args, **_kwargs):
        raise AssertionError("the Python pipeline was generated for the native backend")

    monkeypatch.setattr(pipeline, "_build", never)
    sw = Switch(engine="native")
    sw.load(compiled("basic_forward"))
    sw.tables["MyIngress.ipv4_lpm"].add(*ROUTE)
    [(port, _packet)] = sw.process(0, IPV4_TO_10_0_1_5)
    assert port == 3 and sw.engine_name == "native"


def test_the_python_backend_needs_no_c(compiled, monkeypatch) -> None:
    def never(*_args, **_kwargs):
        raise AssertionError("C was generated for the Python backend")

    monkeypatch.setattr(datapath, "generate", never)
    sw = Switch(engine="python")
    sw.load(compiled("basic_forward"))
    sw.tables["MyIngress.ipv4_lpm"].add(*ROUTE)
    assert [port for port, _ in sw.process(0, IPV4_TO_10_0_1_5)] == [3]


def test_native_state_is_one_object_per_piece_whose_changes_reach_c(compiled) -> None:
    """The objects Switch hands out are the native backend's own; C follows each change at once."""
    sw = Switch(engine="native")
    sw.load(compiled("basic_forward"))
    table = sw.tables["MyIngress.ipv4_lpm"]
    assert isinstance(table, NativeTable) and isinstance(sw.multicast, NativeMulticast)
    assert sw.tables is sw.pipeline.tables and sw.multicast is sw.pipeline.multicast
    handle = table.add(*ROUTE)
    assert [port for port, _ in sw.process(0, IPV4_TO_10_0_1_5)] == [3]
    table.modify(handle, "MyIngress.ipv4_forward", [0x0A0A0A0A0A0A, 4])
    assert [port for port, _ in sw.process(0, IPV4_TO_10_0_1_5)] == [4]
    table.delete(handle)
    assert sw.process(0, IPV4_TO_10_0_1_5) == []


def test_stats_outlive_a_program_and_a_refused_load_keeps_the_backend(compiled) -> None:
    sw = Switch(engine="python")
    sw.load(compiled("basic_forward"))
    sw.process(0, IPV4_TO_10_0_1_5)
    before = sw.pipeline
    with pytest.raises(PipelineError):
        sw.load({"headers": []})
    assert sw.pipeline is before
    sw.load(compiled("basic_forward"))
    assert sw.pipeline is not before and sw.stats["rx"] == 1
    assert sw.native is None and sw.engine_name == "python"
