"""Invariants simple_switch's JSON loader relies on, checked without running BMv2: every name
resolves, expressions are well typed (BMv2 distinguishes data, bool and header values and
asserts on mixing them), jumps and next-node links stay in range, widths of keys and values agree."""

from __future__ import annotations

from ina.switch.model.externs import EXTERNS

DATA, BOOL, HEADER, STACK, UNION = "data", "bool", "header", "stack", "union"
ARITH = {
    "+",
    "-",
    "*",
    "/",
    "%",
    "<<",
    ">>",
    "&",
    "|",
    "^",
    "two_comp_mod",
    "usat_cast",
    "sat_cast",
}
COMPARE = {">", "<", ">=", "<="}
# A parameter naming an extern instance or a calculation -> the JSON section that declares it
# (every extern kind the switch registers: ina.switch.model.externs).
SECTIONS = {k.reference: k.section for k in EXTERNS.values()} | {"calculation": "calculations"}


class Bmv2Checker:
    def __init__(self, bmv2: dict):
        self.bmv2 = bmv2
        self.errors: list[str] = []
        types = {t["name"]: t for t in bmv2["header_types"]}
        self.fields = {
            h["name"]: {f[0]: f[1] for f in types[h["header_type"]]["fields"]}
            for h in bmv2["headers"]
        }
        self.stacks = {s["name"]: s for s in bmv2["header_stacks"]}
        self.unions = {u["name"] for u in bmv2["header_unions"]}
        self.arrays = {kind: {a["name"] for a in bmv2.get(kind, [])} for kind in SECTIONS.values()}
        self.actions = {a["id"]: a for a in bmv2["actions"]}

    def check(self) -> list[str]:
        for header_type in self.bmv2["header_types"]:
            metadata = any(
                h["header_type"] == header_type["name"] and h["metadata"]
                for h in self.bmv2["headers"]
            )
            if sum(f[1] for f in header_type["fields"] if f[1] != "*") % 8 and not metadata:
                self.errors.append(f"header type {header_type['name']} is not byte aligned")
        for action in self.bmv2["actions"]:
            self._action(action)
        for parser in self.bmv2["parsers"]:
            self._parser(parser)
        for pipeline in self.bmv2["pipelines"]:
            self._pipeline(pipeline)
        for checksum in self.bmv2["checksums"]:
            self._field(checksum["target"], "checksum target")
            if checksum["if_cond"] is not None:
                self._expect(checksum["if_cond"], BOOL, "checksum condition", None)
        for calc in self.bmv2["calculations"]:
            for item in calc["input"]:
                if item["type"] == "field":
                    self._field(item["value"], f"calculation {calc['name']}")
        for deparser in self.bmv2["deparsers"]:
            for name in deparser["order"]:
                if name not in self.fields:
                    self.errors.append(f"deparser emits unknown header {name}")
        return self.errors

    # ---- expressions
    def _field(self, ref: list, where: str) -> None:
        header, name = ref
        if header not in self.fields:
            self.errors.append(f"{where}: unknown header {header}")
        elif name != "$valid$" and name not in self.fields[header]:
            self.errors.append(f"{where}: header {header} has no field {name}")

    def _expect(self, node: dict, kind: str, where: str, locals_: int | None) -> None:
        got = self._type(node, where, locals_)
        if got != kind:
            self.errors.append(f"{where}: expected {kind}, got {got} in {node}")

    def _type(self, node: dict | None, where: str, locals_: int | None) -> str | None:
        if node is None:
            return None
        kind, value = node.get("type"), node.get("value")
        if kind == "field":
            self._field(value, where)
            return DATA
        if kind == "hexstr":
            return DATA
        if kind == "bool":
            return BOOL
        if kind == "local":
            if locals_ is None or not 0 <= value < locals_:
                self.errors.append(f"{where}: local {value} out of range")
            return DATA
        if kind == "header":
            if value not in self.fields:
                self.errors.append(f"{where}: unknown header {value}")
            return HEADER
        if kind == "header_stack":
            if value not in self.stacks:
                self.errors.append(f"{where}: unknown stack {value}")
            return STACK
        if kind == "header_union":
            return UNION
        if kind == "stack_field":
            return DATA
        if kind == "expression":
            return self._op(value, where, locals_)
        self.errors.append(f"{where}: unexpected operand type {kind}")
        return None

    def _op(self, expr: dict, where: str, locals_: int | None) -> str | None:
        name = expr["op"]
        left, right = expr.get("left"), expr.get("right")

        def need(node, kind):
            got = self._type(node, where, locals_)
            if got != kind:
                self.errors.append(f"{where}: '{name}' needs {kind}, got {got}")

        if name in ARITH:
            if left is not None or name not in ("+", "-"):
                need(left, DATA)
            need(right, DATA)
            return DATA
        if name == "~":
            need(right, DATA)
            return DATA
        if name in COMPARE:
            need(left, DATA)
            need(right, DATA)
            return BOOL
        if name in ("==", "!="):
            lt, rt = self._type(left, where, locals_), self._type(right, where, locals_)
            if lt != rt or lt is None:
                self.errors.append(f"{where}: '{name}' compares {lt} with {rt}")
            return BOOL
        if name in ("and", "or"):
            need(left, BOOL)
            need(right, BOOL)
            return BOOL
        if name == "not":
            need(right, BOOL)
            return BOOL
        if name == "d2b":
            need(right, DATA)
            return BOOL
        if name == "b2d":
            need(right, BOOL)
            return DATA
        if name == "?":
            need(expr["cond"], BOOL)
            lt, rt = self._type(left, where, locals_), self._type(right, where, locals_)
            if lt != rt:
                self.errors.append(f"{where}: '?:' branches are {lt} and {rt}")
            return lt
        if name == "valid":
            need(right, HEADER)
            return BOOL
        if name == "valid_union":
            need(right, UNION)
            return BOOL
        if name == "dereference_header_stack":
            need(left, STACK)
            need(right, DATA)
            return HEADER
        if name in ("last_stack_index", "size_stack"):
            need(right, STACK)
            return DATA
        if name == "access_field":
            need(left, HEADER)
            return DATA
        self.errors.append(f"{where}: unknown operator {name}")
        return None

    # ---- actions
    def _param(self, param: dict, where: str, runtime: int) -> str | None:
        kind = param["type"]
        if kind == "runtime_data":
            if not 0 <= param["value"] < runtime:
                self.errors.append(f"{where}: runtime_data {param['value']} out of range")
            return DATA
        if kind == "expression":
            return self._type(param["value"], where, runtime)
        if kind in SECTIONS:
            if param["value"] not in self.arrays[SECTIONS[kind]]:
                self.errors.append(f"{where}: unknown {kind} {param['value']}")
            return kind
        if kind in ("string", "parameters_vector"):
            return kind
        return self._type(param, where, runtime)

    def _action(self, action: dict) -> None:
        runtime = len(action["runtime_data"])
        count = len(action["primitives"])
        for index, prim in enumerate(action["primitives"]):
            where = f"action {action['name']} primitive {index} ({prim['op']})"
            kinds = [self._param(p, where, runtime) for p in prim["parameters"]]
            op = prim["op"]
            if op in ("_jump", "_jump_if_zero"):
                target = int(prim["parameters"][-1]["value"], 16)
                if not index < target <= count:
                    self.errors.append(f"{where}: jump target {target} out of range")
                if op == "_jump_if_zero" and kinds[0] != DATA:
                    self.errors.append(f"{where}: condition must be data")
            if op == "assign" and kinds != [DATA, DATA]:
                self.errors.append(f"{where}: assign needs data operands, got {kinds}")
            if op in ("assign_header", "add_header", "remove_header") and any(
                k != HEADER for k in kinds
            ):
                self.errors.append(f"{where}: needs headers, got {kinds}")
            if op in ("assert", "assume") and kinds != [BOOL]:
                self.errors.append(f"{where}: needs a bool, got {kinds}")

    # ---- parser
    def _parser(self, parser: dict) -> None:
        names = {s["name"] for s in parser["parse_states"]}
        if parser["init_state"] not in names:
            self.errors.append(f"parser init state {parser['init_state']} missing")
        for state in parser["parse_states"]:
            where = f"state {state['name']}"
            for op in state["parser_ops"]:
                params = op["parameters"]
                if op["op"] == "extract":
                    target = params[0]
                    known = self.fields if target["type"] == "regular" else self.stacks
                    if target["value"] not in known:
                        self.errors.append(f"{where}: extract into unknown {target['value']}")
                elif op["op"] == "set":
                    self._field(params[0]["value"], where)
                    if params[1]["type"] != "lookahead":
                        kind = self._param(params[1], where, 0)
                        if kind != DATA:
                            self.errors.append(f"{where}: set source is {kind}")
                elif op["op"] == "verify":
                    self._expect(params[0], BOOL, where, None)
                    self._expect(params[1], DATA, where, None)
                elif op["op"] == "primitive":
                    self._action({"name": where, "runtime_data": [], "primitives": params})
            widths = []
            for key in state["transition_key"]:
                if key["type"] == "field":
                    self._field(key["value"], where)
                    widths.append(self.fields.get(key["value"][0], {}).get(key["value"][1], 0))
                elif key["type"] == "lookahead":
                    widths.append(key["value"][1])
                else:
                    widths.append(None)
            expected_bytes = sum((w + 7) // 8 for w in widths) if None not in widths else None
            for transition in state["transitions"]:
                if transition["next_state"] is not None and transition["next_state"] not in names:
                    self.errors.append(f"{where}: unknown next state {transition['next_state']}")
                if transition["type"] == "hexstr" and expected_bytes is not None:
                    for text in (transition["value"], transition["mask"]):
                        if text is not None and len(text) - 2 != 2 * expected_bytes:
                            self.errors.append(
                                f"{where}: transition value {text} is not {expected_bytes} bytes"
                            )

    # ---- pipelines
    def _pipeline(self, pipeline: dict) -> None:
        nodes = {t["name"] for t in pipeline["tables"]} | {
            c["name"] for c in pipeline["conditionals"]
        }
        if pipeline["init_table"] is not None and pipeline["init_table"] not in nodes:
            self.errors.append(f"{pipeline['name']}: init_table {pipeline['init_table']} missing")
        for cond in pipeline["conditionals"]:
            self._expect(cond["expression"], BOOL, f"conditional {cond['name']}", None)
            for nxt in (cond["true_next"], cond["false_next"]):
                if nxt is not None and nxt not in nodes:
                    self.errors.append(f"conditional {cond['name']}: unknown next {nxt}")
        for table in pipeline["tables"]:
            where = f"table {table['name']}"
            for key in table["key"]:
                self._field(key["target"], where)
            for action_id, name in zip(table["action_ids"], table["actions"], strict=True):
                if self.actions.get(action_id, {}).get("name") != name:
                    self.errors.append(f"{where}: action id {action_id} is not {name}")
            for label, nxt in [*table["next_tables"].items(), ("base", table["base_default_next"])]:
                if nxt is not None and nxt not in nodes:
                    self.errors.append(f"{where}: next of {label} is unknown {nxt}")
            default = table.get("default_entry")
            if default is not None:
                action = self.actions.get(default["action_id"])
                if action is None or default["action_id"] not in table["action_ids"]:
                    self.errors.append(
                        f"{where}: default action {default['action_id']} not in table"
                    )
                elif len(default["action_data"]) != len(action["runtime_data"]):
                    self.errors.append(f"{where}: default action data count")
            for entry in table.get("entries", []):
                if len(entry["match_key"]) != len(table["key"]):
                    self.errors.append(f"{where}: entry key count")
                action = self.actions.get(entry["action_entry"]["action_id"])
                if action is None or len(entry["action_entry"]["action_data"]) != len(
                    action["runtime_data"]
                ):
                    self.errors.append(f"{where}: entry action data")


def bmv2_errors(bmv2: dict) -> list[str]:
    return Bmv2Checker(bmv2).check()
