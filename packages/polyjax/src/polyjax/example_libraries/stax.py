"""Neural-network layers as ``(init_fun, apply_fun)`` pairs, as ``jax.example_libraries.stax``.

``init_fun(rng, input_shape)`` returns ``(output_shape, params)`` and
``apply_fun(params, inputs, **kwargs)`` the outputs; combinators (`serial`,
`parallel`, `FanOut`, ...) build networks from layers. Layers that need
randomness at apply time (`Dropout`) take an ``rng`` keyword.

Example:
  >>> import polyjax
  >>> from polyjax.example_libraries import stax
  >>> init, apply = stax.serial(stax.Dense(4), stax.Relu, stax.Dense(2))
  >>> out_shape, params = init(polyjax.random.key(0), (3, 5))
  >>> out_shape, apply(params, polyjax.numpy.ones((3, 5))).shape
  ((3, 2), (3, 2))
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import polyjax
import polyjax.numpy as jnp
from polyjax import lax, random
from polyjax.nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from polyjax.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = [
    "AvgPool",
    "BatchNorm",
    "Conv",
    "Conv1DTranspose",
    "ConvTranspose",
    "Dense",
    "Dropout",
    "Elu",
    "Exp",
    "FanInConcat",
    "FanInSum",
    "FanOut",
    "Flatten",
    "Gelu",
    "GeneralConv",
    "GeneralConvTranspose",
    "Identity",
    "LeakyRelu",
    "LogSoftmax",
    "MaxPool",
    "Relu",
    "Selu",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "SumPool",
    "Tanh",
    "elementwise",
    "elu",
    "gelu",
    "glorot",
    "glorot_normal",
    "leaky_relu",
    "log_softmax",
    "logsoftmax",
    "normal",
    "ones",
    "parallel",
    "randn",
    "relu",
    "selu",
    "serial",
    "shape_dependent",
    "sigmoid",
    "softmax",
    "softplus",
    "standardize",
    "zeros",
]

logsoftmax = log_softmax
# Default initializers (module-level, so the defaults are shared values, as in JAX).
_DENSE_W, _DENSE_B, _CONV_B = glorot_normal(), normal(), normal(1e-6)
glorot = glorot_normal
randn = normal

Layer = tuple[Callable[..., Any], Callable[..., Any]]


def _output_shape(fun: Callable[..., Any], *shapes_and_values: Any) -> tuple[int, ...]:
    """The shape `fun` returns for zero inputs of the given shapes (traced, not run)."""
    specs = [polyjax.ShapeDtypeStruct(tuple(s), jnp.float32) for s in shapes_and_values]
    return tuple(polyjax.eval_shape(fun, *specs).shape)


def Dense(out_dim: int, W_init: Any = _DENSE_W, b_init: Any = _DENSE_B) -> Layer:
    """A fully connected layer: ``inputs @ W + b``."""

    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(rhs_spec: str, lhs_spec: str, input_shape: Any, out_chan: int, filter_shape):
    sizes = iter(filter_shape)
    return [
        out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I" else next(sizes)
        for c in rhs_spec
    ]


def _conv_layer(
    conv: Callable[[Any, Any], Any],
    dimension_numbers: tuple[str, str, str],
    out_chan: int,
    filter_shape: tuple[int, ...],
    W_init: Any,
    b_init: Any,
) -> Layer:
    """The layer ``conv(inputs, W) + b``, its kernel laid out by `dimension_numbers`."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(rhs_spec, lhs_spec, input_shape, out_chan, filter_shape)
        output_shape = _output_shape(conv, input_shape, kernel_shape)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return conv(inputs, W) + b

    return init_fun, apply_fun


def GeneralConv(
    dimension_numbers: tuple[str, str, str],
    out_chan: int,
    filter_shape: tuple[int, ...],
    strides: tuple[int, ...] | None = None,
    padding: str = "VALID",
    W_init: Any = None,
    b_init: Any = _CONV_B,
) -> Layer:
    """A convolution with the layouts `dimension_numbers` (e.g. ``("NHWC", "HWIO", "NHWC")``)."""
    one = (1,) * len(filter_shape)
    strides = strides or one

    def conv(x, w):
        return lax.conv_general_dilated(x, w, strides, padding, one, one, dimension_numbers)

    return _conv_layer(conv, dimension_numbers, out_chan, filter_shape, W_init, b_init)


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(
    dimension_numbers: tuple[str, str, str],
    out_chan: int,
    filter_shape: tuple[int, ...],
    strides: tuple[int, ...] | None = None,
    padding: str = "VALID",
    W_init: Any = None,
    b_init: Any = _CONV_B,
) -> Layer:
    """A transposed convolution (`lax.conv_transpose`) with the layouts `dimension_numbers`."""
    one = (1,) * len(filter_shape)
    strides = strides or one

    def conv(x, w):
        return lax.conv_transpose(x, w, strides, padding, dimension_numbers=dimension_numbers)

    return _conv_layer(conv, dimension_numbers, out_chan, filter_shape, W_init, b_init)


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(
    axis: Any = (0, 1, 2),
    epsilon: float = 1e-5,
    center: bool = True,
    scale: bool = True,
    beta_init: Any = zeros,
    gamma_init: Any = ones,
) -> Layer:
    """Normalizes over `axis` (batch statistics), then scales by `gamma` and shifts by `beta`."""
    axis = (axis,) if jnp.ndim(axis) == 0 else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if scale:
            z = z * gamma[expand]
        if center:
            z = z + beta[expand]
        return z

    return init_fun, apply_fun


def elementwise(fun: Callable[..., Any], **fun_kwargs: Any) -> Layer:
    """A parameterless layer applying `fun` to its inputs."""
    return (lambda rng, input_shape: (input_shape, ())), (
        lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs)
    )


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(reducer: Any, init_val: float, rescale: bool = False) -> Callable[..., Layer]:
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        spec = spec or "NHWC"
        strides = strides or (1,) * len(window_shape)
        non_spatial = sorted((spec.index("N"), spec.index("C")))
        dims, steps = list(window_shape), list(strides)
        for i in non_spatial:
            dims.insert(i, 1)
            steps.insert(i, 1)
        dims, steps = tuple(dims), tuple(steps)

        def pool(x):
            out = lax.reduce_window(
                x, jnp.asarray(init_val, x.dtype), reducer, dims, steps, padding
            )
            if rescale:  # average over the window's elements inside the input
                counts = lax.reduce_window(jnp.ones_like(x), 0.0, lax.add, dims, steps, padding)
                out = out / counts
            return out

        def init_fun(rng, input_shape):
            return _output_shape(pool, input_shape), ()

        def apply_fun(params, inputs, **kwargs):
            return pool(inputs)

        return init_fun, apply_fun

    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.0)
AvgPool = _pooling_layer(lax.add, 0.0, rescale=True)


def _flatten() -> Layer:
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten()
Identity = (lambda rng, input_shape: (input_shape, ())), (lambda params, inputs, **kw: inputs)


def FanOut(num: int) -> Layer:
    """Copies its input into a list of `num` outputs."""
    return (lambda rng, input_shape: ([input_shape] * num, ())), (
        lambda params, inputs, **kwargs: [inputs] * num
    )


FanInSum = (
    (lambda rng, input_shape: (input_shape[0], ())),
    (lambda params, inputs, **kwargs: sum(inputs[1:], inputs[0])),
)


def FanInConcat(axis: int = -1) -> Layer:
    """Concatenates a list of inputs along `axis`."""

    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat = sum(shape[ax] for shape in input_shape)
        return tuple(input_shape[0][:ax]) + (concat,) + tuple(input_shape[0][ax + 1 :]), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:
    """Keeps each input with probability `rate` (scaling by ``1 / rate``) in "train" mode.

    Raises (at apply time in "train" mode):
      ValueError: without the ``rng`` keyword.
    """

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        if mode != "train":
            return inputs
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. That "
                "is, instead of `apply_fun(params, inputs)`, call it like `apply_fun(params, "
                "inputs, rng)` where `rng` is a PRNG key (e.g. from `polyjax.random.key`)."
            )
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)

    return init_fun, apply_fun


def serial(*layers: Layer) -> Layer:
    """The layers applied one after another."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """The layers applied side by side, to a list of inputs (one each)."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(init_funs))
        return tuple(zip(*[init(r, s) for init, r, s in zip(init_funs, rngs, input_shape)])) or (
            (),
            (),
        )

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[Any], Layer]) -> Layer:
    """A layer built by `make_layer(input_shape)` once the input shape is known."""

    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
