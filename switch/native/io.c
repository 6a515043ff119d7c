/* ina's native port loop: raw AF_PACKET sockets drained in batches (recvmmsg), each batch run
 * through the switch under one lock hold, the outputs sent with one sendmmsg per destination port.
 * A batch whose outputs pass the output buffer's first room is sent in parts, so the buffer
 * holds at most that plus one input packet's fan-out.
 *
 * Threads: ina_io_run runs on one thread; ina_io_send may be called from any other thread while it
 * runs (P4Runtime PacketOut). Each port's socket transmissions and its "out" pcap buffer are
 * guarded by that port's tx_lock; everything else in the loop belongs to the loop thread alone.
 * Counters are updated with atomics so ina_io_stats can read them at any time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE                 /* recvmmsg, sendmmsg */
#endif
#include "state.h"  /* runtime.h, and ina_ticks for INA_PROFILE builds */

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define IO_BATCH 64                 /* frames per recvmmsg */
#define IO_FRAME 65536              /* receive buffer per frame; MSG_TRUNC reports larger ones */
#define IO_MAP 1024                 /* ports below this are found by direct index */
#define PCAP_FLUSH (64u << 10)      /* a pcap buffer is written out once it holds more */
#define PCAP_SNAPLEN 65535u         /* matches the global header written by Python */
#define PCAP_CAP (PCAP_FLUSH + 16u + PCAP_SNAPLEN)
#define TX_WAITS 10                 /* EAGAIN/ENOBUFS retries per sendmmsg group before giving up */
#define STOP_KEY UINT32_MAX

typedef struct ina_io ina_io;
typedef void (*ina_host_cb)(int port, const uint8_t *data, uint32_t len);

typedef struct {
    int fd;                         /* -1: no pcap */
    uint32_t len;
    uint8_t *buf;
} pcap_buf;

typedef struct {
    int port;
    int fd;
    pthread_mutex_t tx_lock;        /* socket transmissions and `out` */
    pcap_buf in, out;
    int ready;                      /* loop thread: may have more frames queued */
    unsigned npend, first;          /* loop thread: this batch's outputs in tx_msgs[first..] */
} io_port;

struct ina_io {
    int nports;
    int host_port;
    int has_pcap;
    io_port *p;
    int16_t map[IO_MAP];            /* port -> index + 1, 0 = none */
    unsigned rr;                    /* round-robin start */
    uint64_t rx, tx, tx_errors, dropped_oversize;
    uint64_t prof[3];               /* INA_PROFILE builds: ticks in recvmmsg, ina_process, sending */
    /* loop-thread buffers, allocated once */
    uint8_t *rx_buf;
    struct mmsghdr rx_msgs[IO_BATCH];
    struct iovec rx_iov[IO_BATCH];
    ina_out *out;
    int tx_cap;                     /* room in the three arrays below, grown to out->n */
    struct mmsghdr *tx_msgs;
    struct iovec *tx_iov;
    int *dest;                      /* port index of each output, -1 none, -2 host */
};

static void count(uint64_t *c, uint64_t n)
{
    if (n)
        __atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

static int port_index(const ina_io *io, int port)
{
    if (port >= 0 && port < IO_MAP)
        return io->map[port] - 1;
    for (int i = 0; i < io->nports; i++)
        if (io->p[i].port == port)
            return i;
    return -1;
}

/* ---- pcap ---- */

static void pcap_flush(pcap_buf *pb)
{
    uint32_t done = 0;
    while (done < pb->len) {
        ssize_t w = write(pb->fd, pb->buf + done, pb->len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;                  /* disk full or similar: the capture is lost, not the packet */
        done += (uint32_t)w;
    }
    pb->len = 0;
}

/* Appends one record: `cap` bytes of a frame that was `orig` bytes long. */
static void pcap_record(pcap_buf *pb, const struct timespec *ts, const uint8_t *data, uint32_t cap,
                        uint32_t orig)
{
    uint32_t incl = cap < PCAP_SNAPLEN ? cap : PCAP_SNAPLEN;
    uint32_t hdr[4] = {(uint32_t)ts->tv_sec, (uint32_t)(ts->tv_nsec / 1000), incl, orig};
    memcpy(pb->buf + pb->len, hdr, sizeof hdr);
    memcpy(pb->buf + pb->len + sizeof hdr, data, incl);
    pb->len += (uint32_t)sizeof hdr + incl;
    if (pb->len > PCAP_FLUSH)
        pcap_flush(pb);
}

static void flush_all(ina_io *io)
{
    for (int i = 0; i < io->nports; i++) {
        io_port *p = &io->p[i];
        if (p->in.fd >= 0 && p->in.len)
            pcap_flush(&p->in);
        if (p->out.fd >= 0) {
            pthread_mutex_lock(&p->tx_lock);
            if (p->out.len)
                pcap_flush(&p->out);
            pthread_mutex_unlock(&p->tx_lock);
        }
    }
}

/* ---- setup ---- */

/* Room for n outputs in the transmit arrays; returns 0 when memory runs out. */
static int tx_grow(ina_io *io, int n)
{
    if (n <= io->tx_cap)
        return 1;
    struct mmsghdr *msgs = realloc(io->tx_msgs, (size_t)n * sizeof *msgs);
    if (msgs)
        io->tx_msgs = msgs;
    struct iovec *iov = realloc(io->tx_iov, (size_t)n * sizeof *iov);
    if (iov)
        io->tx_iov = iov;
    int *dest = realloc(io->dest, (size_t)n * sizeof *dest);
    if (dest)
        io->dest = dest;
    if (!msgs || !iov || !dest)
        return 0;
    memset(msgs, 0, (size_t)n * sizeof *msgs);
    for (int i = 0; i < n; i++) {   /* every message points at its iovec, which may have moved */
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    io->tx_cap = n;
    return 1;
}

void ina_io_free(ina_io *io);

ina_io *ina_io_new(int nports, const int *ports, const int *fds, const int *pcap_in,
                   const int *pcap_out, int host_port)
{
    ina_io *io = calloc(1, sizeof *io);
    if (!io)
        return NULL;
    io->host_port = host_port;
    io->p = calloc(nports > 0 ? (size_t)nports : 1, sizeof *io->p);
    io->rx_buf = malloc((size_t)IO_BATCH * IO_FRAME);
    io->out = ina_ctl_out_new();
    if (!io->p || !io->rx_buf || !io->out || !tx_grow(io, INA_OUT_PACKETS)) {
        ina_io_free(io);
        return NULL;
    }
    for (int i = 0; i < nports; i++) {
        io_port *p = &io->p[i];
        p->port = ports[i];
        p->fd = fds[i];
        p->in.fd = pcap_in ? pcap_in[i] : -1;
        p->out.fd = pcap_out ? pcap_out[i] : -1;
        pthread_mutex_init(&p->tx_lock, NULL);
        io->nports = i + 1;         /* from here on ina_io_free destroys this port's mutex */
        if ((p->in.fd >= 0 && !(p->in.buf = malloc(PCAP_CAP))) ||
            (p->out.fd >= 0 && !(p->out.buf = malloc(PCAP_CAP)))) {
            ina_io_free(io);
            return NULL;
        }
        io->has_pcap |= p->in.fd >= 0 || p->out.fd >= 0;
        if (p->port >= 0 && p->port < IO_MAP)
            io->map[p->port] = (int16_t)(i + 1);
    }
    for (int i = 0; i < IO_BATCH; i++) {
        io->rx_iov[i].iov_base = io->rx_buf + (size_t)i * IO_FRAME;
        io->rx_iov[i].iov_len = IO_FRAME;
        io->rx_msgs[i].msg_hdr.msg_iov = &io->rx_iov[i];
        io->rx_msgs[i].msg_hdr.msg_iovlen = 1;
    }
    return io;
}

void ina_io_free(ina_io *io)
{
    if (!io)
        return;
    if (io->p) {
        flush_all(io);
        for (int i = 0; i < io->nports; i++) {
            pthread_mutex_destroy(&io->p[i].tx_lock);
            free(io->p[i].in.buf);
            free(io->p[i].out.buf);
        }
    }
    free(io->p);
    free(io->rx_buf);
    ina_ctl_out_free(io->out);
    free(io->tx_msgs);
    free(io->tx_iov);
    free(io->dest);
    free(io);
}

void ina_io_stats(ina_io *io, uint64_t *out4)
{
    out4[0] = __atomic_load_n(&io->rx, __ATOMIC_RELAXED);
    out4[1] = __atomic_load_n(&io->tx, __ATOMIC_RELAXED);
    out4[2] = __atomic_load_n(&io->tx_errors, __ATOMIC_RELAXED);
    out4[3] = __atomic_load_n(&io->dropped_oversize, __ATOMIC_RELAXED);
}

/* ---- transmit ---- */

/* A full socket buffer (EAGAIN) or a full device queue (ENOBUFS) clears quickly; wait for it a
 * little, but never long enough to stall the loop: after TX_WAITS tries the rest are errors. */
static int tx_wait(int fd, int err, int *waits)
{
    if (err != EAGAIN && err != EWOULDBLOCK && err != ENOBUFS)
        return 0;
    if (++*waits > TX_WAITS)
        return 0;
    if (err == ENOBUFS) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    } else {
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        poll(&pf, 1, 1);
    }
    return 1;
}

/* Sends n messages in order; the caller holds p->tx_lock. Returns the number that failed. */
static unsigned send_group(io_port *p, struct mmsghdr *m, unsigned n)
{
    unsigned done = 0, failed = 0;
    int waits = 0;
    while (done < n) {
        int r = sendmmsg(p->fd, m + done, n - done, MSG_DONTWAIT);
        if (r > 0) {
            done += (unsigned)r;
            continue;
        }
        int err = r < 0 ? errno : EIO;
        if (err == EINTR || tx_wait(p->fd, err, &waits))
            continue;
        if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) {
            failed += n - done;     /* gave up waiting: the rest is lost */
            break;
        }
        failed++;                   /* this packet was refused (EMSGSIZE, ENETDOWN, ...): skip it */
        done++;
    }
    return failed;
}

int ina_io_send(ina_io *io, int port, const uint8_t *data, uint32_t len)
{
    int i = port == io->host_port ? -1 : port_index(io, port);
    if (i < 0)
        return -1;
    io_port *p = &io->p[i];
    struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
    struct mmsghdr m = {.msg_hdr = {.msg_iov = &iov, .msg_iovlen = 1}};
    pthread_mutex_lock(&p->tx_lock);
    unsigned failed = send_group(p, &m, 1);
    if (p->out.fd >= 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        pcap_record(&p->out, &ts, data, len, len);
        pcap_flush(&p->out);        /* rare; the loop may be idle and not flush for a long time */
    }
    pthread_mutex_unlock(&p->tx_lock);
    count(failed ? &io->tx_errors : &io->tx, 1);
    return 0;
}

/* ---- the loop ---- */

/* Sends what io->out holds, grouped by destination port (each port's order kept), and empties
 * it; packets for the host port go to cb. */
static void transmit(ina_io *io, ina_host_cb cb)
{
#ifdef INA_PROFILE
    uint64_t t0 = ina_ticks();
#endif
    ina_out *out = io->out;
    int nout = out->n;
    uint64_t sent = 0, failed = 0;
    if (!tx_grow(io, nout)) {
        failed = (uint64_t)(nout - io->tx_cap);     /* no memory to send them with */
        nout = io->tx_cap;
    }
    /* A counting sort by port index. */
    int nhost = 0;
    for (int j = 0; j < io->nports; j++)
        io->p[j].npend = 0;
    for (int k = 0; k < nout; k++) {
        int port = out->pkts[k].port;
        int d = port == io->host_port && cb ? -2 : port_index(io, port);
        io->dest[k] = d;
        if (d >= 0)
            io->p[d].npend++;
        else if (d == -2)
            nhost++;
    }
    unsigned pos = 0;
    for (int j = 0; j < io->nports; j++) {
        io->p[j].first = pos;
        pos += io->p[j].npend;
        io->p[j].npend = 0;
    }
    for (int k = 0; k < nout; k++) {
        int d = io->dest[k];
        if (d < 0)
            continue;
        unsigned slot = io->p[d].first + io->p[d].npend++;
        io->tx_iov[slot].iov_base = out->arena + out->pkts[k].off;
        io->tx_iov[slot].iov_len = out->pkts[k].len;
    }
    for (int j = 0; j < io->nports; j++) {
        io_port *q = &io->p[j];
        if (!q->npend)
            continue;
        struct mmsghdr *m = io->tx_msgs + q->first;
        pthread_mutex_lock(&q->tx_lock);
        unsigned f = send_group(q, m, q->npend);
        if (q->out.fd >= 0) {
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            for (unsigned k = 0; k < q->npend; k++) {
                const struct iovec *v = m[k].msg_hdr.msg_iov;
                pcap_record(&q->out, &now, v->iov_base, (uint32_t)v->iov_len, (uint32_t)v->iov_len);
            }
        }
        pthread_mutex_unlock(&q->tx_lock);
        sent += q->npend - f;
        failed += f;
    }
    count(&io->tx, sent);
    count(&io->tx_errors, failed);
#ifdef INA_PROFILE
    io->prof[2] += ina_ticks() - t0;
#endif
    if (nhost)
        for (int k = 0; k < nout; k++)
            if (io->dest[k] == -2)
                cb(out->pkts[k].port, out->arena + out->pkts[k].off, out->pkts[k].len);
    out->n = 0;
    out->used = 0;
}

/* Receives one batch from port i, runs it through the switch and sends the results. Returns the
 * number of frames received (IO_BATCH: there may be more waiting). */
static int serve(ina_io *io, int i, ina_switch *sw, ina_host_cb cb)
{
    io_port *p = &io->p[i];
#ifdef INA_PROFILE
    uint64_t t0 = ina_ticks();
#endif
    int n = recvmmsg(p->fd, io->rx_msgs, IO_BATCH, MSG_DONTWAIT | MSG_TRUNC, NULL);
#ifdef INA_PROFILE
    uint64_t t1 = ina_ticks();
    io->prof[0] += t1 - t0;
    uint64_t sending = io->prof[2];
#endif
    if (n <= 0)
        return 0;                   /* EAGAIN, or a reported socket error (e.g. link went down) */
    struct timespec ts = {0, 0};
    if (p->in.fd >= 0)
        clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t oversize = 0;
    ina_out *out = io->out;
    ina_lock(sw);
    for (int k = 0; k < n; k++) {
        uint32_t len = io->rx_msgs[k].msg_len;
        if (len > INA_MAX_PACKET) {
            oversize++;
            continue;
        }
        ina_process(sw, p->port, io->rx_iov[k].iov_base, len, out);
        if ((out->n >= INA_OUT_PACKETS || out->used >= INA_OUT_ARENA) && k + 1 < n) {
            ina_unlock(sw);         /* a large fan-out: send it before the next input */
            transmit(io, cb);
            ina_lock(sw);
        }
    }
    ina_unlock(sw);
#ifdef INA_PROFILE
    io->prof[1] += ina_ticks() - t1 - (io->prof[2] - sending);
#endif
    if (p->in.fd >= 0)
        for (int k = 0; k < n; k++) {
            uint32_t len = io->rx_msgs[k].msg_len;
            /* an oversize frame is recorded truncated, with its real length as orig_len */
            pcap_record(&p->in, &ts, io->rx_iov[k].iov_base, len < IO_FRAME ? len : IO_FRAME, len);
        }
    count(&io->rx, (uint64_t)n);
    count(&io->dropped_oversize, oversize);
    transmit(io, cb);
    return n;
}

int ina_io_run(ina_io *io, ina_switch *sw, int stop_fd, ina_host_cb cb)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        return -errno;
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = STOP_KEY};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, stop_fd, &ev) < 0)
        goto fail;
    for (int i = 0; i < io->nports; i++) {
        ev.data.u32 = (uint32_t)i;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, io->p[i].fd, &ev) < 0)
            goto fail;
        io->p[i].ready = 0;
    }
    struct epoll_event evs[64];
    int busy = 0;                   /* some port filled its last batch: poll without sleeping */
    int dirty = 0;                  /* pcap buffers may hold records */
    for (;;) {
        int n = epoll_wait(ep, evs, 64, busy || dirty ? 0 : -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            goto fail;
        }
        int stop = 0;
        for (int k = 0; k < n; k++) {
            if (evs[k].data.u32 == STOP_KEY)
                stop = 1;
            else
                io->p[evs[k].data.u32].ready = 1;
        }
        if (stop)
            break;
        if (n == 0 && !busy) {
            flush_all(io);          /* idle: make the pcap files complete on disk */
            dirty = 0;
            continue;
        }
        /* One batch per ready port per round, starting one further each round, so a busy port
         * cannot starve the others. */
        busy = 0;
        for (int k = 0; k < io->nports; k++) {
            int i = (int)((io->rr + (unsigned)k) % (unsigned)io->nports);
            if (!io->p[i].ready)
                continue;
            int got = serve(io, i, sw, cb);
            if (got == IO_BATCH)
                busy = 1;
            else
                io->p[i].ready = 0;
            dirty = io->has_pcap;
        }
        io->rr++;
    }
    close(ep);
    flush_all(io);
    return 0;
fail:;
    int err = errno;
    close(ep);
    flush_all(io);
    return -err;
}

/* INA_PROFILE builds: ticks spent receiving, processing and sending (pcap writes included). */
void ina_io_profile(ina_io *io, uint64_t *out3)
{
    memcpy(out3, io->prof, sizeof io->prof);
}

/* Packets from memory instead of sockets, `rounds` times over: the pipeline's own speed with no
 * socket and no Python in the way (ina bench switch, in process). Returns packets sent. */
uint64_t ina_io_replay(ina_switch *sw, int n, const int *ports, const uint8_t *const *frames,
                       const uint32_t *lens, int rounds, ina_out *out)
{
    uint64_t sent = 0;
    for (int r = 0; r < rounds; r++) {
        ina_lock(sw);
        for (int i = 0; i < n; i++) {
            if (i % IO_BATCH == 0 || out->n >= INA_OUT_PACKETS || out->used >= INA_OUT_ARENA) {
                out->n = 0;
                out->used = 0;
            }
            sent += (uint64_t)ina_process(sw, ports[i], frames[i], lens[i], out);
        }
        ina_unlock(sw);
    }
    return sent;
}
