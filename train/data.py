"""Classification datasets that ship inside scikit-learn's wheel, split and scaled for training.

Only the bundled `load_*` sets are offered: nothing is fetched at run time, so every host of a
Mininet network (and an offline machine) loads the same data from the installed package.
scikit-learn is imported when a set is loaded, not with this module: every CLI that names the
sets (`ina sim`, `ina bench train`) would otherwise pay its import, seconds on a loaded machine.
"""

from dataclasses import dataclass

import numpy as np

LOADERS: dict[str, str] = {  # a set's name -> its loader in sklearn.datasets
    "digits": "load_digits",
    "iris": "load_iris",
    "wine": "load_wine",
    "breast_cancer": "load_breast_cancer",
}
TEST_FRACTION = 0.2


@dataclass(frozen=True)
class Dataset:
    name: str
    x_train: np.ndarray  # float64, scaled with the training split's mean and deviation
    y_train: np.ndarray  # int64 class labels 0..n_classes-1
    x_test: np.ndarray
    y_test: np.ndarray
    n_classes: int

    @property
    def n_features(self) -> int:
        return self.x_train.shape[1]


def load(name: str, seed: int = 0) -> Dataset:
    """`name` split into a stratified held-out test set (the seed picks it) and a training set; the
    scaler is fit on the training set only, so nothing of the test set leaks into training."""
    if name not in LOADERS:
        raise ValueError(f"unknown dataset {name!r}: choose one of {', '.join(LOADERS)}")
    from sklearn import datasets
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    x, y = getattr(datasets, LOADERS[name])(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(
        x.astype(np.float64),
        y.astype(np.int64),
        test_size=TEST_FRACTION,
        random_state=seed,
        stratify=y,
    )
    scaler = StandardScaler().fit(x_train)
    return Dataset(
        name, scaler.transform(x_train), y_train, scaler.transform(x_test), y_test, int(y.max()) + 1
    )
