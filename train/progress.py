"""Progress of a training run, one step per epoch: a tqdm bar when tqdm is installed (it is not
among ina's pinned requirements), otherwise one plain line per epoch."""

import sys


class EpochProgress:
    def __init__(self, epochs: int, prefix: str = "[ina train]"):
        self.epochs, self.prefix = epochs, prefix
        try:
            from tqdm import tqdm
        except ImportError:
            self.bar = None
        else:
            self.bar = tqdm(total=epochs, desc=prefix, unit="epoch", file=sys.stderr)

    def update(self, epoch: int, loss: float, test_accuracy: float, wall_s: float) -> None:
        if self.bar is not None:
            self.bar.set_postfix(loss=f"{loss:.4f}", accuracy=f"{test_accuracy:.1%}")
            self.bar.update(1)
        else:
            print(
                f"{self.prefix} epoch {epoch}/{self.epochs}: loss {loss:.4f}, test accuracy "
                f"{test_accuracy:.1%}, {wall_s:.1f} s",
                flush=True,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
