"""`polyjax.nn`: activation functions, softmax and friends, attention and initializers.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy import nn
  >>> nn.relu(np.array([-1.0, 2.0]))
  Array([0., 2.], dtype=float32)
"""

from polyjax_numpy.nn import initializers
from polyjax_numpy.nn._activations import (
    celu,
    elu,
    gelu,
    glu,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    identity,
    leaky_relu,
    log1mexp,
    log_sigmoid,
    mish,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    soft_sign,
    softplus,
    sparse_plus,
    sparse_sigmoid,
    squareplus,
    swish,
    tanh,
)
from polyjax_numpy.nn._attention import dot_product_attention
from polyjax_numpy.nn._scaled_matmul import (
    get_scaled_dot_general_config,
    scaled_dot_general,
    scaled_matmul,
)
from polyjax_numpy.nn._softmax import (
    log_softmax,
    logmeanexp,
    logsumexp,
    one_hot,
    softmax,
    standardize,
)

__all__ = [
    "celu",
    "dot_product_attention",
    "elu",
    "gelu",
    "get_scaled_dot_general_config",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "initializers",
    "leaky_relu",
    "log1mexp",
    "log_sigmoid",
    "log_softmax",
    "logmeanexp",
    "logsumexp",
    "mish",
    "one_hot",
    "relu",
    "relu6",
    "scaled_dot_general",
    "scaled_matmul",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
    "swish",
    "tanh",
]
