"""Classifiers in numpy with hand-written backward passes: what `ina train` all-reduces.

A model keeps every parameter in one flat float64 vector and each layer's matrix is a view of it,
so a gradient is one flat array too: what a worker all-reduces and SGD subtracts, with no packing.
Initialisation draws from a seeded generator only, so a seed gives the same model on every host.
"""

import numpy as np


def _softmax_cross_entropy(logits: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of `logits` against labels `y`, and its gradient with respect to `logits`."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    rows = np.arange(len(y))
    loss = -float(log_probs[rows, y].mean())
    dlogits = np.exp(log_probs)
    dlogits[rows, y] -= 1.0
    return loss, dlogits / len(y)


class Model:
    """Parameters as one flat vector cut into `shapes`; subclasses give forward and backward."""

    def __init__(self, shapes: list[tuple[int, ...]]):
        self.shapes = shapes
        self.params = np.zeros(sum(int(np.prod(s)) for s in shapes))

    def views(self, flat: np.ndarray) -> list[np.ndarray]:
        """`flat` cut into one array per shape, sharing its memory."""
        ends = np.cumsum([int(np.prod(s)) for s in self.shapes])
        return [
            part.reshape(s) for part, s in zip(np.split(flat, ends[:-1]), self.shapes, strict=True)
        ]

    def logits(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def loss_and_grad(self, x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
        """Mean cross-entropy over the rows of `x`, and its gradient as one flat vector."""
        raise NotImplementedError

    def loss(self, x: np.ndarray, y: np.ndarray) -> float:
        return _softmax_cross_entropy(self.logits(x), y)[0]

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        return float((self.logits(x).argmax(axis=1) == y).mean())


class SoftmaxRegression(Model):
    """logits = x W + b."""

    def __init__(self, n_features: int, n_classes: int, seed: int):
        super().__init__([(n_features, n_classes), (n_classes,)])
        w, _b = self.views(self.params)
        w[:] = np.random.default_rng(seed).normal(0.0, np.sqrt(1.0 / n_features), w.shape)

    def logits(self, x: np.ndarray) -> np.ndarray:
        w, b = self.views(self.params)
        return x @ w + b

    def loss_and_grad(self, x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
        loss, dlogits = _softmax_cross_entropy(self.logits(x), y)
        grad = np.empty_like(self.params)
        dw, db = self.views(grad)
        dw[:] = x.T @ dlogits
        db[:] = dlogits.sum(axis=0)
        return loss, grad


class MLP(Model):
    """One hidden ReLU layer: logits = relu(x W1 + b1) W2 + b2; He initialisation of W1."""

    def __init__(self, n_features: int, n_classes: int, seed: int, hidden: int = 32):
        super().__init__([(n_features, hidden), (hidden,), (hidden, n_classes), (n_classes,)])
        w1, _b1, w2, _b2 = self.views(self.params)
        rng = np.random.default_rng(seed)
        w1[:] = rng.normal(0.0, np.sqrt(2.0 / n_features), w1.shape)
        w2[:] = rng.normal(0.0, np.sqrt(1.0 / hidden), w2.shape)

    def _forward(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        w1, b1, w2, b2 = self.views(self.params)
        hidden = np.maximum(x @ w1 + b1, 0.0)
        return hidden, hidden @ w2 + b2

    def logits(self, x: np.ndarray) -> np.ndarray:
        return self._forward(x)[1]

    def loss_and_grad(self, x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
        hidden, logits = self._forward(x)
        loss, dlogits = _softmax_cross_entropy(logits, y)
        _w1, _b1, w2, _b2 = self.views(self.params)
        grad = np.empty_like(self.params)
        dw1, db1, dw2, db2 = self.views(grad)
        dw2[:] = hidden.T @ dlogits
        db2[:] = dlogits.sum(axis=0)
        dhidden = (dlogits @ w2.T) * (hidden > 0)
        dw1[:] = x.T @ dhidden
        db1[:] = dhidden.sum(axis=0)
        return loss, grad


MODELS = ("softmax", "mlp")


def make_model(name: str, n_features: int, n_classes: int, seed: int, hidden: int = 32) -> Model:
    """A freshly initialised model by name; an unknown name lists the choices."""
    match name:
        case "softmax":
            return SoftmaxRegression(n_features, n_classes, seed)
        case "mlp":
            return MLP(n_features, n_classes, seed, hidden)
    raise ValueError(f"unknown model {name!r}: choose one of {', '.join(MODELS)}")
