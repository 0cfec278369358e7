"""First-order optimizers as function triples, as ``jax.example_libraries.optimizers``.

An optimizer is ``(init_fun, update_fun, get_params)``: ``init_fun(params)``
builds an `OptimizerState` from a pytree of parameters; ``update_fun(step,
grads, state)`` takes one step; ``get_params(state)`` reads the parameters
back. Each optimizer below is written for one array (`optimizer` lifts it to
pytrees); step sizes may be constants or schedules (functions of the step).

Example:
  >>> import polyjax.numpy as jnp
  >>> from polyjax.example_libraries import optimizers
  >>> init, update, get_params = optimizers.sgd(0.1)
  >>> state = update(0, {"w": jnp.ones(2)}, init({"w": jnp.zeros(2)}))
  >>> get_params(state)["w"]
  Array([-0.1, -0.1], dtype=float32)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import polyjax.numpy as jnp
from polyjax import tree_util

__all__ = [
    "InitFn",
    "JoinPoint",
    "Optimizer",
    "OptimizerState",
    "Params",
    "ParamsFn",
    "Schedule",
    "State",
    "Step",
    "UpdateFn",
    "Updates",
    "adagrad",
    "adam",
    "adamax",
    "clip_grads",
    "constant",
    "exponential_decay",
    "inverse_time_decay",
    "l2_norm",
    "make_schedule",
    "momentum",
    "nesterov",
    "optimizer",
    "pack_optimizer_state",
    "piecewise_constant",
    "polynomial_decay",
    "rmsprop",
    "rmsprop_momentum",
    "sgd",
    "sm3",
    "unpack_optimizer_state",
]

Step = int
Schedule = Callable[[Step], float]
Params = Any
Updates = Params
State = Any
InitFn = Callable[[Params], "OptimizerState"]
UpdateFn = Callable[[Step, Updates, "OptimizerState"], "OptimizerState"]
ParamsFn = Callable[["OptimizerState"], Params]


class OptimizerState(NamedTuple):
    """The state of an optimizer over a pytree: per-leaf states and the structures."""

    packed_state: Any
    tree_def: Any
    subtree_defs: Any


tree_util.register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], *aux),
)


class Optimizer(NamedTuple):
    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def optimizer(opt_maker: Callable[..., tuple]) -> Callable[..., Optimizer]:
    """Lifts an optimizer for single arrays to one for pytrees of arrays.

    `opt_maker(*args)` returns ``(init, update, get_params)`` for one array, whose
    states may be pytrees; the result's functions take pytrees of parameters.
    """

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        def init_fn(x0_tree: Params) -> OptimizerState:
            leaves, tree = tree_util.tree_flatten(x0_tree)
            states = [init(x0) for x0 in leaves]
            flat = [tree_util.tree_flatten(s) for s in states]
            packed = [leaves for leaves, _ in flat]
            return OptimizerState(packed, tree, [d for _, d in flat])

        def update_fn(i: Step, grad_tree: Updates, state: OptimizerState) -> OptimizerState:
            packed, tree, subtrees = state
            grads, grad_tree_def = tree_util.tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not match "
                    f"the parameter tree structure: {grad_tree_def} and {tree}."
                )
            states = [tree_util.tree_unflatten(d, s) for d, s in zip(subtrees, packed)]
            new = [update(i, g, s) for g, s in zip(grads, states)]
            flat = [tree_util.tree_flatten(s) for s in new]
            return OptimizerState([leaves for leaves, _ in flat], tree, [d for _, d in flat])

        def params_fn(state: OptimizerState) -> Params:
            packed, tree, subtrees = state
            states = [tree_util.tree_unflatten(d, s) for d, s in zip(subtrees, packed)]
            return tree_util.tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(init_fn, update_fn, params_fn)

    return tree_opt_maker


# --- optimizers for one array


def _with_zeros(count: int) -> Callable[[Any], tuple]:
    """The `init` whose state is the parameters and `count` zero arrays like them."""
    return lambda x0: (x0, *(jnp.zeros_like(x0) for _ in range(count)))


def _first(state: tuple) -> Any:
    """The `get_params` of a state whose first entry is the parameters."""
    return state[0]


@optimizer
def sgd(step_size: float | Schedule) -> tuple:
    """Stochastic gradient descent: ``x -= step_size(i) * g``."""
    step_size = make_schedule(step_size)
    return (lambda x0: x0), (lambda i, g, x: x - step_size(i) * g), (lambda x: x)


@optimizer
def momentum(step_size: float | Schedule, mass: float) -> tuple:
    """Heavy-ball momentum: ``v = mass * v + g; x -= step_size(i) * v``."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, v = state
        v = mass * v + g
        return x - step_size(i) * v, v

    return _with_zeros(1), update, _first


@optimizer
def nesterov(step_size: float | Schedule, mass: float) -> tuple:
    """Nesterov momentum: ``v = mass * v + g; x -= step_size(i) * (mass * v + g)``."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, v = state
        v = mass * v + g
        return x - step_size(i) * (mass * v + g), v

    return _with_zeros(1), update, _first


def _inverse_sqrt(a: Any) -> Any:
    """``1 / sqrt(a)`` where `a > 0`, else 0."""
    positive = a > 0
    return jnp.where(positive, 1 / jnp.sqrt(jnp.where(positive, a, 1)), 0)


@optimizer
def adagrad(step_size: float | Schedule, momentum: float = 0.9) -> tuple:
    """Adagrad (with momentum on the normalized gradient)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + g * g
        m = (1 - momentum) * (g * _inverse_sqrt(g_sq)) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return _with_zeros(2), update, _first


@optimizer
def rmsprop(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8) -> tuple:
    """RMSProp: divide by the root of a running mean of squared gradients."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq = state
        avg_sq = gamma * avg_sq + (1 - gamma) * g * g
        return x - step_size(i) * g / jnp.sqrt(avg_sq + eps), avg_sq

    return _with_zeros(1), update, _first


@optimizer
def rmsprop_momentum(
    step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8, momentum: float = 0.9
) -> tuple:
    """RMSProp with momentum on the scaled steps."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq, mom = state
        avg_sq = gamma * avg_sq + (1 - gamma) * g * g
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom

    return _with_zeros(2), update, _first


@optimizer
def adam(
    step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
) -> tuple:
    """Adam, with bias-corrected first and second moment estimates."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * g * g + b2 * v
        t = jnp.asarray(i, m.dtype) + 1
        m_hat, v_hat = m / (1 - b1**t), v / (1 - b2**t)
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v

    return _with_zeros(2), update, _first


@optimizer
def adamax(
    step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
) -> tuple:
    """AdaMax: Adam with the infinity norm in place of the second moment."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        t = jnp.asarray(i, m.dtype) + 1
        return x - (step_size(i) / (1 - b1**t)) * m / (u + eps), m, u

    return _with_zeros(2), update, _first


@optimizer
def sm3(step_size: float | Schedule, momentum: float = 0.9) -> tuple:
    """SM3: Adagrad with one accumulator per index of each axis (memory linear in the sizes)."""
    step_size = make_schedule(step_size)

    def init(x0):
        x0 = jnp.asarray(x0)
        accumulators = [jnp.zeros(n, x0.dtype) for n in jnp.shape(x0)]
        return x0, jnp.zeros_like(x0), accumulators

    def update(i, g, state):
        x, m, vs = state
        ndim = jnp.ndim(x)
        if ndim:
            views = [
                jnp.reshape(v, [-1 if a == d else 1 for a in range(ndim)]) for d, v in enumerate(vs)
            ]
            accum = functools.reduce(jnp.minimum, views) + g * g
        else:
            accum = g * g
        m = (1 - momentum) * (g * _inverse_sqrt(accum)) + momentum * m
        vs = [jnp.max(accum, axis=tuple(a for a in range(ndim) if a != d)) for d in range(ndim)]
        return x - step_size(i) * m, m, vs

    return init, update, _first


# --- schedules


def constant(step_size: float) -> Schedule:
    """The schedule that is always `step_size`."""
    return lambda i: step_size


def exponential_decay(step_size: float, decay_steps: float, decay_rate: float) -> Schedule:
    """``step_size * decay_rate ** (i / decay_steps)``."""
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(
    step_size: float, decay_steps: float, decay_rate: float, staircase: bool = False
) -> Schedule:
    """``step_size / (1 + decay_rate * i / decay_steps)`` (`staircase` floors the quotient)."""
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(
    step_size: float, decay_steps: int, final_step_size: float, power: float = 1.0
) -> Schedule:
    """From `step_size` to `final_step_size` over `decay_steps` steps along ``(1 - t)**power``."""

    def schedule(i):
        i = jnp.minimum(i, decay_steps)
        return (step_size - final_step_size) * (1 - i / decay_steps) ** power + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """``values[k]`` for steps after `k` of the `boundaries` (one more value than boundaries).

    Raises:
      ValueError: when the lengths do not match.
    """
    boundaries, values = jnp.asarray(boundaries), jnp.asarray(values)
    if not boundaries.ndim == values.ndim == 1 or values.shape[0] != boundaries.shape[0] + 1:
        raise ValueError(
            "piecewise_constant: boundaries and values must be 1-D with one more value than "
            f"boundaries, got {boundaries.shape} and {values.shape}."
        )
    return lambda i: values[jnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """`scalar_or_schedule` itself when callable, else the constant schedule."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(
        f"make_schedule: expected a scalar or a callable, got {type(scalar_or_schedule)}."
    )


# --- utilities


def l2_norm(tree: Any) -> Any:
    """The 2-norm of all the leaves of `tree` together."""
    leaves = tree_util.tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: float) -> Any:
    """`grad_tree` scaled down to 2-norm `max_norm` where it is longer."""
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(
        lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree
    )


class JoinPoint:
    """Marks where a parameter's own state subtree starts in `unpack_optimizer_state`'s result."""

    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree

    def __iter__(self):
        yield from self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """The state as a plain pytree (parameters' structure, a `JoinPoint` per leaf), for saving."""
    packed, tree, subtrees = opt_state
    states = [JoinPoint(tree_util.tree_unflatten(d, s)) for d, s in zip(subtrees, packed)]
    return tree_util.tree_unflatten(tree, states)


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The inverse of `unpack_optimizer_state`."""
    joins, tree = tree_util.tree_flatten(marked_pytree, is_leaf=lambda x: isinstance(x, JoinPoint))
    if not all(isinstance(j, JoinPoint) for j in joins):
        raise TypeError("pack_optimizer_state: expected a pytree of JoinPoint leaves.")
    flat = [tree_util.tree_flatten(j.subtree) for j in joins]
    return OptimizerState([leaves for leaves, _ in flat], tree, [d for _, d in flat])
