"""ina's network model against ns-3 (ina.sim.ns3): the same UDP frames through a star whose port
toward the receiver is the bottleneck give the same drops, packet for packet, and the same delivery
times (the issue asks within 1% of each packet's time in flight; they agree to float rounding).
ns-3 runs in its own virtualenv (`make ns3`, which .ci/run does); without it these skip, saying so."""

import importlib.util

import pytest

from ina.sim.links import wire_bits
from ina.sim.ns3 import (
    NS3_STAR,
    SCENARIOS,
    Outcome,
    Scenario,
    compare,
    ns3_missing,
    run_ina,
    run_ns3,
)

needs_ns3 = pytest.mark.skipif(ns3_missing() is not None, reason=ns3_missing() or "")


@pytest.fixture(scope="module")
def ns3_outcomes() -> dict[str, Outcome]:
    """Every scenario in one ns-3 process (loading ns-3 takes tens of seconds)."""
    version, outcomes = run_ns3(list(SCENARIOS))
    assert version == "3.44.post0"
    return {s.name: o for s, o in zip(SCENARIOS, outcomes, strict=True)}


def unloaded_ns(scenario: Scenario, size: int) -> float:
    """A frame's time in flight alone on the path: two links' serialization and delay."""
    return 2 * (wire_bits(size) * 1e9 / scenario.rate + scenario.delay_ns)


@needs_ns3
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_same_drops_and_delivery_times(scenario: Scenario, ns3_outcomes: dict[str, Outcome]):
    ina, ns3 = run_ina(scenario), ns3_outcomes[scenario.name]
    assert [t is None for t in ina.delivered_ns] == [t is None for t in ns3.delivered_ns]
    assert ina.bottleneck_drops == ns3.bottleneck_drops
    for (_, sent, _), a, b in zip(
        scenario.packets, ina.delivered_ns, ns3.delivered_ns, strict=True
    ):
        if b is not None:
            assert abs(a - b) <= 0.01 * (b - sent), (a, b, sent)
    result = compare(scenario, ina, ns3)
    assert (result.drops_differ, result.ina_drops) == (0, ns3.bottleneck_drops)


@needs_ns3
def test_scenarios_do_what_they_are_named_for(ns3_outcomes: dict[str, Outcome]):
    """In ns-3: the uncongested frames never wait, the queueing ones wait and none is dropped, the
    dropping ones are dropped at the bottleneck and nowhere else."""
    for scenario in SCENARIOS:
        outcome = ns3_outcomes[scenario.name]
        waited = [
            t - sent > unloaded_ns(scenario, size) + 1
            for (_, sent, size), t in zip(scenario.packets, outcome.delivered_ns, strict=True)
            if t is not None
        ]
        lost = sum(t is None for t in outcome.delivered_ns)
        if scenario.name == "uncongested":
            assert (lost, any(waited)) == (0, False)
        elif scenario.name == "queueing":
            assert (lost, all(waited[4:])) == (0, True)
        else:
            assert lost == outcome.bottleneck_drops > 0


def test_ns3_packets_take_the_wire_as_long_as_inas_frames():
    """scripts/ns3_star.py's own statement of Ethernet framing gives each frame the wire time ina's
    model gives it (this one needs no ns-3: the script imports it only to run)."""
    spec = importlib.util.spec_from_file_location("ns3_star", NS3_STAR)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for frame in (42, 59, 60, 61, 318, 1000, 1514):
        assert (script.ns3_payload(frame) + script.PPP_IP_UDP) * 8 == wire_bits(frame)


def test_ina_side_delivers_each_lone_frame_after_two_links():
    """ina's side alone (no ns-3 needed): the switch forwards each frame of the uncongested scenario
    to the receiver, delivered exactly two serializations and two delays after it was sent."""
    scenario = SCENARIOS[0]
    outcome = run_ina(scenario)
    assert outcome.bottleneck_drops == 0
    assert [
        round(t - sent, 6)
        for (_, sent, _), t in zip(scenario.packets, outcome.delivered_ns, strict=True)
    ] == [round(unloaded_ns(scenario, size), 6) for _, _, size in scenario.packets]
