"""`ina bench lanes`' emulation row from the workers' reports (`ina worker --json`): elements per
second per worker, wire bytes per element of the frames sent, redos per worker."""

from ina.bench.lanes import ELEMS, emulation_row, wire_bytes
from ina.sim.allreduce import frame_bytes


def test_a_widths_row_is_its_workers_reports_per_worker_and_per_element() -> None:
    reports = [
        {"elements": 1000, "packets_sent": 10, "goodput_elements_per_s": 3e6, "redone": 1},
        {"elements": 1000, "packets_sent": 12, "goodput_elements_per_s": 5e6, "redone": 3},
    ]
    # a frame: its bytes plus Ethernet's FCS, preamble and start, and gap (24 bytes)
    assert wire_bytes() == frame_bytes(ELEMS) + 24
    assert emulation_row(16, reports, True) == {
        "measure": "emulation",
        "bits": 16,
        "values_per_packet": 2 * ELEMS,
        "elements_per_s": 4e6,
        "wire_bytes_per_element": 22 * wire_bytes() / 2000,
        "packets_per_worker": 11,
        "redone_per_worker": 2,
        "verified": True,
    }
