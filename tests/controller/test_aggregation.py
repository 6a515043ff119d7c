"""The controller against the built-in switch's real P4Runtime server: jobs, packets, state, errors."""

import functools
import json
import struct
import threading

import pytest

from ina.compiler import compile_file
from ina.controller.aggregation import (
    Aggregation,
    BurstLoss,
    Job,
    Parent,
    Worker,
    drop_probability,
    drop_threshold,
)
from ina.controller.cli import main as ctl_main
from ina.controller.client import ControllerError, NotPrimaryError, SwitchConnection, TableEntry
from ina.hosts.packets import datagram
from ina.p4rt import entities as p4e
from ina.p4rt.proto import p4runtime_pb2
from ina.p4src import AGGREGATE_P4
from ina.p4src.protocol import FLOOD_GROUP, MSG_UPDATE, UDP_PORT, Policy
from ina.switch.engine import Switch
from ina.switch.p4runtime.server import P4RuntimeService, serve

SWITCH_MAC, SWITCH_IP = "02:aa:00:00:00:01", "10.0.0.254"
W0 = Worker(0, 1, "02:00:00:00:00:01", "10.0.0.1")
W1 = Worker(1, 2, "02:00:00:00:00:02", "10.0.0.2")


@functools.cache
def program():
    return compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"})


@pytest.fixture
def switch():
    sw = Switch()
    srv = serve(P4RuntimeService(sw, threading.Lock()), "127.0.0.1:0")
    address = f"127.0.0.1:{srv.bound_port}"
    conn = SwitchConnection(address, election_id=10)
    conn.set_pipeline(program().bmv2, program().p4info)
    yield sw, conn, address
    conn.close()
    srv.stop(None)


def update_packet(w: Worker, job: int, index: int, values: list[int], epoch: int) -> bytes:
    body = datagram(MSG_UPDATE, epoch, values, rank=w.rank, job=job, index=index)
    udp = struct.pack("!HHHH", UDP_PORT, UDP_PORT, 8 + len(body), 0) + body
    ip = struct.pack(
        "!BBHHHBBH4s4s",
        0x45,
        0,
        20 + len(udp),
        0,
        0,
        64,
        17,
        0,
        bytes(map(int, w.ip.split("."))),
        bytes(map(int, SWITCH_IP.split("."))),
    )
    return bytes.fromhex(SWITCH_MAC.replace(":", "") + w.mac.replace(":", "") + "0800") + ip + udp


def test_job_setup_then_packets_aggregate(switch):
    sw, conn, _ = switch
    agg = Aggregation(conn)
    agg.set_switch_address(SWITCH_MAC, SWITCH_IP)
    job = agg.add_job(3, [W0, W1], num_slots=4, epoch=0x77)
    assert (job.base, job.num_slots, job.mgid, job.epoch) == (0, 4, 0x103, 0x77)
    assert sw.process(W0.port, update_packet(W0, 3, 2, [1] * 8, 0x77)) == []
    out = sw.process(W1.port, update_packet(W1, 3, 2, [10] * 8, 0x77))
    assert [port for port, _ in out] == [1, 2]
    assert struct.unpack("!8i", out[0][1][-32:]) == (11,) * 8
    assert out[1][1][:6] == bytes.fromhex("020000000002")  # rewritten per worker
    state = agg.slot(3, 2, 0)
    assert (state.bitmap, state.count, state.values, state.epoch, state.current) == (
        0b11,
        2,
        [11] * 8,
        0x77,
        True,
    )
    stats = agg.stats()
    assert stats["jobs"][3] == {"accepted": 2, "completed": 1, "results_sent": 2}
    assert agg.jobs() == [Job(3, 0, 4, 0x77, [W0, W1])]


def test_second_job_gets_the_next_range_and_remove_frees_it(switch):
    _sw, conn, _ = switch
    agg = Aggregation(conn)
    agg.add_job(1, [W0, W1], num_slots=10)
    second = agg.add_job(2, [W0], num_slots=6)
    assert second.base == 10
    with pytest.raises(ControllerError, match="slot pool is full: 1 slots wanted, 0 free of 16"):
        agg.add_job(3, [W0], num_slots=1)
    agg.remove_job(1)
    assert agg.add_job(3, [W0], num_slots=10).base == 0
    assert [j.job_id for j in agg.jobs()] == [2, 3]


def test_errors_name_the_problem(switch):
    _sw, conn, _ = switch
    agg = Aggregation(conn)
    agg.add_job(1, [W0], num_slots=2)
    with pytest.raises(ControllerError, match="job 1 already exists"):
        agg.add_job(1, [W0], num_slots=2)
    with pytest.raises(ControllerError, match="no job 7 on this switch"):
        agg.remove_job(7)
    many = [Worker(r, 1, f"02:00:00:00:01:{r:02x}", f"10.0.1.{r}") for r in range(33)]
    with pytest.raises(ControllerError, match=r"1\.\.32 workers; got 33"):
        agg.add_job(2, many, num_slots=1)
    with pytest.raises(ControllerError, match=r"ranks must be 0..1, each once; got \[0, 0\]"):
        agg.add_job(2, [W0, W0], num_slots=1)
    assert [j.job_id for j in agg.jobs()] == [1]  # nothing half installed


def test_a_second_controller_is_backup_and_cannot_write(switch):
    _sw, _conn, address = switch
    with pytest.raises(NotPrimaryError, match="another controller is primary"):
        SwitchConnection(address, election_id=5)


def test_ctl_cli_json_and_errors(switch, capsys):
    _sw, conn, address = switch
    Aggregation(conn).add_job(4, [W0, W1], num_slots=3)
    conn.close()
    assert ctl_main(["--grpc-addr", address, "--election-id", "20", "--json", "show-jobs"]) == 0
    [job] = json.loads(capsys.readouterr().out)
    assert (job["job_id"], job["num_slots"], len(job["workers"])) == (4, 3, 2)
    assert ctl_main(["--grpc-addr", address, "--election-id", "21", "remove-job", "9"]) == 1
    assert "no job 9" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        ctl_main(["--grpc-addr", address, "frobnicate"])
    assert exit_.value.code == 2


def test_ctl_add_show_and_reset_jobs_with_their_epochs(switch, capsys):
    _sw, conn, address = switch
    conn.close()
    ctl = ["--grpc-addr", address, "--election-id", "20"]
    workers = [
        "--worker",
        "0:1:02:00:00:00:00:01:10.0.0.1",
        "--worker",
        "1:2:02:00:00:00:00:02:10.0.0.2",
    ]
    assert ctl_main([*ctl, "add-job", "4", *workers, "--slots", "3", "--epoch", "0x5eed"]) == 0
    out = capsys.readouterr().out
    assert "0x00005eed" in out and "start its workers with --epoch 0x00005eed" in out
    assert ctl_main([*ctl, "reset-job", "4", "--epoch", "77"]) == 0
    assert "--epoch 0x0000004d" in capsys.readouterr().out
    assert ctl_main([*ctl, "--json", "show-jobs"]) == 0
    [job] = json.loads(capsys.readouterr().out)
    assert (job["job_id"], job["epoch"]) == (4, 77)
    assert ctl_main([*ctl, "show-slot", "4", "1"]) == 0
    assert "epoch 0x00000000 (another run's: empty for this job)" in capsys.readouterr().out
    for bad in (
        ["add-job", "5", *workers, "--epoch", "0"],
        ["reset-job", "4", "--epoch", "4294967296"],
    ):
        with pytest.raises(SystemExit) as exit_:
            ctl_main([*ctl, *bad])
        assert exit_.value.code == 2
        assert "argument --epoch" in capsys.readouterr().err


def test_table_entry_round_trip_registers_and_counters(switch):
    sw, conn, _ = switch
    conn.insert(
        "InaIngress.l2_forward",
        {"hdr.ethernet.dst_addr": "02:00:00:00:00:09"},
        "InaIngress.forward",
        {"port": 7},
    )
    [entry] = conn.read_table("InaIngress.l2_forward")
    assert (entry.match, entry.action, entry.params) == (
        {"hdr.ethernet.dst_addr": 0x020000000009},
        "InaIngress.forward",
        {"port": 7},
    )
    conn.write_register("InaIngress.slot_count", 3, 2)
    assert conn.read_register("InaIngress.slot_count", 3) == [2]
    assert sw.registers["InaIngress.slot_count"].read(3) == 2
    sw.counters["InaIngress.port_refused"].write(4, 5, 320)
    assert conn.read_counter("InaIngress.port_refused", 4) == [(5, 320)]
    with pytest.raises(ControllerError, match="ALREADY_EXISTS"):
        conn.insert(
            "InaIngress.l2_forward",
            {"hdr.ethernet.dst_addr": "02:00:00:00:00:09"},
            "InaIngress.forward",
            {"port": 8},
        )
    with pytest.raises(ControllerError, match="has no key 'nope'"):
        conn.insert("InaIngress.l2_forward", {"nope": 1}, "InaIngress.forward", {"port": 8})


def registers(sw: Switch) -> dict[str, list[int]]:
    return {name: reg.read_range(0, reg.size) for name, reg in sw.registers.items()}


def switch_state(sw: Switch) -> dict:
    """Every table entry, default and multicast group: what a job may leave behind."""
    tables = {
        name: sorted((str(e.match), e.action, tuple(e.args)) for e in t.entries())
        for name, t in sw.tables.items()
    }
    return {"tables": tables, "groups": sw.multicast.groups()}


def test_jobs_never_write_a_register_and_remove_leaves_nothing(switch):
    # simple_switch_grpc has no P4Runtime register writes: add, reset and remove must not need them.
    sw, conn, _ = switch
    agg = Aggregation(conn)
    agg.set_switch_address(SWITCH_MAC, SWITCH_IP)
    agg.install_forwarding([(W0.mac, 1), (W1.mac, 2)])
    before = switch_state(sw)
    job = agg.add_job(3, [W0, W1], num_slots=4)
    sw.process(W0.port, update_packet(W0, 3, 1, [5] * 8, job.epoch))  # a slot left half full
    dirty = registers(sw)
    assert dirty["InaIngress.slot_bitmap"][1] == 1
    agg.reset_job(3)
    agg.remove_job(3)
    agg.add_job(3, [W0, W1], num_slots=4)
    assert registers(sw) == dirty
    agg.remove_job(3)
    assert switch_state(sw) == before and registers(sw) == dirty
    assert list(sw.multicast.groups()) == [FLOOD_GROUP]


def test_a_new_run_on_dirty_slots_sums_only_its_own_packets(switch):
    sw, conn, _ = switch
    agg = Aggregation(conn)
    agg.set_switch_address(SWITCH_MAC, SWITCH_IP)
    agg.add_job(3, [W0, W1], num_slots=4, epoch=0x11)
    assert sw.process(W0.port, update_packet(W0, 3, 2, [1000] * 8, 0x11)) == []  # left half full
    agg.add_job(4, [W0], num_slots=2, epoch=0x33)
    assert sw.process(W0.port, update_packet(W0, 4, 0, [1] * 8, 0x33))
    assert agg.stats()["jobs"] == {
        3: {"accepted": 1},
        4: {"accepted": 1, "completed": 1, "results_sent": 1},
    }
    agg.remove_job(3)  # its counters go with it; job 4's stay
    assert agg.stats()["jobs"] == {4: {"accepted": 1, "completed": 1, "results_sent": 1}}
    agg.add_job(3, [W0, W1], num_slots=4, epoch=0x22)
    assert agg.slot(3, 2, 0).current is False  # the old run's cell: empty for this one
    assert sw.process(W0.port, update_packet(W0, 3, 2, [1] * 8, 0x11)) == []  # old run: refused
    assert sw.process(W0.port, update_packet(W0, 3, 2, [1] * 8, 0x22)) == []
    out = sw.process(W1.port, update_packet(W1, 3, 2, [10] * 8, 0x22))
    assert [struct.unpack("!8i", data[-32:]) for _port, data in out] == [(11,) * 8] * 2
    assert agg.stats()["jobs"][3] == {
        "accepted": 2,
        "completed": 1,
        "results_sent": 2,
        "wrong_epoch": 1,
    }


def test_reset_starts_a_new_run_of_the_same_job(switch):
    sw, conn, _ = switch
    agg = Aggregation(conn)
    agg.set_switch_address(SWITCH_MAC, SWITCH_IP)
    agg.add_job(3, [W0, W1], num_slots=4, epoch=0x11)
    sw.process(W0.port, update_packet(W0, 3, 1, [5] * 8, 0x11))
    job = agg.reset_job(3, epoch=0x12)
    assert job.epoch == 0x12 and agg.job(3).epoch == 0x12
    state = agg.slot(3, 1, 0)
    assert (state.bitmap, state.epoch, state.current) == (1, 0x11, False)
    assert sw.process(W1.port, update_packet(W1, 3, 1, [5] * 8, 0x11)) == []
    assert agg.stats()["jobs"][3]["wrong_epoch"] == 1
    fresh = agg.reset_job(3)
    assert fresh.epoch not in (0, 0x12)  # random
    with pytest.raises(ControllerError, match=r"epoch 0 is out of range 1\.\.4294967295"):
        agg.reset_job(3, epoch=0)


W2 = Worker(2, 3, "02:00:00:00:00:03", "10.0.0.3")


def test_a_job_policy_is_installed_read_back_and_changed_live(switch):
    sw, conn, _ = switch
    agg = Aggregation(conn)
    agg.set_switch_address(SWITCH_MAC, SWITCH_IP)
    policy = Policy(quorum=2, timeout_us=5000, staleness=1)
    agg.add_job(3, [W0, W1, W2], num_slots=4, epoch=0x77, policy=policy)
    [entry] = conn.read_table("InaIngress.jobs")
    assert (
        entry.params["num_workers"],
        entry.params["quorum"],
        entry.params["timeout"],
        entry.params["staleness"],
    ) == (3, 2, 5000, 1)
    assert agg.job(3).policy == policy
    assert sw.process(W0.port, update_packet(W0, 3, 0, [1] * 8, 0x77)) == []
    assert (
        len(sw.process(W2.port, update_packet(W2, 3, 0, [2] * 8, 0x77))) == 3
    )  # 2 of 3 complete it
    agg.set_policy(3, Policy())
    [entry] = conn.read_table("InaIngress.jobs")
    assert (entry.params["quorum"], entry.params["timeout"], entry.params["staleness"]) == (3, 0, 0)
    assert agg.job(3).policy == Policy() and str(agg.job(3).policy) == "sync"
    assert sw.process(W0.port, update_packet(W0, 3, 1, [1] * 8, 0x77)) == []
    assert sw.process(W2.port, update_packet(W2, 3, 1, [2] * 8, 0x77)) == []  # now all 3 are needed
    agg.set_policy(
        3, Policy(quorum=2)
    )  # lowered while slot 1 collects with 2: its next packet completes it
    out = sw.process(W0.port, update_packet(W0, 3, 1, [1] * 8, 0x77))  # W0's retransmission
    assert [port for port, _ in out] == [W0.port, W1.port, W2.port]
    assert {struct.unpack("!8i", data[-32:]) for _port, data in out} == {(3,) * 8}


@pytest.mark.parametrize(
    ("policy", "slots", "message"),
    [
        (Policy(quorum=4), 4, r"quorum 4 is out of range 1\.\.3"),
        (Policy(quorum=0), 4, r"quorum 0 is out of range 1\.\.3"),
        (Policy(staleness=4), 4, "staleness 4 needs at least 5 slots"),
        (Policy(timeout_us=1 << 32), 4, r"timeout 4294967296 us is out of range"),
    ],
)
def test_a_bad_policy_is_refused_and_installs_nothing(switch, policy, slots, message):
    sw, conn, _ = switch
    agg = Aggregation(conn)
    before = switch_state(sw)
    with pytest.raises(ControllerError, match=message):
        agg.add_job(3, [W0, W1, W2], num_slots=slots, policy=policy)
    assert switch_state(sw) == before and agg.jobs() == []
    agg.add_job(3, [W0, W1, W2], num_slots=slots)
    with pytest.raises(ControllerError, match=message):
        agg.set_policy(3, policy)
    assert agg.job(3).policy == Policy()


def test_ctl_policy_on_add_job_set_policy_and_show_jobs(switch, capsys):
    _sw, conn, address = switch
    conn.close()
    ctl = ["--grpc-addr", address, "--election-id", "20"]
    workers = [f"--worker={w.rank}:{w.port}:{w.mac}:{w.ip}" for w in (W0, W1, W2)]
    assert (
        ctl_main(
            [*ctl, "add-job", "4", *workers, "--slots", "4", "--policy", "quorum:2,timeout:2ms"]
        )
        == 0
    )
    assert "quorum:2,timeout:2000us" in capsys.readouterr().out
    assert ctl_main([*ctl, "set-policy", "4", "stale:3"]) == 0
    capsys.readouterr()
    assert ctl_main([*ctl, "--json", "show-jobs"]) == 0
    [job] = json.loads(capsys.readouterr().out)
    assert job["policy"] == "stale:3"
    assert ctl_main([*ctl, "show-jobs"]) == 0
    assert "stale:3" in capsys.readouterr().out
    for bad, message in (
        (["add-job", "5", *workers, "--policy", "quorum:x"], "bad policy part 'quorum:x'"),
        (["set-policy", "4", "fast"], "bad policy part 'fast'"),
        (["set-policy", "4", "quorum:1025"], r"quorum 1025 is out of range 1..1024"),
    ):
        with pytest.raises(SystemExit) as exit_:
            ctl_main([*ctl, *bad])
        assert exit_.value.code == 2
        assert message in capsys.readouterr().err
    assert ctl_main([*ctl, "set-policy", "4", "quorum:4"]) == 1
    assert "quorum 4 is out of range 1..3" in capsys.readouterr().err


def test_a_failed_add_job_leaves_nothing_behind(switch):
    sw, conn, _ = switch
    agg = Aggregation(conn)
    conn.insert(
        "InaEgress.result_rewrite",
        {"sm.egress_rid": 1 + 5 * 32 + 1},
        "InaEgress.to_worker",
        {"mac": W1.mac, "ip": W1.ip, "udp_port": 9},
    )  # in the way of job 5's rank 1
    before_regs, before = registers(sw), switch_state(sw)
    with pytest.raises(ControllerError, match="ALREADY_EXISTS"):
        agg.add_job(5, [W0, W1], num_slots=4)
    assert switch_state(sw) == before and registers(sw) == before_regs
    assert agg.jobs() == []


LEAF = Worker(0, 3, "02:cc:00:00:00:01", "10.0.2.1", aggregates=3)  # a child switch of 3 workers
UP = Parent(5, "02:bb:00:00:00:01", "10.0.1.254", 2)


def test_a_hierarchical_job_is_installed_with_its_parent_and_child_switches_and_read_back(switch):
    """docs/protocol.md, "Completion policies across levels": a middle switch (a worker and a child
    switch of 3 below it, a parent above) of a 16-worker job with quorum 8 gets its share
    ceil(8 * 4 / 16) = 2; jobs() gives back the job's own policy, parent and children."""
    sw, conn, _ = switch
    agg = Aggregation(conn)
    agg.set_switch_address(SWITCH_MAC, SWITCH_IP)
    child = Worker(1, 2, W1.mac, W1.ip)
    job = agg.add_job(
        4, [LEAF, child], num_slots=4, epoch=7, policy=Policy(quorum=8), parent=UP, job_workers=16
    )
    assert sw.tables["InaIngress.jobs"].entries()[0].args == (0, 4, 2, 0x104, 7, 2, 0, 0)
    assert sw.tables["InaIngress.job_parent"].entries()[0].args == (
        5,
        0x02BB00000001,
        0x0A0001FE,
        2,
        16,
        8,
    )
    admissions = {e.action.name: e.args for e in sw.tables["InaIngress.admission"].entries()}
    assert admissions == {"InaIngress.admit_switch": (3,), "InaIngress.admit": ()}
    [back] = agg.jobs()
    assert back == job
    assert (back.parent, back.job_workers, back.policy, back.workers) == (
        UP,
        16,
        Policy(quorum=8),
        [LEAF, child],
    )
    agg.remove_job(4)
    assert sw.tables["InaIngress.job_parent"].entries() == [] and agg.jobs() == []


def test_a_root_gets_the_jobs_quorum_and_a_job_larger_than_its_children_needs_a_parent(switch):
    _sw, conn, _ = switch
    agg = Aggregation(conn)
    other = Worker(1, 4, "02:cc:00:00:00:02", "10.0.2.2", aggregates=5)
    root = agg.add_job(1, [LEAF, other], num_slots=2, epoch=3, policy=Policy(quorum=6))
    assert (root.size, agg._job_params(root)["quorum"], agg.jobs()[0].policy) == (
        8,
        6,
        Policy(quorum=6),
    )
    for kwargs, message in [
        ({"job_workers": 9}, "job 2 has 9 workers but this switch's children hold 4: it needs"),
        ({"job_workers": 3, "parent": UP}, r"job_workers 3 is out of range 4\.\.65535"),
        ({"job_workers": 8, "parent": UP, "policy": Policy(quorum=9)}, "quorum 9 is out of range"),
    ]:
        with pytest.raises(ControllerError, match=message):
            agg.add_job(2, [LEAF, W1], num_slots=2, **kwargs)
    assert [j.job_id for j in agg.jobs()] == [1]


def test_a_failed_hierarchical_add_job_leaves_nothing_behind(switch):
    sw, conn, _ = switch
    agg = Aggregation(conn)
    conn.insert(
        "InaIngress.job_parent",
        {"hdr.agg.job_id": 6},
        "InaIngress.no_parent",
        {},
    )  # in the way of job 6's parent entry: the group, rewrites and admissions are undone
    before_regs, before = registers(sw), switch_state(sw)
    with pytest.raises(ControllerError, match="ALREADY_EXISTS"):
        agg.add_job(6, [LEAF, W1], num_slots=4, parent=UP, job_workers=10)
    assert switch_state(sw) == before and registers(sw) == before_regs
    assert agg.jobs() == []


def frame(src: Worker, dst: Worker) -> bytes:
    """An ordinary (non-IP) frame from one worker's port to another's: only L2 forwarding applies."""
    return (
        bytes.fromhex(dst.mac.replace(":", "") + src.mac.replace(":", "") + "88b5")
        + b"ina drop test"
    )


def test_drop_threshold_is_one_formula_for_loss_and_transitions():
    assert [drop_threshold(p) for p in (0, 0.01, 0.5, 1)] == [0, 42949673, 0x80000000, 0xFFFFFFFF]
    assert [drop_probability(drop_threshold(p)) for p in (0.01, 0.123456789, 1)] == [
        0.01,
        0.123456789,
        1.0,
    ]
    with pytest.raises(ControllerError, match=r"drop probability 1\.5 is not between 0 and 1"):
        drop_threshold(1.5)


def test_set_drop_burst_and_uniform_per_direction_program_and_read_back(switch):
    sw, conn, _ = switch
    agg = Aggregation(conn)
    agg.install_forwarding([(W0.mac, 1), (W1.mac, 2)])
    agg.set_drop(1, ingress=BurstLoss(0.0, 1.0, 1.0, 0.0), egress=0.25)
    agg.set_drop(2, egress=BurstLoss(0.0, 0.5, 0.0, 1.0))  # never leaves its lossless good state
    [entry_in] = sw.tables["InaIngress.drop_sim_in"].entries()
    assert (entry_in.action.name, entry_in.args) == (
        "InaIngress.set_burst_loss",
        (0, 0xFFFFFFFF, 0xFFFFFFFF, 0),
    )
    assert [(e.action.name, e.args) for e in sw.tables["InaEgress.drop_sim_out"].entries()] == [
        ("InaEgress.set_drop_rate", (0x40000000,)),
        ("InaEgress.set_burst_loss", (0, 0x80000000, 0, 0xFFFFFFFF)),
    ]
    assert agg.drops() == {
        (1, "egress"): 0.25,
        (1, "ingress"): BurstLoss(0.0, 1.0, 1.0, 0.0),
        (2, "egress"): BurstLoss(0.0, 0.5, 0.0, 1.0),
    }
    # the first packet finds the good state (lossless) and leaves it bad, where all are lost
    outs = [sw.process(1, frame(W0, W1)) for _ in range(4)]
    assert outs == [[(2, frame(W0, W1))], [], [], []]
    assert sw.counters["InaIngress.port_drop_sim_in"].read(1)[0] == 3
    assert sw.registers["InaIngress.drop_sim_in_bad"].read(1) == 1
    # back to uniform: the bad state stays in its register and no longer matters
    agg.set_drop(1, ingress=0.0)
    assert sw.process(1, frame(W0, W1)) == [(2, frame(W0, W1))]
    assert sw.registers["InaIngress.drop_sim_in_bad"].read(1) == 1
    assert agg.drops()[1, "ingress"] == 0.0
    with pytest.raises(ControllerError, match=r"drop probability -0\.1 is not between 0 and 1"):
        agg.set_drop(3, egress=BurstLoss(0.0, 1.0, -0.1, 0.5))


def test_ctl_set_drop_and_show_drops(switch, capsys):
    sw, conn, address = switch
    conn.close()
    ctl = ["--grpc-addr", address, "--election-id", "30"]
    assert (
        ctl_main([*ctl, "set-drop", "5", "--ingress-burst", "0,1,0.5,0.25", "--egress", "0.1"]) == 0
    )
    assert sw.tables["InaIngress.drop_sim_in"].entries()[0].args == (
        0,
        0xFFFFFFFF,
        0x80000000,
        0x40000000,
    )
    capsys.readouterr()
    assert ctl_main(["--grpc-addr", address, "--json", "show-drops"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"port": 5, "direction": "egress", "loss": 0.1},
        {
            "port": 5,
            "direction": "ingress",
            "burst": {"loss_good": 0.0, "loss_bad": 1.0, "p_gb": 0.5, "p_bg": 0.25},
        },
    ]
    assert ctl_main(["--grpc-addr", address, "show-drops"]) == 0
    assert [line.split() for line in capsys.readouterr().out.splitlines()] == [
        ["port", "direction", "loss"],
        ["5", "egress", "uniform", "0.1"],
        ["5", "ingress", "burst", "0,1,0.5,0.25"],
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--ingress-burst", "0,1,0.5"],
            "argument --ingress-burst: expected GOOD,BAD,P_GB,P_BG: four numbers in [0.0, 1.0]",
        ),
        (["--egress-burst", "0,1,0.5,nan"], "argument --egress-burst: expected GOOD,BAD,P_GB,P_BG"),
        (
            ["--ingress", "0.1", "--ingress-burst", "0,1,1,0"],
            "argument --ingress-burst: not allowed with argument --ingress",
        ),
        ([], "set-drop: give the loss of at least one direction"),
    ],
)
def test_ctl_set_drop_refuses_bad_models_in_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        ctl_main(["set-drop", "1", *argv])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    [line] = [line for line in err.splitlines() if "error:" in line]
    assert message in line


Update = p4runtime_pb2.Update
JOB_PARAMS = {
    "base": 0,
    "num_slots": 1,
    "num_workers": 1,
    "mgid": 0x101,
    "epoch": 1,
    "quorum": 1,
    "timeout": 0,
    "staleness": 0,
}


def test_an_insert_into_a_full_table_is_resource_exhausted_and_a_bad_modify_leaves_the_entry(
    switch,
):
    """The P4Runtime spec's codes, through the controller: the 257th job entry finds InaIngress.jobs
    (size MAX_JOBS) full; a MODIFY with a parameter wider than its field is OUT_OF_RANGE and the
    entry keeps its old parameters."""
    sw, conn, _ = switch
    entries = [
        TableEntry("InaIngress.jobs", {"hdr.agg.job_id": j}, "InaIngress.set_job", JOB_PARAMS)
        for j in range(256)
    ]
    conn.write_table_entries(entries)
    with pytest.raises(
        ControllerError,
        match=r"#0: RESOURCE_EXHAUSTED: table 'InaIngress.jobs' is full \(256 "
        r"entries\)",
    ):
        conn.insert("InaIngress.jobs", {"hdr.agg.job_id": 256}, "InaIngress.set_job", JOB_PARAMS)
    assert len(sw.tables["InaIngress.jobs"].entries()) == 256
    with pytest.raises(
        ControllerError, match="256 does not fit in 8 bits"
    ):  # the client refuses it first
        conn.modify(
            "InaIngress.jobs",
            {"hdr.agg.job_id": 7},
            "InaIngress.set_job",
            {**JOB_PARAMS, "num_workers": 256},
        )
    entry = p4e.TableEntry.parse(
        conn.schema,
        "InaIngress.jobs",
        {"hdr.agg.job_id": 7},
        "InaIngress.set_job",
        {**JOB_PARAMS, "epoch": 2},
    )
    update = Update(type=Update.MODIFY, entity=p4e.to_entity(entry, conn.schema))
    [wide] = [
        x for x in update.entity.table_entry.action.action.params if x.param_id == 3
    ]  # num_workers
    wide.value = b"\x01\x00"  # 256 in an 8-bit parameter, as a client without checks would send it
    with pytest.raises(
        ControllerError,
        match=r"#0: OUT_OF_RANGE: parameter .num_workers. of .InaIngress.set_job.: "
        r"256 does not fit in 8 bits",
    ):  # the spec: a too-wide bytestring
        conn._write([update], "modify")  # the server's own check
    [entry] = [e for e in conn.read_table("InaIngress.jobs") if e.match["hdr.agg.job_id"] == 7]
    assert entry.params == JOB_PARAMS  # unchanged
