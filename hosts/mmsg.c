/* A worker's UDP datagrams in batches: recvmmsg and sendmmsg, so one system call moves up to a
 * window of datagrams (hosts/batch.py loads it with ctypes; ina.switch.native.build compiles and
 * caches it). The socket is the worker's own, non-blocking; Python keeps every buffer.
 */
#define _GNU_SOURCE /* recvmmsg, sendmmsg */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#define CHUNK 256 /* messages per system call: the arrays live on the stack */

/* Up to `n` datagrams into `buf`, the i-th at i * stride (at most stride bytes: a longer one is
 * cut, and shows as stride bytes); info[3i..3i+2] = its length, source IPv4 (network order) and
 * source port (host order). Returns how many arrived, 0 when none waits, -errno on an error. */
int ina_mmsg_recv(int fd, uint8_t *buf, unsigned stride, unsigned n, uint32_t *info)
{
    struct mmsghdr msgs[CHUNK];
    struct iovec iov[CHUNK];
    struct sockaddr_in from[CHUNK];
    if (n > CHUNK)
        n = CHUNK;
    memset(msgs, 0, n * sizeof *msgs);
    for (unsigned i = 0; i < n; i++) {
        iov[i].iov_base = buf + (size_t)i * stride;
        iov[i].iov_len = stride;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = &from[i];
        msgs[i].msg_hdr.msg_namelen = sizeof from[i];
    }
    int got = recvmmsg(fd, msgs, n, MSG_DONTWAIT, NULL);
    if (got < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
    for (int i = 0; i < got; i++) {
        info[3 * i] = msgs[i].msg_len;
        info[3 * i + 1] = from[i].sin_addr.s_addr;
        info[3 * i + 2] = ntohs(from[i].sin_port);
    }
    return got;
}

/* The `n` datagrams packed one after another in `buf` (lengths in lens) to ip:port (IPv4 in
 * network order, port in host order), in order. A full socket buffer is waited for up to wait_ms
 * each time it fills; still full, the rest are not sent (the worker's timers resend them, as any
 * loss). Returns how many were sent, or -errno on another error. */
int ina_mmsg_send(int fd, const uint8_t *buf, const uint32_t *lens, unsigned n, uint32_t ip,
                  unsigned port, int wait_ms)
{
    struct mmsghdr msgs[CHUNK];
    struct iovec iov[CHUNK];
    struct sockaddr_in to;
    memset(&to, 0, sizeof to);
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = ip;
    to.sin_port = htons((uint16_t)port);
    unsigned sent = 0;
    size_t offset = 0;
    while (sent < n) {
        unsigned m = n - sent < CHUNK ? n - sent : CHUNK;
        size_t at = offset;
        memset(msgs, 0, m * sizeof *msgs);
        for (unsigned i = 0; i < m; i++) {
            iov[i].iov_base = (void *)(buf + at);
            iov[i].iov_len = lens[sent + i];
            at += lens[sent + i];
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_name = &to;
            msgs[i].msg_hdr.msg_namelen = sizeof to;
        }
        int done = sendmmsg(fd, msgs, m, MSG_DONTWAIT);
        if (done < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                return -errno;
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            if (poll(&p, 1, wait_ms) <= 0)
                return (int)sent;
            continue;
        }
        for (int i = 0; i < done; i++)
            offset += lens[sent + i];
        sent += (unsigned)done;
    }
    return (int)sent;
}
