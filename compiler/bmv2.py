"""Assemble the BMv2 JSON document (format version 2.23) from the lowered program."""

from __future__ import annotations

from ina.compiler import nodes as n
from ina.compiler.externs import EXTERNS
from ina.compiler.lowered import LoweredProgram
from ina.compiler.objects import ExternInstance

FORMAT_VERSION = [2, 23]


def _source(instance: ExternInstance) -> dict:
    loc = instance.decl.loc
    return {
        "filename": loc.file,
        "line": loc.line,
        "column": loc.col,
        "source_fragment": instance.name,
    }


def _arrays(externs: list[ExternInstance], pipelines: list[dict]) -> dict[str, list[dict]]:
    """Every extern section (externs.py `EXTERNS`), each instance's entry numbered in its section."""
    tables = {t["name"]: t for p in pipelines for t in p["tables"]}
    sections: dict[str, list[dict]] = {
        e.section: [] for e in EXTERNS.values() if e.section is not None
    }
    for inst in externs:
        kind = EXTERNS[inst.kind]
        if kind.section is None or kind.json is None:
            continue
        entry = kind.json(inst, tables)
        if entry is not None:
            section = sections[kind.section]
            section.append(
                {"name": inst.name, "id": len(section), "source_info": _source(inst), **entry}
            )
    return sections


def assemble(program: LoweredProgram) -> dict:
    storage, sections, pipelines = program.storage, program.sections, program.pipelines
    arrays = _arrays(program.artifacts.externs, pipelines)
    enums = []
    for name, decl in program.model.type_decls.items():
        if isinstance(decl, n.EnumDecl) and decl.base is None:
            etype = program.model.named_type(name, decl.loc)
            enums.append(
                {
                    "name": name,
                    "entries": sorted(
                        ([k, v] for k, v in etype.members.items()), key=lambda e: e[1]
                    ),
                }
            )
    return {
        "header_types": storage.header_types,
        "headers": storage.headers,
        "header_stacks": storage.header_stacks,
        "header_union_types": storage.union_types,
        "header_unions": storage.unions,
        "header_union_stacks": storage.union_stacks,
        "field_lists": sections.field_lists,
        "errors": [[name, i] for i, name in enumerate(program.model.all_errors())],
        "enums": enums,
        "parsers": [program.parser],
        "parse_vsets": sections.parse_vsets,
        "deparsers": [program.deparser],
        **arrays,
        "calculations": sections.calculations,
        "learn_lists": sections.learn_lists,
        "actions": sections.actions,
        "pipelines": pipelines,
        "checksums": sections.checksums,
        "force_arith": [],
        "extern_instances": [],
        "field_aliases": [
            ["queueing_metadata.enq_timestamp", ["standard_metadata", "enq_timestamp"]],
            ["queueing_metadata.enq_qdepth", ["standard_metadata", "enq_qdepth"]],
            ["queueing_metadata.deq_timedelta", ["standard_metadata", "deq_timedelta"]],
            ["queueing_metadata.deq_qdepth", ["standard_metadata", "deq_qdepth"]],
            [
                "intrinsic_metadata.ingress_global_timestamp",
                ["standard_metadata", "ingress_global_timestamp"],
            ],
            [
                "intrinsic_metadata.egress_global_timestamp",
                ["standard_metadata", "egress_global_timestamp"],
            ],
            ["intrinsic_metadata.mcast_grp", ["standard_metadata", "mcast_grp"]],
            ["intrinsic_metadata.egress_rid", ["standard_metadata", "egress_rid"]],
            ["intrinsic_metadata.priority", ["standard_metadata", "priority"]],
        ],
        "program": program.source_file,
        "__meta__": {"version": FORMAT_VERSION, "compiler": "ina"},
    }
