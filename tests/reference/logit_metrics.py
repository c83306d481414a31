# SPDX-License-Identifier: MIT
"""How the model tests compare the engine's logits with a reference: mean KL divergence and max relative error."""
import numpy as np


def log_softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def mean_kl(reference: np.ndarray, got: np.ndarray) -> float:
    """Mean over rows of KL(softmax(reference) || softmax(got))."""
    p, q = log_softmax(reference), log_softmax(got)
    return float((np.exp(p) * (p - q)).sum(axis=-1).mean())


def rel_error(got: np.ndarray, want: np.ndarray) -> float:
    """The largest absolute difference relative to the largest reference magnitude."""
    return float(np.abs(got - want).max() / np.abs(want).max())
