"""Hostile BMv2 JSON: code-injection payloads, absurd sizes and nesting pushed through a real
P4Runtime server to both engines, the generators with validation switched off, and a seeded fuzz
of the aggregation program's JSON. Nothing may run, nothing may change, and the answer is always
INVALID_ARGUMENT (over gRPC) or PipelineError (directly)."""

import contextlib
import functools
import json
import queue
import random
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest

from ina.compiler import compile_file
from ina.p4rt.proto import p4runtime_pb2, p4runtime_pb2_grpc
from ina.p4src import AGGREGATE_P4
from ina.switch.engine import Switch
from ina.switch.model import load as load_module
from ina.switch.model import program as program_module
from ina.switch.model.errors import PipelineError, Unsupported
from ina.switch.native.codegen import generate
from ina.switch.p4runtime.server import P4RuntimeService, serve
from ina.switch.python import pipeline as pipeline_module

Action = p4runtime_pb2.SetForwardingPipelineConfigRequest
FRAME = bytes.fromhex(
    "02000000000202000000000108004500002500000000401166c60a0000010a00000204d200500011"
    "000068656c6c6f20696e61"
)  # ordinary traffic to 02:..:02, forwarded to port 2


@functools.cache
def _program():
    return compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"})


@functools.cache
def _program_json() -> str:
    return json.dumps(_program().bmv2)


def aggregate() -> dict:
    """A fresh copy of the aggregation program's JSON: parsed again, 8x quicker than a deepcopy
    (hundreds of hostile cases are each a copy)."""
    return json.loads(_program_json())


def payloads(marker: Path) -> list[str]:
    """Strings that create `marker` if any generator pastes them into Python or C source: in an
    expression, a string literal, a subscript, a statement, or (with newlines) a function header,
    where C runs a constructor as soon as the built library is loaded."""
    python = f"__import__('os').system('touch {marker}')"
    c = f'system("touch {marker}")'
    return [
        f"1) or {python} or (1",
        f"x'); {python}; ('",
        f"0] or {python} or A[0",
        f"9(P, A): pass\n{python}\ndef act_9",
        f"0); {c}; (0",
        f"x: ; {c}; y",
        f"9(void) {{}}\n__attribute__((constructor)) static void pwn(void) {{ {c}; }}\nstatic void f9",
    ]


def find(node: object, pred: Callable[[dict], bool]) -> dict:
    """The first object under `node` (depth first, document order) satisfying `pred`."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if pred(item):
                return item
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    raise LookupError("no such object")


def rename(doc: object, old: str, new: str) -> None:
    """Every use of the name `old` in `doc` (values and keys) becomes `new`: a consistent program."""
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in [k for k in node if k == old]:
                node[new] = node.pop(key)
            items = list(node.items())
        elif isinstance(node, list):
            items = list(enumerate(node))
        else:
            continue
        for key, value in items:
            if value == old:
                node[key] = new  # type: ignore[index]
            stack.append(value)


# Names the generators turn into identifiers or strings: (what, name in the aggregation program).
NAMES = [
    ("table", lambda d: _tables(d)[1]["name"]),
    ("conditional", lambda d: d["pipelines"][0]["conditionals"][0]["name"]),
    ("parse state", lambda d: d["parsers"][0]["parse_states"][1]["name"]),
    ("action", lambda d: d["actions"][1]["name"]),
    ("header type", lambda d: d["header_types"][2]["name"]),
    ("header", lambda d: d["headers"][2]["name"]),
]


def _lookahead_key(d: dict) -> tuple[list, int]:
    state = d["parsers"][0]["parse_states"][0]
    state["transition_key"] = [{"type": "lookahead", "value": [0, 16]}]
    return state["transition_key"][0]["value"], 0


def _tables(d: dict) -> list[dict]:
    return d["pipelines"][0]["tables"]


# Every string and int position the generators read: (what, locate(doc) -> (container, key)).
POSITIONS: list[tuple[str, Callable[[dict], tuple[object, object]]]] = [
    ("action id", lambda d: (d["actions"][1], "id")),
    (
        "action parameter width",
        lambda d: (
            find(d["actions"], lambda a: bool(a.get("runtime_data")))["runtime_data"][0],
            "bitwidth",
        ),
    ),
    ("action name", lambda d: (d["actions"][1], "name")),
    ("header type name", lambda d: (d["header_types"][2], "name")),
    ("field name", lambda d: (d["header_types"][2]["fields"][0], 0)),
    ("field width", lambda d: (d["header_types"][2]["fields"][0], 1)),
    ("header instance name", lambda d: (d["headers"][2], "name")),
    ("header metadata flag", lambda d: (d["headers"][2], "metadata")),
    ("register id", lambda d: (d["register_arrays"][0], "id")),
    ("register size", lambda d: (d["register_arrays"][0], "size")),
    ("register width", lambda d: (d["register_arrays"][0], "bitwidth")),
    ("counter id", lambda d: (d["counter_arrays"][0], "id")),
    ("primitive op", lambda d: (find(d["actions"], lambda x: "parameters" in x), "op")),
    ("expression op", lambda d: (find(d["actions"], lambda x: "left" in x and "op" in x), "op")),
    ("hex string", lambda d: (find(d["actions"], lambda x: x.get("type") == "hexstr"), "value")),
    (
        "runtime_data index",
        lambda d: (find(d["actions"], lambda x: x.get("type") == "runtime_data"), "value"),
    ),
    (
        "field reference",
        lambda d: (find(d["actions"], lambda x: x.get("type") == "field")["value"], 1),
    ),
    (
        "register reference",
        lambda d: (find(d["actions"], lambda x: x.get("type") == "register_array"), "value"),
    ),
    ("value type", lambda d: (find(d["actions"], lambda x: x.get("type") == "field"), "type")),
    ("calculation name", lambda d: (d["calculations"][0], "name")),
    ("calculation id", lambda d: (d["calculations"][0], "id")),
    ("calculation algo", lambda d: (d["calculations"][0], "algo")),
    ("checksum calculation", lambda d: (d["checksums"][0], "calculation")),
    ("error code", lambda d: (d["errors"][1], 1)),
    ("parser id", lambda d: (d["parsers"][0], "id")),
    ("parse state id", lambda d: (d["parsers"][0]["parse_states"][1], "id")),
    ("parse state name", lambda d: (d["parsers"][0]["parse_states"][1], "name")),
    (
        "transition value",
        lambda d: (find(d["parsers"], lambda x: x.get("type") == "hexstr"), "value"),
    ),
    (
        "next state",
        lambda d: (find(d["parsers"], lambda x: bool(x.get("next_state"))), "next_state"),
    ),
    ("lookahead offset", _lookahead_key),
    ("pipeline id", lambda d: (d["pipelines"][0], "id")),
    ("pipeline name", lambda d: (d["pipelines"][1], "name")),
    ("table id", lambda d: (_tables(d)[1], "id")),
    ("table name", lambda d: (_tables(d)[1], "name")),
    ("table size", lambda d: (_tables(d)[1], "max_size")),
    ("table key mask", lambda d: (_tables(d)[1]["key"][0], "mask")),
    ("table key target", lambda d: (_tables(d)[1]["key"][0]["target"], 0)),
    ("table action id", lambda d: (_tables(d)[1]["action_ids"], 0)),
    ("default action id", lambda d: (_tables(d)[0]["default_entry"], "action_id")),
    ("default action data", lambda d: (_tables(d)[0]["default_entry"]["action_data"], 0)),
    (
        "next table",
        lambda d: (_tables(d)[1]["next_tables"], next(iter(_tables(d)[1]["next_tables"]))),
    ),
    ("conditional id", lambda d: (d["pipelines"][0]["conditionals"][0], "id")),
    ("conditional name", lambda d: (d["pipelines"][0]["conditionals"][0], "name")),
    ("deparser id", lambda d: (d["deparsers"][0], "id")),
    ("deparser order", lambda d: (d["deparsers"][0]["order"], 0)),
]
# Absurd values: sizes of 10**12 cells or below zero, widths of 10**9 bits, wrong JSON types.
ABSURD = [
    ("register size", 10**12),
    ("register size", -5),
    ("field width", 10**9),
    ("field width", 0),
    ("table size", 10**12),
    ("register width", True),
    ("action id", 1.5),
    ("error code", -1),
]


def injections(marker: Path) -> Iterator[tuple[str, str]]:
    """(label, JSON text) of every payload at every position, and as every kind of name (renamed
    consistently, so the program is otherwise whole): text, as a controller pushes it, and one
    case at a time (each is a whole program)."""
    for what, locate in POSITIONS:
        for payload in payloads(marker):
            doc = aggregate()
            container, key = locate(doc)
            container[key] = payload  # type: ignore[index]
            yield f"{what} = {payload!r}", json.dumps(doc)
    for what, name in NAMES:
        for payload in payloads(marker):
            doc = aggregate()
            rename(doc, name(doc), payload)
            yield f"{what} renamed {payload!r}", json.dumps(doc)


def hostile(marker: Path) -> Iterator[tuple[str, str]]:
    """(label, JSON text) of every injection, absurd values and absurd nesting."""
    yield from injections(marker)
    for what, value in ABSURD:
        doc = aggregate()
        container, key = dict(POSITIONS)[what](doc)
        container[key] = value  # type: ignore[index]
        yield f"{what} = {value!r}", json.dumps(doc)
    doc = aggregate()
    expr = doc["pipelines"][0]["conditionals"][0]["expression"]
    for _ in range(300):
        expr = {"type": "expression", "value": {"op": "not", "left": None, "right": expr}}
    doc["pipelines"][0]["conditionals"][0]["expression"] = expr
    yield "an expression 300 operators deep", json.dumps(doc)


class Client:
    """The primary P4Runtime controller of device 0, on raw protobufs."""

    def __init__(self, address: str):
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.requests: queue.Queue = queue.Queue()
        self.responses = self.stub.StreamChannel(iter(self.requests.get, None))
        msg = p4runtime_pb2.StreamMessageRequest()
        msg.arbitration.device_id = 0
        msg.arbitration.election_id.low = 1
        self.requests.put(msg)
        assert next(self.responses).arbitration.status.code == 0

    def set_pipeline(self, action: int, device_config: bytes) -> grpc.StatusCode:
        req = Action(device_id=0, action=action)
        req.election_id.low = 1
        req.config.p4info.CopyFrom(_program().p4info)
        req.config.p4_device_config = device_config
        self.details = ""
        try:
            self.stub.SetForwardingPipelineConfig(req)
        except grpc.RpcError as err:
            self.details = err.details()
            return err.code()
        return grpc.StatusCode.OK

    def close(self) -> None:
        self.requests.put(None)
        self.channel.close()


@pytest.fixture(params=["python", "native"])
def served(request):
    """(switch running the aggregation program with some state, P4Runtime client) per engine."""
    sw = Switch(engine=request.param)
    srv = serve(P4RuntimeService(sw, threading.Lock()), "127.0.0.1:0")
    client = Client(f"127.0.0.1:{srv.bound_port}")
    assert (
        client.set_pipeline(Action.VERIFY_AND_COMMIT, json.dumps(aggregate()).encode())
        == grpc.StatusCode.OK
    )
    assert sw.engine_name == request.param
    sw.tables["InaIngress.switch_config"].set_default(
        "InaIngress.set_switch_addr", [0x2AA00000001, 0x0A0000FE]
    )
    sw.tables["InaIngress.l2_forward"].add([0x020000000002], "InaIngress.forward", [2])
    sw.registers["InaIngress.slot_acc_3"].write(5, 123456)
    yield sw, client
    client.close()
    srv.stop(None)


def unchanged(sw: Switch, before: object) -> None:
    """The program loaded before the hostile pushes still runs, with its state."""
    assert sw.pipeline is before
    assert sw.process(1, FRAME) == [(2, FRAME)]
    assert sw.registers["InaIngress.slot_acc_3"].read(5) == 123456
    assert len(sw.tables["InaIngress.l2_forward"].entries()) == 1


def test_hostile_json_is_refused_over_p4runtime_and_nothing_runs(served, tmp_path: Path) -> None:
    sw, client = served
    marker = tmp_path / "pwned"
    before = sw.pipeline
    for label, text in hostile(marker):
        data = text.encode()
        for action in (Action.VERIFY, Action.VERIFY_AND_COMMIT):
            code = client.set_pipeline(action, data)
            assert code == grpc.StatusCode.INVALID_ARGUMENT, f"{label}: {code}"
            assert not marker.exists(), label
            assert sw.pipeline is before, label
    unchanged(sw, before)


def _set_switch_addr(doc: dict) -> list[dict]:
    return find(doc["actions"], lambda a: a.get("name") == "InaIngress.set_switch_addr")[
        "primitives"
    ]


def out_of_bounds() -> list[tuple[dict, str]]:
    """(JSON, the refusal's place and reason): issue 28's programs, which the schema accepts. The
    first made the native engine answer ARP with heap bits as the switch's MAC; the second wrote
    the register's last cell."""
    far = aggregate()
    _set_switch_addr(far)[0]["parameters"][1]["value"] = 65536
    negative = aggregate()
    _set_switch_addr(negative).append(
        {
            "op": "register_write",
            "parameters": [
                {"type": "register_array", "value": "InaIngress.slot_acc_3"},
                {"type": "hexstr", "value": "-0x1"},
                {"type": "hexstr", "value": "0x7"},
            ],
        }
    )
    return [
        (
            far,
            "actions[0].primitives[0].parameters[1]: runtime_data 65536: action "
            "'InaIngress.set_switch_addr' has 2 parameters",
        ),
        (
            negative,
            "actions[0].primitives[2].parameters[1]: index -1 is outside register array "
            "'InaIngress.slot_acc_3' (0..31)",
        ),
    ]


def test_references_outside_what_they_name_are_invalid_argument_at_their_place(served) -> None:
    sw, client = served
    before = sw.pipeline
    for doc, place in out_of_bounds():
        for action in (Action.VERIFY, Action.VERIFY_AND_COMMIT):
            assert (
                client.set_pipeline(action, json.dumps(doc).encode())
                == grpc.StatusCode.INVALID_ARGUMENT
            )
            assert client.details.endswith(place), client.details
    unchanged(sw, before)


@pytest.mark.parametrize(
    "data",
    [b"{not json", b"\xff\xfe", b"[]", b"[" * 100_000, b'{"a":' * 100_000],
    ids=["garbage", "not-utf8", "a-list", "100000-deep-list", "100000-deep-object"],
)
def test_unparseable_or_absurdly_nested_json_is_invalid_argument(served, data: bytes) -> None:
    sw, client = served
    before = sw.pipeline
    for action in (Action.VERIFY, Action.VERIFY_AND_COMMIT):
        assert client.set_pipeline(action, data) == grpc.StatusCode.INVALID_ARGUMENT
    unchanged(sw, before)


def test_payloads_in_free_text_stay_data(tmp_path: Path) -> None:
    """Key names and log_msg formats may hold any printable text: it reaches the code only
    through repr(), so the program loads and runs, logging the text, and nothing executes."""
    marker = tmp_path / "pwned"
    doc = aggregate()
    key = _tables(doc)[1]["key"][0]
    text = payloads(marker)[1]
    key["name"] = text
    log = {
        "op": "log_msg",
        "parameters": [
            {"type": "string", "value": text + " {}"},
            {
                "type": "parameters_vector",
                "value": [{"type": "field", "value": ["standard_metadata", "ingress_port"]}],
            },
        ],
    }
    find(doc["actions"], lambda a: a.get("name") == "InaIngress.set_switch_addr")[
        "primitives"
    ].append(log)
    lines: list[str] = []
    sw = Switch(engine="python", log=lines.append)
    sw.load(doc)
    sw.tables["InaIngress.switch_config"].set_default(
        "InaIngress.set_switch_addr", [0x2AA00000001, 0x0A0000FE]
    )
    sw.process(1, FRAME)
    assert f"log_msg: {text} 1" in lines
    assert any(k.name == text for k in sw.tables["InaIngress.drop_sim_in"].keys)
    assert not marker.exists()


# --- defence in depth: the generators alone ------------------------------------------------
def test_without_the_validator_the_generators_still_refuse_injections(
    tmp_path: Path, monkeypatch
) -> None:
    """With validation switched off, a payload in an int position is refused by num()/hexint and
    a payload in a name is sanitised by ident() or quoted by repr(): never code, in either engine."""
    monkeypatch.setattr(load_module, "validate", lambda program: None)
    marker = tmp_path / "pwned"
    for label, text in injections(marker):
        try:
            loaded = pipeline_module.load_pipeline(json.loads(text))
        except PipelineError:
            loaded = None
        doc = json.loads(text)  # a copy of its own, whatever load_pipeline did with the first
        try:  # the C generator on its own, even where the Python engine refused the program
            source = generate(
                doc, loaded.layout if loaded else program_module.build_layout(doc)
            ).source
        except (PipelineError, Unsupported, KeyError, IndexError, TypeError, ValueError):
            source = ""
        assert "system(" not in source and "__import__(" not in source, (
            label
        )  # ident() leaves letters
        assert loaded is None or "__import__(" not in loaded.source, label
        assert not marker.exists(), label


# --- seeded fuzz --------------------------------------------------------------------------
def _without_source_info(node: object) -> object:
    """`node` without the source_info objects no loader reads (most of the JSON): the fuzz then
    spends its cases on keys that matter."""
    if isinstance(node, dict):
        return {k: _without_source_info(v) for k, v in node.items() if k != "source_info"}
    if isinstance(node, list):
        return [_without_source_info(v) for v in node]
    return node


def _positions(doc: object) -> list[tuple]:
    """Every position in `doc` as the keys that reach it from the root (the last one its key in its
    container; str: a dict's, int: a list's), depth first."""
    out, stack = [], [(doc, ())]
    while stack:
        node, keys = stack.pop()
        items = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else ()
        )
        for key, child in items:
            out.append((*keys, key))
            stack.append((child, (*keys, key)))
    return out


def _deep(rng: random.Random) -> object:
    """An expression nested 10 to 5,000 levels, each level's two operands one shared subtree."""
    deep: object = {"type": "field", "value": ["agg", "job_id"]}
    for _ in range(rng.choice([10, 70, 200, 5000])):
        deep = {
            "type": "expression",
            "value": {"op": rng.choice(["~", "not", "+"]), "left": deep, "right": deep},
        }
    return deep


def _mutant(rng: random.Random, marker: Path) -> object:
    """A replacement: a code-injection payload, nesting, or one of the absurd values, each as
    likely; the payload and the nesting drawn only when chosen (nesting draws an operator per level)."""
    plain = [
        10**12,
        -5,
        -1,
        2**31,
        2**64,
        0,
        1.5,
        True,
        False,
        None,
        "",
        "0x",
        "x" * 300,
        [],
        {},
        [1, 2, 3],
        {"type": "hexstr", "value": "0x1"},
        "é",
        "a b",
        "0x" + "f" * 2000,
    ]
    pick = rng.randrange(len(plain) + 2)
    if pick == len(plain):
        return rng.choice(payloads(marker))
    if pick == len(plain) + 1:
        return _deep(rng)
    return plain[pick]


def _mutate(doc: dict, rng: random.Random, marker: Path, positions: list[tuple]) -> dict:
    """`doc` with 1 to 3 of `positions` (doc's: the deep mutants share subtrees, a walk of them is
    2**depth) deleted or replaced, as a new document that shares every container off the mutated
    paths with `doc` (copied along them): a case costs its mutations, not a copy of the program.
    A position below one replaced or deleted before it is no longer in the document: its mutant
    is drawn and left out."""
    root = dict(doc)
    copies = {id(root)}  # containers of this case's document: written in place
    changed: list[tuple[object, object]] = []  # (container, key) mutated in this case
    for _ in range(rng.randint(1, 3)):
        *above, key = rng.choice(positions)
        container: object = root
        for step in above:
            if any(c is container and k == step for c, k in changed):
                container = None  # cut off from the document
                break
            child = container[step]
            if id(child) not in copies:
                child = dict(child) if isinstance(child, dict) else list(child)
                copies.add(id(child))
                container[step] = child
            container = child
        if rng.random() < 0.15 and isinstance(key, str):  # a dict's key
            if container is not None:
                del container[key]
                changed.append((container, key))
        else:
            mutant = _mutant(rng, marker)
            if container is not None:
                container[key] = mutant
                changed.append((container, key))
    return root


@pytest.mark.fuzz
def test_fuzzed_json_loads_or_is_refused_cleanly(fuzz_cases, tmp_path: Path) -> None:
    """Random paths of the compiled aggregation program replaced by payloads, absurd ints, wrong
    types and deep nesting, or deleted: every case loads or raises PipelineError, on both engines,
    creates no file and leaves the program it was made from as it was (cases share its unmutated
    parts). Native builds are the slow part (about 1 s of gcc each, cached by content), so only the
    first few cases the Python engine accepts are built natively; the rest generate the native
    engine's C from the model the Python engine's was generated from, without gcc."""
    marker = tmp_path / "pwned"
    rng = random.Random(20240531)
    base = json.dumps(_without_source_info(aggregate()))
    program = json.loads(base)
    positions = _positions(program)
    n = fuzz_cases(2000)
    builds = max(2, n // 400)
    loaded = 0
    for case in range(n):
        doc = _mutate(program, rng, marker, positions)
        try:  # load_pipeline's two steps: the model, read and checked once, serves both engines
            layout, model = load_module.load_program(doc)
            pipeline_module.build_pipeline(layout, model)
        except PipelineError:
            assert not marker.exists(), case
            continue
        loaded += 1
        if builds:
            builds -= 1
            with contextlib.suppress(PipelineError):
                Switch(engine="native").load(doc)
        else:
            with contextlib.suppress(Unsupported, PipelineError):
                generate(model, layout)
        assert not marker.exists(), case
    assert 0 < loaded < n  # the mutations both break programs and leave some running
    assert json.dumps(program) == base


def test_native_code_generation_is_linear_in_expression_depth() -> None:
    """Comparisons ask for an operand's term and its value: without the generator's memo, 45
    nested ones took 2**45 steps (a hang) instead of 90."""
    doc = aggregate()
    expr = {"type": "field", "value": ["agg", "job_id"]}
    for _ in range(45):
        expr = {
            "type": "expression",
            "value": {"op": ">", "left": expr, "right": {"type": "hexstr", "value": "0x1"}},
        }
    doc["pipelines"][0]["conditionals"][0]["expression"] = {
        "type": "expression",
        "value": {
            "op": "d2b",
            "left": None,
            "right": {"type": "expression", "value": {"op": "b2d", "left": None, "right": expr}},
        },
    }
    loaded = pipeline_module.load_pipeline(doc)
    assert "ina_ctx" in generate(doc, loaded.layout).source
