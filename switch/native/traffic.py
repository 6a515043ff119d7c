"""simple_switch's traffic manager in C, for the native switch: ina_process and what it calls.

The same order as engine.py: after ingress, I2E clone, digest, resubmit, then multicast (a copy
per replica) or unicast or drop; after egress, E2E clone, drop, recirculate, else deparse and
transmit. Only the steps the program can request are generated.
"""

from __future__ import annotations

from typing import Protocol

from ina.switch.model.generator import NativeGenerator
from ina.switch.model.primitives import CLONES
from ina.switch.state.replication import MAX_OUTPUT_BYTES, MAX_OUTPUT_PACKETS


class TrafficGenerator(NativeGenerator, Protocol):
    """What the traffic manager takes of native/codegen.py `CGenerator` (typed here, so this module
    and the generator that calls it do not import each other)."""

    ops: set[str]  # the primitives the program uses: only their steps are generated
    errors: dict[str, int]  # the program's error codes by name
    max_header: int

    def emit(self, line: str, indent: int = 0) -> None: ...


def traffic_manager(gen: TrafficGenerator, max_header: int) -> None:
    """simple_switch's order, as engine.py: after ingress, I2E clone, digest, resubmit, then
    multicast or unicast; after egress, E2E clone, drop, recirculate, else transmit. Only the
    steps the program can request are generated."""
    sm, hidden, ops = gen.sm, gen.layout.hidden, gen.ops
    i2e, e2e = CLONES[0] in ops, CLONES[1] in ops
    resubmit, recirc, digest = "resubmit" in ops, "recirculate" in ops, "generate_digest" in ops
    gen.max_header = max_header
    if i2e or e2e or resubmit or recirc:
        gen.emit("/* Copies field list `id`'s fields from S to D (other ids copy nothing). */")
        gen.emit("static void keep_fields(uint64_t id, uint64_t *D, const uint64_t *S) {")
        gen.emit("switch (id) {", 1)
        for fid, fields in sorted(gen.field_lists.items()):
            copies = " ".join(f"D[{slot}] = S[{slot}];" for slot, _signed in fields)
            gen.emit(f"case {fid}ULL: {copies} break;", 1)
        gen.emit("default: break;", 1)
        gen.emit("}", 1)
        gen.emit("}")
    gen.emit("static void egress(ina_ctx *c, uint64_t *P, ina_out *out, int depth);")
    gen.emit(
        "static void ingress(ina_ctx *c, uint64_t *P, uint64_t port, ina_out *out, int depth);"
    )
    if i2e or e2e:
        gen.emit(f"""
/* A clone of `data` for each replica of P's session, parsed afresh, to egress (engine._clone). */
static void clone_packet(ina_ctx *c, const uint64_t *P, const uint8_t *data, uint32_t len, uint64_t itype,
              ina_out *out, int depth) {{
uint64_t id = P[{hidden["clone_session"]}] - 1;
ina_group *s = id < 65536 ? c->sw->sessions[id] : NULL;
if (!s) return;
for (int i = 0; i < s->n; i++) {{
    uint64_t Q[NSLOTS];
    memcpy(Q, TEMPLATE, sizeof Q);
    Q[{sm["packet_length"]}] = len;
    ina_ctx q = *c;
    q.data = data;
    q.len = len;
    q.off = 0;
    q.perr = 0;
    parse(&q, Q);
    keep_fields(P[{hidden["clone_fields"]}], Q, P);
    Q[{sm["ingress_port"]}] = P[{sm["ingress_port"]}];
    Q[{sm["egress_port"]}] = (uint64_t)s->ports[i];
    Q[{sm["egress_rid"]}] = (uint64_t)s->rids[i];
    Q[{sm["instance_type"]}] = itype;
    Q[{hidden["truncate"]}] = s->truncate;
    egress(&q, Q, out, depth + 1);
}}
}}""")
    if resubmit or recirc:
        gen.emit(f"""
/* The packet `data` into ingress again, keeping field list `fl` of S (engine._ingress). */
static void reenter(ina_ctx *c, const uint8_t *data, uint32_t len, uint64_t port, uint64_t itype,
                uint64_t fl, const uint64_t *S, ina_out *out, int depth) {{
uint64_t P[NSLOTS];
memcpy(P, TEMPLATE, sizeof P);
P[{sm["ingress_port"]}] = port;
P[{sm["packet_length"]}] = len;
P[{sm["instance_type"]}] = itype;
P[{sm["ingress_global_timestamp"]}] = ina_now_us(c->sw);
keep_fields(fl, P, S);
ina_ctx q = *c;
q.data = data;
q.len = len;
q.off = 0;
q.perr = 0;
ingress(&q, P, port, out, depth);
}}""")
    e2e_code = (
        f"""
if (P[{hidden["clone_session"]}] && depth < INA_MAX_REENTRY) {{
    update_checksums(c, P);
    uint8_t *buf = ina_scratch(c, depth + 1);
    uint32_t npl = c->len - c->off, n = deparse(P, buf);
    memcpy(buf + n, c->data + c->off, npl);
    clone_packet(c, P, buf, n + npl, 2, out, depth);
}}"""
        if e2e
        else ""
    )
    recirc_code = (
        f"""
if (P[{hidden["recirculate"]}]) {{
    if (depth < INA_MAX_REENTRY) {{
        uint8_t *buf = ina_scratch(c, depth + 1);
        uint32_t n = deparse(P, buf);
        memcpy(buf + n, c->data + c->off, npl);
        reenter(c, buf, n + npl, P[{sm["egress_port"]}], 4, P[{hidden["recirculate"]}] - 1, P, out,
                depth + 1);
    }}
    return;
}}"""
        if recirc
        else ""
    )
    i2e_code = (
        f"""
if (P[{hidden["clone_session"]}] && depth < INA_MAX_REENTRY) clone_packet(c, P, c->data, c->len, 1, out, depth);"""
        if i2e
        else ""
    )
    digest_code = ""
    if digest:
        cases = []
        for lid, (_name, fields) in sorted(gen.learn_lists.items()):
            values = ", ".join(f"P[{slot}]" for slot, _signed in fields) or "0"
            cases.append(
                f"        case {lid + 1}ULL: {{ const uint64_t v[] = {{{values}}}; "
                f"ina_digest_push(sw, {lid + 1}, v, {len(fields)}); break; }}"
            )
        digest_code = f"""
if (P[{hidden["digest"]}]) {{
    switch (P[{hidden["digest"]}]) {{
{chr(10).join(cases)}
    default: {{ const uint64_t v[] = {{0}}; ina_digest_push(sw, 0, v, 0); break; }}
    }}
}}"""
    resubmit_code = (
        f"""
if (P[{hidden["resubmit"]}]) {{
    if (depth < INA_MAX_REENTRY) reenter(c, c->data, c->len, port, 6, P[{hidden["resubmit"]}] - 1, P, out, depth + 1);
    return;
}}"""
        if resubmit
        else ""
    )
    gen.emit(f"""
static void egress(ina_ctx *c, uint64_t *P, ina_out *out, int depth) {{
ina_switch *sw = c->sw;
(void)depth;
P[{sm["egress_spec"]}] = 0;
P[{hidden["exit"]}] = 0;
P[{hidden["clone_session"]}] = 0;
P[{sm["egress_global_timestamp"]}] = ina_now_us(sw);
INA_MARK(c, INA_PROF_OTHER);
pipe_egress(c, P);
INA_MARK(c, INA_PROF_CONTROL);{e2e_code}
if (P[{sm["egress_spec"]}] == (uint64_t)sw->drop_port) {{
    sw->stats[INA_ST_DROPPED]++;
    return;
}}
update_checksums(c, P);
uint32_t npl = c->len - c->off;{recirc_code}
if (out->n - out->first >= {MAX_OUTPUT_PACKETS}) {{
    sw->stats[INA_ST_DROPPED_OUTPUT_FULL]++;
    return;
}}
/* room for the largest deparse, and the pad that keeps the next packet 8-byte aligned */
if ((out->n == out->cap || out->size - out->used < {max_header + 7}u + (size_t)npl)
    && !ina_out_grow(out, {max_header + 7}u + (size_t)npl)) {{
    sw->stats[INA_ST_DROPPED_OUTPUT_FULL]++;
    return;
}}
uint8_t *d = out->arena + out->used;
uint32_t n = deparse(P, d);
memcpy(d + n, c->data + c->off, npl);
n += npl;
uint64_t keep = P[{hidden["truncate"]}];
if (keep && keep < n) n = (uint32_t)keep;
if (out->bytes + n > {MAX_OUTPUT_BYTES}u) {{
    sw->stats[INA_ST_DROPPED_OUTPUT_FULL]++;
    return;
}}
out->bytes += n;
out->pkts[out->n].port = (int)P[{sm["egress_port"]}];
out->pkts[out->n].off = out->used;
out->pkts[out->n].len = n;
out->n++;
out->used += (n + 7) & ~7u;
INA_MARK(c, INA_PROF_DEPARSE);
}}

static void ingress(ina_ctx *c, uint64_t *P, uint64_t port, ina_out *out, int depth) {{
ina_switch *sw = c->sw;
(void)port;
parse(c, P);
if (P[{sm["parser_error"]}]) sw->stats[INA_ST_PARSER_ERRORS]++;
verify_checksums(c, P);
INA_MARK(c, INA_PROF_PARSE);
pipe_ingress(c, P);
INA_MARK(c, INA_PROF_CONTROL);{i2e_code}{digest_code}{resubmit_code}
uint64_t mgid = P[{sm["mcast_grp"]}];
if (mgid) {{
    ina_group *g = mgid < 65536 ? sw->groups[mgid] : NULL;
    if (!g) {{
        sw->stats[INA_ST_DROPPED_EMPTY_GROUP]++;
        return;
    }}
    for (int i = 0; i < g->n; i++) {{
        uint64_t Q[NSLOTS];
        memcpy(Q, P, sizeof Q);
        Q[{sm["egress_port"]}] = (uint64_t)g->ports[i];
        Q[{sm["egress_rid"]}] = (uint64_t)g->rids[i];
        Q[{sm["instance_type"]}] = 5;
        egress(c, Q, out, depth);
    }}
}} else if (P[{sm["egress_spec"]}] == (uint64_t)sw->drop_port) {{
    sw->stats[INA_ST_DROPPED]++;
}} else {{
    P[{sm["egress_port"]}] = P[{sm["egress_spec"]}];
    egress(c, P, out, depth);
}}
}}

int ina_process(ina_switch *sw, int port, const uint8_t *data, uint32_t len, ina_out *out) {{
const int n0 = out->n;
const size_t used0 = out->used;
out->first = n0;
out->bytes = 0;
sw->stats[INA_ST_RX]++;
if (len > INA_MAX_PACKET) {{
    sw->stats[INA_ST_DROPPED_OVERSIZE]++;
    return 0;
}}
uint64_t P[NSLOTS];
memcpy(P, TEMPLATE, sizeof P);
jmp_buf abort;
ina_ctx c;
c.sw = sw;
c.data = data;
c.len = len;
c.off = 0;
c.perr = 0;
c.short_err = {gen.errors.get("PacketTooShort", 0)};
c.abort = &abort;
INA_MARK_START(&c);
if (setjmp(abort)) {{
    out->n = n0;
    out->used = used0;
    sw->stats[INA_ST_DROPPED_ERROR]++;
    return 0;
}}
P[{sm["ingress_port"]}] = (uint64_t)port;
P[{sm["packet_length"]}] = len;
P[{sm["instance_type"]}] = 0;
P[{sm["ingress_global_timestamp"]}] = ina_now_us(sw);
INA_MARK(&c, INA_PROF_OTHER);
ingress(&c, P, (uint64_t)port, out, 0);
sw->stats[INA_ST_TX] += (uint64_t)(out->n - n0);
INA_MARK(&c, INA_PROF_OTHER);
sw->prof[INA_PROF_COUNT]++;
return out->n - n0;
}}""")
