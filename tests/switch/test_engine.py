"""The engine's traffic manager, tables and robustness, with exact packets in and out."""

import pytest

from ina.switch.engine import Switch
from ina.switch.model.errors import PipelineError, TableError

NOT_IPV4 = bytes.fromhex("00000000000100000000000288b66e6f746970")
IPV4_TO_10_0_1_5 = bytes.fromhex(
    "00000000000100000000000208004500002100010000401165c60a0000010a00010503e807d0000d9b4468656c6c6f"
)


@pytest.fixture
def forward(compiled):
    sw = Switch()
    sw.load(compiled("basic_forward"))
    return sw


def test_lpm_hit_rewrites_and_forwards(forward):
    forward.tables["MyIngress.ipv4_lpm"].add(
        [("lpm", 0x0A000100, 24)], "MyIngress.ipv4_forward", [0x0A0A0A0A0A0A, 3]
    )
    [(port, packet)] = forward.process(0, IPV4_TO_10_0_1_5)
    assert port == 3
    assert packet.hex() == (
        "0a0a0a0a0a0a000000000001080045000021000100003f1166c60a0000010a00010503e807d0000d9b4468656c6c6f"
    )


def test_longest_prefix_wins_whatever_the_insertion_order(forward):
    table = forward.tables["MyIngress.ipv4_lpm"]
    table.add([("lpm", 0x0A000000, 8)], "MyIngress.ipv4_forward", [1, 1])
    table.add([("lpm", 0x0A000100, 24)], "MyIngress.ipv4_forward", [2, 2])
    table.add([("lpm", 0x0A000000, 16)], "MyIngress.ipv4_forward", [3, 3])
    [(port, _)] = forward.process(0, IPV4_TO_10_0_1_5)
    assert port == 2


def test_truncated_packets_never_raise_and_are_counted(forward):
    for n in range(len(IPV4_TO_10_0_1_5)):
        forward.process(0, IPV4_TO_10_0_1_5[:n])
    assert forward.stats["rx"] == len(IPV4_TO_10_0_1_5)
    assert forward.stats["parser_errors"] > 0


def test_giant_packet_dropped_and_counted(forward):
    assert forward.process(0, b"\x00" * 70000) == []
    assert forward.stats["dropped_oversize"] == 1


def test_broken_json_is_refused_and_old_pipeline_keeps_running(forward):
    with pytest.raises(PipelineError, match="missing"):
        forward.load({"headers": []})
    assert forward.process(1, NOT_IPV4) == [(0, NOT_IPV4)]


def test_table_errors_name_the_problem(forward):
    table = forward.tables["MyIngress.ipv4_lpm"]
    with pytest.raises(TableError, match="has no action 'nope'"):
        table.add([("lpm", 0, 0)], "nope", [])
    with pytest.raises(TableError, match="takes 2 parameters, got 1"):
        table.add([("lpm", 0, 0)], "MyIngress.ipv4_forward", [1])
    table.add([("lpm", 0x0A000000, 8)], "MyIngress.ipv4_forward", [1, 1])
    with pytest.raises(TableError, match="already has an entry"):
        table.add([("lpm", 0x0A000000, 8)], "MyIngress.ipv4_forward", [1, 1])


def test_multicast_sends_one_copy_per_replica(compiled):
    sw = Switch()
    sw.load(compiled("register_accumulate"))
    sw.multicast.set_group(1, [(2, 7), (3, 9)])
    frame = bytes.fromhex("ffffffffffff0000000000020800") + b"payload!"
    out = sw.process(1, frame)
    assert [port for port, _ in out] == [2, 3]
    with pytest.raises(TableError, match="out of range"):
        sw.multicast.set_group(2, [(600, 0)])


def test_const_default_action_cannot_be_replaced(compiled):
    sw = Switch()
    sw.load(compiled("control_flow"))
    hidden = sw.tables["tbl_mark_to_drop"]
    assert hidden.default_is_const
    with pytest.raises(TableError, match=r"tbl_mark_to_drop.*const"):
        hidden.set_default("act_2", [])
    assert hidden.get_default() == ("act_2", ())


def test_without_a_c_compiler_auto_runs_python_and_native_says_why(compiled, monkeypatch, tmp_path):
    monkeypatch.setenv("INA_CACHE", str(tmp_path))  # nothing built yet
    monkeypatch.setenv("CC", "no-such-compiler")
    sw = Switch()
    sw.load(compiled("basic_forward"))
    assert sw.engine_name == "python"
    assert "no C compiler (gcc) on PATH" in sw.engine_note
    assert sw.process(0, IPV4_TO_10_0_1_5) == []  # still a working switch (no routes: dropped)
    with pytest.raises(PipelineError, match="native engine cannot run this program: no C compiler"):
        Switch(engine="native").load(compiled("basic_forward"))


def test_ports_are_checked_against_v1model_before_a_program_is_loaded():
    sw = Switch()
    with pytest.raises(ValueError, match=r"port 512 is out of range 0\.\.511"):
        sw.process(512, NOT_IPV4)
    assert sw.process(511, NOT_IPV4) == []
    assert sw.stats == {"rx": 1, "dropped_no_pipeline": 1}
