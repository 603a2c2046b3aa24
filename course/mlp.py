"""A small multilayer perceptron in numpy: forward pass, backward pass, and Adam.

Lesson 07 is about replay for a neural Q-network, not about backpropagation, so the
network is given. ``QNetwork([4, 64, 64, 2], seed)`` maps a batch of observations to one
Q-value per action through ReLU hidden layers and a linear output layer:

- ``predict(observations)``: the Q-values, shape (batch, actions);
- ``gradients(observations, output_gradients)``: the gradient of a loss with respect to
  every parameter, given the loss's gradient with respect to the outputs (backward pass);
- ``parameters()`` / ``load_parameters(values)``: copies of the weights, to sync a target
  network.

``Adam(network, learning_rate)`` applies gradients: ``step(gradients)``. Everything is
float64; ``tests/lessons/test_mlp.py`` checks the backward pass against finite differences.
"""

import numpy as np


class QNetwork:
    """Fully connected layers ``sizes[0] -> ... -> sizes[-1]``, ReLU between them.

    Weights start as He-uniform draws from ``seed`` (biases at zero), so two networks
    made with the same sizes and seed are equal.
    """

    def __init__(self, sizes, seed=None):
        sizes = [int(size) for size in sizes]
        if len(sizes) < 2 or min(sizes) < 1:
            raise ValueError(f"sizes must be at least two positive layer widths, got {sizes}")
        self.sizes = sizes
        rng = np.random.default_rng(seed)
        self.weights, self.biases = [], []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            limit = np.sqrt(6.0 / fan_in)  # He-uniform: keeps ReLU activations' scale
            self.weights.append(rng.uniform(-limit, limit, size=(fan_in, fan_out)))
            self.biases.append(np.zeros(fan_out))

    def _checked(self, observations):
        observations = np.asarray(observations, dtype=np.float64)
        if observations.ndim != 2 or observations.shape[1] != self.sizes[0]:
            raise ValueError(f"expected observations of shape (batch, {self.sizes[0]}), got "
                             f"{observations.shape}")
        return observations

    def _layers(self, observations):
        """The input of every layer and the output: [x, h1, ..., q]."""
        activations = [self._checked(observations)]
        last = len(self.weights) - 1
        for layer, (weight, bias) in enumerate(zip(self.weights, self.biases)):
            z = activations[-1] @ weight + bias
            activations.append(z if layer == last else np.maximum(z, 0.0))
        return activations

    def predict(self, observations):
        """Q-values of a batch of observations: shape (batch, actions)."""
        return self._layers(observations)[-1]

    def gradients(self, observations, output_gradients):
        """d loss / d parameter for every parameter, in the order of ``parameters()``,
        given ``output_gradients`` = d loss / d Q-values, shape (batch, actions)."""
        activations = self._layers(observations)
        upstream = np.asarray(output_gradients, dtype=np.float64)
        if upstream.shape != activations[-1].shape:
            raise ValueError(f"output_gradients must have the outputs' shape "
                             f"{activations[-1].shape}, got {upstream.shape}")
        weight_grads, bias_grads = [], []
        for layer in reversed(range(len(self.weights))):
            weight_grads.append(activations[layer].T @ upstream)
            bias_grads.append(upstream.sum(axis=0))
            if layer:
                # a ReLU passes gradient only where its output was positive
                upstream = (upstream @ self.weights[layer].T) * (activations[layer] > 0)
        weight_grads.reverse()
        bias_grads.reverse()
        return [grad for pair in zip(weight_grads, bias_grads) for grad in pair]

    def parameters(self):
        """Copies of the parameters: [W1, b1, W2, b2, ...]."""
        return [array.copy() for pair in zip(self.weights, self.biases) for array in pair]

    def load_parameters(self, values):
        """Set the parameters to copies of ``values`` (as ``parameters()`` returns them)."""
        values = [np.asarray(value, dtype=np.float64) for value in values]
        own = self.parameters()
        if len(values) != len(own) or any(v.shape != o.shape for v, o in zip(values, own)):
            raise ValueError("load_parameters needs arrays shaped like parameters(): "
                             f"{[o.shape for o in own]}, got {[v.shape for v in values]}")
        self.weights = [value.copy() for value in values[0::2]]
        self.biases = [value.copy() for value in values[1::2]]


class Adam:
    """Adam (Kingma & Ba, 2015) on a QNetwork's parameters: ``step(gradients)`` moves
    each parameter against its gradient, scaled by running moments of the gradients."""

    def __init__(self, network, learning_rate=1e-3, betas=(0.9, 0.999), epsilon=1e-8):
        if not learning_rate > 0:
            raise ValueError(f"learning_rate must be positive, got {learning_rate}")
        self.network, self.learning_rate = network, learning_rate
        self.beta1, self.beta2 = betas
        self.epsilon = epsilon
        self.steps = 0
        shapes = [p.shape for p in network.parameters()]
        self.first = [np.zeros(shape) for shape in shapes]
        self.second = [np.zeros(shape) for shape in shapes]

    def step(self, gradients):
        """One update of the network's parameters with ``gradients`` (as
        ``network.gradients`` returns them)."""
        gradients = [np.asarray(g, dtype=np.float64) for g in gradients]
        if len(gradients) != len(self.first) or any(
                g.shape != m.shape for g, m in zip(gradients, self.first)):
            raise ValueError("step needs one gradient per parameter, shaped like "
                             f"parameters(): {[m.shape for m in self.first]}, got "
                             f"{[g.shape for g in gradients]}")
        if not all(np.all(np.isfinite(g)) for g in gradients):
            raise ValueError("gradients must be finite")
        self.steps += 1
        correction1 = 1 - self.beta1 ** self.steps
        correction2 = 1 - self.beta2 ** self.steps
        network = self.network
        params = [array for pair in zip(network.weights, network.biases) for array in pair]
        for param, grad, first, second in zip(params, gradients, self.first, self.second):
            first *= self.beta1
            first += (1 - self.beta1) * grad
            second *= self.beta2
            second += (1 - self.beta2) * grad * grad
            param -= self.learning_rate * (first / correction1) / (
                np.sqrt(second / correction2) + self.epsilon)
