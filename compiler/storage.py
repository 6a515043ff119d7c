"""Where P4 data lives in BMv2: header types, header instances, stacks, unions, and the
"scalars" metadata header that holds every scalar metadata field and local variable."""

from __future__ import annotations

from ina.compiler import types as t
from ina.compiler.errors import CompileError, Location
from ina.compiler.values import (
    Field,
    HeaderInstance,
    ListValue,
    StackInstance,
    StructValue,
    UnionInstance,
    Value,
)

SCALARS = "scalars"
STANDARD_METADATA = "standard_metadata"


class Storage:
    """Allocates BMv2 storage for P4 values and renders the header-related JSON sections."""

    def __init__(self) -> None:
        self.header_types: list[dict] = [{"name": "scalars_0", "id": 0, "fields": []}]
        self.headers: list[dict] = [
            {
                "name": SCALARS,
                "id": 0,
                "header_type": "scalars_0",
                "metadata": True,
                "pi_omit": True,
            }
        ]
        self.header_stacks: list[dict] = []
        self.union_types: list[dict] = []
        self.unions: list[dict] = []
        self.union_stacks: list[dict] = []
        self._type_names: dict[int, str] = {}
        self._names: set[str] = {SCALARS}
        self._scalar_names: set[str] = set()
        self._varbit_types: dict[int, t.Header] = {}

    @property
    def scalar_fields(self) -> list[list]:
        return self.header_types[0]["fields"]

    def unique(self, name: str, taken: set[str]) -> str:
        candidate, i = name, 0
        while candidate in taken:
            candidate = f"{name}_{i}"
            i += 1
        taken.add(candidate)
        return candidate

    def header_type(self, htype: t.StructLike, name: str | None = None) -> str:
        key = id(htype)
        if key not in self._type_names:
            bits = t.width_of(htype)
            if (
                isinstance(htype, t.Header) and bits % 8
            ):  # as p4c's BMv2 back end; varbits at their maximum
                raise CompileError(
                    f"header {htype.name} has fields totaling {bits} bits; BMv2 supports only "
                    "headers of whole bytes (a multiple of 8 bits)",
                    htype.loc,
                )
            fields: list[list] = []
            varbit_bytes = 0
            for fname, ftype in t.flat_fields(htype.fields):
                if isinstance(ftype, t.Varbit):
                    fields.append([fname, "*"])
                    varbit_bytes = ftype.max_width // 8
                else:
                    signed = isinstance(ftype, t.Bits) and ftype.signed
                    fields.append([fname, t.width_of(ftype), signed])
            type_name = name or htype.name
            entry: dict = {"name": type_name, "id": len(self.header_types), "fields": fields}
            if varbit_bytes:
                fixed = sum(f[1] for f in fields if f[1] != "*") // 8
                entry["max_length"] = fixed + varbit_bytes
            self.header_types.append(entry)
            self._type_names[key] = type_name
        return self._type_names[key]

    def add_header(
        self, name: str, htype: t.StructLike, metadata: bool, type_name: str | None = None
    ) -> HeaderInstance:
        name = self.unique(name, self._names)
        self.headers.append(
            {
                "name": name,
                "id": len(self.headers),
                "header_type": self.header_type(htype, type_name),
                "metadata": metadata,
                "pi_omit": True,
            }
        )
        return HeaderInstance(htype, name, header_type=htype)

    def header_id(self, name: str) -> int:
        return next(h["id"] for h in self.headers if h["name"] == name)

    def add_scalar(self, name: str, vtype: t.P4Type) -> Field:
        name = self.unique(name, self._scalar_names)
        signed = isinstance(vtype, t.Bits) and vtype.signed
        self.scalar_fields.append([name, t.width_of(vtype), signed])
        return Field(vtype, SCALARS, name)

    def allocate(self, vtype: t.P4Type, name: str, loc: Location, metadata: bool = True) -> Value:
        """Storage for a variable (or a metadata struct member) of any type; `loc` is the
        declaration a type without storage is reported at."""
        if isinstance(vtype, t.Varbit):
            return self._add_varbit(name, vtype, loc)
        if t.is_scalar(vtype):
            return self.add_scalar(name, vtype)
        if isinstance(vtype, t.Header):
            return self.add_header(name.replace(".", "_"), vtype, metadata=False)
        if isinstance(vtype, t.Struct):
            members = {f: self.allocate(ft, f"{name}.{f}", loc, metadata) for f, ft in vtype.fields}
            return StructValue(vtype, members)
        if isinstance(
            vtype, t.Tuple
        ):  # as p4c's BMv2 back end: a tuple is stored as a struct of its elements
            items = [
                self.allocate(et, f"{name}.f{i}", loc, metadata)
                for i, et in enumerate(vtype.elements)
            ]
            return ListValue(vtype, items)
        if isinstance(vtype, t.Stack):
            return self.add_stack(name.replace(".", "_"), vtype, loc)
        if isinstance(vtype, t.Union):
            return self.add_union(name.replace(".", "_"), vtype)
        raise CompileError(f"cannot declare a variable of type {vtype}", loc)

    def _add_varbit(self, name: str, vtype: t.Varbit, loc: Location) -> Field:
        """A varbit variable lives, as p4c's BMv2 back end puts it, in a metadata header of type
        `$varbitW` whose one field is the varbit (BMv2 has variable-length fields only in headers)."""
        if vtype.max_width % 8:
            raise CompileError(
                f"a varbit variable needs a maximum width of whole bytes (BMv2 stores it in a "
                f"header), not {vtype}",
                loc,
            )
        htype = self._varbit_types.setdefault(
            vtype.max_width, t.Header(f"$varbit{vtype.max_width}", [("field", vtype)], loc=loc)
        )
        header = self.add_header(name.replace(".", "_"), htype, metadata=True)
        return Field(vtype, header.name, "field")

    def add_stack(self, name: str, stype: t.Stack, loc: Location) -> StackInstance:
        element = stype.element
        if isinstance(element, t.Union):
            return self._add_union_stack(name, stype, element)
        if not isinstance(element, t.Header):
            raise CompileError(f"a header stack needs a header element type, not {element}", loc)
        elements = [
            self.add_header(f"{name}[{i}]", element, metadata=False) for i in range(stype.size)
        ]
        stack_name = self.unique(name, self._names)
        self.header_stacks.append(
            {
                "name": stack_name,
                "id": len(self.header_stacks),
                "header_type": self.header_type(element),
                "size": stype.size,
                "header_ids": [self.header_id(e.name) for e in elements],
            }
        )
        return StackInstance(stype, stack_name, elements=elements)

    def _add_union_stack(self, name: str, stype: t.Stack, utype: t.Union) -> StackInstance:
        """Constant indices reach the unions of a union stack; run-time indices are not supported."""
        elements = [self.add_union(f"{name}[{i}]", utype) for i in range(stype.size)]
        stack_name = self.unique(name, self._names)
        self.union_stacks.append(
            {
                "name": stack_name,
                "id": len(self.union_stacks),
                "union_type": utype.name,
                "size": stype.size,
                "header_union_ids": [self._union_id(e.name) for e in elements],
            }
        )
        return StackInstance(stype, stack_name, elements=elements)  # type: ignore[arg-type]

    def _union_id(self, name: str) -> int:
        return next(u["id"] for u in self.unions if u["name"] == name)

    def add_union(self, name: str, utype: t.Union) -> UnionInstance:
        if not any(u["name"] == utype.name for u in self.union_types):
            self.union_types.append(
                {
                    "name": utype.name,
                    "id": len(self.union_types),
                    "headers": [[f, self.header_type(ft)] for f, ft in utype.fields],
                }
            )
        members = {f: self.add_header(f"{name}.{f}", ft, metadata=False) for f, ft in utype.fields}
        union_name = self.unique(name, self._names)
        self.unions.append(
            {
                "name": union_name,
                "id": len(self.unions),
                "union_type": utype.name,
                "header_ids": [self.header_id(m.name) for m in members.values()],
            }
        )
        return UnionInstance(utype, union_name, members=members)

    def pad_scalars(self) -> None:
        bits = sum(f[1] for f in self.scalar_fields)
        if bits % 8:
            self.scalar_fields.append(["_padding_0", 8 - bits % 8, False])
