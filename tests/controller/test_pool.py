"""controller/pool.py through `ina ctl`: --allocator on add-job, show-pool as text and JSON,
move-job and compact (remove + add with a fresh epoch), refusals that change nothing."""

import json
from dataclasses import asdict

import pytest

from ina.controller.aggregation import Aggregation, Fallback, Worker
from ina.controller.allocators import Pinned, PoolFull, Range
from ina.controller.cli import main as ctl_main
from ina.controller.client import ControllerError
from ina.controller.pool import move_job
from ina.p4src.protocol import Policy

W0 = Worker(0, 1, "02:00:00:00:00:01", "10.0.0.1")
WORKER = ["--worker", "0:1:02:00:00:00:00:01:10.0.0.1"]


def test_show_pool_move_and_compact(served, capsys):
    conn, address = served
    agg = Aggregation(conn)
    for job, slots in ((1, 4), (2, 3), (3, 2), (4, 4)):  # 0-3, 4-6, 7-8, 9-12
        agg.add_job(job, [W0], slots, epoch=0x10 + job)
    agg.remove_job(1)
    agg.remove_job(3)  # free: 0-3, 7-8, 13-15
    conn.close()
    ctl = ["--grpc-addr", address, "--election-id", "20"]
    assert ctl_main([*ctl, "--allocator", "best-fit", "add-job", "5", *WORKER, "--slots", "2"]) == 0
    capsys.readouterr()
    assert ctl_main([*ctl, "show-pool"]) == 0
    assert capsys.readouterr().out == (
        "first  last  slots  holder\n"
        "0      3     4      free  \n"
        "4      6     3      job 2 \n"
        "7      8     2      job 5 \n"
        "9      12    4      job 4 \n"
        "13     15    3      free  \n"
        "9 of 16 slots used by 3 jobs, 7 free in 2 ranges (largest 4), "
        "external fragmentation 0.429\n"
    )
    assert ctl_main([*ctl, "--json", "show-pool"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "pool_size": 16,
        "used": 9,
        "free": 7,
        "largest_free": 4,
        "fragmentation": 1 - 4 / 7,
        "jobs": [
            {"job": 2, "base": 4, "slots": 3},
            {"job": 5, "base": 7, "slots": 2},
            {"job": 4, "base": 9, "slots": 4},
        ],
        "free_ranges": [{"base": 0, "slots": 4}, {"base": 13, "slots": 3}],
    }
    # a move onto another job's slots is refused in one line, and nothing changes
    assert ctl_main([*ctl, "move-job", "2", "--base", "6"]) == 1
    assert capsys.readouterr().err == (
        "ina ctl: the slot pool is full: 3 slots wanted, 10 free of 16 at slots 6..8 "
        "(remove a job or ask for fewer slots)\n"
    )
    assert ctl_main([*ctl, "--json", "move-job", "4", "--base", "12", "--slots", "2"]) == 0
    moved = json.loads(capsys.readouterr().out)
    assert (moved["base"], moved["num_slots"]) == (12, 2) and moved["epoch"] != 0x14
    assert ctl_main([*ctl, "--json", "compact"]) == 0
    assert [
        (j["job_id"], j["base"], j["num_slots"]) for j in json.loads(capsys.readouterr().out)
    ] == [
        (2, 0, 3),
        (5, 3, 2),
        (4, 5, 2),
    ]
    assert ctl_main([*ctl, "show-pool"]) == 0
    assert capsys.readouterr().out.endswith(
        "7 of 16 slots used by 3 jobs, 9 free in 1 ranges (largest 9), "
        "external fragmentation 0.000\n"
    )
    assert ctl_main([*ctl, "move-job", "9"]) == 1
    assert "no job 9 on this switch" in capsys.readouterr().err


def test_a_move_never_reuses_the_old_epoch(served, monkeypatch):
    """A late UPDATE of the old run must never match the new one: an equal draw is drawn again."""
    conn, _address = served
    agg = Aggregation(conn)
    agg.add_job(1, [W0], 4, epoch=0x14)
    draws = iter([0x14, 0x14, 0x99])
    monkeypatch.setattr("ina.controller.pool.new_epoch", lambda: next(draws))
    moved = move_job(agg, 1, Range(8, 4))
    assert (moved.base, moved.num_slots, moved.epoch) == (8, 4, 0x99)
    assert [(j.base, j.epoch) for j in agg.jobs()] == [(8, 0x99)]


def test_a_failed_add_puts_the_job_back(served, monkeypatch):
    conn, _address = served
    agg = Aggregation(conn)
    agg.add_job(1, [W0], 4, epoch=0x14)
    real = Aggregation.add_job

    def add_once_failing(self, *args, **kwargs):
        if self.allocator == Pinned(Range(8, 4)):
            raise ControllerError("the switch said no")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Aggregation, "add_job", add_once_failing)
    with pytest.raises(ControllerError, match="the switch said no"):
        move_job(agg, 1, Range(8, 4))
    assert [(j.job_id, j.base, j.num_slots, j.epoch) for j in agg.jobs()] == [(1, 0, 4, 0x14)]


def test_a_job_with_a_fallback_server_shares_a_full_pool_and_reads_back(served):
    conn, _address = served
    agg = Aggregation(conn)
    server = Fallback(5, "02:cc:00:00:00:05", "10.0.0.100", 40000)
    other = Fallback(6, "02:cc:00:00:00:06", "10.0.0.101", 40001)
    agg.add_job(1, [W0], 16, epoch=0x11, fallback=other)  # the whole pool, best effort too
    with pytest.raises(ControllerError, match="slot pool is full"):
        agg.add_job(2, [W0], 8, epoch=0x12)  # no server: refused as before
    job = agg.add_job(2, [W0], 8, epoch=0x12, fallback=server)
    assert (job.base, job.num_slots) == (2 * 2654435761 % 9, 8)  # shared, at its hashed base
    assert [(j.job_id, j.base, j.num_slots, j.fallback) for j in agg.jobs()] == [
        (1, 0, 16, other),
        (2, job.base, 8, server),
    ]
    assert [e.params for e in conn.read_table("InaIngress.job_fallback")] == [
        {"port": 6, "mac": 0x02CC00000006, "ip": 0x0A000065, "udp_port": 40001},
        {"port": 5, "mac": 0x02CC00000005, "ip": 0x0A000064, "udp_port": 40000},
    ]
    agg.remove_job(2)
    assert [e.params["udp_port"] for e in conn.read_table("InaIngress.job_fallback")] == [40001]
    with pytest.raises(ControllerError, match="sync policy"):
        agg.add_job(2, [W0], 8, policy=Policy(quorum=1), fallback=server)
    assert [j.job_id for j in agg.jobs()] == [1]


def test_a_job_with_a_fallback_server_shares_no_slot_of_a_job_without_one(served):
    """A job without a server overwrites another run's use in its range: a best-effort job's
    shared range avoids it, and is refused where nothing else is left."""
    conn, _address = served
    agg = Aggregation(conn)
    server = Fallback(5, "02:cc:00:00:00:05", "10.0.0.100", 40000)
    other = Fallback(6, "02:cc:00:00:00:06", "10.0.0.101", 40001)
    agg.add_job(1, [W0], 10, epoch=0x11)  # 0-9, no server
    agg.add_job(3, [W0], 6, epoch=0x13, fallback=other)  # 10-15
    job = agg.add_job(2, [W0], 8, epoch=0x12, fallback=server)
    assert (job.base, job.num_slots) == (10, 6)  # all it may share: job 3's, never job 1's
    agg.remove_job(2)
    agg.remove_job(3)
    agg.add_job(3, [W0], 6, epoch=0x13)  # 10-15, no server: the pool is all exclusive
    before = agg.jobs()
    with pytest.raises(
        PoolFull,
        match=r"^the slot pool is full: 8 slots wanted, 0 free of 16 \(a best-effort job shares "
        r"slots only with jobs that have a host fallback server\)",
    ):
        agg.add_job(2, [W0], 8, epoch=0x12, fallback=server)
    assert agg.jobs() == before
    assert [e.match["hdr.agg.job_id"] for e in conn.read_table("InaIngress.job_fallback")] == []


def test_ctl_add_job_with_a_fallback_server_shares_a_full_pool(served, capsys):
    """`ina ctl add-job --fallback PORT:MAC:IP[:UDP]`: an operator's best-effort job, by hand."""
    conn, address = served
    other = Fallback(6, "02:cc:00:00:00:06", "10.0.0.101", 40001)
    Aggregation(conn).add_job(1, [W0], 16, epoch=0x11, fallback=other)  # the whole pool
    ctl = ["--grpc-addr", address, "--election-id", "20"]
    add = ["add-job", "2", *WORKER, "--slots", "8", "--epoch", "0x12"]
    assert ctl_main([*ctl, *add]) == 1  # no server: refused as before
    assert "slot pool is full" in capsys.readouterr().err
    server = ["--fallback", "5:02:cc:00:00:00:05:10.0.0.100:40000"]
    assert ctl_main([*ctl, *add, *server]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [
        "job 2 is best effort: its host fallback server 10.0.0.100:40000 on port 5",
        "start its workers with --epoch 0x00000012",
    ]
    assert ctl_main([*ctl, "--json", "show-jobs"]) == 0
    jobs = json.loads(capsys.readouterr().out)
    assert [(j["job_id"], j["base"], j["num_slots"], j["fallback"]) for j in jobs] == [
        (1, 0, 16, asdict(other)),
        (2, 2 * 2654435761 % 9, 8, asdict(Fallback(5, "02:cc:00:00:00:05", "10.0.0.100", 40000))),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "5:02:cc:00:00:05:10.0.0.100",
            "'5:02:cc:00:00:05:10.0.0.100' is not PORT:MAC:IP[:UDP_PORT] "
            "(e.g. 5:02:00:00:00:00:05:10.0.0.5:49120)",
        ),
        ("600:02:cc:00:00:00:05:10.0.0.100", "expected an integer in 0..511, got '600'"),
        ("5:02:cc:00:00:00:05:10.0.0.100:0", "expected an integer in 1..65535, got '0'"),
        ("5:02:cc:00:00:00:05:10.0.0", "expected an IPv4 address like 10.0.0.1, got '10.0.0'"),
    ],
)
def test_ctl_add_job_refuses_a_bad_fallback_naming_it(capsys, text, message):
    with pytest.raises(SystemExit) as exit_:
        ctl_main(["add-job", "2", *WORKER, "--fallback", text])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == f"ina ctl add-job: error: argument --fallback: {message}"


def test_ctl_preempt_shrinks_a_victim_or_sends_one_with_a_server_to_it_and_reads_back(
    served, capsys
):
    """`ina ctl preempt` against the in-process switch over gRPC: the victim shrunk (or, holding
    exactly the request with a server, gone to it), the job added on the freed slots, the switch's
    tables read back as the command said; a refusal changes nothing."""
    conn, address = served
    agg = Aggregation(conn)
    server = Fallback(5, "02:cc:00:00:00:05", "10.0.0.100", 40000)
    agg.add_job(1, [W0], 10, epoch=0x11)  # 0-9
    agg.add_job(2, [W0], 6, epoch=0x12, fallback=server)  # 10-15: the pool is full
    ctl = ["--grpc-addr", address, "--election-id", "20"]
    admit = ["--victim", "1", "--victim", "2", *WORKER]
    assert ctl_main([*ctl, "preempt", "3", *admit, "--slots", "4", "--epoch", "0x13"]) == 0
    epoch2 = agg.job(2).epoch
    assert epoch2 != 0x12
    assert capsys.readouterr().out.splitlines() == [
        f"job 2 now holds slots 10..11: restart its workers with --epoch {epoch2:#010x} "
        "(and its host fallback server)",
        "job  base  slots  epoch       policy  workers  rank@port/ip",
        "3    12    4      0x00000013  sync    1        0@1/10.0.0.1",
        "start its workers with --epoch 0x00000013",
    ]
    host = ["--victim", "2", *WORKER, "--slots", "2"]  # job 2 holds exactly 2, with a server
    assert ctl_main([*ctl, "--json", "preempt", "4", *host]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["on_host"], out["freed"]) == (True, {"base": 10, "slots": 2})
    assert out["victim"]["job_id"] == 2 and out["victim"]["epoch"] not in (0x12, epoch2)
    assert out["victim"]["fallback"] == asdict(server)
    assert (out["job"]["job_id"], out["job"]["base"], out["job"]["num_slots"]) == (4, 10, 2)
    assert [(j.job_id, j.base, j.num_slots, j.fallback) for j in agg.jobs()] == [
        (1, 0, 10, None),
        (3, 12, 4, None),
        (4, 10, 2, None),
    ]
    assert conn.read_table("InaIngress.job_fallback") == []
    before = agg.jobs()
    assert ctl_main([*ctl, "preempt", "5", "--victim", "1", *WORKER, "--slots", "10"]) == 1
    assert capsys.readouterr().err == (
        "ina ctl: no job of lower priority holds more than 10 slots, nor exactly 10 with a host "
        "fallback server: nothing to preempt (a job without one keeps at least one slot)\n"
    )
    assert agg.jobs() == before


def test_ctl_preempt_to_the_host_prints_what_the_victim_does_next(served, capsys):
    conn, address = served
    server = Fallback(5, "02:cc:00:00:00:05", "10.0.0.100", 40000)
    Aggregation(conn).add_job(1, [W0], 16, epoch=0x11, fallback=server)
    ctl = ["--grpc-addr", address, "--election-id", "20"]
    assert ctl_main([*ctl, "preempt", "2", "--victim", "1", *WORKER, "--slots", "16"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("job 1 gave all its slots and left the switch: restart its host ")
    assert first.endswith(
        "the workers addressing the server as their aggregator (--switch 10.0.0.100 "
        "--switch-port 40000)"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["preempt", "3", "--victim", "3", *WORKER, "--slots", "4"],
            "ina ctl: error: argument --victim: job 3 is the one to admit, not a victim",
        ),
        (
            ["preempt", "3", "--victim", "70000", *WORKER, "--slots", "4"],
            "ina ctl preempt: error: argument --victim: expected an integer in 0..255, got '70000'",
        ),
        (
            ["preempt", "3", "--victim", "1", *WORKER],
            "ina ctl preempt: error: the following arguments are required: --slots",
        ),
        (
            ["preempt", "3", *WORKER, "--slots", "4"],
            "ina ctl preempt: error: the following arguments are required: --victim",
        ),
    ],
)
def test_ctl_preempt_refuses_bad_arguments_in_one_line(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        ctl_main(argv)
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == message
