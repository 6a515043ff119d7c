"""Lookups into compiled BMv2 JSON shared by the compiler tests."""

from pathlib import Path

P4_DIR = Path(__file__).resolve().parent.parent / "p4"


def table(bmv2: dict, name: str) -> dict:
    return next(t for p in bmv2["pipelines"] for t in p["tables"] if t["name"] == name)


def action(bmv2: dict, name: str) -> dict:
    return next(a for a in bmv2["actions"] if a["name"] == name)


def state(bmv2: dict, name: str) -> dict:
    return next(s for s in bmv2["parsers"][0]["parse_states"] if s["name"] == name)
