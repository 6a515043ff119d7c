"""ina.p4src: the P4 programs ina runs. AGGREGATE_P4 is the SwitchML-style aggregation program."""

from pathlib import Path

AGGREGATE_P4 = Path(__file__).resolve().parent / "aggregate.p4"


def aggregate_defines(elems: int, pool_size: int, bits: int = 32) -> dict[str, str]:
    """The -D constants that build aggregate.p4 for `elems` words of `bits`-bit lanes per packet
    and `pool_size` slots: ina's compiler and p4c-bm2-ss are given the same, so a switch and its
    workers agree on the lane width (a switch of another width drops their UPDATEs as malformed)."""
    return {"ELEMS": str(elems), "POOL_SIZE": str(pool_size), "LANE_BITS": str(bits)}
