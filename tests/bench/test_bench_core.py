"""`ina bench core`: the scripted switch's answers carry the exact sum back, every answer is timed."""

import json

import numpy as np
import pytest

from ina.bench import core as bench
from ina.hosts.packets import parse_header
from ina.p4src.protocol import HEADER_LEN, MSG_RESULT

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_scripted_answer_is_the_result_of_every_worker_sending_the_update():
    case = bench.CoreCase(128, elems=8, window=4, n_workers=3)
    pkt = bench.new_core(case).start(np.arange(-64, 64, dtype=np.int32), 0.0)[0]
    got = bench.answer(pkt, case.n_workers)
    header = parse_header(got)
    assert (header.msg_type, header.count, header.bitmap) == (MSG_RESULT, 3, 0b111)
    assert got[HEADER_LEN:] == (np.arange(-64, -56) * 3).astype(">i4").tobytes()


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_every_chunk_is_answered_once_and_the_sum_checked(dtype):
    case = bench.CoreCase(4096, dtype, elems=16, window=8)
    array = bench.array_of(case)
    answers = bench.record(case, array)
    chunks = 4096 // 16
    assert len(answers) == chunks + (case.window if dtype == "float32" else 0)  # + exponent uses
    bench.replay(case, array, answers)  # raises on a wrong sum
    with pytest.raises(RuntimeError, match="did not finish"):
        bench.replay(case, array, answers[:-1])


def test_bench_core_writes_json_png_and_profile(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "QUICK", [bench.CoreCase(2048, elems=16, window=8)])
    rows = bench.bench_core(tmp_path, reps=2)
    data = json.loads((tmp_path / "core.json").read_text())
    assert data["benchmark"] == "core" and data["results"] == rows
    assert [(r["answers"], r["answers_per_s"]["reps"]) for r in rows] == [(128, 2)]
    alone, whole = rows[0]["receive_answers_per_cpu_s"], rows[0]["answers_per_cpu_s"]
    assert alone["reps"] == 2 and alone["median"] >= whole["median"]  # a part of the whole's time
    assert (tmp_path / "core_answers_per_s.png").read_bytes()[:8] == PNG_MAGIC
    assert "128 answers" in (tmp_path / "core_profile.txt").read_text()
