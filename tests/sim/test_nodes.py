"""Hosts' CPUs as FIFO servers of their packet work, and the switch node's clock."""

from ina.sim.events import Simulator
from ina.sim.nodes import Cpu, SwitchNode


def test_a_cpu_that_costs_nothing_runs_work_at_once_and_adds_no_event():
    sim = Simulator()
    cpu = Cpu(sim)
    ran = []
    cpu.run(2.0, 0.0, lambda start, label: ran.append((start, label, cpu.depart(start))), "a")
    assert ran == [(2.0, "a", 2.0)] and sim.scheduled == 0


def test_a_cpu_is_idle_for_work_only_if_nothing_waits_it_costs_nothing_and_the_cpu_is_free():
    sim = Simulator()
    cpu = Cpu(sim, send_cost=1e-6)
    assert cpu.idle(0.0, 0.0) and not cpu.idle(0.0, 1e-9)
    cpu.depart(0.0)  # a send: the CPU is busy until 1 us
    assert not cpu.idle(0.5e-6, 0.0) and cpu.idle(1e-6, 0.0)
    cpu.run(1e-6, 2e-6, lambda start: None)  # work that costs: it waits, queued
    assert not cpu.idle(5e-6, 0.0)
    sim.run()
    assert cpu.idle(5e-6, 0.0)


def test_received_packets_wait_their_turn_and_each_send_costs_its_time():
    sim = Simulator()
    cpu = Cpu(sim, send_cost=0.5e-6, recv_cost=1e-6)
    ran = []

    def work(start, label, sends):
        sim.now = start
        ran.append((label, start, [cpu.depart(start) for _ in range(sends)]))

    for came, label, sends in [(0.0, "a", 1), (0.0, "b", 2), (5e-6, "c", 0), (5e-6, "timer", 1)]:
        sim.at(
            came,
            lambda time, label=label, sends=sends: cpu.run(
                time, 0.0 if label == "timer" else cpu.recv_cost, work, label, sends
            ),
        )
    sim.run()
    a = 0.0 + 1e-6
    b = (a + 0.5e-6) + 1e-6  # after a's send
    c = 5e-6 + 1e-6  # the CPU was idle when c came
    assert ran == [
        ("a", a, [a + 0.5e-6]),
        ("b", b, [b + 0.5e-6, b + 0.5e-6 + 0.5e-6]),
        ("c", c, []),
        ("timer", c, [c + 0.5e-6]),
    ]  # came during c's receive: it waited for it


class FakeBackend:
    def process(self, port, frame):
        return [(port + 1, frame), (port + 2, frame)]


class FakeSwitch:
    def __init__(self):
        self.clocks = []
        self.pipeline = FakeBackend()

    def set_clock(self, us):
        self.clocks.append(us)

    def process(self, port, frame):  # the facade: only without a program
        return []


def test_a_switch_node_sets_the_switch_clock_to_the_arrival_in_microseconds():
    import threading

    switch = FakeSwitch()
    node = SwitchNode("s1", switch, threading.Lock(), pipeline=300e-9)
    assert node.process(0.0012344, 3, b"x") == [(4, b"x"), (5, b"x")]
    assert node.process(0.00123436, 3, b"y") == [(4, b"y"), (5, b"y")]  # the same microsecond
    assert node.process(0.0012351, 7, b"z") == [(8, b"z"), (9, b"z")]
    assert switch.clocks == [
        1234,
        1235,
    ]  # set when the microsecond changes, as nothing else sets it
    switch.pipeline = None
    assert node.process(0.0012362, 3, b"x") == [] and switch.clocks == [1234, 1235, 1236]
    assert len(node.egress) == 512 and node.pipeline == 300e-9
