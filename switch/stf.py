"""`ina stf`: run a program against a p4c-style STF test, in process, and diff the output per port.

Names in `add`/`setdefault` match by suffix (`ipv4_lpm` finds `MyIngress.ipv4_lpm`), as p4c's
runner does. STF priorities follow BMv2's CLI (smaller wins); the engine API's are P4Runtime's
(larger wins), so they are negated here.
"""

import argparse
import json
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ina.args import macro_define
from ina.switch.engine import ENGINES, Switch
from ina.switch.errors import PipelineError, TableError
from ina.switch.replication import MAX_PORT


class StfError(Exception):
    """A line of the STF file that cannot be run; the runner adds FILE:LINE to the message."""


@dataclass
class StfResult:
    ok: bool
    report: str
    outputs: dict[int, list[bytes]] = field(default_factory=dict)
    switch: Switch | None = None


def _int(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise StfError(f"'{text}' is not a number") from None


def _port(text: str) -> int:
    port = _int(text)
    if not 0 <= port <= MAX_PORT:
        raise StfError(f"port {port} is out of range 0..{MAX_PORT}")
    return port


def _fields(rest: str, usage: str, least: int) -> list[str]:
    """The command's words, at least `least` of them; else the usage line of the command."""
    parts = rest.split()
    if len(parts) < least:
        raise StfError(f"expected: {usage}")
    return parts


def _hex(text: str, what: str) -> bytes:
    try:
        return bytes.fromhex(re.sub(r"\s+", "", text))
    except ValueError:
        raise StfError(f"{what} is not whole bytes of hex digits: '{text}'") from None


def _suffix_match(name: str, candidates, what: str) -> str:
    if name in candidates:
        return name
    hits = [c for c in candidates if c.endswith("." + name) or (c.split(".")[-1] == name.split(".")[-1] and c.endswith(name))]
    if not hits:  # a copy the compiler specialised per use and renamed with a _N suffix
        hits = [c for c in candidates if re.sub(r"_\d+$", "", c).split(".")[-1] == name.split(".")[-1]]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise StfError(f"unknown {what} '{name}' (known: {', '.join(sorted(candidates)) or 'none'})")
    raise StfError(f"{what} '{name}' is ambiguous: {', '.join(hits)}")


ACTION_RE = re.compile(r"^(?P<name>[\w.$\[\]]+)\((?P<args>.*)\)$")


def _parse_action(text: str) -> tuple[str, dict[str, int]]:
    m = ACTION_RE.match(text.strip())
    if not m:
        raise StfError(f"cannot read action call '{text}'")
    args = {}
    for part in filter(None, (p.strip() for p in m.group("args").split(","))):
        key, _, value = part.partition(":")
        args[key.strip()] = _int(value.strip())
    return m.group("name"), args


def _match_value(text: str):
    if "*" in text and text.lower().startswith("0x"):  # 0x****0101: '*' digits are don't-care
        digits = text[2:]
        value = int(digits.replace("*", "0"), 16)
        mask = int("".join("0" if d == "*" else "f" for d in digits), 16)
        return ("ternary", value, mask)
    if "&&&" in text:
        value, mask = text.split("&&&")
        return ("ternary", _int(value), _int(mask))
    if "/" in text:
        value, plen = text.split("/")
        return ("lpm", _int(value), int(plen))
    if ".." in text:
        lo, hi = text.split("..")
        return ("range", _int(lo), _int(hi))
    return _int(text)


def _expect_pattern(hexdata: str) -> tuple[str, bool]:
    text = re.sub(r"\s+", "", hexdata)
    exact = text.endswith("$")
    pattern = text.removesuffix("$").lower()
    if not re.fullmatch(r"[0-9a-f*]*", pattern):
        raise StfError(f"expected packet is not hex digits and '*' (with an optional final '$'): '{hexdata}'")
    return pattern, exact


def _matches(pattern: str, exact: bool, packet: bytes) -> bool:
    actual = packet.hex()
    if exact and len(actual) != len(pattern):
        return False
    if len(actual) < len(pattern):
        return False
    return all(p == "*" or p == a for p, a in zip(pattern, actual, strict=False))


class StfRunner:
    def __init__(self, program: dict, engine: str = "auto"):
        self.switch = Switch(engine=engine)
        self.switch.load(program)
        self.expects: dict[int, list[tuple[str, bool, int]]] = {}
        self.outputs: dict[int, list[bytes]] = {}
        self.mc_nodes: dict[int, list[tuple[int, int]]] = {}
        self.mc_groups: dict[int, list[int]] = {}
        self.failures: list[str] = []
        self.name = "<stf>"

    def run(self, text: str, name: str = "<stf>") -> StfResult:
        """Run every line; a line that cannot run is reported as `name:LINE: why` and the rest go on."""
        self.name = name
        for lineno, raw in enumerate(text.splitlines(), 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            try:
                self._line(line, lineno)
            except (StfError, TableError, ValueError, IndexError) as err:  # the switch's own range checks
                self.failures.append(f"{self._at(lineno)}: {err}")
        return self._verdict()

    def _at(self, lineno: int) -> str:
        return f"{self.name}:{lineno}"

    def _table(self, name: str):
        return self.switch.tables[_suffix_match(name, self.switch.tables, "table")]

    def _line(self, line: str, lineno: int) -> None:
        cmd, _, rest = line.partition(" ")
        cmd = cmd.lower()
        if cmd == "packet":
            port, _, data = rest.strip().partition(" ")
            packet = _hex(data, "packet data")
            for out_port, out_data in self.switch.process(_port(port), packet):
                self.outputs.setdefault(out_port, []).append(out_data)
        elif cmd == "expect":
            port, _, data = rest.strip().partition(" ")
            pattern, exact = _expect_pattern(data)
            self.expects.setdefault(_port(port), []).append((pattern, exact, lineno))
        elif cmd == "add":
            self._add(rest)
        elif cmd == "setdefault":
            table_name, _, action_text = rest.strip().partition(" ")
            table = self._table(table_name)
            name, args = _parse_action(action_text)
            self._call(table, name, args, None, default=True)
        elif cmd == "mirroring_add":
            session, port = _fields(rest, "mirroring_add SESSION PORT", 2)[:2]
            self.switch.clone.set_session(_int(session), [(_port(port), 0)])
        elif cmd == "mc_mgrp_create":
            self.mc_groups[_int(_fields(rest, "mc_mgrp_create GROUP", 1)[0])] = []
        elif cmd == "mc_node_create":
            rid, *ports = _fields(rest, "mc_node_create RID PORT...", 1)
            self.mc_nodes[len(self.mc_nodes)] = [(_port(p), _int(rid)) for p in ports]
        elif cmd == "mc_node_associate":
            mgid, handle = (_int(x) for x in _fields(rest, "mc_node_associate GROUP NODE", 2)[:2])
            if handle not in self.mc_nodes:
                raise StfError(f"multicast node {handle} was not created (mc_node_create numbers nodes from 0; "
                               f"{len(self.mc_nodes)} so far)")
            handles = [*self.mc_groups.get(mgid, []), handle]
            self.switch.multicast.set_group(mgid, [r for h in handles for r in self.mc_nodes[h]])
            self.mc_groups[mgid] = handles
        elif cmd == "register_write":
            name, index, value = _fields(rest, "register_write REGISTER INDEX VALUE", 3)[:3]
            reg = self.switch.registers[_suffix_match(name, self.switch.registers, "register")]
            reg.write(_int(index), _int(value))
        elif cmd == "register_read":
            parts = _fields(rest, "register_read REGISTER INDEX [VALUE]", 2)
            reg = self.switch.registers[_suffix_match(parts[0], self.switch.registers, "register")]
            actual = reg.read(_int(parts[1]))
            if len(parts) > 2 and actual != _int(parts[-1]):
                self.failures.append(f"{self._at(lineno)}: register {parts[0]}[{parts[1]}] is {actual}, "
                                     f"expected {_int(parts[-1])}")
        elif cmd in ("counter_read", "check_counter"):
            self._check_counter(rest, lineno)
        elif cmd in ("wait", "no_packet"):
            pass
        else:
            raise StfError(f"unknown STF command '{cmd}'")

    def _check_counter(self, rest: str, lineno: int) -> None:
        m = re.match(r"\s*([\w.]+)\s*(?:\(\s*(\w+)\s*\)|\s+(\w+))\s*(packets|bytes)?\s*(?:==)?\s*(\w+)?", rest)
        if not m:
            raise StfError(f"cannot read counter check '{rest}'")
        name, idx1, idx2, kind, expected = m.groups()
        counter = self.switch.counters[_suffix_match(name, self.switch.counters, "counter")]
        packets, nbytes = counter.read(_int(idx1 or idx2))
        actual = nbytes if kind == "bytes" else packets
        if expected is not None and actual != _int(expected):
            self.failures.append(f"{self._at(lineno)}: counter {name}[{idx1 or idx2}] {kind or 'packets'} is {actual}, "
                                 f"expected {_int(expected)}")

    def _add(self, rest: str) -> None:
        usage = "add TABLE [PRIORITY] KEY:VALUE... ACTION(PARAM:VALUE, ...)"
        tokens = shlex.split(rest)  # ValueError (an unclosed quote) is reported like any bad line
        if not tokens:
            raise StfError(f"expected: {usage}")
        table = self._table(tokens[0])
        tokens = tokens[1:]
        priority = None
        if tokens and re.fullmatch(r"\d+", tokens[0]):
            priority = int(tokens.pop(0))  # STF: the larger priority wins, as in the table API
        action_start = next((i for i, t in enumerate(tokens) if "(" in t), None)
        if action_start is None:
            raise StfError(f"no action call in the entry; expected: {usage}")
        action_text = " ".join(tokens[action_start:])
        keys = {}
        for token in tokens[:action_start]:
            key, _, value = token.rpartition(":")
            keys[re.sub(r"\$(\d+)", r"[\1]", key)] = _match_value(value)  # STF writes stack[0] as stack$0
        match = []
        for kf in table.keys:
            hit = [k for k in keys if kf.name == k or kf.name.endswith("." + k) or k.endswith("." + kf.name) or kf.name.endswith(k)]
            if not hit:
                if kf.match_type in ("ternary", "optional"):
                    match.append(("ternary", 0, 0))
                    continue
                raise StfError(f"no value for key '{kf.name}' of table '{table.name}'")
            match.append(keys[hit[0]])
        name, args = _parse_action(action_text)
        self._call(table, name, args, (match, priority), default=False)

    def _call(self, table, name: str, args: dict[str, int], entry, default: bool) -> None:
        action = _suffix_match(name, table.actions, f"action of table '{table.name}'")
        spec = next(a for a in self.switch.pipeline.program["actions"] if a["name"] == action)
        values = []
        for param in spec.get("runtime_data", []):
            if param["name"] not in args:
                raise StfError(f"action '{action}' needs parameter '{param['name']}'")
            values.append(args[param["name"]] & ((1 << param["bitwidth"]) - 1))
        if default:
            table.set_default(action, values)
        else:
            match, priority = entry
            table.add(match, action, values, priority)

    def _verdict(self) -> StfResult:
        lines = list(self.failures)
        for port in sorted(set(self.expects) | set(self.outputs)):
            expected = self.expects.get(port, [])
            actual = self.outputs.get(port, [])
            for i in range(max(len(expected), len(actual))):
                if i >= len(actual):
                    lines.append(f"port {port}: expected packet ({self._at(expected[i][2])}) never came out:\n"
                                 f"    {expected[i][0]}")
                elif i >= len(expected):
                    lines.append(f"port {port}: unexpected packet:\n    {actual[i].hex()}")
                elif not _matches(expected[i][0], expected[i][1], actual[i]):
                    lines.append(
                        f"port {port}: packet {i + 1} differs ({self._at(expected[i][2])}):\n"
                        f"    expected {expected[i][0]}{'$' if expected[i][1] else ''}\n    actual   {actual[i].hex()}"
                    )
        report = "\n".join(lines) if lines else "all expected packets matched"
        return StfResult(not lines, report, self.outputs, self.switch)


def run_stf(program_json: dict, stf_text: str, engine: str = "auto", name: str = "<stf>") -> StfResult:
    return StfRunner(program_json, engine).run(stf_text, name)


def load_program(path: str, include_dirs: list[str], defines: dict[str, str]) -> dict:
    """BMv2 JSON from a .json file or compiled from P4; ValueError for a file that is not BMv2 JSON."""
    if path.endswith(".json"):
        program = json.loads(Path(path).read_bytes())
        if not isinstance(program, dict):
            raise ValueError("not BMv2 JSON: the top level is not an object")
        return program
    from ina.compiler import compile_file

    return compile_file(path, include_dirs, defines).bmv2


def read_stf(path: str) -> str:
    """The STF file as text; StfError located at the first line that is binary or not UTF-8."""
    data = Path(path).read_bytes()
    bad = data.find(b"\0")
    try:
        text = data.decode()
    except UnicodeDecodeError as err:
        bad = err.start if bad < 0 else min(bad, err.start)
    if bad >= 0:
        line = data.count(b"\n", 0, bad) + 1
        raise StfError(f"{path}:{line}: not an STF text file (byte 0x{data[bad]:02x} is binary or not UTF-8)")
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ina stf", description="Run a P4 program against an STF test, in process.")
    parser.add_argument("program", help="PROGRAM.p4 (compiled with ina's compiler) or PROGRAM.json (BMv2 JSON)")
    parser.add_argument("stf", help="the STF test file")
    parser.add_argument("-I", dest="include", action="append", default=[], metavar="DIR")
    parser.add_argument("-D", dest="define", action="append", default=[], type=macro_define, metavar="NAME[=VALUE]")
    parser.add_argument("-v", "--verbose", action="store_true", help="trace every packet through the pipeline (Python engine)")
    parser.add_argument("--engine", choices=ENGINES, default="auto",
                        help="data path: native (compiled to C), python, or auto (native when it can)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from ina.compiler import CompileError

    try:
        program = load_program(args.program, args.include, dict(args.define))
        text = read_stf(args.stf)
    except (CompileError, StfError) as err:
        print(err, file=sys.stderr)
        return 1
    except OSError as err:
        print(f"ina stf: {err}", file=sys.stderr)
        return 1
    except ValueError as err:  # JSON that does not parse, or is not text
        print(f"ina stf: {args.program}: {err}", file=sys.stderr)
        return 1
    try:
        runner = StfRunner(program, "python" if args.verbose else args.engine)
    except PipelineError as err:
        print(f"ina stf: cannot load {args.program}: {err}", file=sys.stderr)
        return 1
    if args.verbose:
        runner.switch.log = lambda m: print(m, file=sys.stderr)
        runner.switch.load(program)
    if args.engine == "auto" and runner.switch.native is None:
        print(f"ina stf: Python engine: {runner.switch.engine_note}", file=sys.stderr)
    result = runner.run(text, args.stf)
    print(("PASS: " if result.ok else "FAIL: ") + args.stf)
    if not result.ok:
        print(result.report)
    return 0 if result.ok else 1
