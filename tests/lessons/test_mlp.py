"""The course's numpy network (lesson 07): backward pass against finite differences,
Adam against its formula, parameters copied rather than shared, bad input refused."""

import numpy as np
import pytest

from course.mlp import Adam, QNetwork


def _loss(network, observations, output_weights):
    """A loss whose gradient with respect to the outputs is ``output_weights``."""
    return float(np.sum(network.predict(observations) * output_weights))


@pytest.mark.parametrize("sizes", [(4, 64, 64, 2), (3, 5, 1), (2, 7, 6, 5, 3)])
def test_gradients_match_central_finite_differences(sizes):
    rng = np.random.default_rng(len(sizes))
    network = QNetwork(sizes, seed=1)
    for bias in network.biases:  # nonzero biases, so they are tested too
        bias += rng.normal(scale=0.1, size=bias.shape)
    observations = rng.normal(size=(9, sizes[0]))
    output_weights = rng.normal(size=(9, sizes[-1]))
    analytic = network.gradients(observations, output_weights)
    parameters = network.parameters()
    step = 1e-6
    for index, parameter in enumerate(parameters):
        # 12 coordinates of each parameter array, chosen at random
        for flat in rng.choice(parameter.size, size=min(12, parameter.size), replace=False):
            shifted = [p.copy() for p in parameters]
            shifted[index].flat[flat] += step
            network.load_parameters(shifted)
            up = _loss(network, observations, output_weights)
            shifted[index].flat[flat] -= 2 * step
            network.load_parameters(shifted)
            down = _loss(network, observations, output_weights)
            numeric = (up - down) / (2 * step)
            assert analytic[index].flat[flat] == pytest.approx(numeric, rel=1e-5, abs=1e-7), \
                f"parameter {index}, coordinate {flat}"
        network.load_parameters(parameters)


def test_same_seed_same_network_and_parameters_are_copies():
    first, second = QNetwork((4, 8, 2), seed=3), QNetwork((4, 8, 2), seed=3)
    for a, b in zip(first.parameters(), second.parameters()):
        np.testing.assert_array_equal(a, b)
    copied = first.parameters()
    copied[0][...] = 0.0
    assert np.any(first.parameters()[0] != 0.0)
    second.load_parameters(copied)
    copied[0][...] = 1.0  # the network keeps its own copy
    assert np.all(second.parameters()[0] == 0.0)


def test_adam_first_step_moves_each_parameter_by_the_learning_rate_against_its_sign():
    network = QNetwork((3, 4, 2), seed=0)
    before = network.parameters()
    gradients = [np.sign(np.random.default_rng(1).normal(size=p.shape)) * 0.37
                 for p in before]
    Adam(network, learning_rate=0.01).step(gradients)
    for old, new, grad in zip(before, network.parameters(), gradients):
        # bias-corrected moments: the first step is lr * g / (|g| + eps)
        np.testing.assert_allclose(new - old, -0.01 * np.sign(grad), rtol=1e-6)


def test_adam_descends_a_regression_loss():
    rng = np.random.default_rng(2)
    network = QNetwork((2, 16, 1), seed=2)
    optimizer = Adam(network, learning_rate=1e-2)
    x = rng.uniform(-1, 1, size=(64, 2))
    y = (x[:, :1] * x[:, 1:])  # a product: needs the hidden layer
    first = float(np.mean((network.predict(x) - y) ** 2))
    for _ in range(300):
        optimizer.step(network.gradients(x, 2 * (network.predict(x) - y) / len(x)))
    assert float(np.mean((network.predict(x) - y) ** 2)) < first / 10


def test_bad_input_gets_a_specific_message():
    network = QNetwork((4, 8, 2), seed=0)
    with pytest.raises(ValueError, match=r"shape \(batch, 4\)"):
        network.predict(np.zeros(4))
    with pytest.raises(ValueError, match="output_gradients must have the outputs' shape"):
        network.gradients(np.zeros((3, 4)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="shaped like parameters"):
        network.load_parameters(network.parameters()[:2])
    with pytest.raises(ValueError, match="one gradient per parameter"):
        Adam(network).step([np.zeros(1)])
    with pytest.raises(ValueError, match="finite"):
        Adam(network).step([np.full(p.shape, np.nan) for p in network.parameters()])
    with pytest.raises(ValueError, match="at least two positive layer widths"):
        QNetwork((4,))
