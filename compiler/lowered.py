"""The lowered program: what the lowering passes produce and the emitters read.

bmv2.py turns a LoweredProgram into the BMv2 JSON document and p4info.py its Artifacts into the
P4Info, so neither emitter depends on the passes that fill these records.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.objects import ExternInstance
from ina.compiler.program import ProgramModel
from ina.compiler.storage import Storage


@dataclass
class KeyInfo:
    name: str
    width: int
    match_kind: str
    annotations: list[n.Annotation]


@dataclass
class TableActionInfo:
    name: str  # P4Info (and BMv2) action name
    scope: str  # TABLE_AND_DEFAULT, TABLE_ONLY, DEFAULT_ONLY
    annotations: list[n.Annotation]


@dataclass
class TableInfo:
    """What the P4Info needs to know about one table."""

    name: str
    annotations: list[n.Annotation]
    keys: list[KeyInfo]
    actions: list[TableActionInfo]
    size: int
    const_default_action: str | None
    is_const: bool
    direct_resources: list[ExternInstance] = field(default_factory=list)
    support_timeout: bool = False
    implementation: ExternInstance | None = None  # action_profile / action_selector


@dataclass
class ActionInfo:
    name: str
    annotations: list[n.Annotation]
    params: list[tuple[str, int, list[n.Annotation]]]


@dataclass
class DigestInfo:
    name: str
    type: t.StructLike
    list_id: int


@dataclass
class Artifacts:
    """Everything lowering found that the P4Info describes."""

    tables: list[TableInfo] = field(default_factory=list)
    actions: dict[str, ActionInfo] = field(default_factory=dict)
    externs: list[ExternInstance] = field(default_factory=list)
    digests: list[DigestInfo] = field(default_factory=list)
    controller_headers: list[tuple[str, t.StructLike, list[n.Annotation]]] = field(
        default_factory=list
    )
    value_sets: list[tuple[str, int, int, list[n.Annotation]]] = field(default_factory=list)
    direct_actions: list[str] = field(default_factory=list)


@dataclass
class Sections:
    """The BMv2 JSON lists the passes append to as they lower the program."""

    actions: list[dict] = field(default_factory=list)
    calculations: list[dict] = field(default_factory=list)
    checksums: list[dict] = field(default_factory=list)
    learn_lists: list[dict] = field(default_factory=list)
    field_lists: list[dict] = field(default_factory=list)
    parse_vsets: list[dict] = field(default_factory=list)


@dataclass
class LoweredProgram:
    """Everything the emitters need: the V1Switch blocks lowered, and the records beside them."""

    source_file: str
    model: ProgramModel
    storage: Storage
    sections: Sections
    artifacts: Artifacts
    parser: dict
    deparser: dict
    pipelines: list[dict]
