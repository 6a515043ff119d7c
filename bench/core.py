"""`ina bench core`: the sans-I/O worker core alone, in answers (RESULTs taken) per second.

    .venv/bin/ina bench core --out results            # quick; --full: larger arrays, more windows

No switch and no network: a scripted switch answers every UPDATE at once with the RESULT a switch
would send for a job whose every worker sent that UPDATE (count n_workers, every rank's bit, the
announced exponent echoed). The answers are recorded in a first, untimed run; each timed run is a
fresh core fed the same answers in order, so the clock sees `AllReduceCore.start`, `receive`
(the RTT estimate, the expiry index, the next UPDATE packed) and `result` (the sums unpacked), and
nothing of the script; the answers alone (receive, without start's and result's passes over the
array) are timed apart too, as the per-answer cost. One more
run under cProfile writes core_profile.txt: where an answer's time goes. INA_COMPILED chooses
the core mypyc compiled or its interpreted source (ina/compiled.py); each row says which ran. Timing never decides pass
or fail; the result of every run is checked against the array (the answers carry it back).
"""

import cProfile
import io
import pstats
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ina import compiled
from ina.bench import plots
from ina.bench.results import Progress, summarise, write
from ina.hosts import packets
from ina.hosts.core import AllReduceCore
from ina.hosts.heap import keep_freed_memory
from ina.p4src.protocol import HEADER_LEN

TARGET = 1_000_000  # answers per second (issue 32)
SWITCH = ("10.0.0.254", 48879)
ANSWER_GAP = 1e-6  # virtual seconds between answers: every RTT sample the same, no resend due


@dataclass(frozen=True)
class CoreCase:
    """One measured configuration: an all-reduce of `size` values of `dtype` by one core."""

    size: int
    dtype: str = "int32"
    elems: int = 64
    window: int = 128
    n_workers: int = 4

    @property
    def label(self) -> str:
        return f"{self.dtype} {self.size:,} E={self.elems} W={self.window}"


QUICK = [CoreCase(1 << 20), CoreCase(1 << 20, "float32")]
FULL = [
    CoreCase(1 << 22),
    CoreCase(1 << 22, "float32"),
    CoreCase(1 << 22, window=32),
    CoreCase(1 << 22, elems=256),
]


def new_core(case: CoreCase) -> AllReduceCore:
    return AllReduceCore(
        0, 0, case.n_workers, 1, case.elems, case.window, 1e-3, 12, SWITCH, min_rto=0.0
    )


def array_of(case: CoreCase) -> np.ndarray:
    rng = np.random.default_rng(0)
    if case.dtype == "int32":
        return rng.integers(-1000, 1000, case.size, dtype=np.int32)
    return rng.standard_normal(case.size).astype(case.dtype)


def answer(update: bytearray, n_workers: int) -> bytes:
    """The RESULT of `update` from a job whose every worker sent it: count and bitmap every worker,
    its values n_workers times theirs (int32 wraparound)."""
    values = np.frombuffer(update, ">i4", offset=HEADER_LEN).astype(np.int64) * n_workers
    return packets.result_for(update, n_workers, (1 << n_workers) - 1, values=values)


def record(case: CoreCase, array: np.ndarray) -> list[bytes]:
    """The answers of a lossless all-reduce of `array`, in the order the script sends them (every
    UPDATE answered before the next answer is taken: a FIFO)."""
    core = new_core(case)
    pending = [answer(pkt, case.n_workers) for pkt in core.start(array, 0.0)]
    now, taken = 0.0, 0
    while taken < len(pending):
        data = pending[taken]
        taken += 1
        now += ANSWER_GAP
        reply = core.receive(data, SWITCH, now)
        if reply is not None:
            pending.append(answer(reply, case.n_workers))
    if not core.finished:
        raise RuntimeError(f"{case.label}: the scripted all-reduce did not finish")
    return pending


def replay(case: CoreCase, array: np.ndarray, answers: list[bytes]) -> tuple[float, float, float]:
    """(wall, CPU, CPU of the answers alone) seconds of a fresh core's all-reduce of `array` fed
    `answers`, its start and result (the codec's passes over the array) included in the first
    two; checks its sum."""
    core = new_core(case)
    receive, switch, gap = core.receive, SWITCH, ANSWER_GAP
    wall, cpu = time.perf_counter(), time.process_time()
    core.start(array, 0.0)
    now, answering = 0.0, time.process_time()
    for data in answers:
        now += gap
        receive(data, switch, now)
    answering = time.process_time() - answering
    got = core.result() if core.finished else None
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    check(case, got, array)
    return wall, cpu, answering


def check(case: CoreCase, got: np.ndarray | None, array: np.ndarray) -> None:
    """Every worker sent `array`: the sum `got` is n_workers x array (floats: within quantization;
    None: the all-reduce did not finish)."""
    if got is None:
        raise RuntimeError(f"{case.label}: the all-reduce did not finish")
    want = array.astype(np.float64) * case.n_workers
    if case.dtype == "int32":
        if not np.array_equal(got, want.astype(np.int32)):
            raise RuntimeError(f"{case.label}: wrong sum")
    elif not np.allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max())):
        raise RuntimeError(f"{case.label}: sum off beyond quantization")


def measure(case: CoreCase, reps: int) -> dict:
    array = array_of(case)
    answers = record(case, array)
    walls, cpus, answering = [], [], []
    for _ in range(reps):
        wall, cpu, alone = replay(case, array, answers)
        walls.append(wall)
        cpus.append(cpu)
        answering.append(alone)
    return {
        **asdict(case),
        "label": case.label,
        "compiled": compiled.active(),
        "answers": len(answers),
        "wall_s": summarise(walls),
        "answers_per_s": summarise([len(answers) / w for w in walls]),
        "answers_per_cpu_s": summarise([len(answers) / c if c else 0.0 for c in cpus]),
        # receive alone: the per-answer cost, without start's and result's passes over the array
        "receive_answers_per_cpu_s": summarise([len(answers) / c if c else 0.0 for c in answering]),
    }


def profile_run(path: Path, case: CoreCase) -> None:
    """One replay under cProfile: the functions an answer's time goes to, by their own time."""
    array = array_of(case)
    answers = record(case, array)
    profiler = cProfile.Profile()
    profiler.enable()
    replay(case, array, answers)
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(20)
    path.write_text(
        f"{case.label}, {len(answers):,} answers (compiled: {compiled.active()}), under cProfile\n"
        + text.getvalue()
    )


def bench_core(out: Path, reps: int = 3, full: bool = False) -> list[dict]:
    cases = FULL if full else QUICK
    keep_freed_memory()  # as a worker's process does (ina.hosts.heap)
    out.mkdir(parents=True, exist_ok=True)
    progress = Progress(len(cases) + 1, "core")
    rows = []
    for case in cases:
        rows.append(measure(case, reps))
        progress.step(case.label)
    profile_run(out / "core_profile.txt", cases[0])
    progress.step("cProfile")
    write(out, "core", rows)
    plots.bars(
        out / "core_answers_per_s.png",
        f"ina core alone: answers per second (median; target {TARGET:,})",
        [r["label"] for r in rows],
        [r["answers_per_s"]["median"] for r in rows],
        "answers per second",
    )
    for r in rows:
        print(
            f"core {r['label']}: {r['answers_per_s']['median']:,.0f} answers/s "
            f"({r['answers_per_cpu_s']['median']:,.0f} per CPU second; receive alone, without "
            f"the codec's passes: {r['receive_answers_per_cpu_s']['median']:,.0f}; "
            f"target {TARGET:,})"
        )
    return rows
