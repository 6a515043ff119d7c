"""Tables: keys, action lists, default actions, const entries and direct resources, lowered to a
BMv2 table and described for the P4Info."""

from __future__ import annotations

from typing import Any

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.errors import CompileError, Location
from ina.compiler.expressions import ExpressionCompiler
from ina.compiler.lowered import KeyInfo, TableActionInfo, TableInfo
from ina.compiler.objects import ActionBinding, ExternInstance, TableObject
from ina.compiler.program import Scope
from ina.compiler.services import Services
from ina.compiler.values import Computed, Field, Value, hexstr, mask_of

MATCH_KINDS = ("exact", "lpm", "ternary", "range", "optional")
DEFAULT_SIZE = 1024


class TableLowering:
    """Builds the BMv2 table for one application; key expressions that are not plain fields are
    first computed into temporaries (returned as statements to run before the table)."""

    def __init__(self, services: Services, table: TableObject):
        self.services = services
        self.table = table
        self.decl = table.decl
        self.ec = ExpressionCompiler(services, table.scope)
        self.key_assignments: list[tuple[Value, Value, Location]] = []
        self.bound: dict[str, tuple[list[n.Arg], Scope]] = {}
        self.selector_keys: list[dict] = []

    def build(self, table_id: int) -> tuple[dict, TableInfo]:
        decl = self.decl
        keys_json, keys_info, kinds = self._keys()
        props = {p.name: p for p in decl.properties}
        size = DEFAULT_SIZE
        if "size" in props:
            size = int(self.ec.constant(props["size"].value).value)
        implementation = self._implementation(props.get("implementation"))
        actions, infos = self._actions()
        default_name, default_args, default_const, default_loc = self._default_action(props)
        if default_name not in {a.name for a in infos}:
            raise CompileError(
                f"default action '{default_name}' is not in the actions of table "
                f"'{self.table.local_name}'",
                default_loc,
            )
        default_binding = actions[default_name]
        default_json = self.services.table_action(default_binding, self.bound.get(default_name))
        default_data = self._action_data(default_binding, default_args, default_loc)
        direct = self._direct_resources(props)
        support_timeout = False
        if "support_timeout" in props:
            support_timeout = bool(self.ec.constant(props["support_timeout"].value).value)
        json_actions = [
            self.services.table_action(actions[a.name], self.bound.get(a.name)) for a in infos
        ]
        table = {
            "name": self.table.name,
            "id": table_id,
            "source_info": _source(decl.loc, f"table {self.table.local_name}"),
            "key": keys_json,
            "match_type": _table_match_type(kinds),
            "type": "simple",
            "max_size": size,
            "with_counters": any(d.kind == "direct_counter" for d in direct),
            "support_timeout": support_timeout,
            "direct_meters": next((d.name for d in direct if d.kind == "direct_meter"), None),
            "action_ids": [a["id"] for a in json_actions],
            "actions": [a["name"] for a in json_actions],
            "base_default_next": None,
            "next_tables": {a["name"]: None for a in json_actions},
            "default_entry": {
                "action_id": default_json["id"],
                "action_const": default_const,
                "action_data": default_data,
                "action_entry_const": default_const,
            },
        }
        if implementation is not None:
            # like p4c: an indirect table's default action is the control plane's business
            table["type"] = (
                "indirect_ws" if implementation.kind == "action_selector" else "indirect"
            )
            table["action_profile"] = implementation.name
            del table["default_entry"]
            selector_input = [{"type": "field", "value": k["target"]} for k in self.selector_keys]
            if implementation.kind == "action_selector" and not selector_input:
                raise CompileError(
                    f"table '{self.table.local_name}' uses an action_selector but has no "
                    "selector key",
                    props["implementation"].loc,
                )
            implementation.extra.setdefault("tables", []).append(self.table.name)
            implementation.extra["selector_input"] = selector_input
        elif self.selector_keys:
            raise CompileError(
                "selector keys need an action_selector implementation", self.decl.loc
            )
        if decl.entries is not None:
            table["entries"] = self._entries(kinds, keys_info, actions)
        for d in direct:
            d.bound_table = self.table.name
        info = TableInfo(
            self.table.name,
            decl.annotations,
            keys_info,
            infos,
            size,
            default_name if default_const else None,
            decl.entries is not None and decl.const_entries,
            direct,
            support_timeout,
            implementation,
        )
        return table, info

    # ---- keys
    def _keys(self) -> tuple[list[dict], list[KeyInfo], list[str]]:
        keys_json, infos, kinds = [], [], []
        for element in self.decl.keys or []:
            kind = element.match_kind
            if kind == "selector":
                value = self.ec.value(element.expr)
                target, _, _ = self._key_target(value, element)
                self.selector_keys.append({"target": target})
                continue
            if kind not in MATCH_KINDS:
                raise CompileError(
                    f"unknown match kind '{kind}' (use exact, lpm, ternary, range or optional)",
                    element.loc,
                )
            value = self.ec.value(element.expr)
            name_annotation = n.find_annotation(element.annotations, "name")
            name = name_annotation.string() if name_annotation else key_name(element.expr)
            target, mask, width = self._key_target(value, element)
            # BMv2 has no optional match type: p4c writes such keys as ternary (P4Info keeps OPTIONAL)
            json_kind = "ternary" if kind == "optional" else kind
            keys_json.append(
                {"match_type": json_kind, "name": name, "target": target, "mask": mask}
            )
            infos.append(KeyInfo(name, width, kind, element.annotations))
            kinds.append(kind)
        if kinds.count("lpm") > 1:
            raise CompileError(
                f"table '{self.table.local_name}' has more than one lpm key", self.decl.loc
            )
        return keys_json, infos, kinds

    def _key_target(self, value: Value, element: n.KeyElement) -> tuple[Any, Any, int]:
        if isinstance(value, Field):
            return [value.header, value.name], None, t.width_of(value.type)
        if isinstance(value, Computed) and value.expr.get("op") == "d2b":
            inner = value.expr["right"]
            if inner.get("type") == "field" and inner["value"][1] == "$valid$":
                return inner["value"], None, 1
        if isinstance(value.type, t.Bits | t.Bool | t.Enum | t.ErrorType):
            width = t.width_of(value.type)
            temp = self.services.allocate(
                value.type, "key", self.table.name.rsplit(".", 1)[0], element.loc
            )
            self.key_assignments.append((temp, value, element.loc))
            assert isinstance(temp, Field)
            return [temp.header, temp.name], None, width
        raise CompileError(
            f"a table key must be a bit<N>, int<N>, bool, enum or error value, not {value.type}",
            element.expr.loc,
        )

    # ---- actions
    def _actions(self) -> tuple[dict[str, ActionBinding], list[TableActionInfo]]:
        bindings: dict[str, ActionBinding] = {}
        infos: list[TableActionInfo] = []
        for ref in self.decl.actions:
            binding = self._resolve_action(ref.name, ref.top_level, ref.loc)
            if ref.args:
                self.bound[binding.qualified_name] = (ref.args, self.table.scope)
            scope = "TABLE_AND_DEFAULT"
            if n.find_annotation(ref.annotations, "defaultonly"):
                scope = "DEFAULT_ONLY"
            elif n.find_annotation(ref.annotations, "tableonly"):
                scope = "TABLE_ONLY"
            bindings[binding.qualified_name] = binding
            infos.append(TableActionInfo(binding.qualified_name, scope, ref.annotations))
        if not any(p.name == "default_action" for p in self.decl.properties):
            noaction = self._resolve_action("NoAction", True, self.decl.loc)
            if noaction.qualified_name not in bindings:
                bindings[noaction.qualified_name] = noaction
                infos.append(TableActionInfo(noaction.qualified_name, "DEFAULT_ONLY", []))
        return bindings, infos

    def _resolve_action(self, name: str, top_level: bool, loc: Location) -> ActionBinding:
        scope = self.services.model.globals if top_level else self.table.scope
        found = scope.lookup(name)
        if isinstance(found, n.ActionDecl):
            found = self.services.bind_global_action(found)
        if not isinstance(found, ActionBinding):
            if found is None:
                raise CompileError(f"unknown action '{name}'", loc)
            raise CompileError(f"'{name}' is not an action", loc)
        return found

    def _default_action(
        self, props: dict[str, n.TableProperty]
    ) -> tuple[str, list[n.Arg], bool, Location]:
        prop = props.get("default_action")
        if prop is None:
            return (
                self._resolve_action("NoAction", True, self.decl.loc).qualified_name,
                [],
                False,
                self.decl.loc,
            )
        expr = prop.value
        args: list[n.Arg] = []
        if isinstance(expr, n.Call):
            args = expr.args
            expr = expr.func
        if not isinstance(expr, n.Name):
            raise CompileError(
                "default_action must name an action, e.g. default_action = drop();", prop.loc
            )
        binding = self._resolve_action(expr.name, expr.top_level, expr.loc)
        return binding.qualified_name, args, prop.const, prop.loc

    def _action_data(self, binding: ActionBinding, args: list[n.Arg], loc: Location) -> list[str]:
        bound = len(self.bound.get(binding.qualified_name, ([], None))[0])
        params = binding.decl.params[bound:]
        if len(args) == len(binding.decl.params) and bound:
            args = args[bound:]
        if len(args) != len(params):
            raise CompileError(
                f"wrong number of arguments: action '{binding.decl.name}' takes {len(params)}, "
                f"got {len(args)}",
                loc,
            )
        data = []
        for param, arg in zip(params, args, strict=True):
            ptype = self.services.model.resolve(param.type, scope=binding.scope)
            value = self.ec.constant(arg.value, ptype)
            data.append(hexstr(int(value.value) & mask_of(t.width_of(ptype)), t.width_of(ptype)))
        return data

    # ---- entries
    def _entries(
        self, kinds: list[str], keys: list[KeyInfo], actions: dict[str, ActionBinding]
    ) -> list[dict]:
        entries = []
        explicit = [e for e in self.decl.entries or [] if e.priority is not None]
        top = max((int(self.ec.constant(e.priority).value) for e in explicit), default=0)
        for number, entry in enumerate(self.decl.entries or [], start=1):
            keyset = entry.keyset.items if isinstance(entry.keyset, n.TupleKey) else [entry.keyset]
            if (
                len(keyset) == 1
                and isinstance(keyset[0], n.DefaultKey | n.DontCareKey)
                and len(kinds) > 1
            ):
                keyset = keyset * len(kinds)
            if len(keyset) != len(kinds):
                raise CompileError(
                    f"entry has {len(keyset)} key values, table '{self.table.local_name}' has "
                    f"{len(kinds)} keys",
                    entry.loc,
                )
            match_key = [
                self._match(k, kind, info)
                for k, kind, info in zip(keyset, kinds, keys, strict=True)
            ]
            binding = self._resolve_action(
                entry.action.name, entry.action.top_level, entry.action.loc
            )
            if binding.qualified_name not in actions:
                raise CompileError(
                    f"action '{entry.action.name}' is not in the actions of table "
                    f"'{self.table.local_name}'",
                    entry.action.loc,
                )
            action = self.services.table_action(binding, self.bound.get(binding.qualified_name))
            data = self._action_data(binding, entry.action.args or [], entry.loc)
            annotated = n.find_annotation(entry.annotations, "priority")
            if entry.priority is not None:  # P4's `priority = N`: larger wins; BMv2: smaller wins
                priority = top - int(self.ec.constant(entry.priority).value) + 1
            elif annotated is not None and annotated.body:  # p4c's @priority(N) is BMv2's number
                priority = int(annotated.body.strip(), 0)
            else:
                priority = number
            entries.append(
                {
                    "source_info": _source(entry.loc, "entry"),
                    "match_key": match_key,
                    "action_entry": {"action_id": action["id"], "action_data": data},
                    "priority": priority,
                }
            )
        return entries

    def _match(self, key: n.Expr, kind: str, info: KeyInfo) -> dict:
        width = info.width
        full = mask_of(width)

        def const(e: n.Expr) -> int:
            value = self.ec.constant(e)
            if isinstance(value.type, t.Bool):
                return int(bool(value.value))
            return int(value.value) & full

        def hx(v: int) -> str:
            return hexstr(v, width)

        wildcard = isinstance(key, n.DefaultKey | n.DontCareKey)
        if kind == "exact":
            if wildcard or isinstance(key, n.MaskKey | n.RangeKey):
                raise CompileError("an exact key needs a single value", key.loc)
            return {"match_type": "exact", "key": hx(const(key))}
        if kind == "lpm":
            if wildcard:
                return {"match_type": "lpm", "key": hx(0), "prefix_length": 0}
            if isinstance(key, n.MaskKey):
                mask = const(key.mask)
                length = bin(mask).count("1")
                if mask != (full >> (width - length) << (width - length)) if length else mask != 0:
                    raise CompileError(f"lpm mask {hex(mask)} is not a prefix", key.loc)
                return {
                    "match_type": "lpm",
                    "key": hx(const(key.value) & mask),
                    "prefix_length": length,
                }
            return {"match_type": "lpm", "key": hx(const(key)), "prefix_length": width}
        if kind in ("ternary", "optional"):
            if wildcard:
                value, mask = 0, 0
            elif isinstance(key, n.MaskKey):
                mask = const(key.mask)
                value = const(key.value) & mask
            else:
                value, mask = const(key), full
            return {"match_type": "ternary", "key": hx(value), "mask": hx(mask)}
        if wildcard:
            lo, hi = 0, full
        elif isinstance(key, n.RangeKey):
            lo, hi = const(key.lo), const(key.hi)
        else:
            lo = hi = const(key)
        return {"match_type": "range", "start": hx(lo), "end": hx(hi)}

    def _implementation(self, prop: n.TableProperty | None) -> ExternInstance | None:
        if prop is None:
            return None
        if isinstance(prop.value, n.CtorCall):
            annotation = n.find_annotation(prop.annotations, "name")
            name = (
                annotation.string()
                if annotation and annotation.string()
                else f"{self.table.name}_profile"
            )
            decl = n.Instantiation(
                prop.loc,
                name.lstrip("."),
                [],
                prop.value.type_name,
                prop.value.type_args,
                prop.value.args,
            )
            value = self.services.instantiate(decl, self.table.scope, "")
        else:
            value = self.ec.compile(prop.value)
        if not isinstance(value, ExternInstance) or value.kind not in (
            "action_profile",
            "action_selector",
        ):
            raise CompileError(
                "a table implementation must be an action_profile or action_selector", prop.loc
            )
        return value

    def _direct_resources(self, props: dict[str, n.TableProperty]) -> list[ExternInstance]:
        result = []
        for prop_name, kind in (("counters", "direct_counter"), ("meters", "direct_meter")):
            prop = props.get(prop_name)
            if prop is None:
                continue
            value = self.ec.compile(prop.value)
            if not isinstance(value, ExternInstance) or value.kind != kind:
                raise CompileError(
                    f"table property '{prop_name}' needs a {kind} instance", prop.loc
                )
            if value.bound_table not in (None, self.table.name):
                raise CompileError(
                    f"{kind} '{value.name}' is already attached to table '{value.bound_table}'",
                    prop.loc,
                )
            result.append(value)
        return result


def key_name(expr: n.Expr) -> str:
    """p4c's match-field name: the key's source text, with isValid() spelled `.$valid$`."""
    if (
        isinstance(expr, n.Call)
        and isinstance(expr.func, n.Member)
        and expr.func.name == "isValid"
        and not expr.args
    ):
        return f"{n.expr_text(expr.func.expr)}.$valid$"
    return n.expr_text(expr)


def _table_match_type(kinds: list[str]) -> str:
    for kind in ("range", "ternary", "optional", "lpm"):
        if kind in kinds:
            return "ternary" if kind == "optional" else kind
    return "exact"


def _source(loc: Location, fragment: str) -> dict:
    return {"filename": loc.file, "line": loc.line, "column": loc.col, "source_fragment": fragment}
