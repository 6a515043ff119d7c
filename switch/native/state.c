/* The native switch's state and the control-plane functions Python calls through ctypes.
 * Functions named ina_ctl_* take the switch lock themselves; the others run under it.
 */
#include <stdlib.h>
#include <time.h>

#include "state.h"

static uint64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void ina_lock(ina_switch *sw) { pthread_mutex_lock(&sw->lock); }
void ina_unlock(ina_switch *sw) { pthread_mutex_unlock(&sw->lock); }

uint64_t ina_now_us(const ina_switch *sw) {
    return sw->set_us >= 0 ? (uint64_t)sw->set_us : (monotonic_ns() - sw->start_ns) / 1000;
}

void ina_ctl_set_clock(ina_switch *sw, int64_t us) { sw->set_us = us; }

void ina_fail(ina_ctx *c) { longjmp(*c->abort, 1); }

/* xoshiro256** */
static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static uint64_t next_random(ina_switch *sw) {
    uint64_t *s = sw->rng;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform in [lo, hi], both included, as random.randint. */
uint64_t ina_random(ina_switch *sw, uint64_t lo, uint64_t hi) {
    if (hi <= lo) return lo;
    uint64_t span = hi - lo + 1;
    if (span == 0) return next_random(sw);
    uint64_t limit = UINT64_MAX - UINT64_MAX % span, r;
    do r = next_random(sw); while (r >= limit);
    return lo + r % span;
}

ina_switch *ina_alloc(int ntables, int drop_port) {
    ina_switch *sw = calloc(1, sizeof *sw);
    if (!sw) return NULL;
    pthread_mutex_init(&sw->lock, NULL);
    sw->drop_port = drop_port;
    sw->start_ns = monotonic_ns();
    sw->set_us = -1;
    uint64_t seed = sw->start_ns ^ (uint64_t)(uintptr_t)sw;
    for (int i = 0; i < 4; i++) {  /* splitmix64 */
        seed += 0x9E3779B97F4A7C15ull;
        uint64_t z = seed;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        sw->rng[i] = z ^ (z >> 31);
    }
    sw->ntables = ntables;
    sw->tables = calloc(ntables ? ntables : 1, sizeof(ina_table));
    return sw;
}

void ina_table_init(ina_switch *sw, int t, int nkeys, int exact, uint32_t max_size) {
    ina_table *tab = &sw->tables[t];
    tab->nkeys = nkeys;
    tab->exact = exact;
    if (exact) {
        uint32_t n = 16;
        while (n < 2 * max_size && n < (1u << 24)) n <<= 1;
        tab->nbuckets = n;
        tab->buckets = calloc(n, sizeof(ina_entry *));
    }
}

/* Each extern kind's arrays: allocated for its n instances (native/externs.py `STATE` names the
 * function the constructor calls), then each made by its init. */
void ina_registers_alloc(ina_switch *sw, int n) {
    sw->nregisters = n;
    sw->registers = calloc(n ? n : 1, sizeof(ina_register));
}

/* Register r's cells are those of register `bank`'s allocation (made by the bank's first
 * register, r == bank) from `offset`, every `stride`-th one. */
void ina_register_init(ina_switch *sw, int r, uint64_t size, int bank, uint64_t offset,
                       uint64_t stride) {
    ina_register *R = &sw->registers[r];
    R->size = size;
    R->stride = stride;
    R->owns = bank == r;
    if (R->owns)
        R->cells = calloc(size * stride ? size * stride : 1, sizeof(uint64_t));
    else if (sw->registers[bank].cells)
        R->cells = sw->registers[bank].cells + offset;
}

void ina_counters_alloc(ina_switch *sw, int n) {
    sw->ncounters = n;
    sw->counters = calloc(n ? n : 1, sizeof(ina_counter));
}

void ina_counter_init(ina_switch *sw, int k, uint64_t size) {
    sw->counters[k].size = size;
    sw->counters[k].packets = calloc(size ? size : 1, sizeof(uint64_t));
    sw->counters[k].bytes = calloc(size ? size : 1, sizeof(uint64_t));
}

void ina_meters_alloc(ina_switch *sw, int n) {
    sw->nmeters = n;
    sw->meters = calloc(n ? n : 1, sizeof(ina_meter));
}

void ina_vsets_init(ina_switch *sw, int nvsets) {
    sw->nvsets = nvsets;
    sw->vsets = calloc(nvsets ? nvsets : 1, sizeof(ina_vset));
}

void ina_meter_init(ina_switch *sw, int m, uint64_t size, int bytes) {
    sw->meters[m].size = size;
    sw->meters[m].bytes = bytes;
    sw->meters[m].cells = calloc(size ? size : 1, sizeof(ina_meter_cell));
}

void ina_digest_init(ina_switch *sw, uint32_t width, uint32_t cap) {
    sw->digests.width = width;
    sw->digests.cap = cap;
    sw->digests.ring = calloc((size_t)width * cap, sizeof(uint64_t));
    if (!sw->digests.ring) sw->digests.cap = 0;
}

void ina_scratch_init(ina_switch *sw, uint32_t size) { sw->scratch_size = size; }

/* The buffer for a packet deparsed to be used at `depth` (allocated on first use). */
uint8_t *ina_scratch(ina_ctx *c, int depth) {
    ina_switch *sw = c->sw;
    if (!sw->scratch[depth]) sw->scratch[depth] = malloc(sw->scratch_size);
    if (!sw->scratch[depth]) ina_fail(c);
    return sw->scratch[depth];
}

/* As externs.Meter.execute: refill both buckets for the time since the last packet, then take
 * `amount` from the peak bucket (else RED) and the committed one (else YELLOW). */
int ina_meter_execute(ina_meter_cell *m, int bytes, uint64_t length) {
    double now = (double)monotonic_ns() / 1e9;
    double elapsed = now - m->last;
    m->last = now;
    double committed = m->committed + m->cir * elapsed;
    m->committed = committed < m->cburst ? committed : m->cburst;
    double peak = m->peak + m->pir * elapsed;
    m->peak = peak < m->pburst ? peak : m->pburst;
    double amount = bytes ? (double)length : 1.0;
    if (m->peak < amount) return 2;
    m->peak -= amount;
    if (m->committed < amount) return 1;
    m->committed -= amount;
    return 0;
}

void ina_digest_push(ina_switch *sw, uint64_t id, const uint64_t *values, uint32_t n) {
    ina_digests *d = &sw->digests;
    if (d->cap == 0 || d->head - d->tail >= d->cap) {
        d->dropped++;
        return;
    }
    uint64_t *r = d->ring + (size_t)(d->head % d->cap) * d->width;
    r[0] = id;
    r[1] = n;
    memcpy(r + 2, values, sizeof(uint64_t) * n);
    d->head++;
}

/* --- lookups (per packet) ------------------------------------------------------------ */
static uint32_t key_hash(const uint64_t *key, int n) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < n; i++) {
        h ^= key[i] + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ull;
    }
    return (uint32_t)(h ^ (h >> 32));
}

ina_entry *ina_exact_lookup(const ina_table *t, const uint64_t *key) {
    ina_entry *e = t->buckets[key_hash(key, t->nkeys) & (t->nbuckets - 1)];
    for (; e; e = e->next)
        if (memcmp(e->key, key, sizeof(uint64_t) * (size_t)t->nkeys) == 0) return e;
    return NULL;
}

ina_entry *ina_ternary_lookup(const ina_table *t, const uint64_t *key) {
    for (uint32_t i = 0; i < t->count; i++) {
        ina_entry *e = t->ordered[i];
        int k = 0;
        for (; k < t->nkeys; k++) {
            if (e->is_range[k]) {
                if (key[k] < e->key[k] || key[k] > e->mask[k]) break;
            } else if ((key[k] & e->mask[k]) != e->key[k]) {
                break;
            }
        }
        if (k == t->nkeys) return e;
    }
    return NULL;
}

/* --- control plane (each call takes the lock) ------------------------------------------ */
static void set_action(ina_entry *e, int action, int nargs, const uint64_t *args) {
    uint64_t *copy = calloc(nargs ? nargs : 1, sizeof(uint64_t));
    memcpy(copy, args, sizeof(uint64_t) * (size_t)nargs);
    uint64_t *old = e->args;
    e->args = copy;
    e->nargs = nargs;
    e->action = action;
    free(old);
}

/* Adds an entry; for non-exact tables at `position` in priority order (Python decides it). */
ina_entry *ina_ctl_table_add(ina_switch *sw, int t, const uint64_t *key, const uint64_t *mask,
                             const uint8_t *is_range, int position, int action, int nargs,
                             const uint64_t *args) {
    ina_table *tab = &sw->tables[t];
    ina_entry *e = calloc(1, sizeof *e);
    size_t n = (size_t)(tab->nkeys ? tab->nkeys : 1);
    e->key = calloc(n, sizeof(uint64_t));
    memcpy(e->key, key, sizeof(uint64_t) * (size_t)tab->nkeys);
    set_action(e, action, nargs, args);
    ina_lock(sw);
    if (tab->exact) {
        uint32_t b = key_hash(e->key, tab->nkeys) & (tab->nbuckets - 1);
        e->next = tab->buckets[b];
        tab->buckets[b] = e;
    } else {
        e->mask = calloc(n, sizeof(uint64_t));
        e->is_range = calloc(n, 1);
        memcpy(e->mask, mask, sizeof(uint64_t) * (size_t)tab->nkeys);
        memcpy(e->is_range, is_range, (size_t)tab->nkeys);
        if (tab->count == tab->cap) {
            tab->cap = tab->cap ? tab->cap * 2 : 16;
            tab->ordered = realloc(tab->ordered, sizeof(ina_entry *) * tab->cap);
        }
        if (position < 0 || (uint32_t)position > tab->count) position = (int)tab->count;
        memmove(&tab->ordered[position + 1], &tab->ordered[position],
                sizeof(ina_entry *) * (tab->count - (uint32_t)position));
        tab->ordered[position] = e;
    }
    tab->count++;
    ina_unlock(sw);
    return e;
}

void ina_ctl_table_modify(ina_switch *sw, ina_entry *e, int action, int nargs, const uint64_t *args) {
    ina_lock(sw);
    set_action(e, action, nargs, args);
    ina_unlock(sw);
}

void ina_ctl_table_delete(ina_switch *sw, int t, ina_entry *e) {
    ina_table *tab = &sw->tables[t];
    ina_lock(sw);
    if (tab->exact) {
        ina_entry **p = &tab->buckets[key_hash(e->key, tab->nkeys) & (tab->nbuckets - 1)];
        while (*p && *p != e) p = &(*p)->next;
        if (*p) *p = e->next;
    } else {
        for (uint32_t i = 0; i < tab->count; i++) {
            if (tab->ordered[i] == e) {
                memmove(&tab->ordered[i], &tab->ordered[i + 1],
                        sizeof(ina_entry *) * (tab->count - i - 1));
                break;
            }
        }
    }
    tab->count--;
    ina_unlock(sw);
    free(e->key);
    free(e->mask);
    free(e->is_range);
    free(e->args);
    free(e->meter);
    free(e);
}

void ina_ctl_table_set_default(ina_switch *sw, int t, int action, int nargs, const uint64_t *args) {
    ina_table *tab = &sw->tables[t];
    ina_lock(sw);
    tab->def_action = action;
    tab->def_nargs = nargs;
    memcpy(tab->def_args, args, sizeof(uint64_t) * (size_t)nargs);
    ina_unlock(sw);
}

void ina_ctl_entry_counters(ina_switch *sw, ina_entry *e, uint64_t *out2) {
    ina_lock(sw);
    out2[0] = e->packets;
    out2[1] = e->bytes;
    ina_unlock(sw);
}

void ina_ctl_entry_set_counters(ina_switch *sw, ina_entry *e, uint64_t packets, uint64_t bytes) {
    ina_lock(sw);
    e->packets = packets;
    e->bytes = bytes;
    ina_unlock(sw);
}

/* Reads `n` cells from `start` (a wildcard read asks for all of them at once). */
void ina_ctl_register_read(ina_switch *sw, int r, uint64_t start, uint64_t n, uint64_t *out) {
    ina_lock(sw);
    const ina_register *R = &sw->registers[r];
    for (uint64_t k = 0; k < n; k++) out[k] = R->cells[(start + k) * R->stride];
    ina_unlock(sw);
}

void ina_ctl_register_write(ina_switch *sw, int r, uint64_t index, uint64_t value) {
    ina_lock(sw);
    sw->registers[r].cells[index * sw->registers[r].stride] = value;
    ina_unlock(sw);
}

void ina_ctl_register_reset(ina_switch *sw, int r) {
    ina_lock(sw);
    ina_register *R = &sw->registers[r];
    for (uint64_t i = 0; i < R->size; i++) R->cells[i * R->stride] = 0;
    ina_unlock(sw);
}

void ina_ctl_counter_read(ina_switch *sw, int k, uint64_t start, uint64_t n, uint64_t *packets,
                          uint64_t *bytes) {
    ina_lock(sw);
    memcpy(packets, sw->counters[k].packets + start, sizeof(uint64_t) * n);
    memcpy(bytes, sw->counters[k].bytes + start, sizeof(uint64_t) * n);
    ina_unlock(sw);
}

void ina_ctl_counter_write(ina_switch *sw, int k, uint64_t index, uint64_t packets, uint64_t bytes) {
    ina_lock(sw);
    sw->counters[k].packets[index] = packets;
    sw->counters[k].bytes[index] = bytes;
    ina_unlock(sw);
}

void ina_ctl_counter_reset(ina_switch *sw, int k) {
    ina_lock(sw);
    memset(sw->counters[k].packets, 0, sizeof(uint64_t) * sw->counters[k].size);
    memset(sw->counters[k].bytes, 0, sizeof(uint64_t) * sw->counters[k].size);
    ina_unlock(sw);
}

/* Puts n replicas in *slot, or nothing when n < 0, and frees what was there (outside the lock). */
static void replicas_set(ina_switch *sw, ina_group **slot, int n, const int *ports, const int *rids,
                         uint64_t truncate) {
    ina_group *g = NULL;
    if (n >= 0) {
        g = calloc(1, sizeof *g);
        g->n = n;
        g->truncate = truncate;
        g->ports = malloc(sizeof(int) * (size_t)(n ? n : 1));
        g->rids = malloc(sizeof(int) * (size_t)(n ? n : 1));
        if (n) {
            memcpy(g->ports, ports, sizeof(int) * (size_t)n);
            memcpy(g->rids, rids, sizeof(int) * (size_t)n);
        }
    }
    ina_lock(sw);
    ina_group *old = *slot;
    *slot = g;
    ina_unlock(sw);
    if (old) {
        free(old->ports);
        free(old->rids);
        free(old);
    }
}

/* Sets (n > 0) or deletes (n == 0) multicast group `mgid`. */
void ina_ctl_group_set(ina_switch *sw, int mgid, int n, const int *ports, const int *rids) {
    replicas_set(sw, &sw->groups[mgid & 0xFFFF], n > 0 ? n : -1, ports, rids, 0);
}

/* Sets (n >= 0) or deletes (n < 0) clone session `session`. */
void ina_ctl_session_set(ina_switch *sw, int session, int n, const int *ports, const int *rids,
                         uint64_t truncate) {
    replicas_set(sw, &sw->sessions[session & 0xFFFF], n, ports, rids, truncate);
}

static void meter_set(ina_meter_cell *m, double cir, double cburst, double pir, double pburst) {
    m->cir = cir;
    m->cburst = cburst;
    m->pir = pir;
    m->pburst = pburst;
    m->committed = cburst;
    m->peak = pburst;
    m->last = (double)monotonic_ns() / 1e9;
    m->on = 1;
}

/* Configures (on) or resets (!on) cell `index` of indirect meter `m`. */
void ina_ctl_meter_set(ina_switch *sw, int m, uint64_t index, int on, double cir, double cburst,
                       double pir, double pburst) {
    ina_lock(sw);
    ina_meter_cell *cell = &sw->meters[m].cells[index];
    if (on) meter_set(cell, cir, cburst, pir, pburst);
    else cell->on = 0;
    ina_unlock(sw);
}

/* The same for the direct meter of table entry `e`. */
void ina_ctl_entry_meter_set(ina_switch *sw, ina_entry *e, int on, double cir, double cburst,
                             double pir, double pburst) {
    ina_meter_cell *cell = calloc(1, sizeof *cell), *old;
    if (on) meter_set(cell, cir, cburst, pir, pburst);
    ina_lock(sw);
    old = e->meter;
    e->meter = on ? cell : NULL;
    ina_unlock(sw);
    free(old);
    if (!on) free(cell);
}

/* Replaces the members of value set `v` (each given as its low and high 64 bits). */
void ina_ctl_vset_set(ina_switch *sw, int v, int n, const uint64_t *lo, const uint64_t *hi) {
    i128 *members = calloc(n ? (size_t)n : 1, sizeof(i128)), *old;
    for (int i = 0; i < n; i++) members[i] = (i128)(((u128)hi[i] << 64) | lo[i]);
    ina_lock(sw);
    old = sw->vsets[v].members;
    sw->vsets[v].members = members;
    sw->vsets[v].n = n;
    ina_unlock(sw);
    free(old);
}

/* Moves up to `max` waiting digests to `out` (records of the ring's width); returns how many. */
int ina_ctl_digests(ina_switch *sw, uint64_t *out, int max) {
    ina_lock(sw);
    ina_digests *d = &sw->digests;
    int n = 0;
    for (; n < max && d->tail < d->head; n++, d->tail++)
        memcpy(out + (size_t)n * d->width, d->ring + (size_t)(d->tail % d->cap) * d->width,
               sizeof(uint64_t) * d->width);
    ina_unlock(sw);
    return n;
}

uint64_t ina_ctl_digests_dropped(ina_switch *sw) {
    ina_lock(sw);
    uint64_t n = sw->digests.dropped;
    ina_unlock(sw);
    return n;
}

void ina_ctl_stats(ina_switch *sw, uint64_t *out) {
    ina_lock(sw);
    memcpy(out, sw->stats, sizeof sw->stats);
    ina_unlock(sw);
}

/* One packet from Python (STF runs, PacketOut, in-process benchmarks). */
int ina_ctl_process(ina_switch *sw, int port, const uint8_t *data, uint32_t len, ina_out *out) {
    out->n = 0;
    out->used = 0;
    ina_lock(sw);
    int n = ina_process(sw, port, data, len, out);
    ina_unlock(sw);
    return n;
}

/* Ticks per stage and the packet count (INA_PROFILE builds; zeros otherwise); reset after. */
void ina_ctl_profile(ina_switch *sw, uint64_t *out)
{
    ina_lock(sw);
    memcpy(out, sw->prof, sizeof sw->prof);
    memset(sw->prof, 0, sizeof sw->prof);
    ina_unlock(sw);
}

ina_out *ina_ctl_out_new(void) {
    ina_out *out = calloc(1, sizeof *out);
    if (!out) return NULL;
    out->pkts = malloc(INA_OUT_PACKETS * sizeof *out->pkts);
    out->arena = malloc(INA_OUT_ARENA);
    if (!out->pkts || !out->arena) {
        ina_ctl_out_free(out);
        return NULL;
    }
    out->cap = INA_OUT_PACKETS;
    out->size = INA_OUT_ARENA;
    return out;
}

void ina_ctl_out_free(ina_out *out) {
    if (!out) return;
    free(out->pkts);
    free(out->arena);
    free(out);
}

/* Doubles what is full; the packets already in the arena move with it (they are offsets). */
int ina_out_grow(ina_out *out, size_t bytes) {
    if (out->n == out->cap) {
        ina_pkt *pkts = realloc(out->pkts, 2 * (size_t)out->cap * sizeof *pkts);
        if (!pkts) return 0;
        out->pkts = pkts;
        out->cap *= 2;
    }
    if (out->size - out->used < bytes) {
        size_t size = out->size;
        while (size - out->used < bytes) size *= 2;
        uint8_t *arena = realloc(out->arena, size);
        if (!arena) return 0;
        out->arena = arena;
        out->size = size;
    }
    return 1;
}

void ina_ctl_free(ina_switch *sw) {
    for (int t = 0; t < sw->ntables; t++) {
        ina_table *tab = &sw->tables[t];
        if (tab->exact) {
            for (uint32_t b = 0; b < tab->nbuckets; b++) {
                for (ina_entry *e = tab->buckets[b], *next; e; e = next) {
                    next = e->next;
                    free(e->meter);
                    free(e->key);
                    free(e->args);
                    free(e);
                }
            }
            free(tab->buckets);
        } else {
            for (uint32_t i = 0; i < tab->count; i++) {
                ina_entry *e = tab->ordered[i];
                free(e->meter);
                free(e->key);
                free(e->mask);
                free(e->is_range);
                free(e->args);
                free(e);
            }
            free(tab->ordered);
        }
    }
    for (int r = 0; r < sw->nregisters; r++)
        if (sw->registers[r].owns) free(sw->registers[r].cells);
    for (int k = 0; k < sw->ncounters; k++) {
        free(sw->counters[k].packets);
        free(sw->counters[k].bytes);
    }
    for (int g = 0; g < 65536; g++) ina_ctl_group_set(sw, g, 0, NULL, NULL);
    for (int s = 0; s < 65536; s++) ina_ctl_session_set(sw, s, -1, NULL, NULL, 0);
    for (int m = 0; m < sw->nmeters; m++) free(sw->meters[m].cells);
    for (int v = 0; v < sw->nvsets; v++) free(sw->vsets[v].members);
    for (int d = 0; d < INA_MAX_REENTRY + 2; d++) free(sw->scratch[d]);
    free(sw->meters);
    free(sw->vsets);
    free(sw->digests.ring);
    free(sw->tables);
    free(sw->registers);
    free(sw->counters);
    pthread_mutex_destroy(&sw->lock);
    free(sw);
}

/* --- hashes and checksums over two byte ranges (headers, then payload when asked) -------- */
/* The big-endian 16-bit words of a then b (a last odd byte padded with a zero byte), added
 * (xor = 0) or xored together: the walk the Internet checksum and xor16 share. */
static uint64_t combine_words16(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb, int xor) {
    uint64_t acc = 0;
    int odd = 0;
    uint8_t hi = 0;
    const uint8_t *parts[2] = {a, b};
    uint32_t lens[2] = {na, nb};
    for (int p = 0; p < 2; p++) {
        for (uint32_t i = 0; i < lens[p]; i++) {
            if (odd) {
                uint64_t word = ((uint64_t)hi << 8) | parts[p][i];
                acc = xor ? acc ^ word : acc + word;
            } else {
                hi = parts[p][i];
            }
            odd = !odd;
        }
    }
    if (odd) acc = xor ? acc ^ ((uint64_t)hi << 8) : acc + ((uint64_t)hi << 8);
    return acc;
}

uint64_t ina_csum16(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb) {
    uint64_t sum = combine_words16(a, na, b, nb, 0);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    return ~sum & 0xFFFF;
}

static uint32_t crc32_table[256];
static pthread_once_t crc32_once = PTHREAD_ONCE_INIT;

static void crc32_fill(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        crc32_table[i] = c;
    }
}

/* CRC-32 as zlib computes it (reflected 0x04C11DB7, init and xorout all ones). */
uint64_t ina_crc32(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb) {
    pthread_once(&crc32_once, crc32_fill);
    uint32_t crc = 0xFFFFFFFFu;
    const uint8_t *parts[2] = {a, b};
    uint32_t lens[2] = {na, nb};
    for (int p = 0; p < 2; p++)
        for (uint32_t i = 0; i < lens[p]; i++) crc = crc32_table[(crc ^ parts[p][i]) & 0xFF] ^ (crc >> 8);
    return ~crc & 0xFFFFFFFFu;
}

uint64_t ina_crc16(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb) {
    uint32_t crc = 0;
    const uint8_t *parts[2] = {a, b};
    uint32_t lens[2] = {na, nb};
    for (int p = 0; p < 2; p++) {
        for (uint32_t i = 0; i < lens[p]; i++) {
            crc ^= parts[p][i];
            for (int k = 0; k < 8; k++) crc = (crc & 1) ? (crc >> 1) ^ 0xA001 : crc >> 1;
        }
    }
    return crc & 0xFFFF;
}

uint64_t ina_crc_ccitt(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb) {
    uint32_t crc = 0xFFFF;
    const uint8_t *parts[2] = {a, b};
    uint32_t lens[2] = {na, nb};
    for (int p = 0; p < 2; p++) {
        for (uint32_t i = 0; i < lens[p]; i++) {
            crc ^= (uint32_t)parts[p][i] << 8;
            for (int k = 0; k < 8; k++) crc = ((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1) & 0xFFFF;
        }
    }
    return crc;
}

uint64_t ina_xor16(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb) {
    return combine_words16(a, na, b, nb, 1);
}
