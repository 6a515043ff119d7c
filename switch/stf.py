"""`ina stf`: run a program against a p4c-style STF test, in process, and diff the output per port.

Names in `add`/`setdefault` match by suffix (`ipv4_lpm` finds `MyIngress.ipv4_lpm`), as p4c's
runner does. STF priorities follow BMv2's CLI (smaller wins); the engine API's are P4Runtime's
(larger wins), so they are negated here.

Files stay runnable by p4c's BMv2 STF runner: counters are checked with p4c's `check_counter`
grammar, and register expectations, which p4c's grammar cannot state, live in comments it skips
(`# ina: register NAME[INDEX] OP VALUE`). DEVELOPERS.md's STF section lists the forms.
"""

import argparse
import operator
import re
import shlex
import sys
from dataclasses import dataclass, field

from ina.args import macro_define
from ina.files import FileError, read_bmv2_json, read_bytes
from ina.switch.engine import ENGINES, Switch
from ina.switch.model.errors import PipelineError, TableError
from ina.switch.state.replication import MAX_PORT


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


def _exact_fields(rest: str, usage: str, least: int, most: int) -> list[str]:
    """The command's words, `least` to `most` of them: words past a form's end are not ignored."""
    parts = rest.split()
    if not least <= len(parts) <= most:
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
    hits = [
        c
        for c in candidates
        if c.endswith("." + name) or (c.split(".")[-1] == name.split(".")[-1] and c.endswith(name))
    ]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise StfError(
            f"unknown {what} '{name}' (known: {', '.join(sorted(candidates)) or 'none'})"
        )
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


def _match_value(text: str, match_type: str = "ternary"):
    if "*" in text and text.lower().startswith("0x"):  # 0x****0101: '*' digits are don't-care
        digits = text[2:]
        if (
            match_type == "lpm"
        ):  # p4c's runner: the prefix is the digits before the '*'s, 4 bits each
            if not re.fullmatch(r"[0-9a-fA-F]*\**", digits):
                raise StfError(f"an LPM value may have '*' digits only at its end: '{text}'")
            return ("lpm", int(digits.replace("*", "0"), 16), 4 * len(digits.rstrip("*")))
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


COMPARISONS = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
NUMBER = r"0[xX][0-9a-fA-F]+|0[bB][01]+|\d+"
# p4c's grammar: CHECK_COUNTER ID LPAREN id_or_index RPAREN [count_type logical_cond number], where
# an ID is a plain identifier or a double-quoted name (so a dotted name must be quoted), the
# index a number or $NAME (a table entry added with `= NAME`, for a direct counter).
CHECK_COUNTER_RE = re.compile(
    r'(?P<name>[A-Za-z_$][\w$]*|"[^"]+")\s*\(\s*(?P<index>' + NUMBER + r"|\$[\w$]+)\s*\)"
    r"(?:\s*(?P<kind>packets|bytes)\s*(?P<op>==|!=|<=|>=|<|>)\s*(?P<expected>" + NUMBER + r"))?",
    re.IGNORECASE,
)
REGISTER_DIRECTIVE_RE = re.compile(
    r"register\s+(?P<name>[\w.$]+)\s*\[\s*(?P<index>"
    + NUMBER
    + r")\s*\]\s*(?P<op>==|!=|<=|>=|<|>)\s*"
    r"(?P<expected>" + NUMBER + ")"
)
ENTRY_NAME_RE = re.compile(r"^(?P<entry>.*\))\s*=\s*(?P<id>[A-Za-z_$][\w$]*)$")


def _expect_pattern(hexdata: str) -> tuple[str, bool]:
    text = re.sub(r"\s+", "", hexdata)
    exact = text.endswith("$")
    pattern = text.removesuffix("$").lower()
    if not re.fullmatch(r"[0-9a-f*]*", pattern):
        raise StfError(
            f"expected packet is not hex digits and '*' (with an optional final '$'): '{hexdata}'"
        )
    return pattern, exact


def _matches(pattern: str, exact: bool, packet: bytes) -> bool:
    actual = packet.hex()
    if exact and len(actual) != len(pattern):
        return False
    if len(actual) < len(pattern):
        return False
    return all(p == "*" or p == a for p, a in zip(pattern, actual, strict=False))


PACKET_INTERVAL_US = 100  # the switch's clock between two `packet` lines (see StfRunner)


class StfRunner:
    """Runs an STF file on a fresh switch whose clock is virtual: the first packet arrives at 0 us
    and each one after it PACKET_INTERVAL_US later, so timestamps (and what a program decides on
    them) are the same on both engines and on every run. On BMv2 the packets come at least that
    far apart, so a test that holds here with deadlines far from the interval holds there too."""

    def __init__(self, program: dict, engine: str = "auto"):
        self.switch = Switch(engine=engine)
        self.switch.load(program)
        self.packets = 0
        self.expects: dict[int, list[tuple[str, bool, int]]] = {}
        self.outputs: dict[int, list[bytes]] = {}
        self.mc_nodes: dict[int, list[tuple[int, int]]] = {}
        self.mc_groups: dict[int, list[int]] = {}
        self.failures: list[str] = []
        self.entries: dict[str, tuple[str, int]] = {}  # `add ... = NAME`: table and entry handle
        self.name = "<stf>"

    def run(self, text: str, name: str = "<stf>") -> StfResult:
        """Run every line; a line that cannot run is reported as `name:LINE: why` and the rest go on."""
        self.name = name
        for lineno, raw in enumerate(text.splitlines(), 1):
            line, _, comment = raw.partition("#")
            directive = re.match(r"\s*ina:(.*)", comment)
            try:
                if line.strip():
                    self._line(line.strip(), lineno)
                if directive:
                    self._directive(directive.group(1).strip(), lineno)
            except (
                StfError,
                TableError,
                ValueError,
                IndexError,
            ) as err:  # the switch's own range checks
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
            self.switch.set_clock(self.packets * PACKET_INTERVAL_US)
            self.packets += 1
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
                raise StfError(
                    f"multicast node {handle} was not created (mc_node_create numbers nodes from 0; "
                    f"{len(self.mc_nodes)} so far)"
                )
            handles = [*self.mc_groups.get(mgid, []), handle]
            self.switch.multicast.set_group(mgid, [r for h in handles for r in self.mc_nodes[h]])
            self.mc_groups[mgid] = handles
        elif cmd == "register_write":
            name, index, value = _fields(rest, "register_write REGISTER INDEX VALUE", 3)[:3]
            reg = self.switch.registers[_suffix_match(name, self.switch.registers, "register")]
            reg.write(_int(index), _int(value))
        elif cmd == "register_read":  # p4c passes `register_read NAME INDEX` to simple_switch_CLI
            parts = _exact_fields(
                rest, "register_read REGISTER INDEX [VALUE (ina's older form; not p4c's)]", 2, 3
            )
            actual = self._register(parts[0], parts[1])
            if len(parts) == 3:
                self._compare(f"register {parts[0]}[{parts[1]}]", actual, "==", parts[2], lineno)
        elif cmd == "check_counter":
            m = CHECK_COUNTER_RE.fullmatch(rest.strip())
            if not m:
                raise StfError(
                    "expected: check_counter NAME(INDEX) [packets|bytes ==|!=|<|<=|>|>= NUMBER] "
                    '(NAME a plain identifier or "quoted", INDEX a number or $ENTRY)'
                )
            self._check_counter(
                m.group("name").strip('"'),
                m.group("index"),
                m.group("kind"),
                m.group("op"),
                m.group("expected"),
                lineno,
            )
        elif cmd == "counter_read":  # p4c passes `counter_read NAME INDEX` to simple_switch_CLI
            usage = "counter_read COUNTER INDEX [packets|bytes VALUE (ina's older form; not p4c's)]"
            parts = _exact_fields(rest, usage, 2, 4)
            if len(parts) == 3 or (
                len(parts) == 4 and parts[2].lower() not in ("packets", "bytes")
            ):
                raise StfError(f"expected: {usage}")
            kind, expected = (parts[2], parts[3]) if len(parts) == 4 else (None, None)
            self._check_counter(parts[0], parts[1], kind, "==", expected, lineno)
        elif cmd in ("wait", "no_packet"):
            pass
        else:
            raise StfError(f"unknown STF command '{cmd}'")

    def _directive(self, text: str, lineno: int) -> None:
        """`# ina: ...` comments: expectations p4c's STF grammar has no statement for."""
        m = REGISTER_DIRECTIVE_RE.fullmatch(text)
        if not m:
            raise StfError(
                f"expected: # ina: register NAME[INDEX] ==|!=|<|<=|>|>= NUMBER; got '# ina: {text}'"
            )
        actual = self._register(m.group("name"), m.group("index"))
        self._compare(
            f"register {m.group('name')}[{m.group('index')}]",
            actual,
            m.group("op"),
            m.group("expected"),
            lineno,
        )

    def _register(self, name: str, index: str) -> int:
        return self.switch.registers[_suffix_match(name, self.switch.registers, "register")].read(
            _int(index)
        )

    def _check_counter(
        self,
        name: str,
        index: str,
        kind: str | None,
        op: str | None,
        expected: str | None,
        lineno: int,
    ) -> None:
        """Read counter NAME at INDEX (or a direct counter at entry $NAME); check it when a test is given."""
        if index.startswith("$"):
            if index[1:] not in self.entries:
                raise StfError(
                    f"no table entry named '{index[1:]}' (name one with: add ... ACTION(...) = NAME)"
                )
            table, handle = self.entries[index[1:]]
            direct = {c.name: c.binding for c in self.switch.pipeline.model.counters if c.direct}
            counter = _suffix_match(name, direct, "direct counter")
            if direct[counter] != table:
                raise StfError(
                    f"direct counter '{counter}' belongs to table '{direct[counter]}', "
                    f"entry '{index[1:]}' to '{table}'"
                )
            packets, nbytes = self.switch.direct_counters[table].read(handle)
        else:
            counter = self.switch.counters[_suffix_match(name, self.switch.counters, "counter")]
            packets, nbytes = counter.read(_int(index))
        if kind is not None:
            actual = nbytes if kind.lower() == "bytes" else packets
            self._compare(f"counter {name}({index}) {kind.lower()}", actual, op, expected, lineno)

    def _compare(self, what: str, actual: int, op: str, expected: str, lineno: int) -> None:
        if not COMPARISONS[op](actual, _int(expected)):
            self.failures.append(
                f"{self._at(lineno)}: {what} is {actual}, expected {op} {_int(expected)}"
            )

    def _add(self, rest: str) -> None:
        usage = "add TABLE [PRIORITY] KEY:VALUE... ACTION(PARAM:VALUE, ...)"
        named = ENTRY_NAME_RE.match(
            rest.strip()
        )  # `... ACTION(...) = NAME` names the entry for check_counter
        if named:
            rest = named.group("entry")
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
            keys[re.sub(r"\$(\d+)", r"[\1]", key)] = value  # STF writes stack[0] as stack$0
        match = []
        for kf in table.keys:
            hit = [
                k
                for k in keys
                if kf.name == k
                or kf.name.endswith("." + k)
                or k.endswith("." + kf.name)
                or kf.name.endswith(k)
            ]
            if not hit:
                if kf.match_type in ("ternary", "optional"):
                    match.append(("ternary", 0, 0))
                    continue
                raise StfError(f"no value for key '{kf.name}' of table '{table.name}'")
            match.append(_match_value(keys[hit[0]], kf.match_type))
        name, args = _parse_action(action_text)
        handle = self._call(table, name, args, (match, priority), default=False)
        if named:
            self.entries[named.group("id")] = (table.name, handle)

    def _call(self, table, name: str, args: dict[str, int], entry, default: bool) -> int | None:
        """Install the action as the default or as an entry; returns the entry's handle."""
        action = _suffix_match(name, table.actions, f"action of table '{table.name}'")
        action_id = table.action(
            action
        ).id  # copies of one action share its name: take this table's
        values = []
        for param in self.switch.pipeline.model.actions[action_id].params:
            if param.name not in args:
                raise StfError(f"action '{action}' needs parameter '{param.name}'")
            values.append(args[param.name] & ((1 << param.width) - 1))
        if default:
            table.set_default(action, values)
            return None
        match, priority = entry
        return table.add(match, action, values, priority)

    def _verdict(self) -> StfResult:
        lines = list(self.failures)
        for port in sorted(set(self.expects) | set(self.outputs)):
            expected = self.expects.get(port, [])
            actual = self.outputs.get(port, [])
            for i in range(max(len(expected), len(actual))):
                if i >= len(actual):
                    lines.append(
                        f"port {port}: expected packet ({self._at(expected[i][2])}) never came out:\n"
                        f"    {expected[i][0]}"
                    )
                elif i >= len(expected):
                    lines.append(f"port {port}: unexpected packet:\n    {actual[i].hex()}")
                elif not _matches(expected[i][0], expected[i][1], actual[i]):
                    lines.append(
                        f"port {port}: packet {i + 1} differs ({self._at(expected[i][2])}):\n"
                        f"    expected {expected[i][0]}{'$' if expected[i][1] else ''}\n    actual   {actual[i].hex()}"
                    )
        report = "\n".join(lines) if lines else "all expected packets matched"
        return StfResult(not lines, report, self.outputs, self.switch)


def run_stf(
    program_json: dict, stf_text: str, engine: str = "auto", name: str = "<stf>"
) -> StfResult:
    return StfRunner(program_json, engine).run(stf_text, name)


def load_program(path: str, include_dirs: list[str], defines: dict[str, str]) -> dict:
    """BMv2 JSON from a .json file or compiled from P4; FileError or CompileError naming the file."""
    if path.endswith(".json"):
        return read_bmv2_json(path)
    from ina.compiler.cli import compile_program

    return compile_program(path, include_dirs, defines).bmv2


def read_stf(path: str) -> str:
    """The STF file as text; FileError for a file that cannot be read, StfError located at the first
    line that is binary or not UTF-8."""
    data = read_bytes(path, "STF file")
    bad = data.find(b"\0")
    try:
        text = data.decode()
    except UnicodeDecodeError as err:
        bad = err.start if bad < 0 else min(bad, err.start)
    if bad >= 0:
        line = data.count(b"\n", 0, bad) + 1
        raise StfError(
            f"{path}:{line}: not an STF text file (byte 0x{data[bad]:02x} is binary or not UTF-8)"
        )
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ina stf", description="Run a P4 program against an STF test, in process."
    )
    parser.add_argument(
        "program", help="PROGRAM.p4 (compiled with ina's compiler) or PROGRAM.json (BMv2 JSON)"
    )
    parser.add_argument("stf", help="the STF test file")
    parser.add_argument("-I", dest="include", action="append", default=[], metavar="DIR")
    parser.add_argument(
        "-D", dest="define", action="append", default=[], type=macro_define, metavar="NAME[=VALUE]"
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="trace every packet through the pipeline (Python engine)",
    )
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help="data path: native (compiled to C), python, or auto (native when it can)",
    )
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
    except FileError as err:
        print(f"ina stf: {err}", file=sys.stderr)
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
