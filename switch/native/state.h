/* The native switch's state: tables, registers, counters, meters, multicast groups, clone
 * sessions, parser value sets, waiting digests and the helpers the generated pipeline calls. The
 * control plane (Python, through ctypes) changes this state with the functions of state.c, each
 * of which takes the switch lock itself.
 */
#ifndef INA_STATE_H
#define INA_STATE_H

#include <setjmp.h>
#include <string.h>

#include "runtime.h"

/* Where a packet's time goes, in builds with -DINA_PROFILE (ina bench profile): each mark adds
 * the ticks since the previous mark to one stage. Other builds compile the marks to nothing. */
enum { INA_PROF_PARSE, INA_PROF_CONTROL, INA_PROF_LOOKUP, INA_PROF_ACTIONS, INA_PROF_DEPARSE,
       INA_PROF_OTHER, INA_PROF_COUNT };
#ifdef INA_PROFILE
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t ina_ticks(void) { return __rdtsc(); }
#else
#include <time.h>
static inline uint64_t ina_ticks(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif
#define INA_MARK(c, stage) do { uint64_t now_ = ina_ticks(); (c)->sw->prof[stage] += now_ - (c)->tick; \
                                (c)->tick = now_; } while (0)
#define INA_MARK_START(c) ((c)->tick = ina_ticks())
#else
#define INA_MARK(c, stage) ((void)0)
#define INA_MARK_START(c) ((void)0)
#endif

typedef struct ina_entry {
    struct ina_entry *next;   /* hash chain of an exact table */
    uint64_t *key;            /* exact: key values; other tables: value per key field */
    uint64_t *mask;           /* other tables: mask per key field, or the range's upper bound */
    uint8_t *is_range;        /* other tables: 1 where the key field is a range */
    int action;
    int nargs;
    uint64_t *args;
    uint64_t packets, bytes;  /* direct counter */
    struct ina_meter_cell *meter;  /* direct meter: configured (NULL: every packet is GREEN) */
} ina_entry;

typedef struct {
    int nkeys;
    int exact;                /* every key is exact (or valid): looked up by hash */
    uint32_t nbuckets;        /* exact: a power of two */
    ina_entry **buckets;      /* exact */
    ina_entry **ordered;      /* others: highest priority first */
    uint32_t count, cap;
    int def_action;
    int def_nargs;
    uint64_t def_args[64];
} ina_table;

/* Registers of one size share one allocation, interleaved (native/externs.py `register_places`):
 * cell i of a register is cells[i * stride], so the registers one index reaches lie side by side. */
typedef struct {
    uint64_t size;
    uint64_t stride;
    uint64_t *cells;          /* this register's cell 0 */
    int owns;                 /* this register allocated `cells` (the first of its bank) */
} ina_register;

typedef struct {
    uint64_t size;
    uint64_t *packets, *bytes;
} ina_counter;

/* The replicas of a multicast group or a clone session; a session's clones keep `truncate`
 * bytes (0: all). */
typedef struct {
    int n;
    int *ports;
    int *rids;
    uint64_t truncate;
} ina_group;

/* One meter cell: a two-rate three-color marker (RFC 2698, color-blind) with externs.Meter's
 * arithmetic, in doubles: rates per second, bursts and buckets in packets or bytes. */
typedef struct ina_meter_cell {
    int on;                   /* configured; unconfigured cells mark every packet GREEN */
    double cir, cburst, pir, pburst, committed, peak, last;
} ina_meter_cell;

typedef struct {
    uint64_t size;
    int bytes;                /* the meter counts bytes (else packets) */
    ina_meter_cell *cells;
} ina_meter;

/* A parser value set: its members, matched against a transition key under a mask. */
typedef struct {
    int n;
    i128 *members;
} ina_vset;

/* Digests waiting for Python: records of `width` words (learn list id + 1 or 0, value count,
 * values), a ring of `cap` records; a full ring drops the new digest and counts it. */
typedef struct {
    uint64_t *ring;
    uint32_t width, cap;
    uint64_t head, tail, dropped;
} ina_digests;

#define INA_MAX_REENTRY 16        /* resubmits/recirculations/clones one packet may cause */

struct ina_switch {
    pthread_mutex_t lock;
    uint64_t stats[INA_ST_COUNT];
    int drop_port;
    uint64_t start_ns;
    int64_t set_us;               /* the clock set from outside (virtual time), or -1: the real one */
    uint64_t rng[4];
    ina_table *tables;
    int ntables;
    ina_register *registers;     /* each extern kind's arrays and their count (its _alloc) */
    int nregisters;
    ina_counter *counters;
    int ncounters;
    ina_group *groups[65536];
    ina_group *sessions[65536];
    ina_meter *meters;
    int nmeters;
    ina_vset *vsets;
    int nvsets;
    ina_digests digests;
    uint8_t *scratch[INA_MAX_REENTRY + 2];  /* packets made by deparsing (E2E clone, recirculate),
                                             * one buffer per depth of the packet that uses it */
    uint32_t scratch_size;
    uint64_t prof[INA_PROF_COUNT + 1];  /* INA_PROFILE builds: ticks per stage, then packets */
};

/* Per-packet context: the packet's bytes and where to abort to on a run-time error. */
typedef struct {
    ina_switch *sw;
    const uint8_t *data;
    uint32_t len;
    uint32_t off;             /* parser: bytes consumed so far */
    int perr;                 /* parser: error code raised by a lookahead */
    int short_err;            /* the program's PacketTooShort error code */
    uint64_t tick;            /* INA_PROFILE builds: when the last stage mark was taken */
    jmp_buf *abort;           /* run-time error: drop the packet (and all it caused) */
    jmp_buf parse_abort;      /* parser error: stop parsing, set parser_error */
} ina_ctx;

ina_switch *ina_alloc(int ntables, int drop_port);
void ina_table_init(ina_switch *sw, int t, int nkeys, int exact, uint32_t max_size);
void ina_registers_alloc(ina_switch *sw, int n);
void ina_register_init(ina_switch *sw, int r, uint64_t size, int bank, uint64_t offset,
                       uint64_t stride);
void ina_counters_alloc(ina_switch *sw, int n);
void ina_counter_init(ina_switch *sw, int k, uint64_t size);
void ina_meters_alloc(ina_switch *sw, int n);
void ina_meter_init(ina_switch *sw, int m, uint64_t size, int bytes);
void ina_vsets_init(ina_switch *sw, int nvsets);
void ina_digest_init(ina_switch *sw, uint32_t width, uint32_t cap);
void ina_scratch_init(ina_switch *sw, uint32_t size);
uint8_t *ina_scratch(ina_ctx *c, int depth);
int ina_meter_execute(ina_meter_cell *m, int bytes, uint64_t length);
void ina_digest_push(ina_switch *sw, uint64_t id, const uint64_t *values, uint32_t n);

ina_entry *ina_exact_lookup(const ina_table *t, const uint64_t *key);
ina_entry *ina_ternary_lookup(const ina_table *t, const uint64_t *key);
uint64_t ina_now_us(const ina_switch *sw);
uint64_t ina_random(ina_switch *sw, uint64_t lo, uint64_t hi);
void ina_fail(ina_ctx *c) __attribute__((noreturn));

uint64_t ina_csum16(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb);
uint64_t ina_crc16(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb);
uint64_t ina_crc32(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb);
uint64_t ina_crc_ccitt(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb);
uint64_t ina_xor16(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb);

/* --- arithmetic with BMv2's unbounded-integer results (see expressions.py) --------------- */
/* A negative shift count is an error (ValueError on the Python engine): the packet is dropped. */
static inline i128 ina_shl(ina_ctx *c, i128 a, i128 b) {
    if (b < 0) ina_fail(c);
    return b >= 128 ? 0 : (i128)((u128)a << (int)b);
}
static inline i128 ina_shr(ina_ctx *c, i128 a, i128 b) {
    if (b < 0) ina_fail(c);
    return b >= 127 ? (a < 0 ? -1 : 0) : a >> (int)b;
}
/* Whether a computed index names a cell of a register, counter or meter array of `size` cells.
 * One past the array names none: the access is skipped, as simple_switch skips it. A negative one
 * (simple_switch stops on it) is an error: the packet is dropped. As runtime.py's _cell. */
static inline int ina_cell(ina_ctx *c, i128 i, uint64_t size) {
    if (i < 0) ina_fail(c);
    return i < (i128)size;
}

/* Cell i (< M->size) of an indirect meter marks a packet of `length`: its colour (unconfigured
 * cells: GREEN, 0). */
static inline uint64_t ina_meter_at(ina_meter *M, uint64_t i, uint64_t length) {
    return M->cells[i].on ? (uint64_t)ina_meter_execute(&M->cells[i], M->bytes, length) : 0;
}

/* A parser value set: some member equals the key under the mask (-1: no mask). */
static inline int ina_vset_match(const ina_vset *v, i128 k, i128 mask) {
    for (int i = 0; i < v->n; i++)
        if ((k & mask) == (v->members[i] & mask)) return 1;
    return 0;
}

/* --- header stacks: element k of a stack lives at base + k * stride ------------------- */
static inline size_t ina_stack_elem(ina_ctx *c, size_t base, size_t stride, size_t size, i128 i) {
    if (i < 0 || i >= (i128)size) ina_fail(c);
    return base + (size_t)i * stride;
}
/* The last extracted element (stack.last); none extracted yet is an error. */
static inline size_t ina_stack_last(ina_ctx *c, size_t base, size_t stride, uint64_t next) {
    if (next == 0) ina_fail(c);
    return base + (size_t)(next - 1) * stride;
}
/* push_front(count): elements move up, the first `count` become invalid (their fields stay). */
static inline void ina_push(uint64_t *P, size_t base, size_t stride, size_t size, size_t next_slot,
                            size_t count) {
    memmove(&P[base + stride * count], &P[base], sizeof(uint64_t) * stride * (size - count));
    for (size_t i = 0; i < count; i++) P[base + i * stride] = 0;
    P[next_slot] = P[next_slot] + count < size ? P[next_slot] + count : size;
}
/* pop_front(count): elements move down, the last `count` become invalid (their fields stay). */
static inline void ina_pop(uint64_t *P, size_t base, size_t stride, size_t size, size_t next_slot,
                           size_t count) {
    memmove(&P[base], &P[base + stride * count], sizeof(uint64_t) * stride * (size - count));
    for (size_t i = size - count; i < size; i++) P[base + i * stride] = 0;
    P[next_slot] = P[next_slot] > count ? P[next_slot] - count : 0;
}
static inline i128 ina_div(ina_ctx *c, i128 a, i128 b) {
    if (b == 0) ina_fail(c);
    i128 q = a / b;
    return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline i128 ina_mod(ina_ctx *c, i128 a, i128 b) {
    if (b == 0) ina_fail(c);
    i128 r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static inline i128 ina_two_comp(i128 v, i128 w) {
    u128 m = ((u128)1 << (int)w) - 1;
    u128 x = (u128)v & m;
    return (x >> ((int)w - 1)) ? (i128)x - ((i128)1 << (int)w) : (i128)x;
}
static inline i128 ina_sat_signed(i128 v, i128 w) {
    i128 hi = ((i128)1 << ((int)w - 1)) - 1, lo = -((i128)1 << ((int)w - 1));
    return v > hi ? hi : v < lo ? lo : v;
}
static inline i128 ina_sat_unsigned(i128 v, i128 w) {
    i128 hi = ((i128)1 << (int)w) - 1;
    return v > hi ? hi : v < 0 ? 0 : v;
}

/* --- bit-exact packet access, big-endian ---------------------------------------------- */
static inline u128 ina_load_be(const uint8_t *p, int n) {
    u128 v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | p[i];
    return v;
}
static inline uint64_t ina_ld8(const uint8_t *p) { return p[0]; }
static inline uint64_t ina_ld16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return __builtin_bswap16(v); }
static inline uint64_t ina_ld32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return __builtin_bswap32(v); }
static inline uint64_t ina_ld64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return __builtin_bswap64(v); }
static inline void ina_st8(uint8_t *p, uint64_t v) { p[0] = (uint8_t)v; }
static inline void ina_st16(uint8_t *p, uint64_t v) { uint16_t x = __builtin_bswap16((uint16_t)v); memcpy(p, &x, 2); }
static inline void ina_st32(uint8_t *p, uint64_t v) { uint32_t x = __builtin_bswap32((uint32_t)v); memcpy(p, &x, 4); }
static inline void ina_st64(uint8_t *p, uint64_t v) { uint64_t x = __builtin_bswap64(v); memcpy(p, &x, 8); }
/* `width` bits (<= 64) starting `bit` bits after p. */
static inline uint64_t ina_get_bits(const uint8_t *p, uint32_t bit, int width) {
    const uint8_t *q = p + (bit >> 3);
    int lead = bit & 7;
    int n = (lead + width + 7) >> 3;
    u128 v = ina_load_be(q, n);
    return (uint64_t)((v >> (n * 8 - lead - width)) & (((u128)1 << width) - 1));
}
/* ORs `width` bits of v into p at `bit` bits; the bytes must start zeroed. */
static inline void ina_put_bits(uint8_t *p, uint32_t bit, int width, uint64_t v) {
    uint8_t *q = p + (bit >> 3);
    int lead = bit & 7;
    int n = (lead + width + 7) >> 3;
    u128 x = ((u128)(v & (uint64_t)((((u128)1) << width) - 1))) << (n * 8 - lead - width);
    for (int i = n - 1; i >= 0; i--) {
        q[i] |= (uint8_t)x;
        x >>= 8;
    }
}
/* Parser lookahead: `width` bits, `bit` bits after the current offset, without consuming them. */
static inline uint64_t ina_lookahead(ina_ctx *c, uint32_t bit, int width) {
    if ((uint64_t)c->off * 8 + bit + width > (uint64_t)c->len * 8) {
        c->perr = c->short_err;
        longjmp(c->parse_abort, 1);
    }
    return ina_get_bits(c->data + c->off, bit, width);
}

#endif
