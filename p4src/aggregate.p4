/* ina: SwitchML-style in-network aggregation for v1model (docs/protocol.md is the specification).
 *
 * Workers send UPDATE packets (UDP to the switch's IP, port 0xBEE0) carrying ELEMS int32 values
 * for one slot of their job's range, in one of two sets. The switch sums the contributions in
 * registers; the last contribution completes the slot and the RESULT is multicast to every worker
 * of the job. Ordinary traffic is forwarded by destination MAC; the switch answers ARP and ping
 * for its own IP and can drop packets at random per port to emulate loss.
 *
 * Compile-time constants: -DELEMS=8|16|32|64 (default 64), -DPOOL_SIZE=N (default 8192),
 * -DMAX_JOBS=N (default 256).
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
const bit<16> FLOOD_GROUP = 1;

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

// The aggregation header (12 bytes), see docs/protocol.md.
header agg_t {
    bit<8>  msg_type;
    bit<8>  rank;
    bit<16> job_id;
    bit<1>  pool_set;
    bit<15> pool_index;
    bit<8>  exponent;
    bit<8>  flags;
    bit<32> epoch;
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
    bit<1>  job_known;
    bit<16> base;
    bit<16> num_slots;
    bit<8>  num_workers;
    bit<16> mgid;
    bit<32> epoch;
    bit<32> reg_index;
    bit<32> other_index;
    bit<32> drop_threshold;   // the drop simulator's loss threshold for this packet
    bit<1>  drop_burst;       // set_burst_loss hit: the threshold comes from the port's state
    bit<32> drop_loss_bad;
    bit<32> drop_p_gb;
    bit<32> drop_p_bg;
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
#define ADD_VALUE(i) slot_acc_##i.read(value, meta.reg_index); value = value + hdr.data.d##i; \
    slot_acc_##i.write(meta.reg_index, value); hdr.data.d##i = value;
#define READ_RESULT(i) slot_acc_##i.read(value, meta.reg_index); hdr.data.d##i = value;

control InaIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(SLOT_REGISTER_SIZE) slot_bitmap;
    register<bit<8>>(SLOT_REGISTER_SIZE) slot_count;
    register<bit<8>>(SLOT_REGISTER_SIZE) slot_exponent;
    register<bit<32>>(SLOT_REGISTER_SIZE) slot_epoch;
    FOR_EACH_ELEM(DECLARE_ACCUMULATOR)

    counter(MAX_JOBS, CounterType.packets_and_bytes) job_accepted;
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_completed;
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_retrans_answered;
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_duplicates;
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_out_of_range;
    counter(MAX_JOBS, CounterType.packets_and_bytes) job_wrong_epoch;
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
        actions = { admit; refuse; }
        default_action = refuse();
        size = 8192;
    }

    action set_job(bit<16> base, bit<16> num_slots, bit<8> num_workers, bit<16> mgid, bit<32> epoch) {
        meta.job_known = 1;
        meta.base = base;
        meta.num_slots = num_slots;
        meta.num_workers = num_workers;
        meta.mgid = mgid;
        meta.epoch = epoch;
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

    // Turn the packet around: from the switch back to the sender on the port it came from.
    action reply_to_sender() {
        hdr.ethernet.dst_addr = hdr.ethernet.src_addr;
        hdr.ethernet.src_addr = meta.switch_mac;
        sm.egress_spec = sm.ingress_port;
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
            // Ours, so never flooded: a header cut short is as malformed as a missing value block.
            if (!hdr.agg.isValid() || !hdr.data.isValid() || hdr.agg.msg_type != MSG_UPDATE) {
                port_malformed.count((bit<32>)sm.ingress_port);
                drop();
                return;
            }
            admission.apply();
            jobs.apply();
            if (meta.admitted == 0 || meta.job_known == 0) {
                port_refused.count((bit<32>)sm.ingress_port);
                drop();
                return;
            }
            bit<32> job = (bit<32>)hdr.agg.job_id;
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
            meta.other_index = (bit<32>)(hdr.agg.pool_set ^ 1) * POOL_SIZE + slot;
            bit<32> worker_bit = 32w1 << hdr.agg.rank;

            // Using this set releases the worker's claim on the other set of the same slot.
            bit<32> other_bitmap;
            slot_bitmap.read(other_bitmap, meta.other_index);
            slot_bitmap.write(meta.other_index, other_bitmap & ~worker_bit);

            bit<32> bitmap;
            bit<8> count;
            bit<8> exponent;
            bit<32> epoch;
            slot_bitmap.read(bitmap, meta.reg_index);
            slot_count.read(count, meta.reg_index);
            slot_exponent.read(exponent, meta.reg_index);
            slot_epoch.read(epoch, meta.reg_index);
            if (epoch != meta.epoch) {
                // Left by another run (or never used): the slot/set is empty for this one.
                bitmap = 0;
                count = 0;
                exponent = 0;
            }

            if ((bitmap & worker_bit) != 0) {
                // A retransmission: the worker's bit is already set in this slot/set.
                if (count == meta.num_workers) {
                    read_result();
                    hdr.agg.msg_type = MSG_RESULT;
                    hdr.agg.exponent = exponent;
                    hdr.ipv4.dst_addr = hdr.ipv4.src_addr;
                    hdr.ipv4.src_addr = meta.switch_ip;
                    hdr.ipv4.ttl = 64;
                    hdr.udp.dst_port = hdr.udp.src_port;
                    hdr.udp.src_port = INA_UDP_PORT;
                    hdr.udp.checksum = 0;
                    reply_to_sender();
                    job_retrans_answered.count(job);
                } else {
                    job_duplicates.count(job);
                    drop();
                }
                return;
            }

            job_accepted.count(job);
            if (bitmap == 0) {
                write_first();
                count = 1;
                exponent = hdr.agg.exponent;
                slot_epoch.write(meta.reg_index, meta.epoch);
            } else {
                add_values();
                count = count + 1;
                if (hdr.agg.exponent > exponent) {
                    exponent = hdr.agg.exponent;
                }
            }
            slot_bitmap.write(meta.reg_index, bitmap | worker_bit);
            slot_count.write(meta.reg_index, count);
            slot_exponent.write(meta.reg_index, exponent);

            if (count == meta.num_workers) {
                job_completed.count(job);
                hdr.agg.msg_type = MSG_RESULT;
                hdr.agg.exponent = exponent;
                hdr.ipv4.ttl = 64;
                hdr.udp.checksum = 0;
                sm.mcast_grp = meta.mgid;
            } else {
                drop();
            }
            return;
        }
        l2_forward.apply();
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
        if (hdr.agg.isValid() && hdr.agg.msg_type == MSG_RESULT && sm.egress_rid != 0) {
            if (result_rewrite.apply().hit) {
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
