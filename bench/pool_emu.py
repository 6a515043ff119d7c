"""`ina bench pool-emu`: preemption and a short churn of jobs against a real switch in Mininet
(issue 33), every job change made through `ina ctl` (add-job, preempt, reset-job, remove-job) on
the running switch, as an operator would.

A star of 6 workers (3 jobs of 2) and an extra host for job 0's host fallback server, the switch
with a pool of POOL_SIZE slots. The steps (`STEPS`), each followed by one all-reduce of every job
then on, run together:
1. job 0 (best effort: its server on the extra host) arrives and takes the whole pool;
2. job 1 arrives for half of it: it preempts job 0, which is shrunk to the other half (new epoch);
3. job 2 arrives for half: it preempts job 0 again, which holds exactly that with a server, so it
   gives all its slots and goes on through its server (its workers address the server);
4. job 1 leaves; job 0 is added again on the slots job 1 left;
5. jobs 2 and 0 leave.
After each step the jobs read back over P4Runtime (`ina ctl show-jobs`) must equal the view the
commands' own answers built (range, epoch, server), and every worker verifies its sums. A job that
runs again with nothing changed gets a new run (`reset-job`): its workers are new processes.
"""

import dataclasses
import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ina.bench.results import write
from ina.controller.aggregation import Fallback
from ina.controller.allocators import Range
from ina.controller.pool import pool_map
from ina.topologies.model import Topology
from ina.topologies.net import Network
from ina.topologies.runner import (
    RunError,
    RunOptions,
    RunResult,
    fallback_servers,
    run,
    run_workers,
    say,
)

POOL_SIZE = 8
WORKERS, JOBS = 6, 3
ELEMS, SIZE = 16, 4096  # 256 chunks per all-reduce
ELECTION_ID = 100  # the commands' (above the runner's 1: the switch keeps the highest it saw)


@dataclass(frozen=True)
class Step:
    what: str
    # `ina ctl` commands: (command, job, slots ("all" or "half" of the pool), victim), the job's
    # workers and server filled in
    commands: tuple[tuple[str, ...], ...]
    runs: tuple[int, ...]  # the jobs that all-reduce after it


STEPS = (
    Step("job 0 arrives: the whole pool, best effort", (("add-job", "0", "all"),), (0,)),
    Step("job 1 arrives for half: job 0 shrunk", (("preempt", "1", "half", "0"),), (0, 1)),
    Step(
        "job 2 arrives for half: job 0 onto its host fallback server",
        (("preempt", "2", "half", "0"), ("reset-job", "1")),
        (0, 1, 2),
    ),
    Step(
        "job 1 leaves; job 0 back on the switch",
        (("remove-job", "1"), ("add-job", "0", "half"), ("reset-job", "2")),
        (0, 2),
    ),
    Step("jobs 2 and 0 leave", (("remove-job", "2"), ("remove-job", "0")), ()),
)


Ctl = Callable[[list[str]], Any]  # `ina ctl` argv (global options included) -> its JSON answer


def ina_ctl(argv: list[str]) -> Any:
    """One `ina ctl` process: its JSON answer; RunError with its one-line message if it failed."""
    done = subprocess.run(
        [sys.executable, "-m", "ina", "ctl", *argv], capture_output=True, text=True, timeout=120
    )
    if done.returncode:
        raise RunError(f"ina ctl {' '.join(argv)}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def job_args(topo: Topology, job: int, server: Fallback | None) -> list[str]:
    """add-job's/preempt's --worker options for a star's `job` (and its --fallback server)."""
    switch = next(iter(topo.switches.values()))
    workers = [
        f"{rank}:{switch.hosts[h]}:{topo.hosts[h].mac}:{topo.hosts[h].ip}"
        for rank, h in enumerate(topo.jobs[job].workers)
    ]
    args = [a for w in workers for a in ("--worker", w)]
    if server is not None:
        args += ["--fallback", f"{server.port}:{server.mac}:{server.ip}:{server.udp_port}"]
    return args


def _seen(job: dict) -> tuple:
    """What the view and the read-back compare of a job."""
    return job["base"], job["num_slots"], job["epoch"], job["fallback"]


def churn_scenario(
    opts: RunOptions, record: list[dict], run_ctl: Ctl = ina_ctl
) -> Callable[[Network, Topology, Path], list[dict]]:
    """The `RunOptions.scenario` running STEPS, each step's figures appended to `record`, every
    job change made by `run_ctl` (`ina ctl` processes)."""

    def scenario(network: Network, topo: Topology, run_dir: Path) -> list[dict]:
        grpc = next(iter(topo.switches.values())).grpc

        def ctl(argv: list[str]) -> Any:
            return run_ctl(
                ["--grpc-addr", grpc, "--election-id", str(ELECTION_ID), "--json", *argv]
            )

        pool = ctl(["show-pool"])["pool_size"]
        slots = {"all": str(pool), "half": str(pool // 2)}
        servers = {0: fallback_servers(topo)[0]}  # job 0 alone is best effort
        view: dict[int, dict] = {}  # the controller's view: each job as its command answered
        on_host: dict[int, dict] = {}  # jobs preempted onto their host fallback server
        reports = []
        for n, step in enumerate(STEPS, 1):
            t0 = time.monotonic()
            for kind, job_text, *rest in step.commands:
                job = int(job_text)
                if kind == "add-job":
                    extra = job_args(topo, job, servers.get(job))
                    view[job] = ctl([kind, job_text, "--slots", slots[rest[0]], *extra])
                    on_host.pop(job, None)
                elif kind == "preempt":
                    argv = [kind, job_text, "--slots", slots[rest[0]], "--victim", rest[1]]
                    done = ctl([*argv, *job_args(topo, job, servers.get(job))])
                    victim = done["victim"]
                    view[job] = done["job"]
                    if done["on_host"]:
                        del view[victim["job_id"]]
                        on_host[victim["job_id"]] = victim
                    else:
                        view[victim["job_id"]] = victim
                elif kind == "reset-job":
                    view[job] = ctl([kind, job_text])
                else:
                    ctl([kind, job_text])
                    del view[job]
            ctl_s = time.monotonic() - t0
            read = ctl(["show-jobs"])
            matches = {j["job_id"]: _seen(j) for j in read} == {
                job: _seen(j) for job, j in view.items()
            }
            say(f"step {n}: {step.what}; read back {'equal to' if matches else 'UNLIKE'} the view")
            jobs = {**view, **on_host}
            step_reports = []
            if step.runs:
                ran = tuple(topo.jobs[j] for j in step.runs)
                step_reports = run_workers(
                    network,
                    dataclasses.replace(topo, jobs=ran),
                    opts,
                    {j: jobs[j]["epoch"] for j in step.runs},
                    run_dir,
                    {j: servers[j] for j in step.runs if j in servers},
                    {j: jobs[j]["num_slots"] for j in step.runs},
                    on_host=on_host.keys(),
                )
            for report in step_reports:
                report["step"] = n
            reports += step_reports
            record.append(
                {
                    "step": n,
                    "what": step.what,
                    "ctl_s": round(ctl_s, 3),
                    "jobs": {
                        job: {
                            "base": j["base"],
                            "slots": j["num_slots"],
                            "on_host": job in on_host,
                        }
                        for job, j in sorted(jobs.items())
                    },
                    "read_back_equal": matches,
                    "pool": pool_map(
                        {j["job_id"]: Range(j["base"], j["num_slots"]) for j in read}, pool
                    ),
                    "verified": all(r.get("verified") for r in step_reports),
                    "elapsed_s": {
                        job: max(
                            r.get("elapsed_s", 0.0) for r in step_reports if r.get("job") == job
                        )
                        for job in step.runs
                    },
                }
            )
        return reports

    return scenario


def placements(row: dict) -> dict[int, tuple[int, int, bool]]:
    """A step's jobs (a `churn_scenario` record row) as (base, slots, on_host) each: where each
    job ran after the step."""
    return {job: (j["base"], j["slots"], j["on_host"]) for job, j in row["jobs"].items()}


def pool_emu_run(run_dir: str | None = None) -> tuple[RunResult, list[dict]]:
    """The scenario on ina's switch in Mininet: the run and each step's figures."""
    record: list[dict] = []
    opts = RunOptions(
        workers=WORKERS,
        jobs=JOBS,
        size=SIZE,
        elems=ELEMS,
        pool_size=POOL_SIZE,
        slots=POOL_SIZE,
        run_dir=run_dir,
    )
    opts.scenario = churn_scenario(opts, record)
    return run(opts), record


def bench_pool_emu(out: Path) -> list[dict]:
    """`ina bench pool-emu`: the scenario once; each step's figures (pool_emu.json) and, for the
    summary, a row per step in words."""
    result, record = pool_emu_run(str(out / "runs" / "pool-emu"))
    write(out, "pool_emu", [{**row, "ok": result.ok} for row in record])
    return [
        {
            "step": row["step"],
            "what": row["what"],
            "slots": ", ".join(
                f"job {job} " + ("on its server" if on_host else f"{base}..{base + slots - 1}")
                for job, (base, slots, on_host) in placements(row).items()
            ),
            "read back equal": row["read_back_equal"],
            "sums exact": row["verified"],
            "ina ctl s": row["ctl_s"],
            "all-reduce s": ", ".join(f"job {j} {t:.2f}" for j, t in row["elapsed_s"].items()),
        }
        for row in record
    ]
