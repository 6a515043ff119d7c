/* ina's native data path: the interface between the generated pipeline (pipeline.c, written by
 * ina.switch.native.codegen at load time), the hand-written runtime (tables.c) and the port loop
 * (io.c). All three are compiled together into one shared object per program.
 *
 * Locking: every function that touches switch state expects the caller to hold the switch lock
 * (ina_lock/ina_unlock), except those whose comment says they take it themselves.
 */
#ifndef INA_RUNTIME_H
#define INA_RUNTIME_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef __int128 i128;
typedef unsigned __int128 u128;

#define INA_OUT_PACKETS 1024      /* an output buffer's first room, in packets */
#define INA_OUT_ARENA (4u << 20)  /* and in bytes; a batch that needs more grows it */
#define INA_MAX_PACKET 65535      /* larger input is dropped and counted */

/* One packet produced by the pipeline: `len` bytes at `arena + off`, for port `port`. */
typedef struct {
    size_t off;
    int port;
    uint32_t len;
} ina_pkt;

/* Output of a batch: the caller sets n = used = 0 before the batch; ina_process appends,
 * growing pkts and arena when they are full (so no fan-out is lost to the buffer's size), and
 * keeps each input packet within the fan-out cap of replication.py, which traffic.py writes in. */
typedef struct {
    int n, cap;               /* packets in pkts, room for */
    size_t used, size;        /* arena bytes used, arena size */
    int first;                /* the current input packet's first output */
    uint64_t bytes;           /* bytes the current input packet has sent */
    ina_pkt *pkts;
    uint8_t *arena;
} ina_out;

/* An empty output buffer with the first room (NULL: no memory), and its release. */
ina_out *ina_ctl_out_new(void);
void ina_ctl_out_free(ina_out *out);
/* Room for one more packet of up to `bytes` bytes; returns 0 when memory runs out. */
int ina_out_grow(ina_out *out, size_t bytes);

/* Per-switch counters, read by Python as an array of uint64 in this order. */
enum {
    INA_ST_RX, INA_ST_TX, INA_ST_DROPPED, INA_ST_PARSER_ERRORS, INA_ST_DROPPED_ERROR,
    INA_ST_DROPPED_OVERSIZE, INA_ST_DROPPED_EMPTY_GROUP, INA_ST_DROPPED_OUTPUT_FULL,
    INA_ST_COUNT
};

typedef struct ina_switch ina_switch;

/* The switch lock; the port loop holds it around each batch, control-plane calls around each
 * change, so control-plane writes land between batches. */
void ina_lock(ina_switch *sw);
void ina_unlock(ina_switch *sw);

/* Run one packet received on `port` through the switch; appends every packet it sends to `out`
 * (dropping and counting what does not fit). Returns the number of packets appended.
 * The caller holds the lock. */
int ina_process(ina_switch *sw, int port, const uint8_t *data, uint32_t len, ina_out *out);

#endif
