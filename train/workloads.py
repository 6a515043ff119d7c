"""Real models' gradients for workload replay: each model's parameter tensors in layer order (built
from the published architectures, so the totals are the public parameter counts), an estimated
compute time per iteration, PyTorch DDP's bucketing, and scaling down to fit one small machine.

Compute times are an estimate, not a measurement: a training iteration costs about 3 forward passes
(the backward pass about 2), forward FLOPs per sample are the published figures (2 FLOPs per
multiply-add), on an assumed sustained 15 TFLOP/s (a V100-class GPU) at the batch per GPU below.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

SUSTAINED_FLOPS = 15e12
BYTES_PER_ELEMENT = 4  # float32 gradients
MIB = 1 << 20
FIRST_BUCKET_MB = (
    1.0  # DDP's first bucket (dist._DEFAULT_FIRST_BUCKET_BYTES), so the all-reduce starts early
)
BUCKET_CAP_MB = 25.0  # DDP's default bucket_cap_mb

Layers = list[tuple[str, int]]  # (parameter tensor, elements), in the model's forward order


@dataclass(frozen=True)
class Workload:
    name: str
    layers: Layers
    forward_gflop: float  # per sample
    batch: int  # per GPU
    note: str

    @property
    def parameters(self) -> int:
        return sum(n for _, n in self.layers)

    @property
    def compute_s(self) -> float:
        """One iteration's forward and backward pass on one GPU (the module docstring's estimate)."""
        return 3 * self.forward_gflop * 1e9 * self.batch / SUSTAINED_FLOPS


def _conv(name: str, c_in: int, c_out: int, k: int, bias: bool = False) -> Layers:
    return [(f"{name}.weight", c_out * c_in * k * k)] + ([(f"{name}.bias", c_out)] if bias else [])


def _norm(name: str, c: int) -> Layers:
    """BatchNorm or LayerNorm: a scale and a shift per channel (running statistics get no gradient)."""
    return [(f"{name}.weight", c), (f"{name}.bias", c)]


def _linear(name: str, d_in: int, d_out: int) -> Layers:
    return [(f"{name}.weight", d_in * d_out), (f"{name}.bias", d_out)]


def resnet50() -> Layers:
    layers = _conv("conv1", 3, 64, 7) + _norm("bn1", 64)
    c_in = 64
    for stage, (width, blocks) in enumerate(((64, 3), (128, 4), (256, 6), (512, 3)), 1):
        for b in range(blocks):
            p = f"layer{stage}.{b}"
            layers += (
                _conv(f"{p}.conv1", c_in, width, 1)
                + _norm(f"{p}.bn1", width)
                + _conv(f"{p}.conv2", width, width, 3)
                + _norm(f"{p}.bn2", width)
                + _conv(f"{p}.conv3", width, 4 * width, 1)
                + _norm(f"{p}.bn3", 4 * width)
            )
            if b == 0:
                layers += _conv(f"{p}.downsample.0", c_in, 4 * width, 1) + _norm(
                    f"{p}.downsample.1", 4 * width
                )
            c_in = 4 * width
    return layers + _linear("fc", 2048, 1000)


def vgg16() -> Layers:
    layers: Layers = []
    c_in = 3
    for i, c_out in enumerate((64, 64, 128, 128, 256, 256, 256, 512, 512, 512, 512, 512, 512)):
        layers += _conv(f"features.conv{i}", c_in, c_out, 3, bias=True)
        c_in = c_out
    return (
        layers
        + _linear("classifier.0", 512 * 7 * 7, 4096)
        + _linear("classifier.3", 4096, 4096)
        + _linear("classifier.6", 4096, 1000)
    )


def _transformer_block(p: str, d: int, fused_qkv: bool) -> Layers:
    """Attention (query, key and value as one tensor in GPT-2, three in BERT), its output
    projection, the 4x MLP, two norms."""
    attention = (
        _linear(f"{p}.attn.qkv", d, 3 * d)
        if fused_qkv
        else [t for part in ("q", "k", "v") for t in _linear(f"{p}.attn.{part}", d, d)]
    )
    return (
        attention
        + _linear(f"{p}.attn.out", d, d)
        + _norm(f"{p}.norm1", d)
        + _linear(f"{p}.mlp.up", d, 4 * d)
        + _linear(f"{p}.mlp.down", 4 * d, d)
        + _norm(f"{p}.norm2", d)
    )


def bert_base() -> Layers:
    d = 768
    layers = [
        ("embeddings.word", 30522 * d),
        ("embeddings.position", 512 * d),
        ("embeddings.token_type", 2 * d),
    ]
    layers += _norm("embeddings.norm", d)
    for i in range(12):
        layers += _transformer_block(f"encoder.{i}", d, fused_qkv=False)
    return layers + _linear("pooler", d, d)


def gpt2_small() -> Layers:
    """The output projection is tied to the token embedding: one tensor, one gradient."""
    d = 768
    layers = [("wte", 50257 * d), ("wpe", 1024 * d)]
    for i in range(12):
        layers += _transformer_block(f"h.{i}", d, fused_qkv=True)
    return layers + _norm("ln_f", d)


_ARCHITECTURES: dict[str, tuple[Callable[[], Layers], float, int, str]] = {
    "resnet50": (resnet50, 8.2, 32, "224x224 images, 4.1 GMAC forward"),
    "vgg16": (vgg16, 31.0, 32, "224x224 images, 15.5 GMAC forward"),
    "bert_base": (bert_base, 22.5, 32, "128 tokens: 2 x 85 M weights x 128 + attention"),
    "gpt2_small": (
        gpt2_small,
        292.0,
        8,
        "1024 tokens: 2 x 85 M weights x 1024 + attention + tied output layer",
    ),
}
WORKLOADS = tuple(_ARCHITECTURES)


def workload(name: str) -> Workload:
    build, gflop, batch, note = _ARCHITECTURES[name]
    return Workload(name, build(), gflop, batch, note)


def ddp_buckets(
    sizes: list[int], cap_mb: float = BUCKET_CAP_MB, first_mb: float = FIRST_BUCKET_MB
) -> list[list[int]]:
    """Indices of `sizes` (elements per tensor, forward order) in each bucket, as DDP assigns them:
    tensors in reverse order (gradients become ready from the last layer back), a bucket closed as
    soon as its bytes reach its limit (so it may exceed it by its last tensor), the first bucket's
    limit `first_mb`, every later one `cap_mb` (MiB)."""
    limits = [first_mb * MIB, cap_mb * MIB]
    buckets: list[list[int]] = []
    current: list[int] = []
    filled = 0
    for i in reversed(range(len(sizes))):
        current.append(i)
        filled += sizes[i] * BYTES_PER_ELEMENT
        if filled >= limits[min(len(buckets), 1)]:
            buckets.append(current)
            current, filled = [], 0
    return buckets + ([current] if current else [])


def scaled_buckets(
    w: Workload, scale: float, cap_mb: float = BUCKET_CAP_MB, first_mb: float = FIRST_BUCKET_MB
) -> list[int]:
    """Elements of each bucket all-reduced per iteration: the full model's buckets, each shrunk by
    `scale` (at least one element), so a scaled run keeps the real model's number of buckets."""
    sizes = [n for _, n in w.layers]
    return [
        max(1, math.ceil(scale * sum(sizes[i] for i in bucket)))
        for bucket in ddp_buckets(sizes, cap_mb, first_mb)
    ]
