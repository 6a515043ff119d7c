"""What `ina run` reports beside a failed run: the switch's drop counters, which a worker cannot see."""

import io
import json

from ina.topologies.runner import RunOptions, RunResult, drop_notes, run_workers, summary
from ina.topologies.topo import load


def test_a_failed_run_names_what_the_switch_dropped():
    result = RunResult("runs/x")
    result.workers = [
        {"host": "h1", "job": 0, "error": "no answer from the switch"},
        {
            "host": "h2",
            "job": 0,
            "elements": 64,
            "elapsed_s": 1.0,
            "goodput_elements_per_s": 64,
            "goodput_gbps": 0.0,
            "packets_sent": 4,
            "retransmissions": 0,
            "contributions_entered": 1.0,
            "verified": True,
        },
    ]
    result.switch_stats = {
        "s1": {
            "jobs": {0: {"accepted": 9, "out_of_range": 6240, "wrong_epoch": 3}},
            "ports": {1: {"refused": 2, "drop_sim_in": 5}, 2: {"drop_sim_in": 1}},
        }
    }
    assert drop_notes(result) == [
        "switch s1 dropped, job 0: out_of_range 6240, wrong_epoch 3",
        "switch s1 dropped, port 1: refused 2",
    ]
    assert summary(result).endswith(
        "h1: no answer from the switch\n" + "\n".join(drop_notes(result))
    )


def test_each_ranks_share_in_the_sums_is_a_column_and_a_rank_left_out_is_named():
    worker = {
        "job": 0,
        "elements": 64,
        "elapsed_s": 1.0,
        "goodput_elements_per_s": 64,
        "goodput_gbps": 0.0,
        "packets_sent": 4,
        "retransmissions": 0,
        "verified": True,
    }
    result = RunResult("runs/x")
    result.workers = [
        {**worker, "host": "h1", "contributions_entered": 1.0},
        {**worker, "host": "h2", "contributions_entered": 0.0625},
    ]
    assert summary(result).splitlines() == [
        "host  job  elements  time s  M elem/s   Gbps  sent  retrans  entered  verified",
        "  h1    0        64   1.000      0.00  0.000     4        0   100.0%       yes",
        "  h2    0        64   1.000      0.00  0.000     4        0     6.2%       yes",
        "entered: the share of each rank's contributions in the sums; h2 had some left out by the completion "
        "policy (docs/protocol.md)",
    ]


def test_a_verified_run_has_no_drop_notes():
    result = RunResult("runs/x")
    result.workers = [{"host": "h1", "verified": True}]
    result.switch_stats = {"s1": {"jobs": {0: {"out_of_range": 1}}, "ports": {}}}
    assert drop_notes(result) == []


def test_link_delay_goes_on_the_hosts_link_and_without_netem_the_run_is_refused_naming_it():
    import pytest

    from ina.topologies import runner
    from ina.topologies.topo import load

    topo = load("star", workers=3)
    if runner.netem_available():
        delayed = runner.delay_links(topo, {"h2": "5ms"})
        assert [link.params.get("delay") for link in delayed.links] == [None, "5ms", None]
    else:
        with pytest.raises(
            runner.RunError,
            match=r"link h2-s1 asks for delay 5ms, which Mininet applies with "
            r"the netem qdisc, and this kernel has none",
        ):
            runner.delay_links(topo, {"h2": "5ms"})
    assert [link.params.get("delay") for link in topo.links] == [
        None,
        None,
        None,
    ]  # the loaded one is unchanged
    with pytest.raises(
        runner.RunError, match=r"--link-delay h9: no such host \(hosts: h1, h2, h3\)"
    ):
        runner.delay_links(topo, {"h9": "1ms"})
    runner.delay_links(load("star", workers=2), {})  # nothing asked: no netem needed


class Process:
    """A worker process that reports one verified all-reduce."""

    def __init__(self, argv):
        self.argv, self.returncode = argv, 0
        self.stdout = io.StringIO("bound\n")
        self.stdin = io.StringIO()

    def communicate(self, timeout=None):
        return json.dumps({"job": 0, "verified": True}) + "\n", ""

    def kill(self):
        pass

    def wait(self):
        return 0


class Hosts:
    """Stands in for the Mininet network: each host's popen records its command."""

    def __init__(self):
        self.started = {}

    def host(self, name):
        hosts = self

        class Node:
            def popen(self, argv, **_kwargs):
                hosts.started[name] = argv
                return Process(argv)

        return Node()


def option(argv, name):
    return argv[argv.index(name) + 1] if name in argv else None


def test_each_worker_sends_to_its_trees_leaf_with_its_rank_there_and_seeds_its_data_by_job_rank(
    tmp_path,
):
    topo, hosts = load("leafspine_hier"), Hosts()
    run_workers(hosts, topo, RunOptions(topo="leafspine_hier"), {0: 7}, tmp_path)
    sw = topo.switches
    assert {
        h: (
            option(a, "--switch"),
            option(a, "--rank"),
            option(a, "--wire-rank"),
            option(a, "--leaf-workers"),  # its leaf's two, its turns at its switch
        )
        for h, a in hosts.started.items()
    } == {
        "h1": (sw["s1"].ip, "0", None, "2"),
        "h2": (sw["s1"].ip, "1", None, "2"),
        "h3": (sw["s2"].ip, "2", "0", "2"),
        "h4": (sw["s2"].ip, "3", "1", "2"),
    }
    # A hierarchical job's workers save their sums for the job's check (job_sums.py) ...
    saved = str(tmp_path / "sums" / "job0")
    assert {(option(a, "--save-sums"), "--verify" in a) for a in hosts.started.values()} == {
        (saved, False)
    }
    single, hosts = load("leafspine"), Hosts()
    run_workers(hosts, single, RunOptions(topo="leafspine"), {0: 7}, tmp_path)
    assert {
        (
            option(a, "--switch"),
            option(a, "--wire-rank"),
            option(a, "--leaf-workers"),
            option(a, "--save-sums"),
            "--verify" in a,
        )
        for a in hosts.started.values()
    } == {
        (single.switches["s1"].ip, None, None, None, True)
    }  # ... a single switch's check their own
    # The host-only baseline's server knows the workers by their ranks in the job.
    topo, hosts = load("leafspine_hier", extra_host=True), Hosts()
    run_workers(hosts, topo, RunOptions(topo="leafspine_hier", baseline=True), {0: 7}, tmp_path)
    server = topo.hosts[topo.extra_host].ip
    assert {
        h: (option(a, "--switch"), option(a, "--wire-rank"))
        for h, a in hosts.started.items()
        if h != topo.extra_host
    } == {h: (server, None) for h in ("h1", "h2", "h3", "h4")}
