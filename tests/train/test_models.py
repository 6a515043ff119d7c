"""Both models' hand-written gradients against central differences, and seeded initialisation."""

import numpy as np
import pytest

from ina.train.data import LOADERS, load
from ina.train.models import MODELS, make_model


def numerical_gradient(model, x, y, step=1e-6) -> np.ndarray:
    grad = np.empty_like(model.params)
    for i in range(len(model.params)):
        saved = model.params[i]
        model.params[i] = saved + step
        up = model.loss(x, y)
        model.params[i] = saved - step
        down = model.loss(x, y)
        model.params[i] = saved
        grad[i] = (up - down) / (2 * step)
    return grad


@pytest.mark.parametrize("name", MODELS)
def test_gradient_matches_central_differences(name):
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=(12, 5)), rng.integers(0, 4, 12)
    model = make_model(name, 5, 4, seed=3, hidden=6)
    model.params += rng.normal(0.0, 0.1, model.params.shape)  # biases away from zero too
    loss, grad = model.loss_and_grad(x, y)
    assert loss == model.loss(x, y)
    np.testing.assert_allclose(grad, numerical_gradient(model, x, y), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", MODELS)
def test_the_seed_alone_sets_the_initial_weights(name):
    a, b, c = (make_model(name, 8, 3, seed=s) for s in (1, 1, 2))
    assert np.array_equal(a.params, b.params)
    assert not np.array_equal(a.params, c.params)


def test_unknown_model_lists_the_choices():
    with pytest.raises(ValueError, match="choose one of softmax, mlp"):
        make_model("cnn", 4, 2, seed=0)


@pytest.mark.parametrize("name", LOADERS)
def test_datasets_are_split_and_scaled_on_the_training_set(name):
    data = load(name, seed=0)
    assert len(data.y_test) / (len(data.y_test) + len(data.y_train)) == pytest.approx(0.2, abs=0.01)
    np.testing.assert_allclose(data.x_train.mean(axis=0), 0.0, atol=1e-9)
    assert set(np.unique(data.y_test)) == set(range(data.n_classes))  # stratified
    assert not np.allclose(
        data.x_test.mean(axis=0), 0.0, atol=1e-9
    )  # scaled with the train statistics


def test_unknown_dataset_lists_the_choices():
    with pytest.raises(ValueError, match="choose one of digits, iris, wine, breast_cancer"):
        load("mnist")
