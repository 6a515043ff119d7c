"""The aggregation STF files are the rendering of their descriptions in cases/ (stf_render.py), so a
header change reaches them through `make stf-render`, never by hand."""

from pathlib import Path

import pytest
import stf_render
from stf_render import HERE, described, rendered

from ina.p4src.protocol import UDP_PORT, UDP_PORT_MASK

CASES = described()


@pytest.mark.parametrize(("case", "stf"), CASES.items(), ids=[stf.stem for stf in CASES.values()])
def test_rendered_file_is_current(case: Path, stf: Path) -> None:
    assert stf.read_text() == rendered(case), (
        f"{stf.relative_to(HERE)} is stale: run `make stf-render`"
    )


def _aggregation_frame(line: str) -> bool:
    """Whether a packet or expect line's frame is UDP/IPv4 to an aggregation port."""
    words = line.split()
    if len(words) < 3 or words[0] not in ("packet", "expect"):
        return False
    frame = bytes.fromhex(words[2].rstrip("$").replace("*", "0"))
    return (
        frame[12:14] == b"\x08\x00"
        and len(frame) >= 38
        and frame[23] == 17
        and int.from_bytes(frame[36:38], "big") & UDP_PORT_MASK == UDP_PORT
    )


@pytest.mark.parametrize(
    "stf", sorted(set(HERE.rglob("*.stf")) - set(CASES.values())), ids=lambda s: s.stem
)
def test_hand_written_file_has_no_aggregation_frame(stf: Path) -> None:
    """An aggregation frame's lengths and checksums follow the header: it belongs in a description."""
    assert not any(map(_aggregation_frame, stf.read_text().splitlines())), (
        f"{stf.name}: describe it in cases/"
    )


def test_make_stf_render_writes_then_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`make stf-render` writes a missing or stale file; `--check` names a stale one and fails."""
    source = HERE / "cases" / "basic_two_workers.py"
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / source.name).write_text(source.read_text())
    monkeypatch.setattr(stf_render, "HERE", tmp_path)
    monkeypatch.setattr(stf_render, "CASES", tmp_path / "cases")
    stf = tmp_path / "basic_two_workers.stf"
    assert (
        stf_render.main([]) == 0 and capsys.readouterr().out == "rendered: basic_two_workers.stf\n"
    )
    assert stf.read_text() == (HERE / stf.name).read_text()
    assert stf_render.main(["--check"]) == 0 and capsys.readouterr().out == ""
    stf.write_text(stf.read_text().replace("packets == 2", "packets == 3"))
    assert (
        stf_render.main(["--check"]) == 1
        and capsys.readouterr().out == "stale: basic_two_workers.stf\n"
    )
    assert "packets == 3" in stf.read_text()
