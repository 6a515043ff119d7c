/* Traffic for the veth benchmarks, fast enough not to be the bottleneck (Python sockets are):
 *   traffic send IFACE SECONDS HEXFRAME       send the frame as fast as sendmmsg allows
 *   traffic count IFACE SECONDS ETHERTYPE     count received frames of that EtherType (hex)
 * Each prints one number: frames sent or counted. Built by ina.bench.veth with gcc at run time.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define BATCH 64
#define ETH_P_ALL 0x0003
#define PACKET_IGNORE_OUTGOING 23

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int open_socket(const char *iface) {
    int fd = socket(AF_PACKET, SOCK_RAW, 0);
    struct sockaddr_ll a = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
                            .sll_ifindex = (int)if_nametoindex(iface)};
    if (fd < 0 || a.sll_ifindex == 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        perror(iface);
        exit(1);
    }
    int size = 16 << 20;
    setsockopt(fd, SOL_SOCKET, 32 /* SO_SNDBUFFORCE */, &size, sizeof size);
    setsockopt(fd, SOL_SOCKET, 33 /* SO_RCVBUFFORCE */, &size, sizeof size);
    return fd;
}

static int send_frames(int fd, double seconds, const char *hex) {
    static unsigned char frame[2048];
    size_t len = strlen(hex) / 2;
    if (len < 14 || len > sizeof frame) {
        fprintf(stderr, "traffic: the frame must be 14..2048 bytes of hex\n");
        return 1;
    }
    for (size_t i = 0; i < len; i++) sscanf(hex + 2 * i, "%2hhx", &frame[i]);
    struct iovec iov[BATCH];
    struct mmsghdr m[BATCH];
    memset(m, 0, sizeof m);
    for (int i = 0; i < BATCH; i++) {
        iov[i].iov_base = frame;
        iov[i].iov_len = len;
        m[i].msg_hdr.msg_iov = &iov[i];
        m[i].msg_hdr.msg_iovlen = 1;
    }
    unsigned long sent = 0;
    double end = now() + seconds;
    while (now() < end) {
        int r = sendmmsg(fd, m, BATCH, 0);
        if (r > 0) sent += (unsigned long)r;
    }
    printf("%lu\n", sent);
    return 0;
}

static int count_frames(int fd, double seconds, unsigned ethertype) {
    static unsigned char buf[BATCH][2048];
    struct iovec iov[BATCH];
    struct mmsghdr m[BATCH];
    memset(m, 0, sizeof m);
    for (int i = 0; i < BATCH; i++) {
        iov[i].iov_base = buf[i];
        iov[i].iov_len = sizeof buf[i];
        m[i].msg_hdr.msg_iov = &iov[i];
        m[i].msg_hdr.msg_iovlen = 1;
    }
    int one = 1;
    setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
    unsigned long counted = 0;
    double end = now() + seconds;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (now() < end) {
        if (poll(&p, 1, 100) <= 0) continue;
        int r = recvmmsg(fd, m, BATCH, MSG_DONTWAIT, NULL);
        for (int i = 0; i < r; i++)
            if (m[i].msg_len >= 14 && ((unsigned)buf[i][12] << 8 | buf[i][13]) == ethertype) counted++;
    }
    printf("%lu\n", counted);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 5 || (strcmp(argv[1], "send") && strcmp(argv[1], "count"))) {
        fprintf(stderr, "usage: traffic send IFACE SECONDS HEXFRAME | traffic count IFACE SECONDS ETHERTYPE\n");
        return 2;
    }
    int fd = open_socket(argv[2]);
    double seconds = atof(argv[3]);
    if (!strcmp(argv[1], "send")) return send_frames(fd, seconds, argv[4]);
    return count_frames(fd, seconds, (unsigned)strtoul(argv[4], NULL, 16));
}
