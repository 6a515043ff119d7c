"""ina.p4src: the P4 programs ina runs. AGGREGATE_P4 is the SwitchML-style aggregation program."""

from pathlib import Path

AGGREGATE_P4 = Path(__file__).resolve().parent / "aggregate.p4"
