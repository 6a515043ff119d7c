"""Match-action tables: entries, lookups and the default entry, in P4Runtime terms.

Exact-only tables keep a dict keyed by the tuple of key values, so the generated per-packet code
does one dict lookup. Other tables keep entries sorted by priority (larger wins, ties keep
insertion order) and compare value/mask pairs; an LPM key's prefix length is its priority.
A backend whose data path keeps its own copy of the entries (native/views.py) subclasses Table and
overrides the `_added`/`_modified`/`_deleted`/`_default_set` hooks and the direct counters.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import count

from ina.switch.model.errors import TableError
from ina.switch.model.program import Program
from ina.switch.model.program import Table as TableSpec


@dataclass
class ActionRef:
    """An action a table may run: its parameter widths and, on the Python backend, its generated
    function and next node (None until the generated code exists, and on the native backend)."""

    id: int
    name: str
    fn: Callable | None
    param_widths: tuple[int, ...]
    next_node: Callable | None = None


@dataclass
class Entry:
    handle: int
    match: tuple  # normalised match values, one per key
    action: ActionRef
    args: tuple[int, ...]
    priority: int
    fn: Callable | None = field(init=False)
    next_node: Callable | None = field(init=False)
    packets: int = 0
    bytes: int = 0
    const: bool = False
    meter_config: tuple | None = None

    def __post_init__(self) -> None:
        self.fn = self.action.fn
        self.next_node = self.action.next_node


@dataclass(frozen=True)
class KeyField:
    name: str
    match_type: str  # exact | lpm | ternary | range | optional | valid
    bitwidth: int


class Table:
    def __init__(
        self, name: str, keys: list[KeyField], actions: dict[str, ActionRef], max_size: int
    ):
        self.name = name
        self.keys = keys
        self.actions = actions
        self.max_size = max_size
        self.exact_only = all(k.match_type in ("exact", "valid") for k in keys)
        self.exact: dict[tuple, Entry] = {}
        self.ordered: list[Entry] = []
        self.handles: dict[int, Entry] = {}
        self.default: Entry | None = None
        self.default_is_const = False
        self.is_const = False
        self._handles = count(1)

    # --- lookup (per packet) ---------------------------------------------------------------
    def lookup(self, key: tuple) -> Entry | None:
        if self.exact_only:
            return self.exact.get(key)
        for entry in self.ordered:
            for k, m in zip(key, entry.match, strict=True):
                if m[0] == "r":
                    if not m[1] <= k <= m[2]:
                        break
                elif k & m[2] != m[1]:
                    break
            else:
                return entry
        return None

    # --- control plane ---------------------------------------------------------------------
    def action(self, name: str) -> ActionRef:
        if name in self.actions:
            return self.actions[name]
        raise TableError(
            f"table '{self.name}' has no action '{name}' (actions: {', '.join(self.actions)})"
        )

    def _args(self, action: ActionRef, args: list[int]) -> tuple[int, ...]:
        if len(args) != len(action.param_widths):
            raise TableError(
                f"action '{action.name}' takes {len(action.param_widths)} parameters, got {len(args)}"
            )
        for value, width in zip(args, action.param_widths, strict=True):
            if not 0 <= value < (1 << width):
                raise TableError(
                    f"value {value} does not fit the {width}-bit parameter of '{action.name}'"
                )
        return tuple(args)

    def _normalise(self, match: list) -> tuple[tuple, int]:
        """Turn API match values into (kind, value, mask|hi) triples; returns them and the LPM length."""
        if len(match) != len(self.keys):
            raise TableError(
                f"table '{self.name}' has {len(self.keys)} key fields, got {len(match)}"
            )
        out = []
        prefix = 0
        for key, value in zip(self.keys, match, strict=True):
            full = (1 << key.bitwidth) - 1
            if isinstance(value, tuple):
                kind, *rest = value
            else:
                kind, rest = "exact", [value]
            if kind == "exact":
                v, mask = rest[0], full
            elif kind == "lpm":
                v, plen = rest
                if not 0 <= plen <= key.bitwidth:
                    raise TableError(f"prefix length {plen} out of range for '{key.name}'")
                mask = full ^ ((1 << (key.bitwidth - plen)) - 1)
                prefix += plen
            elif kind == "ternary":
                v, mask = rest
            elif kind == "optional":
                v = rest[0]
                v, mask = (0, 0) if v is None else (v, full)
            elif kind == "range":
                lo, hi = rest
                if not 0 <= lo <= hi <= full:
                    raise TableError(f"bad range {lo}..{hi} for '{key.name}'")
                out.append(("r", lo, hi))
                continue
            else:
                raise TableError(f"unknown match kind '{kind}' for '{key.name}'")
            if not 0 <= v <= full or not 0 <= mask <= full:
                raise TableError(
                    f"value {v:#x} does not fit the {key.bitwidth}-bit key '{key.name}'"
                )
            if key.match_type == "exact" and kind != "exact":
                raise TableError(f"key '{key.name}' is exact; got a {kind} match")
            out.append(("m", v & mask, mask))
        return tuple(out), prefix

    def add(
        self,
        match: list,
        action: str,
        args: list[int],
        priority: int | None = None,
        const: bool = False,
    ) -> int:
        if len(self.handles) >= self.max_size:
            raise TableError(f"table '{self.name}' is full ({self.max_size} entries)")
        ref = self.action(action)
        norm, prefix = self._normalise(match)
        lpm_only = all(k.match_type in ("exact", "lpm", "valid") for k in self.keys)
        prio = prefix if (priority is None and lpm_only) else (priority or 0)
        entry = Entry(next(self._handles), norm, ref, self._args(ref, args), prio, const=const)
        if self.exact_only:
            key = tuple(m[1] for m in norm)
            if key in self.exact:
                raise TableError(f"table '{self.name}' already has an entry with this key")
            self.exact[key] = entry
        else:
            if any(e.match == norm and e.priority == prio for e in self.ordered):
                raise TableError(
                    f"table '{self.name}' already has an entry with this key and priority"
                )
            position = len(self.ordered)
            for i, e in enumerate(self.ordered):
                if e.priority < prio:
                    position = i
                    break
            self.ordered.insert(position, entry)
        self.handles[entry.handle] = entry
        self._added(entry)
        return entry.handle

    def find(self, match: list, priority: int | None = None) -> Entry | None:
        norm, prefix = self._normalise(match)
        if self.exact_only:
            return self.exact.get(tuple(m[1] for m in norm))
        lpm_only = all(k.match_type in ("exact", "lpm", "valid") for k in self.keys)
        prio = prefix if (priority is None and lpm_only) else (priority or 0)
        return next((e for e in self.ordered if e.match == norm and e.priority == prio), None)

    def counters(self, handle: int) -> tuple[int, int]:
        """The direct counter of an entry: (packets, bytes)."""
        entry = self.entry(handle)
        return entry.packets, entry.bytes

    def set_counters(self, handle: int, packets: int, bytes_: int) -> None:
        entry = self.entry(handle)
        entry.packets, entry.bytes = packets, bytes_

    def entry(self, handle: int) -> Entry:
        try:
            return self.handles[handle]
        except KeyError:
            raise TableError(f"table '{self.name}' has no entry {handle}") from None

    def modify(self, handle: int, action: str, args: list[int]) -> None:
        entry = self.entry(handle)
        ref = self.action(action)
        entry.args = self._args(ref, args)
        entry.action, entry.fn, entry.next_node = ref, ref.fn, ref.next_node
        self._modified(entry)

    def delete(self, handle: int) -> None:
        entry = self.handles.pop(handle, None)
        if entry is None:
            raise TableError(f"table '{self.name}' has no entry {handle}")
        if self.exact_only:
            del self.exact[tuple(m[1] for m in entry.match)]
        else:
            self.ordered.remove(entry)
        self._deleted(entry)

    def entries(self) -> list[Entry]:
        return list(self.handles.values())

    def clear(self) -> None:
        for handle in [h for h, e in self.handles.items() if not e.const]:
            self.delete(handle)

    def set_default(self, action: str, args: list[int]) -> None:
        if self.default_is_const:
            raise TableError(
                f"the default action of table '{self.name}' is const and cannot be changed"
            )
        ref = self.action(action)
        self.default = Entry(0, (), ref, self._args(ref, args), 0)
        self._default_set(self.default)

    def get_default(self) -> tuple[str, tuple[int, ...]]:
        assert self.default is not None
        return self.default.action.name, self.default.args

    # --- storage hooks: what a backend keeping the entries elsewhere too must hear ------------
    def _added(self, entry: Entry) -> None:
        """`entry` is in the table, at its place in `ordered` (or in `exact`)."""

    def _modified(self, entry: Entry) -> None:
        """`entry` runs another action or other arguments."""

    def _deleted(self, entry: Entry) -> None:
        """`entry` has left the table."""

    def _default_set(self, entry: Entry) -> None:
        """`entry` is the new default."""


def new_table(cls: Callable[..., Table], spec: TableSpec, model: Program) -> Table:
    """An empty table of class `cls` (Table or a backend's subclass) for the model's `spec`; action
    functions are the Python backend's to bind, before `install_program_entries`."""
    keys = [KeyField(k.name, k.match_type, k.width) for k in spec.keys]
    refs = {}
    for aid in spec.action_ids:
        action = model.actions[aid]
        refs[action.name] = ActionRef(aid, action.name, None, action.param_widths)
    return cls(spec.name, keys, refs, spec.max_size)


def declared_default(spec: TableSpec, model: Program) -> tuple[str, list[int]] | None:
    """The program's default action (else the first action with zero arguments; None without
    actions): what a table starts with, and what a P4Runtime MODIFY without an action restores."""
    if spec.default:
        return model.actions[spec.default.action_id].name, list(spec.default.args)
    if spec.action_ids:
        first = model.actions[spec.action_ids[0]]
        return first.name, [0] * len(first.param_widths)
    return None


def install_program_entries(table: Table, spec: TableSpec, model: Program) -> None:
    """The declared default action and const entries.

    BMv2's entry priority is smaller-wins, the table API's larger-wins; LPM and exact tables order
    by prefix length instead."""
    default = declared_default(spec, model)
    if default is not None:
        table.set_default(*default)
    table.default_is_const = bool(spec.default and spec.default.action_const)
    lpm_only = all(k.match_type in ("exact", "lpm", "valid") for k in table.keys)
    for entry in spec.entries:
        prio = None if lpm_only else -entry.priority
        table.add(
            list(entry.match),
            model.actions[entry.action_id].name,
            list(entry.args),
            prio,
            const=True,
        )
    table.is_const = bool(spec.entries)
