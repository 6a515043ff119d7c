"""The event core: events run in time order, ties in the order queued, and the clock is the
handlers' to move."""

from ina.sim.events import Simulator


def test_events_run_in_time_order_and_ties_in_the_order_they_were_queued():
    sim = Simulator()
    ran = []
    record = lambda time, label: ran.append((time, label))  # noqa: E731
    for time, label in [
        (3.0, "c"),
        (1.0, "a"),
        (2.0, "b1"),
        (2.0, "b2"),
        (0.5, "first"),
        (2.0, "b3"),
    ]:
        sim.at(time, record, label)
    sim.run()
    assert ran == [(0.5, "first"), (1.0, "a"), (2.0, "b1"), (2.0, "b2"), (2.0, "b3"), (3.0, "c")]
    assert sim.scheduled == 6


def test_an_event_queued_for_the_current_time_runs_after_those_already_waiting_for_it():
    sim = Simulator()
    ran = []

    def chain(time, label):
        ran.append(label)
        if label == "a":
            sim.at(time, chain, "a-again")  # now: after b, which was queued before it
            sim.at(time + 1, chain, "later")

    sim.at(1.0, chain, "a")
    sim.at(1.0, chain, "b")
    sim.run()
    assert ran == ["a", "b", "a-again", "later"]


def test_run_stops_once_until_holds_and_the_rest_waits():
    sim = Simulator()
    ran = []
    for t in range(5):
        sim.at(float(t), lambda time: ran.append(time))
    sim.run(until=lambda: len(ran) == 2)
    assert ran == [0.0, 1.0]
    sim.run()
    assert ran == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_an_event_queued_before_the_running_time_runs_before_the_rest_of_that_time():
    sim = Simulator()
    ran = []

    def record(time, label):
        ran.append((time, label))
        if label == "b1":
            sim.at(1.0, record, "past")  # earlier than the running 2.0: next, as in any heap
            sim.at(2.0, record, "b3")

    for time, label in [(2.0, "b1"), (2.0, "b2"), (3.0, "c")]:
        sim.at(time, record, label)
    sim.run()
    assert ran == [(2.0, "b1"), (1.0, "past"), (2.0, "b2"), (2.0, "b3"), (3.0, "c")]
    assert sim.scheduled == 5


def test_a_time_whose_last_event_queued_an_earlier_one_is_left_once_that_ran():
    sim = Simulator()
    ran = []

    def record(time, label):
        ran.append((time, label))
        if label == "b":
            sim.at(1.0, record, "past")

    sim.at(2.0, record, "b")
    sim.at(4.0, record, "d")
    sim.run()
    sim.at(2.0, record, "again")  # 2.0 was left: queued afresh, it runs
    sim.run()
    assert ran == [(2.0, "b"), (1.0, "past"), (4.0, "d"), (2.0, "again")]


def test_run_stops_within_a_time_and_the_rest_of_it_runs_next():
    sim = Simulator()
    ran = []
    for label in "abc":
        sim.at(1.0, lambda time, label: ran.append(label), label)
    sim.at(0.5, lambda time: ran.append("first"))
    sim.run(until=lambda: len(ran) == 2)
    assert ran == ["first", "a"]
    sim.at(1.0, lambda time: ran.append("d"))
    sim.run()
    assert ran == ["first", "a", "b", "c", "d"]


def test_the_clock_moves_only_when_a_handler_moves_it():
    sim = Simulator()

    def act(time):
        sim.now = time

    sim.at(1.0, act)
    sim.at(5.0, lambda time: None)  # a stale timer: nothing happens, the clock stays
    sim.run()
    assert sim.now == 1.0


def test_last_gives_the_arguments_of_the_event_queued_last_for_a_time_and_joined_counts():
    sim = Simulator()
    ran = []
    record = lambda time, label: ran.append((time, label))  # noqa: E731
    assert sim.last(1.0) is None
    sim.at(1.0, record, "a")
    sim.at(2.0, record, "x")
    sim.at(1.0, record, "b")
    assert sim.last(1.0) == ("b",) and sim.last(2.0) == ("x",) and sim.last(3.0) is None
    sim.joined()
    assert sim.scheduled == 4
    sim.run()
    assert sim.last(1.0) is None and ran == [(1.0, "a"), (1.0, "b"), (2.0, "x")]
