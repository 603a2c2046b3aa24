"""Many small ReLU networks trained side by side: one per run, stacked on a first axis.

Lesson 08's experiments train hundreds of runs (seeds x settings) at once: every numpy
call serves all of them. ``StackedMLP(networks)`` takes one ``course.mlp.QNetwork`` per run
(so run r starts from ``QNetwork(sizes, seed_r)``'s weights) and keeps them in float32:
these batched products of small matrices are bound by memory traffic, and float32 halves
it. ``StackedAdam`` is Adam on every run's parameters at once. A run's numbers never
depend on the runs beside it (every operation works run by run).
"""

import numpy as np


class StackedMLP:
    """One ReLU MLP per run; ``layers(x)`` for x of shape (runs, batch, inputs)."""

    def __init__(self, networks, dtype=np.float32):
        self.weights = [np.stack([network.weights[i] for network in networks]).astype(dtype)
                        for i in range(len(networks[0].weights))]
        self.biases = [np.stack([network.biases[i] for network in networks]).astype(dtype)
                       for i in range(len(networks[0].biases))]

    def parameters(self):
        return [part for pair in zip(self.weights, self.biases) for part in pair]

    def copy_from(self, other):
        for mine, theirs in zip(self.parameters(), other.parameters()):
            mine[...] = theirs

    def layers(self, x):
        """[x, h1, ..., output], each of shape (runs, batch, width)."""
        activations = [x]
        last = len(self.weights) - 1
        for layer, (weight, bias) in enumerate(zip(self.weights, self.biases)):
            z = activations[-1] @ weight
            z += bias[:, None, :]
            activations.append(z if layer == last else np.maximum(z, 0.0, out=z))
        return activations

    def outputs(self, x):
        return self.layers(x)[-1]

    def gradients(self, activations, upstream):
        """d loss / d parameter, in the order of ``parameters()``, from the activations of
        ``layers`` and d loss / d output (runs, batch, outputs)."""
        gradients = []
        for layer in reversed(range(len(self.weights))):
            gradients.append(upstream.sum(axis=1))
            gradients.append(np.swapaxes(activations[layer], 1, 2) @ upstream)
            if layer:
                upstream = ((upstream @ np.swapaxes(self.weights[layer], 1, 2))
                            * (activations[layer] > 0))
        return gradients[::-1]


class StackedAdam:
    """Adam (Kingma and Ba 2015) on every run's parameters at once."""

    def __init__(self, network, learning_rate, betas=(0.9, 0.999), epsilon=1e-8):
        self.network, self.learning_rate, self.epsilon = network, learning_rate, epsilon
        self.beta1, self.beta2 = betas
        self.steps = 0
        self.first = [np.zeros_like(part) for part in network.parameters()]
        self.second = [np.zeros_like(part) for part in network.parameters()]

    def step(self, gradients):
        self.steps += 1
        first_scale = 1 - self.beta1 ** self.steps
        second_scale = 1 - self.beta2 ** self.steps
        for part, gradient, first, second in zip(self.network.parameters(), gradients,
                                                 self.first, self.second):
            first *= self.beta1
            first += (1 - self.beta1) * gradient
            second *= self.beta2
            second += (1 - self.beta2) * gradient * gradient
            part -= (self.learning_rate * (first / first_scale)
                     / (np.sqrt(second / second_scale) + self.epsilon))
