"""PyTorch DDP with its gradients averaged through the real switch program (train/torch_hook.py):
two processes (gloo only for DDP's own bookkeeping and the float reference) train a tiny model, each
bucket all-reduced by an ina `Worker` over UDP on loopback; every step's averaged gradients equal
gloo's float all-reduce within the block-floating-point bound of docs/accuracy.md. Skipped when
torch is not installed (it is an optional extra: `pip install -e .[torch]`)."""

import multiprocessing
import os
import socket
import threading

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch is not installed (optional: pip install -e '.[torch]')"
)
dist = pytest.importorskip("torch.distributed")

from ina.controller.aggregation import Worker as WorkerEntry  # noqa: E402
from ina.hosts.inprocess import FRAME_HEADERS, InProcessSwitch, update_frame_header  # noqa: E402
from ina.hosts.worker import Worker  # noqa: E402
from ina.train.torch_hook import switch_allreduce_hook  # noqa: E402

WORLD, STEPS, JOB = 2, 6, 0


class UdpSwitch:
    """The real switch program and controller (the in-process harness's) behind one UDP socket on
    loopback: a datagram from worker r's address enters the switch on port r + 1 in the frame its
    admission entry names; each frame the switch sends out of a worker's port goes back, as its UDP
    payload, to the address that worker sends from."""

    def __init__(self, n_workers: int):
        self.net = InProcessSwitch(elems=64, pool_size=256)
        self.entries = [
            WorkerEntry(rank, rank + 1, f"02:00:00:00:00:{rank + 1:02x}", f"127.0.0.{rank + 2}")
            for rank in range(n_workers)
        ]
        self.epoch = self.net.controller.add_job(JOB, self.entries, 64).epoch
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.1)  # so close() ends the thread: closing a socket wakes no recvfrom
        self.port = self.sock.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        by_ip = {e.ip: e for e in self.entries}
        senders: dict[int, tuple[str, int]] = {}  # switch port -> the worker's UDP address
        while not self._stop.is_set():
            try:
                data, source = self.sock.recvfrom(1 << 16)
            except TimeoutError:
                continue
            entry = by_ip[source[0]]
            senders[entry.port] = source
            for port, frame in self.net.switch.process(
                entry.port, update_frame_header(entry, len(data)) + data
            ):
                if port in senders:
                    self.sock.sendto(frame[FRAME_HEADERS:], senders[port])

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()
        self.net.close()


class CountingWorker:
    """The hook's state: a Worker whose all-reduces are counted."""

    def __init__(self, worker: Worker):
        self.worker, self.calls = worker, 0

    def allreduce_async(self, array: np.ndarray):
        self.calls += 1
        return self.worker.allreduce_async(array)


def train_rank(
    rank: int, store: str, switch_port: int, epoch: int, out: multiprocessing.Queue
) -> None:
    """One DDP rank: STEPS of SGD with the hook; per step, the largest gap between DDP's averaged
    gradient and gloo's float all-reduce of the same local gradients, and the bound it must keep."""
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=WORLD)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 3))
    reference = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 3))
    # Buckets of at most 512 bytes: each step's gradients travel as several all-reduces, started
    # while the backward pass still computes the next buckets.
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=512 / 2**20)
    worker = Worker(
        JOB,
        rank,
        WORLD,
        "127.0.0.1",
        f"127.0.0.{rank + 2}",
        0,
        switch_port=switch_port,
        epoch=epoch,
    )
    counting = CountingWorker(worker)
    ddp.register_comm_hook(counting, switch_allreduce_hook)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.5)
    data = torch.Generator().manual_seed(100 + rank)  # each rank its own shard, the same every step
    x, y = torch.randn(16, 8, generator=data), torch.randint(0, 3, (16,), generator=data)
    steps = []
    for _ in range(STEPS):
        reference.load_state_dict(model.state_dict())
        local = torch.autograd.grad(
            torch.nn.functional.cross_entropy(reference(x), y), reference.parameters()
        )
        expected = torch.cat([g.flatten() for g in local])
        peak = expected.abs().max()
        dist.all_reduce(expected)
        expected /= WORLD
        dist.all_reduce(peak, op=dist.ReduceOp.MAX)
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        loss.backward()
        got = torch.cat([p.grad.flatten() for p in model.parameters()])
        # docs/accuracy.md: n * 2^e / 2^32 per summed element, 2^e <= 2 * peak, divided by n for the
        # mean; plus float32 rounding of the result, the division and the reference
        bound = 2 * peak / 2**32 + 4 * torch.finfo(torch.float32).eps * expected.abs()
        steps.append(
            {
                "loss": loss.item(),
                "gap": (got - expected).abs().max().item(),
                "within": bool(((got - expected).abs() <= bound).all()),
            }
        )
        optimizer.step()
    worker.close()
    steps[0]["buckets"] = counting.calls / STEPS
    out.put((rank, steps, torch.cat([p.detach().flatten() for p in model.parameters()]).numpy()))
    dist.destroy_process_group()


def test_ddp_gradients_through_the_switch_equal_the_float_allreduce(tmp_path):
    switch = UdpSwitch(WORLD)
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [
        ctx.Process(
            target=train_rank, args=(rank, str(tmp_path / "store"), switch.port, switch.epoch, out)
        )
        for rank in range(WORLD)
    ]
    try:
        for p in procs:
            p.start()
        results = dict(
            (rank, (steps, params)) for rank, steps, params in (out.get(timeout=120) for _ in procs)
        )
        for p in procs:
            p.join(timeout=30)
            assert p.exitcode == 0
        stats = switch.net.stats()
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
        switch.close()
    for steps, _params in results.values():
        assert len(steps) == STEPS
        assert steps[0]["buckets"] > 1  # each step's gradients in several all-reduces
        assert all(s["within"] for s in steps), steps
        assert any(s["gap"] > 0 for s in steps)  # quantised by the switch, not a float sum
        assert steps[-1]["loss"] < steps[0]["loss"]  # the averaged gradients train the model
    assert np.array_equal(results[0][1], results[1][1])  # every rank applied the same averages
    assert stats["jobs"][JOB]["completed"] >= STEPS  # every step's buckets went through the switch
