"""Every STF test beside the feature programs in tests/p4 passes through the built-in switch."""

from pathlib import Path

import pytest

from ina.switch.stf import main, run_stf

P4_DIR = Path(__file__).resolve().parents[1] / "p4"
STF_FILES = sorted(P4_DIR.glob("*.stf"))


@pytest.mark.parametrize("stf", STF_FILES, ids=[p.stem for p in STF_FILES])
def test_feature_program_passes_its_stf(stf, compiled):
    result = run_stf(compiled(stf.stem), stf.read_text())
    assert result.ok, result.report


def test_wrong_expectation_fails_with_a_diff(compiled):
    program = compiled("basic_forward")
    stf = (
        "add MyIngress.ipv4_lpm hdr.ipv4.dstAddr:0x0a000100/24 MyIngress.ipv4_forward(dstAddr:0x0a0a0a0a0a0a, port:3)\n"
        "packet 1 00000000000100000000000288b66e6f746970\n"
        "expect 2 00000000000100000000000288b66e6f746970\n"
    )
    result = run_stf(program, stf)
    assert not result.ok
    assert "port 0: unexpected packet" in result.report
    assert "port 2: expected packet (<stf>:3) never came out" in result.report


def test_wildcards_and_exact_length():
    from ina.switch.stf import _expect_pattern, _matches

    pattern, exact = _expect_pattern("00 11 ** 33")
    assert _matches(pattern, exact, bytes.fromhex("00112233ff"))
    pattern, exact = _expect_pattern("00 11 ** 33 $")
    assert not _matches(pattern, exact, bytes.fromhex("00112233ff"))
    assert _matches(pattern, exact, bytes.fromhex("00119933"))


def test_cli_exit_codes(tmp_path, capsys):
    stf = P4_DIR / "basic_forward.stf"
    assert main([str(P4_DIR / "basic_forward.p4"), str(stf)]) == 0
    bad = tmp_path / "bad.stf"
    bad.write_text("packet 1 00000000000100000000000288b66e6f746970\n")
    assert main([str(P4_DIR / "basic_forward.p4"), str(bad)]) == 1
    assert "unexpected packet" in capsys.readouterr().out


def test_simple_switch_corner_cases():
    """Const LPM order, header equality, bytes consumed before a parser error (tests/switch/p4)."""
    here = Path(__file__).parent
    assert main([str(here / "p4" / "conformance.p4"), str(here / "conformance.stf")]) == 0


def test_star_digits_in_stf_values_are_dont_care():
    from ina.switch.stf import _match_value

    assert _match_value("0x**01") == ("ternary", 0x0001, 0x00FF)


def test_stack_keys_priorities_and_renamed_action_copies():
    """tag$0.v names hdr.tag[0].v; the larger STF priority wins; `put` names each table's own copy."""
    from ina.compiler import compile_file

    program = compile_file(Path(__file__).parent / "p4" / "stf_entries.p4").bmv2
    stf = (
        "add first 10 tag$0.v:0x12** put(value:0x0a)\n"
        "add first 20 tag$0.v:0x1234 put(value:0x14)\n"
        "add second 5 tag$1.v:0x**** put(value:0x05)\n"
        "packet 0 1234 0000 5678 0000\n"
        "expect 1 1234 1400 5678 0005 $\n"
        "packet 0 1299 0000 5678 0000\n"
        "expect 1 1299 0a00 5678 0005 $\n"
    )
    result = run_stf(program, stf)
    assert result.ok, result.report


def test_varbit_length_errors():
    """Not whole bytes: ParserInvalidArgument; above the maximum: HeaderTooShort; then too short."""
    from ina.compiler import compile_file

    program = compile_file(Path(__file__).parent / "p4" / "varbit_errors.p4").bmv2
    stf = (
        "packet 0 10 00 abcd ee\n"
        "expect 1 10 00 ee $\n"
        "packet 0 0c 00 abcd ee\n"
        "expect 1 0c 01 abcd ee $\n"
        "packet 0 18 00 abcdef\n"
        "expect 1 18 02 abcdef $\n"
        "packet 0 10 00 ab\n"
        "expect 1 10 03 ab $\n"
    )
    result = run_stf(program, stf)
    assert result.ok, result.report


@pytest.mark.parametrize("stf", STF_FILES, ids=[p.stem for p in STF_FILES])
def test_traced_pipeline_gives_the_same_packets(stf, compiled):
    """With a log the pipeline runs node by node (no merged control flow); results must not change."""
    from ina.switch.stf import StfRunner

    runner = StfRunner(compiled(stf.stem))
    lines: list[str] = []
    runner.switch.log = lines.append
    runner.switch.load(compiled(stf.stem))
    result = runner.run(stf.read_text())
    assert result.ok, result.report
    assert any(line.startswith("table ") for line in lines)


FORWARD = str(P4_DIR / "basic_forward.p4")
LPM_KEY = "add MyIngress.ipv4_lpm hdr.ipv4.dstAddr:0x0a000100/24"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"{LPM_KEY}\n", ":1: no action call in the entry; expected: add TABLE"),
        ("mc_mgrp_create 1\nmc_node_associate 1 5\n", ":2: multicast node 5 was not created"),
        ("packet 600 00\n", ":1: port 600 is out of range 0..511"),
        ("packet 1 0g\n", ":1: packet data is not whole bytes of hex digits"),
        ("expect 1 00 zz\n", ":1: expected packet is not hex digits"),
        ("register_write\n", ":1: expected: register_write REGISTER INDEX VALUE"),
        ("mc_node_create\n", ":1: expected: mc_node_create RID PORT..."),
        (f"{LPM_KEY} MyIngress.ipv4_forward(dstAddr:x, port:3)\n", ":1: 'x' is not a number"),
        ("frobnicate 1\n", ":1: unknown STF command 'frobnicate'"),
    ],
)
def test_malformed_lines_are_located_errors(tmp_path, capsys, text, message):
    stf = tmp_path / "bad.stf"
    stf.write_text(text)
    assert main([FORWARD, str(stf)]) == 1
    assert f"{stf}{message}" in capsys.readouterr().out


@pytest.mark.parametrize("data", [b"packet 1 00\n\0\x7fELF\n", b"# ok\npacket 1 00 \xff\xfe\n"])
def test_binary_or_non_utf8_stf_is_refused_at_its_line(tmp_path, capsys, data):
    stf = tmp_path / "bin.stf"
    stf.write_bytes(data)
    assert main([FORWARD, str(stf)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{stf}:2: not an STF text file (byte 0x")


def test_program_json_that_is_not_json_is_an_error(tmp_path, capsys):
    program = tmp_path / "prog.json"
    program.write_bytes(b"\xff\x00not json")
    assert main([str(program), str(P4_DIR / "basic_forward.stf")]) == 1
    assert (
        capsys.readouterr().err
        == f"ina stf: the BMv2 JSON {program} is not UTF-8 text (byte 0xff at offset 0)\n"
    )
    program.write_text("[1, 2]")
    assert main([str(program), str(P4_DIR / "basic_forward.stf")]) == 1
    assert (
        capsys.readouterr().err
        == f"ina stf: the BMv2 JSON {program} is not a JSON object at its top level\n"
    )


def test_define_without_a_name_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main([FORWARD, str(P4_DIR / "basic_forward.stf"), "-D", "=1"])
    assert exit_.value.code == 2
    assert "argument -D: expected NAME or NAME=VALUE" in capsys.readouterr().err


# Four packets into basic_forward: three of 47 bytes on port 0, all forwarded to port 3; one on port 1.
IPV4 = (
    "00000000000100000000000208004500002100010000401165c60a0000010a00010503e807d0000d9b4468656c6c6f"
)
COUNTED = "".join(
    [
        f"{LPM_KEY} MyIngress.ipv4_forward(dstAddr:0x0a0a0a0a0a0a, port:3)\n",
        f"packet 0 {IPV4}\n" * 3,
        "packet 1 00000000000100000000000288b66e6f746970\n",
        "expect 3 0a0a0a0a0a0a000000000001080045000021000100003f1166c60a0000010a00010503e807d0000d9b4468656c6c6f\n"
        * 3,
        "expect 0 00000000000100000000000288b66e6f746970\n",
    ]
)  # 9 lines: the check under test is line 10


def test_check_counter_takes_every_form_of_p4c_grammar(compiled):
    """Operators, packets/bytes (any case), quoted dotted names, hex/binary indices, and no test at all."""
    checks = [
        "check_counter port_packets(0) packets == 3",
        "check_counter port_packets(0) bytes == 141",
        "check_counter port_packets(0) PACKETS != 2",
        "check_counter port_packets(0) bytes < 142",
        "check_counter port_packets(0) bytes <= 141",
        "check_counter port_packets(0) packets > 2",
        "check_counter port_packets(0) packets >= 3",
        'check_counter "MyIngress.port_packets"(0x1) packets == 0b1',
        "check_counter port_packets (  2  )   packets==0",
        "check_counter port_packets(63)",
        "counter_read port_packets 0",
        "counter_read port_packets 0 packets 3",
    ]
    result = run_stf(compiled("basic_forward"), COUNTED + "\n".join(checks) + "\n")
    assert result.ok, result.report


@pytest.mark.parametrize(
    ("check", "message"),
    [
        (
            "check_counter port_packets(0) packets == 4",
            "counter port_packets(0) packets is 3, expected == 4",
        ),
        (
            "check_counter port_packets(0) bytes == 140",
            "counter port_packets(0) bytes is 141, expected == 140",
        ),
        (
            "check_counter port_packets(1) packets != 1",
            "counter port_packets(1) packets is 1, expected != 1",
        ),
        (
            "check_counter port_packets(0) packets < 3",
            "counter port_packets(0) packets is 3, expected < 3",
        ),
        (
            "check_counter port_packets(2) packets >= 1",
            "counter port_packets(2) packets is 0, expected >= 1",
        ),
        (
            "counter_read port_packets 0 packets 2",
            "counter port_packets(0) packets is 3, expected == 2",
        ),
    ],
)
def test_a_wrong_count_fails_at_its_line(compiled, check, message):
    result = run_stf(compiled("basic_forward"), COUNTED + check + "\n")
    assert not result.ok
    assert result.report == f"<stf>:10: {message}"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "check_counter MyIngress.port_packets(0) packets == 3",
            "expected: check_counter NAME(INDEX)",
        ),
        ("check_counter port_packets(0) packets = 3", "expected: check_counter NAME(INDEX)"),
        ("check_counter port_packets(0) packets == 3 4", "expected: check_counter NAME(INDEX)"),
        ("check_counter port_packets 0", "expected: check_counter NAME(INDEX)"),
        ("check_counter port_packets($A)", "no table entry named 'A'"),
        ("check_counter nothing(0)", "unknown counter 'nothing'"),
        ("check_counter port_packets(64)", "out of range"),
        ("counter_read port_packets 0 packets", "expected: counter_read COUNTER INDEX"),
        ("counter_read port_packets 0 frames 3", "expected: counter_read COUNTER INDEX"),
        ("register_read port_packets 0 1 2", "expected: register_read REGISTER INDEX"),
        ("# ina: registers x[0] == 1", "expected: # ina: register NAME[INDEX]"),
        ("# ina: register x[0] = 1", "expected: # ina: register NAME[INDEX]"),
        ("# ina: register x[0] == 1", "unknown register 'x'"),
    ],
)
def test_unreadable_checks_are_located_errors(compiled, line, message):
    """A check that cannot run fails the file: a typo never turns an expectation into a silent pass."""
    result = run_stf(compiled("basic_forward"), COUNTED + line + "\n")
    assert not result.ok
    assert result.report.startswith("<stf>:10: ") and message in result.report


def test_register_expectations_are_comments_p4c_skips(compiled):
    """`# ina: register NAME[I] OP V` checks a register; other comments, with or without ina, are prose."""
    program = compiled("register_accumulate")
    packets = "packet 4 00000000000900000000000a88b50003" + "00000001" * 8 + "\n"
    assert run_stf(
        program,
        packets + "# ina: register counts[3] == 1  \n#ina:register acc_7[3]>=1\n# ina is fine\n",
    ).ok
    result = run_stf(program, packets + "packet 4 00 # ina: register counts[3] == 2\n")
    assert result.report == "<stf>:2: register counts[3] is 1, expected == 2"


def test_check_counter_reads_a_direct_counter_by_named_entry(compiled):
    """p4c's `add ... = NAME` names an entry; `check_counter COUNTER($NAME)` reads its direct counter."""
    program = compiled("externs_misc")
    stf = (
        "add mac dst:0x000000000002 forward(port:2) = A\n"
        "add mac dst:0x000000000003 forward(port:3)=B\n"
        "packet 1 000000000002 000000000001 0800 00\n"
        "expect 2 000000000002 000000000001 0800 00\n"
        "check_counter hits($A) packets == 1\n"
        "check_counter hits($A) bytes == 15\n"
        "check_counter hits($B) packets == 0\n"
    )
    result = run_stf(program, stf)
    assert result.ok, result.report
    result = run_stf(
        program, stf + "check_counter hits($B) packets == 1\ncheck_counter port_meter($A)\n"
    )
    assert result.report.splitlines() == [
        "<stf>:8: counter hits($B) packets is 0, expected == 1",
        "<stf>:9: unknown direct counter 'port_meter' (known: Ingress.hits)",
    ]


def test_lpm_star_digits_give_p4cs_prefix_length():
    from ina.switch.stf import StfError, _match_value

    assert _match_value("0x0a0001**", "lpm") == ("lpm", 0x0A000100, 24)
    assert _match_value("0x0a0001**", "ternary") == ("ternary", 0x0A000100, 0xFFFFFF00)
    with pytest.raises(StfError, match="only at its end"):
        _match_value("0x0a**01**", "lpm")
