"""checkify: errors as values, threaded through a program (``jax.experimental.checkify``).

`checkify(f)` traces ``f`` to a jaxpr and evaluates it with one interpreter:
each equation is bound as usual, and where an enabled check applies (a NaN
produced, an integer division by zero, an index out of bounds, a user `check`),
a predicate computed from the equation's inputs and outputs updates an *error
state* that flows through the program like any other value. No host callback
is involved, so the checked function can be jitted, vmapped, differentiated
and looped over; the error is read on the host only when the user asks
(`Error.get`, `Error.throw`).

The error state is a flat list of arrays: ``[failed, code, *payloads]``.
``failed`` is a boolean scalar, ``code`` the index of the first check that
failed, and each check *site* has payload arrays (the values a message
formats: a user check's arguments, the offending index). Sites are found by
walking the jaxpr, sub-jaxprs included, before evaluating it, so the state's
structure is fixed and loop bodies and branches carry it unchanged. The
first failure in execution order wins: later ones leave the state alone.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polyjax import _runtime  # noqa: F401  (operators, and the facade's frames marked internal)
from polyjax_core import config, tracing
from polyjax_core import source_info as si
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.primitive import Primitive
from polyjax_core.tree_util import register_pytree_node, tree_flatten, tree_unflatten
from polyjax_interpreters import batching, mlir
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp

__all__ = [
    "DivisionByZeroError",
    "Error",
    "ErrorCategory",
    "FailedCheckError",
    "JaxRuntimeError",
    "NaNError",
    "OOBError",
    "all_checks",
    "automatic_checks",
    "check",
    "check_error",
    "checkify",
    "debug_check",
    "div_checks",
    "float_checks",
    "index_checks",
    "init_error",
    "nan_checks",
    "user_checks",
]


class JaxRuntimeError(ValueError):
    """Raised by `Error.throw` (and by a failing `check` run eagerly)."""


class ErrorCategory:
    """Base of the kinds of error checkify can look for; sets of them select checks."""


class FailedCheckError(ErrorCategory):
    """A user `check` whose predicate was false."""


class NaNError(ErrorCategory):
    """A primitive produced a NaN."""


class DivisionByZeroError(ErrorCategory):
    """An integer division or remainder by zero."""


class OOBError(ErrorCategory):
    """An index out of bounds (dynamic slicing, gather)."""


user_checks: frozenset[type[ErrorCategory]] = frozenset({FailedCheckError})
nan_checks: frozenset[type[ErrorCategory]] = frozenset({NaNError})
div_checks: frozenset[type[ErrorCategory]] = frozenset({DivisionByZeroError})
index_checks: frozenset[type[ErrorCategory]] = frozenset({OOBError})
float_checks: frozenset[type[ErrorCategory]] = nan_checks | div_checks
automatic_checks: frozenset[type[ErrorCategory]] = float_checks | index_checks
all_checks: frozenset[type[ErrorCategory]] = automatic_checks | user_checks


# ---------------------------------------------------------------------------
# Check sites and the Error value


@dataclasses.dataclass(frozen=True, eq=False)
class _Site:
    """One place in the program that may fail, and how to word its failure.

    Attributes:
      category: the `ErrorCategory` subclass.
      payload_avals: the types of the values its message formats.
      format: ``format(payload_values) -> message``.
      source_info: the user's line of the checked operation.
    """

    category: type[ErrorCategory]
    payload_avals: tuple[ShapedArray, ...]
    format: Callable[[list[np.ndarray]], str]
    source_info: Any

    def where(self) -> str:
        return si.summarize(self.source_info) if self.source_info is not None else "unknown"


class Error:
    """The result of a checked function: whether a check failed, and which.

    Returned by a function transformed with `checkify`. It is a pytree of
    arrays, so it can leave ``jit`` and be batched by ``vmap`` (each mapped
    element then has its own error).
    """

    def __init__(self, failed: Any, code: Any, payloads: Sequence[Any], sites: tuple[_Site, ...]):
        self._failed = failed
        self._code = code
        self._payloads = list(payloads)
        self._sites = sites

    def _messages(self) -> list[str]:
        failed = np.asarray(self._failed)
        if not failed.any():
            return []
        code = np.asarray(self._code)
        payloads = [np.asarray(p) for p in self._payloads]
        if failed.ndim == 0:
            return [self._message_at((), code, payloads)]
        out = []
        for idx in np.ndindex(failed.shape):
            if failed[idx]:
                at = idx[0] if len(idx) == 1 else idx
                out.append(f"at mapped index {at}: {self._message_at(idx, code, payloads)}")
        return out

    def _site_payloads(self, i: int) -> slice:
        start = sum(len(s.payload_avals) for s in self._sites[:i])
        return slice(start, start + len(self._sites[i].payload_avals))

    def _message_at(self, idx: tuple, code: np.ndarray, payloads: list[np.ndarray]) -> str:
        i = int(code[idx])
        site = self._sites[i]
        values = [p[idx] if p.ndim >= len(idx) else p for p in payloads[self._site_payloads(i)]]
        return site.format(values)

    def get(self) -> str | None:
        """The message of the error, or None when no check failed.

        Under ``vmap`` each failing element gets a line ``at mapped index i: ...``.
        """
        messages = self._messages()
        return "\n".join(messages) if messages else None

    def get_exception(self) -> JaxRuntimeError | None:
        """The error as an exception (not raised), or None when no check failed."""
        message = self.get()
        if message is None:
            return None
        exc = JaxRuntimeError(message)
        failed = np.asarray(self._failed)
        if failed.ndim == 0:
            exc.add_note(f"The check failed at {self._sites[int(np.asarray(self._code))].where()}")
        return exc

    def throw(self) -> None:
        """Raises `JaxRuntimeError` with the message if a check failed.

        Raises:
          JaxRuntimeError: a check failed.
        """
        exc = self.get_exception()
        if exc is not None:
            raise exc

    def __str__(self) -> str:
        return f"Error({self.get()})"

    __repr__ = __str__


def _flatten_error(err: Error) -> tuple[list[Any], tuple[_Site, ...]]:
    return [err._failed, err._code, *err._payloads], err._sites


def _unflatten_error(sites: tuple[_Site, ...], leaves: Sequence[Any]) -> Error:
    leaves = list(leaves)
    return Error(leaves[0], leaves[1], leaves[2:], sites)


register_pytree_node(Error, _flatten_error, _unflatten_error)


def init_error() -> Error:
    """An `Error` in which no check failed (to merge others into, with `check_error`)."""
    return Error(np.bool_(False), np.int32(0), [], ())


# ---------------------------------------------------------------------------
# `check`: a primitive that only checkify knows how to run inside a program

check_p = Primitive("check")
check_p.multiple_results = True
# Under vmap of a `cond` with a batched predicate, every branch runs on every
# lane: a check in a branch then holds on the lanes that do not take it.
check_p.predicate_lanes = True  # type: ignore[attr-defined]  # read by cond's batching rule

_NOT_FUNCTIONALIZED = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This probably "
    "means you tried to stage (jit/scan/pmap/...) a `check` without functionalizing it through "
    "`checkify.checkify`."
)


class _Functionalizing(threading.local):
    depth = 0


_functionalizing = _Functionalizing()


@check_p.def_impl
def _check_impl(pred: Any, *payload: Any, site: _Site) -> list:
    if not bool(np.all(np.asarray(pred))):
        raise JaxRuntimeError(site.format([np.asarray(p) for p in payload]))
    return []


@check_p.def_abstract_eval
def _check_abstract_eval(*avals: Any, site: _Site) -> list:
    if not _functionalizing.depth:
        raise ValueError(_NOT_FUNCTIONALIZED)
    return []


def _check_lowering(ctx: Any, *args: Any, site: _Site) -> list:
    raise ValueError(_NOT_FUNCTIONALIZED)


mlir.register_lowering(check_p, _check_lowering)


def _check_batching(args: Sequence[Any], dims: Sequence[Any], *, site: _Site) -> Any:
    # A batch of checks is one check: it fails if an element fails, and the
    # message formats the first failing element's values.
    if not _functionalizing.depth:
        raise ValueError(_NOT_FUNCTIONALIZED)
    pred = args[0] if dims[0] is None else jnp.moveaxis(args[0], dims[0], 0)
    first = jnp.argmax(jnp.logical_not(pred)) if dims[0] is not None else 0
    payloads = [
        x if d is None else jnp.moveaxis(x, d, 0)[first] for x, d in zip(args[1:], dims[1:])
    ]
    check_p.bind(jnp.all(pred), *payloads, site=site)
    return [], []


batching.primitive_batchers[check_p] = _check_batching


def _format_check(msg: str, tree: Any) -> Callable[[list[np.ndarray]], str]:
    def fmt(values: list[np.ndarray]) -> str:
        args, kwargs = tree_unflatten(tree, list(values))
        return f"{msg.format(*args, **kwargs)} (`check` failed)"

    return fmt


def _as_array_leaves(fmt_args: tuple, fmt_kwargs: dict) -> tuple[list[Any], Any]:
    leaves, tree = tree_flatten((fmt_args, fmt_kwargs))
    for x in leaves:
        if not hasattr(x, "dtype") or not hasattr(x, "shape"):
            raise TypeError(
                "Formatting arguments to checkify.check need to be PyTrees of arrays, but got "
                f"{x!r} of type {type(x)}."
            )
    return leaves, tree


def check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """Checks that ``pred`` holds; if not, the error message is ``msg`` formatted.

    Run eagerly, a false ``pred`` raises at once. Inside a function transformed
    by `checkify` (and then jitted, vmapped...), the failure is recorded in the
    returned `Error` instead. Staged without `checkify` (under ``jit`` alone),
    it is an error.

    Args:
      pred: a boolean scalar; the check passes when it is true.
      msg: a `str.format` string; positional fields take ``fmt_args``, named
        fields ``fmt_kwargs``.
      *fmt_args: arrays (pytrees of arrays) to format into ``msg``.
      **fmt_kwargs: named arrays to format into ``msg``.

    Raises:
      JaxRuntimeError: run eagerly and ``pred`` is false.
      TypeError: ``pred`` is not a boolean scalar, or a formatting argument
        is not an array.

    Example:
      >>> import polyjax.numpy as jnp
      >>> from polyjax.experimental import checkify
      >>> def f(x):
      ...     checkify.check(x > 0, "x must be positive, got {}", x)
      ...     return jnp.log(x)
      >>> err, out = checkify.checkify(f)(jnp.float32(-1.0))
      >>> err.get()
      'x must be positive, got -1.0 (`check` failed)'
    """
    _check(pred, msg, fmt_args, fmt_kwargs, debug=False)


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """Like `check`, but does nothing outside a `checkify`-transformed function."""
    _check(pred, msg, fmt_args, fmt_kwargs, debug=True)


def _check(pred: Any, msg: str, fmt_args: tuple, fmt_kwargs: dict, debug: bool) -> None:
    if not isinstance(msg, str):
        raise TypeError(f"check msg must be a string, got {type(msg)}.")
    pred_aval = get_aval(pred)
    if pred_aval.dtype != np.bool_ or pred_aval.shape != ():
        raise TypeError(f"check takes a scalar pred as argument, got {pred}")
    if debug and not _functionalizing.depth:
        return
    leaves, tree = _as_array_leaves(fmt_args, fmt_kwargs)
    avals = tuple(get_aval(x) for x in leaves)
    site = _Site(FailedCheckError, avals, _format_check(msg, tree), si.current())
    check_p.bind(pred, *leaves, site=site)


def check_error(error: Error) -> None:
    """Raises ``error`` if it holds a failure (as `check` does, so that it composes with checkify).

    Args:
      error: an `Error`, e.g. returned by an inner checkified function.

    Raises:
      JaxRuntimeError: run eagerly and ``error`` holds a failure.
    """
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes an Error, got {type(error)}.")
    if not error._sites:
        return
    leaves = [error._failed, error._code, *error._payloads]
    sites = error._sites

    def fmt(values: list[np.ndarray]) -> str:
        return str(Error(values[0], values[1], values[2:], sites).get())

    site = _Site(FailedCheckError, tuple(get_aval(x) for x in leaves), fmt, si.current())
    check_p.bind(jnp.logical_not(jnp.any(error._failed)), *leaves, site=site)


# ---------------------------------------------------------------------------
# Automatic checks: which equations they apply to, and their predicates


def _is_float(aval: Any) -> bool:
    return np.issubdtype(getattr(aval, "dtype", np.dtype(object)), np.inexact)


def _is_int(aval: Any) -> bool:
    return np.issubdtype(getattr(aval, "dtype", np.dtype(object)), np.integer)


# Each automatic check: `sites(eqn) -> [(payload_avals, format)]` says where it
# applies, `failures(eqn, ins, outs) -> [(pred, payloads)]` (one per site) says
# whether it failed.
_Check = tuple[
    Callable[[JaxprEqn], list[tuple[tuple, Callable]]],
    Callable[[JaxprEqn, list, list], list[tuple[Any, list]]],
]
_automatic: dict[type[ErrorCategory], _Check] = {}


def _nan_sites(eqn: JaxprEqn) -> list:
    if eqn.primitive in _HIGHER_ORDER or eqn.primitive is check_p:
        return []
    if not any(_is_float(v.aval) for v in eqn.outvars):
        return []
    name = eqn.primitive.name
    return [((), lambda values: f"nan generated by primitive: {name}.")]


def _nan_failures(eqn: JaxprEqn, ins: list, outs: list) -> list:
    bad = [jnp.any(jnp.isnan(o)) for o, v in zip(outs, eqn.outvars) if _is_float(v.aval)]
    return [(functools.reduce(jnp.logical_or, bad), [])]


_automatic[NaNError] = (_nan_sites, _nan_failures)

_DIVISIONS = ("div", "rem")


def _div_sites(eqn: JaxprEqn) -> list:
    if eqn.primitive.name in _DIVISIONS and _is_int(eqn.invars[1].aval):
        return [((), lambda values: "division by zero")]
    return []


def _div_failures(eqn: JaxprEqn, ins: list, outs: list) -> list:
    return [(jnp.any(ins[1] == 0), [])]


_automatic[DivisionByZeroError] = (_div_sites, _div_failures)


def _oob_format(shape: tuple) -> Callable[[list[np.ndarray]], str]:
    def fmt(values: list[np.ndarray]) -> str:
        index, axis = int(values[0]), int(values[1])
        return (
            f"out-of-bounds indexing for array of shape {tuple(shape)}: index {index} is out of "
            f"bounds for axis {axis} with size {shape[axis]}. "
        )

    return fmt


_OOB_PAYLOAD = (ShapedArray((), np.dtype(np.int32)), ShapedArray((), np.dtype(np.int32)))


_SCATTERS = ("scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max")


def _oob_sites(eqn: JaxprEqn) -> list:
    # Indices out of bounds are checked whatever the indexing mode (clamping,
    # filling, dropping), as JAX's checkify does.
    name = eqn.primitive.name
    if name in ("dynamic_slice", "dynamic_update_slice") or (
        name in ("gather", *_SCATTERS) and not eqn.params["dimension_numbers"].operand_batching_dims
    ):
        shape = tuple(eqn.invars[0].aval.shape)
        return [(_OOB_PAYLOAD, _oob_format(shape))]
    return []


def _scatter_window(eqn: JaxprEqn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The operand axes a scatter's index components address, and its window's sizes."""
    dnums = eqn.params["dimension_numbers"]
    shape, updates = eqn.invars[0].aval.shape, eqn.invars[2].aval.shape
    window_axes = [d for d in range(len(shape)) if d not in dnums.inserted_window_dims]
    sizes = dict(zip(window_axes, (updates[u] for u in dnums.update_window_dims)))
    return dnums.scatter_dims_to_operand_dims, tuple(sizes.get(d, 1) for d in range(len(shape)))


def _first_oob(indices: Any, lows: Any, highs: Any, axes: Any) -> tuple[Any, list]:
    """Whether an element of ``indices`` leaves ``[lows, highs]``; the first such and its axis."""
    bad = (indices < lows) | (indices > highs)
    flat_bad = jnp.ravel(bad)
    first = jnp.argmax(flat_bad)
    index = jnp.ravel(indices)[first].astype(np.int32)
    axis = jnp.ravel(jnp.broadcast_to(axes, bad.shape))[first].astype(np.int32)
    return jnp.any(flat_bad), [index, axis]


def _oob_failures(eqn: JaxprEqn, ins: list, outs: list) -> list:
    name = eqn.primitive.name
    shape = eqn.invars[0].aval.shape
    if name == "gather" or name in _SCATTERS:
        if name == "gather":
            dims = eqn.params["dimension_numbers"].start_index_map
            sizes = eqn.params["slice_sizes"]
        else:
            dims, sizes = _scatter_window(eqn)
        highs = np.array([shape[d] - sizes[d] for d in dims], np.int64)
        return [_first_oob(ins[1], 0, highs, np.array(dims, np.int32))]
    if name == "dynamic_slice":
        starts, sizes = ins[1:], eqn.params["slice_sizes"]
    else:  # dynamic_update_slice: operand, update, *starts
        starts, sizes = ins[2:], eqn.invars[1].aval.shape
    starts = jnp.stack([jnp.asarray(s).astype(np.int32) for s in starts])
    highs = np.array([d - s for d, s in zip(shape, sizes)], np.int32)
    return [_first_oob(starts, 0, highs, np.arange(len(shape), dtype=np.int32))]


_automatic[OOBError] = (_oob_sites, _oob_failures)


# ---------------------------------------------------------------------------
# Finding the sites of a program


class _Context:
    """The checks enabled, and the sites found for them in one program."""

    def __init__(self, errors: frozenset):
        self.errors = errors
        self.sites: list[_Site] = []
        self.eqn_sites: dict[int, list[int]] = {}  # id(eqn) -> its site indices
        self.checked_inside: set[int] = set()  # id(eqn) of higher-order eqns with sites inside
        self._eqns: list[JaxprEqn] = []  # keeps the ids above unambiguous

    def find_sites(self, jaxpr: Jaxpr) -> None:
        for eqn in jaxpr.eqns:
            found: list[int] = []
            if eqn.primitive is check_p:
                if FailedCheckError in self.errors:
                    found.append(self._add(eqn.params["site"]))
            else:
                for category, (sites, _) in _automatic.items():
                    if category in self.errors:
                        for avals, fmt in sites(eqn):
                            found.append(self._add(_Site(category, avals, fmt, eqn.source_info)))
            before = len(self.sites)
            for sub in _sub_jaxprs(eqn):
                self.find_sites(sub.jaxpr)
            if len(self.sites) > before:
                self.checked_inside.add(id(eqn))
            if found:
                self.eqn_sites[id(eqn)] = found
            if found or len(self.sites) > before:
                self._eqns.append(eqn)

    def _add(self, site: _Site) -> int:
        self.sites.append(site)
        return len(self.sites) - 1

    def initial_state(self) -> list[Any]:
        payloads = [jnp.zeros(a.shape, a.dtype) for s in self.sites for a in s.payload_avals]
        return [np.bool_(False), np.int32(0), *payloads]

    def payload_slice(self, i: int) -> slice:
        start = 2 + sum(len(s.payload_avals) for s in self.sites[:i])
        return slice(start, start + len(self.sites[i].payload_avals))


def _record(ctx: _Context, state: list[Any], site: int, pred: Any, payloads: Sequence[Any]) -> list:
    """The state after site ``site`` failed where ``pred`` holds (unless an earlier failure)."""
    failed, code = state[0], state[1]
    first = jnp.logical_and(pred, jnp.logical_not(failed))
    new = list(state)
    new[0] = jnp.logical_or(failed, pred)
    new[1] = jnp.where(first, np.int32(site), code)
    span = ctx.payload_slice(site)
    new[span] = [jnp.where(first, p, old) for p, old in zip(payloads, state[span])]
    return new


# ---------------------------------------------------------------------------
# The interpreter


def _sub_jaxprs(eqn: JaxprEqn) -> list[ClosedJaxpr]:
    rule = _HIGHER_ORDER.get(eqn.primitive)
    return rule[0](eqn) if rule is not None else []


def _eval(ctx: _Context, jaxpr: Jaxpr, consts: Sequence[Any], state: list, args: Sequence[Any]):
    """Evaluates ``jaxpr`` under the current trace, threading the error state."""
    env: dict[Any, Any] = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(x: Any) -> Any:
        return x.val if isinstance(x, Literal) else env[x]

    for eqn in jaxpr.eqns:
        ins = [read(x) for x in eqn.invars]
        with si.user_context(eqn.source_info):
            higher = _HIGHER_ORDER.get(eqn.primitive)
            if higher is not None and id(eqn) in ctx.checked_inside:
                state, outs = higher[1](ctx, eqn, state, ins)
            elif eqn.primitive is check_p:
                outs = []
                for site in ctx.eqn_sites.get(id(eqn), ()):
                    state = _record(ctx, state, site, jnp.logical_not(ins[0]), ins[1:])
            else:
                ans = eqn.primitive.bind(*ins, **eqn.params)
                outs = ans if eqn.primitive.multiple_results else [ans]
                sites = ctx.eqn_sites.get(id(eqn))
                if sites:
                    state = _apply_automatic(ctx, eqn, state, sites, ins, outs)
        env.update(zip(eqn.outvars, outs))
    return state, [read(x) for x in jaxpr.outvars]


def _apply_automatic(ctx: _Context, eqn: JaxprEqn, state: list, sites: list, ins: list, outs: list):
    it = iter(sites)
    for category, (_, failures) in _automatic.items():
        if category not in ctx.errors:
            continue
        for pred, payloads in failures(eqn, ins, outs) if _automatic[category][0](eqn) else []:
            state = _record(ctx, state, next(it), pred, payloads)
    return state


def _eval_closed(ctx: _Context, closed: ClosedJaxpr, state: list, args: Sequence[Any]):
    return _eval(ctx, closed.jaxpr, closed.consts, state, args)


# Higher-order primitives: `(sub_jaxprs(eqn), rule(ctx, eqn, state, ins) -> (state, outs))`.
_HIGHER_ORDER: dict[Any, tuple[Callable, Callable]] = {}


def _inline_rule(param: str) -> tuple[Callable, Callable]:
    """A call-like primitive (jit, custom_jvp_call, checkpoint): its body is checked inline."""

    def subs(eqn: JaxprEqn) -> list[ClosedJaxpr]:
        return [eqn.params[param]]

    def rule(ctx: _Context, eqn: JaxprEqn, state: list, ins: list):
        body = eqn.params[param]
        if isinstance(body, Jaxpr):
            return _eval(ctx, body, [], state, ins)
        return _eval_closed(ctx, body, state, ins)

    return subs, rule


def _cond_rule(ctx: _Context, eqn: JaxprEqn, state: list, ins: list):
    index, ops = ins[0], ins[1:]

    def branch(closed: ClosedJaxpr) -> Callable:
        return lambda st, xs: _eval_closed(ctx, closed, list(st), list(xs))

    state, outs = lax.switch(index, [branch(b) for b in eqn.params["branches"]], state, ops)
    return list(state), list(outs)


def _while_rule(ctx: _Context, eqn: JaxprEqn, state: list, ins: list):
    p = eqn.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cconsts, bconsts, init = ins[:nc], ins[nc : nc + nb], ins[nc + nb :]
    cond, body = p["cond_jaxpr"], p["body_jaxpr"]

    def checked_cond(st: list, carry: list) -> tuple[list, Any]:
        st, (pred,) = _eval_closed(ctx, cond, st, [*cconsts, *carry])
        return st, pred

    def loop_cond(val: tuple) -> Any:
        _, pred = checked_cond(list(val[0]), list(val[1]))
        return pred

    def loop_body(val: tuple) -> tuple:
        st, carry = _eval_closed(ctx, body, list(val[0]), [*bconsts, *val[1]])
        st, _ = checked_cond(st, carry)
        return st, carry

    # The condition's own checks run on the initial value here, and on every
    # later value at the end of the body.
    state, _ = checked_cond(state, init)
    state, outs = lax.while_loop(loop_cond, loop_body, (state, list(init)))
    return list(state), list(outs)


def _scan_rule(ctx: _Context, eqn: JaxprEqn, state: list, ins: list):
    p = eqn.params
    n_consts, n_carry = p["num_consts"], p["num_carry"]
    consts, carry, xs = (
        ins[:n_consts],
        ins[n_consts : n_consts + n_carry],
        ins[n_consts + n_carry :],
    )
    body = p["jaxpr"]

    def step(c: tuple, x: list) -> tuple:
        st, outs = _eval_closed(ctx, body, list(c[0]), [*consts, *c[1], *x])
        return (st, outs[:n_carry]), outs[n_carry:]

    (state, carry_out), ys = lax.scan(
        step, (state, list(carry)), list(xs), length=p["length"], reverse=p["reverse"]
    )
    return list(state), [*carry_out, *ys]


def _register_higher_order() -> None:
    from polyjax_interpreters import custom_derivatives, remat
    from polyjax_interpreters import jit as jit_module

    _HIGHER_ORDER[jit_module.jit_p] = _inline_rule("jaxpr")
    _HIGHER_ORDER[remat.remat_p] = _inline_rule("jaxpr")
    # A custom-derivative function with checks inside is inlined: its checks
    # run, and it is differentiated through its body (its rule is dropped).
    _HIGHER_ORDER[custom_derivatives.custom_jvp_call_p] = _inline_rule("call_jaxpr")
    _HIGHER_ORDER[custom_derivatives.custom_vjp_call_p] = _inline_rule("call_jaxpr")
    _HIGHER_ORDER[lax.cond_p] = (lambda eqn: list(eqn.params["branches"]), _cond_rule)
    _HIGHER_ORDER[lax.while_p] = (
        lambda eqn: [eqn.params["cond_jaxpr"], eqn.params["body_jaxpr"]],
        _while_rule,
    )
    _HIGHER_ORDER[lax.scan_p] = (lambda eqn: [eqn.params["jaxpr"]], _scan_rule)


_register_higher_order()


# ---------------------------------------------------------------------------
# The transformation


def checkify(fun: Callable, errors: frozenset = user_checks) -> Callable:
    """Makes ``fun`` return an `Error` along with its result, instead of failing.

    Args:
      fun: the function to check.
      errors: which checks to run: a set of `ErrorCategory` classes, e.g.
        `user_checks` (the default: calls to `check`), `nan_checks`,
        `div_checks`, `index_checks`, `float_checks`, `automatic_checks`,
        `all_checks`, or unions of them.

    Returns:
      A function with ``fun``'s arguments returning ``(error, out)``.

    Example:
      >>> import polyjax, polyjax.numpy as jnp
      >>> from polyjax.experimental import checkify
      >>> checked = polyjax.jit(checkify.checkify(jnp.sin, errors=checkify.nan_checks))
      >>> err, out = checked(jnp.inf)
      >>> err.get()
      'nan generated by primitive: sin.'
    """
    errors = frozenset(errors)
    for e in errors:
        if not (isinstance(e, type) and issubclass(e, ErrorCategory)):
            raise TypeError(f"checkify errors must be ErrorCategory classes, got {e!r}.")

    def run(*args: Any, **kwargs: Any) -> tuple[Error, Any]:
        leaves, in_tree = tree_flatten((args, kwargs))
        out_box: list[Any] = []

        def flat(*xs: Any) -> list[Any]:
            a, k = tree_unflatten(in_tree, list(xs))
            out_leaves, out_tree = tree_flatten(fun(*a, **k))
            out_box.append(out_tree)
            return out_leaves

        _functionalizing.depth += 1
        try:
            closed = trace_to_jaxpr(flat, [get_aval(x) for x in leaves])
            ctx = _Context(errors)
            ctx.find_sites(closed.jaxpr)
            state, outs = _eval_closed(ctx, closed, ctx.initial_state(), leaves)
        finally:
            _functionalizing.depth -= 1
        err = Error(state[0], state[1], state[2:], tuple(ctx.sites))
        return err, tree_unflatten(out_box[0], outs)

    # Called outside any transformation, the checked program runs compiled, as
    # one executable: evaluated op by op, each check's few operations would
    # each be dispatched (and compiled) on their own.
    compiled = jit(run)

    @functools.wraps(fun)
    def checked(*args: Any, **kwargs: Any) -> tuple[Error, Any]:
        if tracing.current_trace() is tracing.eval_trace and not config.disable_jit.value:
            return compiled(*args, **kwargs)
        return run(*args, **kwargs)

    return checked
