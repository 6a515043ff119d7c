"""The driver of the lowering passes: walks the program's V1Switch package and runs each block's
pass in V1Switch's order (parser, verify_checksum, ingress, egress, compute_checksum, deparser),
handing each the services (lowering.Lowering) and its parameters bound to the shared headers,
metadata and standard_metadata. Returns the lowered program the emitters read."""

from __future__ import annotations

from typing import Any

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.checksums import lower_checksums
from ina.compiler.controls import ControlLowering, Pipeline
from ina.compiler.deparser import lower_deparser
from ina.compiler.errors import CompileError, Location
from ina.compiler.lowered import LoweredProgram
from ina.compiler.lowering import Lowering
from ina.compiler.objects import BlockInstance, PacketObject
from ina.compiler.parsers import ParserLowering
from ina.compiler.program import ProgramModel
from ina.compiler.storage import STANDARD_METADATA
from ina.compiler.values import Field, StructValue, Value, read_only

V1SWITCH_BLOCKS = ("parser", "verify_checksum", "ingress", "egress", "compute_checksum", "deparser")


def standard_metadata(lowering: Lowering) -> StructValue:
    smtype = lowering.model.named_type("standard_metadata_t", None)
    assert isinstance(smtype, t.Struct)
    lowering.storage.add_header(
        STANDARD_METADATA, smtype, metadata=True, type_name=STANDARD_METADATA
    )
    entry = lowering.storage.header_types[-1]
    bits = sum(f[1] for f in entry["fields"])
    if bits % 8:
        entry["fields"].append(["_padding", 8 - bits % 8, False])
    return StructValue(smtype, {f: Field(ft, STANDARD_METADATA, f) for f, ft in smtype.fields})


def block_bindings(
    lowering: Lowering, decl: n.ParserDecl | n.ControlDecl, values: dict[str, Any]
) -> dict[str, Any]:
    """Bind a V1Switch block's parameters (by their types) to the shared instances."""
    bindings: dict[str, Any] = {}
    by_type = {id(values[k].type): values[k] for k in ("headers", "metadata", "standard_metadata")}
    for param in decl.params:
        ptype = lowering.model.resolve(param.type)
        if isinstance(ptype, t.ExternType) and ptype.name in ("packet_in", "packet_out"):
            bindings[param.name] = PacketObject(ptype.name)
        elif id(ptype) in by_type:
            value = by_type[id(ptype)]
            read = param.direction in (None, "in") and value is not values["standard_metadata"]
            bindings[param.name] = read_only(value) if read else value
        else:
            raise CompileError(
                f"parameter '{param.name}' of '{decl.name}' does not match the V1Switch "
                "architecture (expected the headers, metadata or standard_metadata_t types)",
                param.loc,
            )
    return bindings


def lower_program(model: ProgramModel, source_file: str) -> LoweredProgram:
    """Lower the program's `main` V1Switch instance, block by block."""
    lowering = Lowering(model)
    for decl in model.program.decls:
        if isinstance(decl, n.ConstDecl):
            lowering.constant_of(decl, model.globals)
    main = model.globals.lookup("main")
    if not isinstance(main, n.Instantiation):
        raise CompileError(
            "the program has no `main` package instance (e.g. V1Switch(...) main;)",
            Location(source_file, 1, 1),
        )
    if main.type_name != "V1Switch":
        raise CompileError(
            f"package '{main.type_name}' is not supported; ina targets v1model's V1Switch", main.loc
        )
    if len(main.args) != 6:
        raise CompileError(
            f"wrong number of arguments: V1Switch takes 6, got {len(main.args)}", main.loc
        )
    blocks: dict[str, BlockInstance] = {}
    for role, arg in zip(V1SWITCH_BLOCKS, main.args, strict=True):
        instance = lowering.ctor_arg(arg, model.globals)
        if not isinstance(instance, BlockInstance):
            raise CompileError(
                f"V1Switch's {role} argument must be a parser or control instance", arg.loc
            )
        blocks[role] = instance
    parser_decl = blocks["parser"].decl
    if not isinstance(parser_decl, n.ParserDecl) or len(parser_decl.params) != 4:
        raise CompileError(
            "V1Switch's first argument must be a parser with 4 parameters", main.args[0].loc
        )
    headers_ref, meta_ref = parser_decl.params[1].type, parser_decl.params[2].type
    headers_type = model.resolve(headers_ref)
    metadata_type = model.resolve(meta_ref)
    if not isinstance(headers_type, t.Struct) or not isinstance(metadata_type, t.Struct):
        raise CompileError(
            "the parser's headers and metadata parameters must be structs", parser_decl.loc
        )
    sm = standard_metadata(lowering)
    headers = StructValue(
        headers_type,
        {
            f: lowering.storage.allocate(ft, f, headers_ref.loc, metadata=False)
            if not t.is_scalar(ft)
            else _scalar_in_headers(ft, f, parser_decl)
            for f, ft in headers_type.fields
        },
    )
    meta_name = parser_decl.params[2].name
    metadata = lowering.storage.allocate(metadata_type, meta_name, meta_ref.loc)
    assert isinstance(metadata, StructValue)
    lowering.metadata_value = metadata
    values = {"headers": headers, "metadata": metadata, "standard_metadata": sm}

    parser = ParserLowering(
        lowering, blocks["parser"], block_bindings(lowering, parser_decl, values)
    )
    parser_json = parser.lower()
    verify = _checksum_control(blocks["verify_checksum"])
    lower_checksums(lowering, verify, block_bindings(lowering, verify, values), verify=True)
    pipelines = []
    for role, name in (("ingress", "ingress"), ("egress", "egress")):
        decl = blocks[role].decl
        if not isinstance(decl, n.ControlDecl):
            raise CompileError(f"V1Switch's {role} argument must be a control", main.loc)
        pipeline = Pipeline(name)
        controls = ControlLowering(lowering, pipeline)
        fragment = controls.lower(decl, decl.name, block_bindings(lowering, decl, values))
        for link in fragment.exits:
            link(None)
        pipelines.append(pipeline.json(len(pipelines), fragment.entry))
    compute = _checksum_control(blocks["compute_checksum"])
    lower_checksums(lowering, compute, block_bindings(lowering, compute, values), verify=False)
    deparser = blocks["deparser"].decl
    if not isinstance(deparser, n.ControlDecl):
        raise CompileError("V1Switch's deparser argument must be a control", deparser.loc)
    deparser_json = lower_deparser(lowering, deparser, block_bindings(lowering, deparser, values))
    _controller_headers(lowering)
    lowering.storage.pad_scalars()
    return LoweredProgram(
        source_file,
        model,
        lowering.storage,
        lowering.sections,
        lowering.artifacts,
        parser_json,
        deparser_json,
        pipelines,
    )


def _checksum_control(instance: BlockInstance) -> n.ControlDecl:
    decl = instance.decl
    if not isinstance(decl, n.ControlDecl):
        raise CompileError("the checksum arguments of V1Switch must be controls", decl.loc)
    return decl


def _scalar_in_headers(ftype: t.P4Type, name: str, decl: n.Node) -> Value:
    raise CompileError(
        f"the headers struct may contain only headers, stacks, unions and structs; "
        f"'{name}' has type {ftype}",
        decl.loc,
    )


def _controller_headers(lowering: Lowering) -> None:
    """Headers annotated @controller_header("packet_in"/"packet_out") become P4Info packet metadata."""
    seen = set()
    for decl in lowering.model.program.decls:
        if isinstance(decl, n.HeaderDecl):
            annotation = n.find_annotation(decl.annotations, "controller_header")
            if annotation and decl.name not in seen:
                seen.add(decl.name)
                htype = lowering.model.named_type(decl.name, decl.loc)
                assert isinstance(htype, t.StructLike)
                lowering.artifacts.controller_headers.append(
                    (annotation.string() or decl.name, htype, decl.annotations)
                )
