"""PyTorch DDP gradients averaged through an ina switch: a communication hook.

    from ina.hosts.worker import Worker
    from ina.train.feedback import BucketFeedback
    from ina.train.torch_hook import switch_allreduce_hook

    worker = Worker(job_id, rank, world_size, switch_ip, epoch=epoch)
    ddp = DistributedDataParallel(model)        # any backend: DDP still needs a process group
    ddp.register_comm_hook(worker, switch_allreduce_hook)

    # narrow lanes with error feedback: Worker(..., bits=8) and, as the hook's state,
    ddp.register_comm_hook(BucketFeedback(worker, elems, world_size, 8), switch_allreduce_hook)

DDP hands the hook each GradBucket (the bucket's gradients flattened into one tensor) in the same
order on every rank; the hook starts its all-reduce through the switch with
`state.allreduce_async` (an ina `Worker`, or anything with that method: a future of the sum of
every rank's array, in `.total`) and returns a future that DDP waits on only at the end of the
backward pass. So the buckets travel while the backward pass computes the next ones, as with NCCL;
the worker runs them one after another, in the order asked. On completion the sum, divided by the
default process group's size, is written into the bucket. Only `allreduce_async` is used, so the
hook follows whatever protocol the worker speaks. The switch sums float32 as block floating point
(docs/accuracy.md): other float dtypes travel as float32 and come back in their own dtype. With a
`BucketFeedback` (train/feedback.py) as the state, each bucket first gets the quantization residual
its last step left (error feedback, for a worker of 16- or 8-bit lanes).

torch is an optional dependency (`pip install ina[torch]`); nothing else in ina imports this module.
"""

import concurrent.futures

import torch
import torch.distributed as dist

from ina.train.feedback import AllReduce, BucketFeedback


def switch_allreduce_hook(
    state: AllReduce, bucket: dist.GradBucket
) -> torch.futures.Future[torch.Tensor]:
    """A future of the bucket's gradients averaged over the ranks, written into its buffer."""
    buffer = bucket.buffer()
    world = dist.get_world_size()
    averaged: torch.futures.Future[torch.Tensor] = torch.futures.Future()

    def done(reduced: concurrent.futures.Future) -> None:  # on the worker's I/O thread
        try:
            buffer.copy_(torch.from_numpy(reduced.result().total / world))
        except (
            Exception
        ) as err:  # the worker's error (or a copy's) reaches DDP's wait, not this thread
            averaged.set_exception(err)
        else:
            averaged.set_result(buffer)

    array = buffer.detach().to("cpu", torch.float32).numpy()
    if isinstance(state, BucketFeedback):
        array = state.compensate(bucket.index(), array)
    state.allreduce_async(array).add_done_callback(done)
    return averaged
