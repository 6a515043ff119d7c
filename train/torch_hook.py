"""PyTorch DDP gradients averaged through an ina switch: a communication hook.

    from ina.hosts.worker import Worker
    from ina.train.torch_hook import switch_allreduce_hook

    worker = Worker(job_id, rank, world_size, switch_ip, epoch=epoch)
    ddp = DistributedDataParallel(model)        # any backend: DDP still needs a process group
    ddp.register_comm_hook(worker, switch_allreduce_hook)

DDP hands the hook each GradBucket (the bucket's gradients flattened into one tensor) in the same
order on every rank; the hook all-reduces it through the switch with `state.allreduce` (an ina
`Worker`, or anything with that method: the sum of every rank's array), divides by the default process
group's size and returns a completed future. Only `allreduce` is used, so the hook follows whatever
protocol the worker speaks. The switch sums float32 as block floating point (docs/accuracy.md):
other float dtypes travel as float32 and come back in their own dtype. The all-reduce blocks the
backward pass (no overlap with it), which is what a completed future means.

torch is an optional dependency (`pip install ina[torch]`); nothing else in ina imports this module.
"""

from typing import Protocol

import numpy as np
import torch
import torch.distributed as dist


class AllReduce(Protocol):
    def allreduce(self, array: np.ndarray) -> np.ndarray: ...


def switch_allreduce_hook(state: AllReduce, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """The bucket's gradients averaged over the ranks, written into its buffer."""
    buffer = bucket.buffer()
    grads = buffer.detach().to("cpu", torch.float32).numpy()
    total = state.allreduce(grads)
    buffer.copy_(torch.from_numpy(total / dist.get_world_size()))
    future: torch.futures.Future[torch.Tensor] = torch.futures.Future()
    future.set_result(buffer)
    return future
