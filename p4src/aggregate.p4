/* ina: SwitchML-style in-network aggregation for v1model (docs/protocol.md is the specification).
 *
 * Workers send UPDATE packets (UDP to the switch's IP, port 0xBEE0) carrying ELEMS int32 values
 * for one slot of their job's range, in one of two sets. The switch sums the contributions in
 * registers; the last contribution completes the slot and the RESULT is multicast to every worker
 * of the job. In a hierarchy (a job's tree of switches, this one program on each) a switch with a
 * parent sends its completed partial sum to the parent as an UPDATE instead, and multicasts the
 * parent's RESULT when it comes back; a child switch's UPDATE weighs the workers its sum holds. Ordinary traffic is forwarded by destination MAC; the switch answers ARP and ping
 * for its own IP and can drop packets at random per port to emulate loss.
 *
 * Compile-time constants: -DELEMS=8|16|32|64|128|256 (default 64), -DPOOL_SIZE=N (default 8192),
 * -DMAX_JOBS=N (default 256), -DLANE_BITS=32|16|8 (default 32: the values per 32-bit word,
 * elements.p4).
 */
#include <core.p4>
#include <v1model.p4>

#ifndef ELEMS
#define ELEMS 64
#endif
#ifndef POOL_SIZE
#define POOL_SIZE 8192
#endif
#ifndef MAX_JOBS
#define MAX_JOBS 256
#endif
#define SLOT_REGISTER_SIZE (2 * POOL_SIZE)
#define NUM_PORTS 512

#include "elements.p4"

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_ARP = 0x0806;
const bit<8> IP_PROTO_ICMP = 1;
const bit<8> IP_PROTO_UDP = 17;
const bit<16> INA_UDP_PORT = 0xBEE0;
const bit<16> INA_UDP_PORT_MASK = 0xFFF0;
const bit<8> MSG_UPDATE = 1;
const bit<8> MSG_RESULT = 2;
const bit<8> MSG_STATUS = 3;
const bit<16> FLOOD_GROUP = 1;
const bit<8> FLAG_FALLBACK = 0x02;  // the chunk is summed by the job's host fallback server
// ZERO: no value block follows the header, the values are all zero. An UPDATE's: the sender's chunk
// is all zeros (counted, nothing added); an answer's: every contribution in the use was ZERO.
const bit<8> FLAG_ZERO = 0x08;
const bit<16> VALUES_LEN = 4 * ELEMS;  // the value block's bytes, which a ZERO packet leaves out
const bit<16> ZERO_UDP_LEN = 8 + 22;   // a ZERO packet's UDP length: its header and the agg header

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header arp_t {
    bit<16> htype;
    bit<16> ptype;
    bit<8>  hlen;
    bit<8>  plen;
    bit<16> oper;
    bit<48> sha;
    bit<32> spa;
    bit<48> tha;
    bit<32> tpa;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

header icmp_t {
    bit<8>  type;
    bit<8>  code;
    bit<16> checksum;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

// The aggregation header (22 bytes), see docs/protocol.md.
header agg_t {
    bit<8>  msg_type;
    bit<8>  rank;
    bit<16> job_id;
    bit<1>  pool_set;
    bit<15> pool_index;
    bit<8>  exponent;
    bit<8>  flags;     // FLAG_OVERFLOW, FLAG_FALLBACK, FLAG_ZERO, the lane width (LANE_MASK)
    bit<16> count;     // RESULT and STATUS: workers summed; UPDATE: 0
    bit<32> epoch;
    bit<32> round;     // the sender's use number of this slot (round & 1 == pool_set)
    bit<32> bitmap;    // RESULT and STATUS: the ranks summed; UPDATE: 0
}

#define DECLARE_VALUE(i) bit<32> d##i;
header data_t {
    FOR_EACH_ELEM(DECLARE_VALUE)
}

struct headers_t {
    ethernet_t ethernet;
    arp_t      arp;
    ipv4_t     ipv4;
    icmp_t     icmp;
    udp_t      udp;
    agg_t      agg;
    data_t     data;
}

struct metadata_t {
    bit<48> switch_mac;
    bit<32> switch_ip;
    bit<1>  admitted;
    bit<16> weight;           // workers this UPDATE's values hold: 1 from a worker host
    bit<16> max_weight;       // ... at most: 1, or the workers below a child switch
    bit<1>  job_known;
    bit<1>  has_parent;       // the job's partial sums go up to a parent switch (job_parent)
    bit<9>  parent_port;
    bit<48> parent_mac;
    bit<32> parent_ip;
    bit<8>  parent_rank;      // this switch's rank at its parent
    bit<16> base;
    bit<16> num_slots;
    bit<16> mgid;
    bit<32> epoch;
    bit<16> quorum;
    bit<32> timeout;
    bit<8>  num_workers;
    bit<8>  staleness;
    bit<1>  has_fallback;     // the job shares slots best-effort: a held slot's chunk goes to a host
    bit<9>  fallback_port;
    bit<48> fallback_mac;
    bit<32> fallback_ip;
    bit<16> fallback_udp_port;
    bit<32> reg_index;
    bit<32> drop_threshold;   // the drop simulator's loss threshold for this packet
    bit<1>  drop_burst;       // set_burst_loss hit: the threshold comes from the port's state
    bit<32> drop_loss_bad;
    bit<32> drop_p_gb;
    bit<32> drop_p_bg;
    bit<1>  zero_in;          // the packet came flagged ZERO (its values, zeros, filled in here)
#if LANE_BITS != 32
    bit<32> lane_overflow;    // add_values: the sign bit of every lane that saturated
#endif
}

parser InaParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_ARP: parse_arp;
            default: accept;
        }
    }
    state parse_arp {
        pkt.extract(hdr.arp);
        transition accept;
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.protocol) {
            (5, IP_PROTO_UDP): parse_udp;
            (5, IP_PROTO_ICMP): parse_icmp;
            default: accept;
        }
    }
    state parse_icmp {
        pkt.extract(hdr.icmp);
        transition accept;
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            INA_UDP_PORT &&& INA_UDP_PORT_MASK: parse_agg;
            default: accept;
        }
    }
    state parse_agg {
        pkt.extract(hdr.agg);
        transition select(hdr.agg.flags) {
            FLAG_ZERO &&& FLAG_ZERO: accept;  // no value block: its values are all zero
            default: parse_data;
        }
    }
    state parse_data {
        pkt.extract(hdr.data);
        transition accept;
    }
}

// One packet of the drop simulator's Gilbert-Elliott (burst) mode: the packet gets the loss
// threshold of the state it finds (`bad`), then the state moves on when `move` (a random value in
// [0, 0xFFFFFFFE]) is below the transition threshold. Deciding before moving lets the extreme
// thresholds (0, 0xFFFFFFFF) script every state, so tests need no luck.
bit<32> burst_loss_step(inout bit<1> bad, in bit<32> move, in bit<32> loss_good, in bit<32> loss_bad,
                        in bit<32> p_gb, in bit<32> p_bg) {
    bit<32> loss = loss_good;
    if (bad == 1) {
        loss = loss_bad;
        if (move < p_bg) {
            bad = 0;
        }
    } else if (move < p_gb) {
        bad = 1;
    }
    return loss;
}

control InaVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

#define DECLARE_ACCUMULATOR(i) register<bit<32>>(SLOT_REGISTER_SIZE) slot_acc_##i;
#define WRITE_FIRST(i) slot_acc_##i.write(meta.reg_index, hdr.data.d##i);
#define ADD_VALUE(i) slot_acc_##i.read(value, meta.reg_index); value = LANE_SUM(value, hdr.data.d##i); \
    slot_acc_##i.write(meta.reg_index, value); hdr.data.d##i = value;
#define READ_RESULT(i) slot_acc_##i.read(value, meta.reg_index); hdr.data.d##i = value;
#define ZERO_VALUE(i) hdr.data.d##i = 0;

control InaIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(SLOT_REGISTER_SIZE) slot_bitmap;
    register<bit<16>>(SLOT_REGISTER_SIZE) slot_count;
    register<bit<8>>(SLOT_REGISTER_SIZE) slot_exponent;
    register<bit<32>>(SLOT_REGISTER_SIZE) slot_epoch;
    register<bit<32>>(SLOT_REGISTER_SIZE) slot_round;
    register<bit<1>>(SLOT_REGISTER_SIZE) slot_done;
    register<bit<1>>(SLOT_REGISTER_SIZE) slot_forwarded;  // the partial sum went to the parent
    register<bit<48>>(SLOT_REGISTER_SIZE) slot_started;
    register<bit<1>>(SLOT_REGISTER_SIZE) slot_fallback;  // the use went to the host fallback server
    register<bit<1>>(SLOT_REGISTER_SIZE) slot_nonzero;  // a contribution to the use was not ZERO
#if LANE_BITS != 32
    register<bit<1>>(SLOT_REGISTER_SIZE) slot_overflow;  // a lane of the use's sum saturated
#endif
    FOR_EACH_ELEM(DECLARE_ACCUMULATOR)

    counter(MAX_JOBS, CounterType.packets_and_bytes) job_accepted;
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_completed;
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_retrans_answered;
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_duplicates;
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_out_of_range;
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_wrong_epoch;
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_late;
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_stale;
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_timeouts;
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_partials_sent;   // UPDATEs to the parent
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_parent_results;  // its RESULTs taken
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_parent_refused;  // RESULT/STATUS refused
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_fallback_notices;  // FALLBACK STATUSes
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_fallback_forwarded;  // UPDATEs to the host
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_status_relayed;  // parent's STATUS sent down
    counter(NUM_PORTS, CounterType.packets_and_bytes) port_refused;
    counter(NUM_PORTS, CounterType.packets_and_bytes) port_malformed;
    counter(NUM_PORTS, CounterType.packets_and_bytes) port_drop_sim_in;
    register<bit<1>>(NUM_PORTS) drop_sim_in_bad;  // per ingress port: 1 = burst mode's bad state

    action drop() {
        mark_to_drop(sm);
    }

    action set_switch_addr(bit<48> mac, bit<32> ip) {
        meta.switch_mac = mac;
        meta.switch_ip = ip;
    }
    table switch_config {
        actions = { set_switch_addr; }
        default_action = set_switch_addr(0, 0);
    }

    action set_drop_rate(bit<32> threshold) {
        meta.drop_threshold = threshold;
    }
    action set_burst_loss(bit<32> loss_good, bit<32> loss_bad, bit<32> p_gb, bit<32> p_bg) {
        meta.drop_threshold = loss_good;
        meta.drop_burst = 1;
        meta.drop_loss_bad = loss_bad;
        meta.drop_p_gb = p_gb;
        meta.drop_p_bg = p_bg;
    }
    table drop_sim_in {
        key = { sm.ingress_port: exact; }
        actions = { set_drop_rate; set_burst_loss; NoAction; }
        default_action = NoAction();
        size = NUM_PORTS;
    }

    action admit() {
        meta.admitted = 1;
        meta.weight = 1;  // a worker host's UPDATE weighs 1, whatever its count field says
        meta.max_weight = 1;
    }
    // A child switch: its UPDATE is a partial sum of `count` workers, at most the `workers` below it.
    action admit_switch(bit<16> workers) {
        meta.admitted = 1;
        meta.weight = hdr.agg.count;
        meta.max_weight = workers;
    }
    action refuse() {
        meta.admitted = 0;
    }
    table admission {
        key = {
            sm.ingress_port: exact;
            hdr.ethernet.src_addr: exact;
            hdr.ipv4.src_addr: exact;
            hdr.agg.job_id: exact;
            hdr.agg.rank: exact;
        }
        actions = { admit; admit_switch; refuse; }
        default_action = refuse();
        size = 8192;
    }

    // The job's completion policy at this switch is (quorum, timeout), quorum in workers summed
    // (docs/protocol.md, "Completion policies across levels"). Staleness is how many rounds its
    // workers may be apart: their slot layout bounds it and the switch, which never mixes rounds
    // whatever it is, only carries it for the control plane.
    action set_job(bit<16> base, bit<16> num_slots, bit<8> num_workers, bit<16> mgid, bit<32> epoch,
                   bit<16> quorum, bit<32> timeout, bit<8> staleness) {
        meta.job_known = 1;
        meta.base = base;
        meta.num_slots = num_slots;
        meta.mgid = mgid;
        meta.epoch = epoch;
        meta.quorum = quorum;
        meta.timeout = timeout;
        meta.num_workers = num_workers;
        meta.staleness = staleness;
    }
    action unknown_job() {
        meta.job_known = 0;
    }
    table jobs {
        key = { hdr.agg.job_id: exact; }
        actions = { set_job; unknown_job; }
        default_action = unknown_job();
        size = MAX_JOBS;
    }

    // The job's parent switch, if it has one: where its partial sums go (out of `port`, to `mac`
    // and `ip`, as rank `rank`) and the only source of its RESULTs. The whole job's worker count
    // and quorum are carried for the control plane (set_job's quorum is this switch's share).
    action set_parent(bit<9> port, bit<48> mac, bit<32> ip, bit<8> rank, bit<16> job_workers,
                      bit<16> job_quorum) {
        meta.has_parent = 1;
        meta.parent_port = port;
        meta.parent_mac = mac;
        meta.parent_ip = ip;
        meta.parent_rank = rank;
    }
    action no_parent() {
        meta.has_parent = 0;
    }
    table job_parent {
        key = { hdr.agg.job_id: exact; }
        actions = { set_parent; no_parent; }
        default_action = no_parent();
        size = MAX_JOBS;
    }

    // Best effort: the job's host fallback server (a parameter server on `ip`:`udp_port` behind
    // `port`), which sums the chunks whose slot/set another job holds.
    action set_fallback(bit<9> port, bit<48> mac, bit<32> ip, bit<16> udp_port) {
        meta.has_fallback = 1;
        meta.fallback_port = port;
        meta.fallback_mac = mac;
        meta.fallback_ip = ip;
        meta.fallback_udp_port = udp_port;
    }
    action no_fallback() {
        meta.has_fallback = 0;
    }
    table job_fallback {
        key = { hdr.agg.job_id: exact; }
        actions = { set_fallback; no_fallback; }
        default_action = no_fallback();
        size = MAX_JOBS;
    }

    action forward(bit<9> port) {
        sm.egress_spec = port;
    }
    action flood(bit<16> mgid) {
        sm.mcast_grp = mgid;
    }
    table l2_forward {
        key = { hdr.ethernet.dst_addr: exact; }
        actions = { forward; flood; }
        default_action = flood(FLOOD_GROUP);
        size = 4096;
    }

    action write_first() {
        FOR_EACH_ELEM(WRITE_FIRST)
    }
    action add_values() {
        bit<32> value;
        FOR_EACH_ELEM(ADD_VALUE)
    }
    action read_result() {
        bit<32> value;
        FOR_EACH_ELEM(READ_RESULT)
    }
    // A ZERO packet's value block, all zeros, as if it had come: every path below then treats it as
    // any packet, and egress takes the block out again of what leaves flagged ZERO.
    action expand_zero() {
        meta.zero_in = 1;
        hdr.data.setValid();
        FOR_EACH_ELEM(ZERO_VALUE)
        hdr.ipv4.total_len = hdr.ipv4.total_len + VALUES_LEN;
        hdr.udp.length = hdr.udp.length + VALUES_LEN;
    }

    // Turn the packet around: from the switch back to the sender on the port it came from.
    action reply_to_sender() {
        hdr.ethernet.dst_addr = hdr.ethernet.src_addr;
        hdr.ethernet.src_addr = meta.switch_mac;
        sm.egress_spec = sm.ingress_port;
    }

    // An aggregation answer to the sender alone (a RESULT or a STATUS; count, bitmap and exponent
    // are already the slot's).
    action answer_worker(bit<8> msg_type) {
        hdr.agg.msg_type = msg_type;
        hdr.ipv4.dst_addr = hdr.ipv4.src_addr;
        hdr.ipv4.src_addr = meta.switch_ip;
        hdr.ipv4.ttl = 64;
        hdr.udp.dst_port = hdr.udp.src_port;
        hdr.udp.src_port = INA_UDP_PORT;
        hdr.udp.checksum = 0;
        reply_to_sender();
    }

    // An aggregation answer to every worker of the job: the slot's RESULT, or a STATUS after a
    // retransmission to a slot still collecting, so that a worker whose bit the bitmap lacks
    // resends at once (count, bitmap and exponent already the slot's).
    action multicast_answer(bit<8> msg_type) {
        hdr.agg.msg_type = msg_type;
        hdr.ipv4.ttl = 64;
        hdr.udp.checksum = 0;
        sm.mcast_grp = meta.mgid;
    }

    // The slot's partial sum (values, count, exponent already in the packet) to the parent switch,
    // as a worker of it: an UPDATE from this switch's address with its rank at the parent.
    action send_upstream() {
        hdr.agg.msg_type = MSG_UPDATE;
        hdr.agg.rank = meta.parent_rank;
        hdr.agg.bitmap = 0;
        hdr.ethernet.dst_addr = meta.parent_mac;
        hdr.ethernet.src_addr = meta.switch_mac;
        hdr.ipv4.src_addr = meta.switch_ip;
        hdr.ipv4.dst_addr = meta.parent_ip;
        hdr.ipv4.ttl = 64;
        hdr.udp.src_port = INA_UDP_PORT;
        hdr.udp.dst_port = INA_UDP_PORT;
        hdr.udp.checksum = 0;
        sm.egress_spec = meta.parent_port;
    }

    // A FALLBACK-flagged UPDATE on to the job's fallback server, from the worker's own IP and UDP
    // port (the server answers the worker directly).
    action to_fallback() {
        hdr.ethernet.dst_addr = meta.fallback_mac;
        hdr.ethernet.src_addr = meta.switch_mac;
        hdr.ipv4.dst_addr = meta.fallback_ip;
        hdr.udp.dst_port = meta.fallback_udp_port;
        hdr.udp.checksum = 0;
        sm.egress_spec = meta.fallback_port;
    }

    action answer_arp() {
        reply_to_sender();
        hdr.arp.oper = 2;
        hdr.arp.tha = hdr.arp.sha;
        hdr.arp.tpa = hdr.arp.spa;
        hdr.arp.sha = meta.switch_mac;
        hdr.arp.spa = meta.switch_ip;
    }

    action answer_ping() {
        reply_to_sender();
        hdr.ipv4.dst_addr = hdr.ipv4.src_addr;
        hdr.ipv4.src_addr = meta.switch_ip;
        hdr.ipv4.ttl = 64;
        hdr.icmp.type = 0;
        // Type 8 -> 0 lowers the ones' complement sum by 0x0800: add it back to the checksum.
        bit<17> sum = (bit<17>)hdr.icmp.checksum + 17w0x0800;
        hdr.icmp.checksum = sum[15:0] + (bit<16>)sum[16:16];
    }

    apply {
        switch_config.apply();
        drop_sim_in.apply();
        if (meta.drop_burst == 1) {
            bit<1> bad;
            bit<32> move;
            drop_sim_in_bad.read(bad, (bit<32>)sm.ingress_port);
            random(move, 32w0, 32w0xFFFFFFFE);
            meta.drop_threshold = burst_loss_step(bad, move, meta.drop_threshold, meta.drop_loss_bad,
                                                  meta.drop_p_gb, meta.drop_p_bg);
            drop_sim_in_bad.write((bit<32>)sm.ingress_port, bad);
        }
        if (meta.drop_threshold != 0) {
            bit<32> chance;
            random(chance, 32w0, 32w0xFFFFFFFE);
            if (chance < meta.drop_threshold) {
                port_drop_sim_in.count((bit<32>)sm.ingress_port);
                drop();
                return;
            }
        }
        bool for_me = meta.switch_ip != 0;
        if (for_me && hdr.arp.isValid() && hdr.arp.oper == 1 && hdr.arp.tpa == meta.switch_ip) {
            answer_arp();
            return;
        }
        if (for_me && hdr.icmp.isValid() && hdr.ipv4.dst_addr == meta.switch_ip && hdr.icmp.type == 8) {
            answer_ping();
            return;
        }
        if (for_me && hdr.udp.isValid() && hdr.ipv4.dst_addr == meta.switch_ip
                && (hdr.udp.dst_port & INA_UDP_PORT_MASK) == INA_UDP_PORT) {
            // Ours, so never flooded: a header cut short is as malformed as a missing value block,
            // or a ZERO packet with anything after its header. The width check holds for ZERO
            // packets too: a worker of another width is refused whatever its chunk.
            if (!hdr.agg.isValid() || hdr.agg.msg_type == 0 || hdr.agg.msg_type > MSG_STATUS
                    || (hdr.agg.flags & LANE_MASK) != LANE_FLAGS
                    || ((hdr.agg.flags & FLAG_ZERO) == 0 && !hdr.data.isValid())
                    || ((hdr.agg.flags & FLAG_ZERO) != 0 && hdr.udp.length != ZERO_UDP_LEN)) {
                port_malformed.count((bit<32>)sm.ingress_port);
                drop();
                return;
            }
            if ((hdr.agg.flags & FLAG_ZERO) != 0) {
                expand_zero();
            }
            jobs.apply();
            job_parent.apply();
            job_fallback.apply();
            bit<32> job = (bit<32>)hdr.agg.job_id;
            bool update = hdr.agg.msg_type == MSG_UPDATE;
            if (update) {
                admission.apply();
                if (meta.admitted == 0 || meta.job_known == 0 || hdr.agg.rank >= meta.num_workers
                        || meta.weight == 0 || meta.weight > meta.max_weight) {
                    port_refused.count((bit<32>)sm.ingress_port);
                    drop();
                    return;
                }
            } else {
                // A RESULT or STATUS: only the job's parent sends one to a switch.
                if (meta.job_known == 0) {
                    port_refused.count((bit<32>)sm.ingress_port);
                    drop();
                    return;
                }
                if (meta.has_parent == 0 || sm.ingress_port != meta.parent_port
                        || hdr.ipv4.src_addr != meta.parent_ip || hdr.agg.epoch != meta.epoch) {
                    job_parent_refused.count(job);
                    drop();
                    return;
                }
            }
            if ((bit<16>)hdr.agg.pool_index >= meta.num_slots) {
                job_out_of_range.count(job);
                drop();
                return;
            }
            // Only this run's packets: an earlier run's, or a guess, never touch the slots.
            if (hdr.agg.epoch != meta.epoch) {
                job_wrong_epoch.count(job);
                drop();
                return;
            }
            bit<32> slot = (bit<32>)(meta.base + (bit<16>)hdr.agg.pool_index);
            meta.reg_index = (bit<32>)hdr.agg.pool_set * POOL_SIZE + slot;
            bit<32> worker_bit = 32w1 << hdr.agg.rank;

            bit<32> bitmap;
            bit<16> count;
            bit<8> exponent;
            bit<32> epoch;
            bit<32> round;
            bit<1> done;
            bit<1> forwarded;
            bit<48> started;
            slot_bitmap.read(bitmap, meta.reg_index);
            slot_count.read(count, meta.reg_index);
            slot_exponent.read(exponent, meta.reg_index);
            slot_epoch.read(epoch, meta.reg_index);
            slot_round.read(round, meta.reg_index);
            slot_done.read(done, meta.reg_index);
            slot_forwarded.read(forwarded, meta.reg_index);
            slot_started.read(started, meta.reg_index);
            if (update && meta.has_fallback == 1) {
                // Best effort (docs/protocol.md, "Best effort and the host fallback"): a use another
                // run holds is never overwritten, and a use that went to the host stays there.
                // Another run holds its use until it is done and, since a worker whose RESULT copy
                // was lost asks for it again, until its next use (the other set, one round on) is
                // done too: that use's senders all had this one's RESULT.
                bit<1> fell;
                bit<32> next_epoch;
                bit<32> next_round;
                bit<1> next_done;
                bit<32> next_index = (bit<32>)(hdr.agg.pool_set ^ 1) * POOL_SIZE + slot;
                slot_fallback.read(fell, meta.reg_index);
                slot_epoch.read(next_epoch, next_index);
                slot_round.read(next_round, next_index);
                slot_done.read(next_done, next_index);
                bool mine = epoch == meta.epoch;
                bool superseded = next_epoch == epoch && next_round == round + 1 && next_done == 1;
                bool held = !mine && ((done == 0 && count != 0)
                                      || (done == 1 && fell == 0 && !superseded));
                bool this_use = mine && round == hdr.agg.round;
                bool flagged = (hdr.agg.flags & FLAG_FALLBACK) != 0;
                // A flagged UPDATE into a use done here (not fallen back) is answered below as any
                // UPDATE into a done use; a flagged one otherwise goes on to the server, the
                // slot/set recording the use as fallen back (a use of that round started here is
                // given up: its senders go to the host too) unless another run holds it or this
                // job is past that round. (Written as values, not branches: fewer pipeline nodes.)
                bool forward = flagged && !(this_use && done == 1 && fell == 0);
                bit<32> behind = round - hdr.agg.round;
                bool record = forward && !held && !(mine && behind != 0 && behind < 32w0x80000000);
                hdr.agg.flags = hdr.agg.flags & ~FLAG_FALLBACK;
                if (forward) {
                    slot_epoch.write(meta.reg_index, record ? meta.epoch : epoch);
                    slot_round.write(meta.reg_index, record ? hdr.agg.round : round);
                    slot_done.write(meta.reg_index, record ? 1w1 : done);
                    slot_fallback.write(meta.reg_index, record ? 1w1 : fell);
                    hdr.agg.flags = hdr.agg.flags | FLAG_FALLBACK;
                    job_fallback_forwarded.count(job);
                    to_fallback();
                    return;
                } else if (held || (this_use && fell == 1)) {
                    // Held by another run, or this use went to the host: every worker of the job
                    // is told to send its chunk there.
                    job_fallback_notices.count(job);
                    hdr.agg.flags = LANE_FLAGS | FLAG_FALLBACK;
                    hdr.agg.count = 0;
                    hdr.agg.bitmap = 0;
                    multicast_answer(MSG_STATUS);
                    return;
                }
            }
            bit<1> overflow = 0;
#if LANE_BITS != 32
            slot_overflow.read(overflow, meta.reg_index);
#endif
            bit<1> nonzero;
            slot_nonzero.read(nonzero, meta.reg_index);
            bool empty = epoch != meta.epoch;  // left by another run, or never used
            // Done with count 0 marks a use the parent replaced without this switch's sum (a
            // parent's STATUS, below): no sum to answer with, so that round starts a new use.
            if (!empty && done == 1 && count == 0 && round == hdr.agg.round) {
                empty = true;
            }
            bool stale = false;
            if (!empty && round != hdr.agg.round) {
                // Rounds are never mixed in one sum. A later round may start only on a completed
                // slot/set; an earlier one, or a later one over an incomplete use, is refused.
                bit<32> ahead = hdr.agg.round - round;
                stale = done == 0 || ahead >= 32w0x80000000;
                empty = !stale;
            }
            if (empty) {
                bitmap = 0;
                count = 0;
                exponent = 0;
                done = 0;
                forwarded = 0;
                overflow = 0;
                nonzero = 0;
            }
            bool retransmission = (bitmap & worker_bit) != 0;
            bool contribution = update && !stale && !retransmission && done == 0 && forwarded == 0;
            // The parent's RESULT for this use: taken once, into a use not done (waiting for it,
            // or still collecting when the parent completed without this switch) or a new one.
            bool status = hdr.agg.msg_type == MSG_STATUS;
            bool take_result = hdr.agg.msg_type == MSG_RESULT && !stale && done == 0;
            // The parent's STATUS of the use this switch forwarded, without its bit: the partial
            // sum was lost on the way up, so it goes up again at once.
            bool resend_partial = status && !empty && forwarded == 1 && done == 0
                && round == hdr.agg.round && (hdr.agg.bitmap & (32w1 << meta.parent_rank)) == 0;
            if (take_result || (contribution && count == 0)) {
                write_first();  // one call site: each expands to ELEMS register writes
            }
            // A completed use's sums go out from the registers (one call site, as above): a
            // done or forwarded use's, or one a retransmission completes.
            bit<48> age = sm.ingress_global_timestamp - started;  // a retransmission's: as it stands
            if (resend_partial || (update && !stale && (done == 1 || forwarded == 1 || (retransmission
                    && (count >= meta.quorum || (meta.timeout != 0 && age >= (bit<48>)meta.timeout)))))) {
                read_result();
            }
            if (status) {
                // The parent's STATUS: relayed to the children whose use waits on the parent, so
                // its news reaches the workers (docs/protocol.md, "Hierarchical aggregation").
                if (resend_partial) {
                    job_partials_sent.count(job);
                    hdr.agg.count = count;
                    hdr.agg.exponent = exponent;
                    // a saturated lane goes up too, and a sum of ZERO contributions as ZERO
                    hdr.agg.flags = LANE_FLAGS | (bit<8>)overflow | (nonzero == 0 ? FLAG_ZERO : 0);
                    send_upstream();
                    return;
                }
                if (empty || done == 1) {
                    drop();  // nothing here waits on that use: no news for the children
                    return;
                }
                if (round != hdr.agg.round) {
                    if (hdr.agg.round - round >= 32w0x80000000) {
                        job_parent_refused.count(job);  // an earlier round than this use's
                        drop();
                        return;
                    }
                    // The parent's set holds a later round: this use was completed without this
                    // switch and replaced, its RESULT lost. Marked gone (done, count 0) and the
                    // STATUS goes down as it came, so the workers skip the use as at one level.
                    count = 0;
                    bitmap = 0;
                    exponent = 0;
                    slot_done.write(meta.reg_index, 1);
                    slot_forwarded.write(meta.reg_index, 0);
                    slot_count.write(meta.reg_index, 0);
                    slot_bitmap.write(meta.reg_index, 0);
                    slot_exponent.write(meta.reg_index, 0);
                    slot_round.write(meta.reg_index, hdr.agg.round);
                }
                // Same round: the parent waits for others; this switch's children learn whom this
                // switch holds, so the counted stop resending and a missing one resends now.
                job_status_relayed.count(job);
                hdr.agg.count = count;
                hdr.agg.bitmap = bitmap;
                hdr.agg.exponent = exponent;
                multicast_answer(MSG_STATUS);
                return;
            }
            if (!update) {
                // Stored as the slot's sum and multicast to the children. The bitmap names this
                // switch's children in the sum: none if the parent's lacks this switch.
                if (!take_result) {
                    job_parent_refused.count(job);
                    drop();
                    return;
                }
                job_parent_results.count(job);
                if ((hdr.agg.bitmap & (32w1 << meta.parent_rank)) == 0) {
                    bitmap = 0;
                }
                hdr.agg.bitmap = bitmap;
                slot_bitmap.write(meta.reg_index, bitmap);
                slot_count.write(meta.reg_index, hdr.agg.count);
                slot_exponent.write(meta.reg_index, hdr.agg.exponent);
                slot_epoch.write(meta.reg_index, meta.epoch);
                slot_round.write(meta.reg_index, hdr.agg.round);
                slot_done.write(meta.reg_index, 1);
                slot_nonzero.write(meta.reg_index, ~meta.zero_in);  // its flags go down as they came
#if LANE_BITS != 32
                slot_overflow.write(meta.reg_index, hdr.agg.flags[0:0]);  // FLAG_OVERFLOW
#endif
                multicast_answer(MSG_RESULT);
                return;
            }
            if (contribution) {
                job_accepted.count(job);
                if (count == 0) {
                    count = meta.weight;  // its values written above
                    exponent = hdr.agg.exponent;
                    started = sm.ingress_global_timestamp;
                    slot_epoch.write(meta.reg_index, meta.epoch);
                    slot_round.write(meta.reg_index, hdr.agg.round);
                    slot_started.write(meta.reg_index, started);
                    slot_done.write(meta.reg_index, 0);
                    slot_forwarded.write(meta.reg_index, 0);
                    slot_fallback.write(meta.reg_index, 0);
                } else {
                    add_values();  // leaves the new sums in the packet
                    count = count + meta.weight;
                    if (hdr.agg.exponent > exponent) {
                        exponent = hdr.agg.exponent;
                    }
                }
                nonzero = nonzero | ~meta.zero_in;  // a ZERO contribution added nothing
                slot_nonzero.write(meta.reg_index, nonzero);
                bitmap = bitmap | worker_bit;
                slot_bitmap.write(meta.reg_index, bitmap);
                slot_count.write(meta.reg_index, count);
                slot_exponent.write(meta.reg_index, exponent);
#if LANE_BITS != 32
                // Saturated here, or in a child switch's partial sum (its FLAG_OVERFLOW).
                if (meta.lane_overflow != 0 || (hdr.agg.flags & FLAG_OVERFLOW) != 0) {
                    overflow = 1;
                }
                slot_overflow.write(meta.reg_index, overflow);
#endif
            }
            age = sm.ingress_global_timestamp - started;
            bool expired = meta.timeout != 0 && age >= (bit<48>)meta.timeout;
            hdr.agg.count = count;
            hdr.agg.bitmap = bitmap;
            hdr.agg.exponent = exponent;
            // Every answer of a use whose contributions were all ZERO is header-only (values unspecified
            // in a STATUS, zeros in a RESULT or a partial sum): egress takes the block out.
            hdr.agg.flags = LANE_FLAGS | (bit<8>)overflow | (nonzero == 0 ? FLAG_ZERO : 0);

            if (stale) {
                // Told the slot/set's round: its sender learns that use is gone, or not done yet.
                job_stale.count(job);
                hdr.agg.round = round;
                answer_worker(MSG_STATUS);
            } else if (done == 1) {
                // Completed: a retransmission, or a late contribution (never added), gets the RESULT.
                if (retransmission) {
                    job_retrans_answered.count(job);
                } else {
                    job_late.count(job);
                }
                answer_worker(MSG_RESULT);
            } else if (forwarded == 1) {
                // The partial sum went up and the parent's RESULT has not come back: a child's
                // retransmission (or late contribution, never added) sends the partial sum again,
                // so a lost partial sum or a lost RESULT between switches is recovered.
                if (retransmission) {
                    job_duplicates.count(job);
                } else {
                    job_late.count(job);
                }
                job_partials_sent.count(job);
                send_upstream();
            } else if (count >= meta.quorum || expired) {
                // Complete: by quorum, or with what it has once the deadline passed (checked on
                // this slot's packets; a retransmission after a lowered quorum completes it too).
                if (count < meta.quorum) {
                    job_timeouts.count(job);
                }
                job_completed.count(job);
                if (meta.has_parent == 1) {
                    // Not the root: the partial sum goes up; the parent's RESULT completes the use.
                    slot_forwarded.write(meta.reg_index, 1);
                    job_partials_sent.count(job);
                    send_upstream();
                } else {
                    slot_done.write(meta.reg_index, 1);
                    multicast_answer(MSG_RESULT);
                }
            } else if (retransmission) {
                // Counted already and still waiting for others: tell every worker whom the slot
                // holds, so the counted ones stop resending and a missing one resends now.
                job_duplicates.count(job);
                multicast_answer(MSG_STATUS);
            } else {
                drop();  // the contribution is stored
            }
        } else {
            l2_forward.apply();
        }
    }
}

control InaEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_results_sent;
    counter(NUM_PORTS, CounterType.packets_and_bytes) port_drop_sim_out;
    register<bit<1>>(NUM_PORTS) drop_sim_out_bad;  // per egress port: 1 = burst mode's bad state

    action set_drop_rate(bit<32> threshold) {
        meta.drop_threshold = threshold;
    }
    action set_burst_loss(bit<32> loss_good, bit<32> loss_bad, bit<32> p_gb, bit<32> p_bg) {
        meta.drop_threshold = loss_good;
        meta.drop_burst = 1;
        meta.drop_loss_bad = loss_bad;
        meta.drop_p_gb = p_gb;
        meta.drop_p_bg = p_bg;
    }
    table drop_sim_out {
        key = { sm.egress_port: exact; }
        actions = { set_drop_rate; set_burst_loss; NoAction; }
        default_action = NoAction();
        size = NUM_PORTS;
    }

    action to_worker(bit<48> mac, bit<32> ip, bit<16> udp_port) {
        hdr.ethernet.dst_addr = mac;
        hdr.ethernet.src_addr = meta.switch_mac;
        hdr.ipv4.src_addr = meta.switch_ip;
        hdr.ipv4.dst_addr = ip;
        hdr.udp.src_port = INA_UDP_PORT;
        hdr.udp.dst_port = udp_port;
    }
    table result_rewrite {
        key = { sm.egress_rid: exact; }
        actions = { to_worker; NoAction; }
        default_action = NoAction();
        size = 8192;
    }

    apply {
        // A flooded copy never goes back out of the port it came in on.
        if (sm.mcast_grp != 0 && sm.egress_rid == 0 && sm.egress_port == sm.ingress_port) {
            mark_to_drop(sm);
            return;
        }
        // Ingress's drop-simulator metadata comes along: egress starts from none.
        meta.drop_threshold = 0;
        meta.drop_burst = 0;
        drop_sim_out.apply();
        if (meta.drop_burst == 1) {
            bit<1> bad;
            bit<32> move;
            drop_sim_out_bad.read(bad, (bit<32>)sm.egress_port);
            random(move, 32w0, 32w0xFFFFFFFE);
            meta.drop_threshold = burst_loss_step(bad, move, meta.drop_threshold, meta.drop_loss_bad,
                                                  meta.drop_p_gb, meta.drop_p_bg);
            drop_sim_out_bad.write((bit<32>)sm.egress_port, bad);
        }
        if (meta.drop_threshold != 0) {
            bit<32> chance;
            random(chance, 32w0, 32w0xFFFFFFFE);
            if (chance < meta.drop_threshold) {
                port_drop_sim_out.count((bit<32>)sm.egress_port);
                mark_to_drop(sm);
                return;
            }
        }
        // A packet leaving flagged ZERO leaves without its value block (ingress's expand_zero filled
        // it in, or the answer is a sum of ZERO contributions); one forwarded as ordinary traffic
        // never had it parsed.
        if (hdr.agg.isValid() && hdr.data.isValid() && (hdr.agg.flags & FLAG_ZERO) != 0) {
            hdr.data.setInvalid();
            hdr.ipv4.total_len = hdr.ipv4.total_len - VALUES_LEN;
            hdr.udp.length = hdr.udp.length - VALUES_LEN;
        }
        if (hdr.agg.isValid() && hdr.agg.msg_type != MSG_UPDATE && sm.egress_rid != 0) {
            if (result_rewrite.apply().hit && hdr.agg.msg_type == MSG_RESULT) {
                job_results_sent.count((bit<32>)hdr.agg.job_id);
            }
        }
    }
}

control InaComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(
            hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum,
            HashAlgorithm.csum16);
    }
}

control InaDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.arp);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.icmp);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.agg);
        pkt.emit(hdr.data);
    }
}

V1Switch(InaParser(), InaVerifyChecksum(), InaIngress(), InaEgress(), InaComputeChecksum(),
         InaDeparser()) main;
