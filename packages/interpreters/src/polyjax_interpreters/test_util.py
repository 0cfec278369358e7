"""Checking derivatives numerically: `check_grads`, `check_jvp`, `check_vjp`.

Automatic derivatives are checked against *finite differences* along one
random direction, which costs two extra evaluations of the function whatever
the sizes of its inputs and outputs:

- forward mode: for a random tangent `t`, `jvp(f, x, t)` must match the
  central difference `(f(x + eps t) - f(x - eps t)) / (2 eps)`;
- reverse mode: for random `t` and a random output cotangent `c`, the vjp
  must satisfy the transposition identity `<vjp(c), t> == <c, J t>`, where
  `J t` is again the central difference.

`check_grads(f, args, order)` repeats both checks on the derivative functions
themselves (the jvp of `f` as a function of primals and tangents; the vjp of
`f` applied to its output), down to derivatives of order `order`.

Pytrees of arrays are accepted everywhere. Complex inputs get complex random
tangents, and the inner products use the real part of `sum(conj(a) * b)`, so
holomorphic and non-holomorphic functions are both checked. Integer and
boolean inputs are held fixed (their tangents are `float0` zeros), and integer
outputs must have `float0` tangents.

Default tolerances and finite-difference steps depend on the least precise
floating dtype involved (`bfloat16` and `float16` get loose ones); `atol` and
`rtol` may be a number or a dict from dtype to number that overrides some of
the defaults.

Example:
  >>> import numpy as np
  >>> import polyjax.numpy as jnp
  >>> check_grads(lambda x: x * x, (np.float32(3.0),), order=2)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import ml_dtypes
import numpy as np

from polyjax_core import dtypes
from polyjax_core.abstract_values import get_aval
from polyjax_core.tree_util import tree_flatten, tree_map, tree_structure
from polyjax_interpreters import ad

__all__ = ["EPS", "check_close", "check_grads", "check_jvp", "check_vjp", "numerical_jvp"]

# Finite-difference step when the caller gives none, by the least precise floating dtype
# of the inputs. A step must be large against the rounding of the perturbed inputs and of
# the function's outputs (that error grows like ulp / eps) and small against the
# curvature (the truncation error of a central difference grows like eps**2).
EPS = 1e-4
_DEFAULT_EPS: dict[np.dtype, float] = {
    np.dtype(np.float64): 1e-4,
    np.dtype(np.float32): 1e-3,
    np.dtype(np.float16): 2.0**-4,
    np.dtype(ml_dtypes.bfloat16): 2.0**-3,
}
_FALLBACK_EPS = 2.0**-2  # 8-bit floats

# Default atol and rtol of derivative comparisons, by dtype (complex as its real part).
_DEFAULT_TOL: dict[np.dtype, float] = {
    np.dtype(np.float64): 1e-5,
    np.dtype(np.float32): 2e-3,
    np.dtype(np.float16): 2e-2,
    np.dtype(ml_dtypes.bfloat16): 1e-1,
}
_FALLBACK_TOL = 2.5e-1

_float0 = dtypes.float0


# ---------------------------------------------------------------------------
# Dtypes of leaves


def _dtype(x: Any) -> np.dtype:
    """The (canonical) dtype polyjax sees for `x`; `float0` for float0 arrays."""
    dt = getattr(x, "dtype", None)
    if dt is not None and np.dtype(dt) == _float0:
        return _float0
    return np.dtype(get_aval(x).dtype)


def _is_inexact(dt: np.dtype) -> bool:
    return dt != _float0 and dtypes.issubdtype(dt, np.inexact)


def _is_complex(dt: np.dtype) -> bool:
    return dt != _float0 and dtypes.issubdtype(dt, np.complexfloating)


def _real_dtype(dt: np.dtype) -> np.dtype:
    if _is_complex(dt):
        return np.dtype(np.float64 if dt == np.dtype(np.complex128) else np.float32)
    return dt


def _resolution(dt: np.dtype) -> float:
    """Machine epsilon of the real part of `dt` (a total order on floating precisions)."""
    return float(ml_dtypes.finfo(_real_dtype(dt)).eps)


def _least_precise(dts: Sequence[np.dtype]) -> np.dtype | None:
    floats = [d for d in dts if _is_inexact(d)]
    return max(floats, key=_resolution) if floats else None


def _leaf_dtypes(tree: Any) -> list[np.dtype]:
    return [_dtype(x) for x in tree_flatten(tree)[0]]


def _tolerance(tol: float | dict | None, dt: np.dtype | None) -> float:
    if dt is None:
        return 0.0
    real = _real_dtype(dt)
    if isinstance(tol, dict):
        given = {np.dtype(k): v for k, v in tol.items()}
        for key in (dt, real):
            if key in given:
                return float(given[key])
        tol = None
    if tol is not None:
        return float(tol)
    return _DEFAULT_TOL.get(real, _FALLBACK_TOL)


def _default_eps(dts: Sequence[np.dtype]) -> float:
    least = _least_precise(dts)
    if least is None:
        return EPS
    return _DEFAULT_EPS.get(_real_dtype(least), _FALLBACK_EPS)


def _wide(x: Any, dt: np.dtype) -> np.ndarray:
    """`x` as float64 or complex128, for arithmetic that adds no rounding of its own."""
    return np.asarray(x).astype(np.complex128 if _is_complex(dt) else np.float64)


# ---------------------------------------------------------------------------
# Random directions and finite differences


def _rand_like(rng: np.random.Generator, x: Any) -> Any:
    """A standard-normal array shaped like `x` (float0 zeros if `x` is not inexact)."""
    dt, shape = _dtype(x), np.shape(x)
    if not _is_inexact(dt):
        return np.zeros(shape, _float0)
    value = rng.standard_normal(shape)
    if _is_complex(dt):
        value = value + 1j * rng.standard_normal(shape)
    return np.asarray(value).astype(dt)


def _zero_tangent_like(x: Any) -> Any:
    """`x` itself where it can be a tangent, float0 zeros where it cannot (ints, bools)."""
    return x if _is_inexact(_dtype(x)) else np.zeros(np.shape(x), _float0)


def _step(x: Any, t: Any, scale: float) -> Any:
    """`x + scale * t`, rounded to `x`'s dtype (as the function will see it).

    Python scalars stay Python scalars (weakly typed), holding the rounded value.
    """
    dt = _dtype(x)
    if not _is_inexact(dt):
        return x
    y = (_wide(x, dt) + scale * _wide(t, dt)).astype(dt)
    if isinstance(x, bool | int | float | complex):
        return y.item()
    return y


def _realized_tangent(x: Any, plus: Any, minus: Any, t: Any, eps: float) -> Any:
    """The direction that the rounded points `x +- eps t` actually differ by, in `x`'s dtype.

    In low precision, rounding `x + eps t` moves the point by a visible fraction
    of the step (bfloat16 keeps 8 bits); differentiating along the realized
    direction instead of `t` removes that error from the comparison.
    """
    dt = _dtype(x)
    if not _is_inexact(dt):
        return t
    return ((_wide(plus, dt) - _wide(minus, dt)) * (0.5 / eps)).astype(dt)


def _output_difference(eps: float) -> Callable[[Any, Any], Any]:
    def difference(p: Any, m: Any) -> Any:
        dt = _dtype(p)
        if not _is_inexact(dt):
            return np.zeros(np.shape(p), _float0)
        return (_wide(p, dt) - _wide(m, dt)) * (0.5 / eps)

    return difference


def numerical_jvp(
    f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], eps: float | None = None
) -> Any:
    """The central finite difference of `f` at `primals` along `tangents`.

    Args:
      f: a function of `len(primals)` positional pytree arguments.
      primals: the point.
      tangents: the direction, a pytree like `primals`.
      eps: the step; by default one suited to the least precise input dtype.

    Returns:
      A pytree like `f`'s output: float64/complex128 NumPy arrays for inexact
      outputs, `float0` zeros for the others.
    """
    if eps is None:
        eps = _default_eps(_leaf_dtypes(primals))
    plus = tree_map(partial(_step, scale=eps), tuple(primals), tuple(tangents))
    minus = tree_map(partial(_step, scale=-eps), tuple(primals), tuple(tangents))
    return tree_map(_output_difference(eps), f(*plus), f(*minus))


# How many units of its dtype's resolution the function's own rounding may put on
# each output (a bound of the finite difference's noise: `ulps * res * |f| / eps`).
_FD_NOISE_ULPS = 2.0


def _directional_difference(
    f: Callable[..., Any], args: tuple, tangents: Any, eps: float | None
) -> tuple[Any, Any, Any]:
    """`(numerical jvp, tangent, noise)`: a central difference of `f` near `tangents`.

    The tangent returned is the direction the rounded points realize (see
    `_realized_tangent`), the one to hand to the jvp or pair with the vjp.
    `noise` bounds, per output element, what rounding the outputs of `f` adds
    to the difference: it is large where the outputs are large next to their
    derivative, most of all in low precision.
    """
    in_dtypes = _leaf_dtypes(args)
    if eps is None:
        eps = _default_eps(in_dtypes)
    plus = tree_map(partial(_step, scale=eps), args, tangents)
    minus = tree_map(partial(_step, scale=-eps), args, tangents)
    realized = tree_map(
        lambda x, p, m, t: _realized_tangent(x, p, m, t, eps), args, plus, minus, tangents
    )
    out_plus, out_minus = f(*plus), f(*minus)

    def noise(p: Any, m: Any) -> Any:
        dt = _dtype(p)
        if not _is_inexact(dt):
            return np.zeros(np.shape(p))
        least = _least_precise([dt, *in_dtypes])
        assert least is not None  # `dt` itself is inexact
        res = _resolution(least)
        magnitude = np.abs(_wide(p, dt)) + np.abs(_wide(m, dt))
        return _FD_NOISE_ULPS * res * magnitude * (0.5 / eps)

    numerical = tree_map(_output_difference(eps), out_plus, out_minus)
    return numerical, realized, tree_map(noise, out_plus, out_minus)


# ---------------------------------------------------------------------------
# Comparisons


def check_close(
    actual: Any,
    expected: Any,
    atol: float | dict | None = None,
    rtol: float | dict | None = None,
    err_msg: str = "",
    tol_dtypes: Sequence[np.dtype] = (),
    noise: Any = None,
) -> None:
    """Asserts two pytrees of arrays are elementwise close, with dtype-aware tolerances.

    Elements pass when `|actual - expected| <= atol + rtol * |expected| + noise`
    (NaNs in the same places pass).

    Args:
      actual, expected: pytrees of the same structure.
      atol, rtol: numbers, dicts from dtype to number, or None for the defaults.
      err_msg: what is compared, for the failure message.
      tol_dtypes: further dtypes whose precision bounds the tolerance (the
        inputs' dtypes when `expected` comes from finite differences).
      noise: optional pytree like `expected` of elementwise absolute error
        bounds of `expected` itself (from `_directional_difference`).

    Raises:
      AssertionError: structures, shapes or values differ.
    """
    a_leaves, a_tree = tree_flatten(actual)
    e_leaves, e_tree = tree_flatten(expected)
    if a_tree != e_tree:
        raise AssertionError(f"{err_msg}: tree structures differ: {a_tree} vs {e_tree}")
    n_leaves = [None] * len(e_leaves) if noise is None else tree_flatten(noise)[0]
    for i, (a, e, n) in enumerate(zip(a_leaves, e_leaves, n_leaves)):
        where = f"{err_msg} (output leaf {i})" if len(a_leaves) > 1 else err_msg
        if np.shape(a) != np.shape(e):
            raise AssertionError(f"{where}: shapes differ: {np.shape(a)} vs {np.shape(e)}")
        dt = _dtype(a)
        if not _is_inexact(dt):
            if dt != _float0:
                np.testing.assert_array_equal(np.asarray(a), np.asarray(e), err_msg=where)
            continue
        least = _least_precise([dt, *tol_dtypes])
        _assert_close(
            _wide(a, dt),
            _wide(e, dt),
            _tolerance(atol, least),
            _tolerance(rtol, least),
            0.0 if n is None else np.asarray(n),
            where,
        )


def _assert_close(
    a: np.ndarray, e: np.ndarray, atol: float, rtol: float, noise: Any, where: str
) -> None:
    diff = np.abs(a - e)
    bound = atol + rtol * np.abs(e) + noise
    with np.errstate(invalid="ignore"):
        ok = (diff <= bound) | (np.isnan(a) & np.isnan(e))
    if np.all(ok):
        return
    bad = np.argwhere(~ok) if np.ndim(ok) else [()]
    lines = [
        f"Not equal to tolerance rtol={rtol:g}, atol={atol:g}"
        + ("" if np.all(np.asarray(noise) == 0) else " (+ finite-difference noise bound)"),
        where,
        f"Mismatched elements: {len(bad)} / {np.size(ok)}",
    ]
    for idx in bad[:5]:
        idx = tuple(int(j) for j in idx)
        lines.append(
            f" {list(idx)}: {a[idx]!r} (ACTUAL), {e[idx]!r} (DESIRED), "
            f"allowed difference {np.broadcast_to(bound, np.shape(e))[idx]:.3g}"
        )
    lines.append(f"Max absolute difference among violations: {np.max(diff[~ok]):.6g}")
    raise AssertionError("\n".join(lines))


def _tangent_dtype(dt: np.dtype) -> np.dtype:
    return dt if _is_inexact(dt) else _float0


def _check_tangent_dtypes(primals_out: Any, tangents_out: Any, err_msg: str) -> None:
    p_leaves, p_tree = tree_flatten(primals_out)
    t_leaves, t_tree = tree_flatten(tangents_out)
    if p_tree != t_tree:
        raise AssertionError(
            f"{err_msg}: the tangent output's structure {t_tree} differs from the "
            f"primal output's {p_tree}"
        )
    for p, t in zip(p_leaves, t_leaves):
        want, got = _tangent_dtype(_dtype(p)), _dtype(t)
        if got != want:
            raise AssertionError(
                f"{err_msg}: a primal output of dtype {_dtype(p)} has a tangent of dtype "
                f"{got}, expected {want}"
            )


def _inner_product(xs: Any, ys: Any) -> tuple[float, float]:
    """`Re sum(conj(x) * y)` over the inexact leaves, and the sum of its terms' magnitudes."""
    total, scale = 0.0, 0.0
    for x, y in zip(tree_flatten(xs)[0], tree_flatten(ys)[0]):
        dx, dy = _dtype(x), _dtype(y)
        if not (_is_inexact(dx) and _is_inexact(dy)):
            continue
        terms = np.real(np.conj(_wide(x, dx)) * _wide(y, dy))
        total += float(np.sum(terms))
        scale += float(np.sum(np.abs(np.conj(_wide(x, dx)) * _wide(y, dy))))
    return total, scale


# ---------------------------------------------------------------------------
# The checks


def check_jvp(
    f: Callable[..., Any],
    f_jvp: Callable[[Sequence[Any], Sequence[Any]], tuple[Any, Any]],
    args: Sequence[Any],
    atol: float | dict | None = None,
    rtol: float | dict | None = None,
    eps: float | None = None,
    err_msg: str = "",
) -> None:
    """Checks a forward-mode derivative against finite differences along a random tangent.

    Args:
      f: the function, of `len(args)` positional pytree arguments.
      f_jvp: `f_jvp(primals, tangents) -> (primals_out, tangents_out)`, e.g.
        `partial(jvp, f)`.
      args: the point (a sequence of pytrees of arrays or scalars).
      atol, rtol: tolerances (numbers or dicts dtype -> number); by default
        from the least precise floating dtype involved.
      eps: the finite-difference step; by default from the inputs' dtypes.
      err_msg: names what is checked in failure messages.

    Raises:
      AssertionError: the primal output or the tangent disagrees.
    """
    args = tuple(args)
    what = err_msg or "JVP"
    in_dtypes = _leaf_dtypes(args)
    rng = np.random.default_rng(0)
    numerical, tangents, noise = _directional_difference(
        f, args, tree_map(partial(_rand_like, rng), args), eps
    )
    primals_out, tangents_out = f_jvp(args, tangents)
    _check_tangent_dtypes(primals_out, tangents_out, what)
    expected_out = f(*args)
    check_close(primals_out, expected_out, atol, rtol, f"{what} primal output", in_dtypes)
    check_close(tangents_out, numerical, atol, rtol, f"{what} tangent output", in_dtypes, noise)


def check_vjp(
    f: Callable[..., Any],
    f_vjp: Callable[..., tuple[Any, Callable[[Any], Any]]],
    args: Sequence[Any],
    atol: float | dict | None = None,
    rtol: float | dict | None = None,
    eps: float | None = None,
    err_msg: str = "",
) -> None:
    """Checks a reverse-mode derivative by transposition against finite differences.

    For a random input tangent `t` and output cotangent `c`, checks that
    `<vjp(c), t> == <c, J t>` with `J t` from central differences (real parts of
    conjugated inner products, so complex functions are checked too).

    Args:
      f: the function, of `len(args)` positional pytree arguments.
      f_vjp: `f_vjp(*args) -> (primals_out, vjp_fun)`, e.g. `partial(vjp, f)`;
        `vjp_fun(cotangents)` returns one cotangent per argument.
      args: the point.
      atol, rtol: tolerances (numbers or dicts dtype -> number).
      eps: the finite-difference step.
      err_msg: names what is checked in failure messages.

    Raises:
      AssertionError: the primal output or the inner products disagree.
    """
    args = tuple(args)
    what = err_msg or "VJP"
    in_dtypes = _leaf_dtypes(args)
    rng = np.random.default_rng(0)
    primals_out, vjp_fun = f_vjp(*args)
    expected_out = f(*args)
    check_close(primals_out, expected_out, atol, rtol, f"{what} primal output", in_dtypes)
    tangents_out, tangents, noise = _directional_difference(
        f, args, tree_map(partial(_rand_like, rng), args), eps
    )
    cotangents = tree_map(partial(_rand_like, rng), primals_out)
    # `vjp_fun` is linear over the reals; conjugating around it turns its result
    # into the adjoint under the inner product `Re sum(conj(a) * b)`.
    cts_in = tree_map(_conj, vjp_fun(tree_map(_conj, cotangents)))
    cts_in = tuple(cts_in) if isinstance(cts_in, list) else cts_in
    if tree_structure(cts_in) != tree_structure(args):
        raise AssertionError(
            f"{what}: the vjp returned cotangents of structure {tree_structure(cts_in)}, "
            f"expected one per argument: {tree_structure(args)}"
        )
    ip, ip_scale = _inner_product(tangents, cts_in)
    ip_expected, expected_scale = _inner_product(tangents_out, cotangents)
    least = _least_precise([*in_dtypes, *_leaf_dtypes(primals_out)])
    if least is None:
        return
    # The error of a sum grows with its terms, not with the sum: cancellation
    # between random signs must not make the check stricter than per-element.
    a, r = _tolerance(atol, least), _tolerance(rtol, least)
    noise_ip, _ = _inner_product(noise, tree_map(_abs, cotangents))
    bound = a + r * max(ip_scale, expected_scale, abs(ip_expected)) + noise_ip
    if not abs(ip - ip_expected) <= bound:
        raise AssertionError(
            f"{what}: <vjp(ct), t> = {ip!r} but <ct, jvp(t)> = {ip_expected!r} from finite "
            f"differences (|difference| {abs(ip - ip_expected):.3g} > {bound:.3g}; "
            f"atol={a}, rtol={r}, dtype {least})"
        )


def _is_float0(x: Any) -> bool:
    return getattr(x, "dtype", None) == _float0


def _abs(x: Any) -> Any:
    return x if _is_float0(x) else np.abs(np.asarray(x))


def _conj(x: Any) -> Any:
    return x if _is_float0(x) else np.conj(np.asarray(x))


def check_grads(
    f: Callable[..., Any],
    args: Sequence[Any],
    order: int,
    modes: Sequence[str] = ("fwd", "rev"),
    atol: float | dict | None = None,
    rtol: float | dict | None = None,
    eps: float | None = None,
) -> None:
    """Checks automatic derivatives of `f` against finite differences, up to `order`.

    Derivatives are checked along one random direction only, which keeps the
    finite differences cheap whatever the sizes involved. Forward mode ("fwd")
    compares `jvp` with central differences; reverse mode ("rev") checks `vjp`
    by the transposition identity `<vjp(c), t> == <c, J t>`. For `order > 1`
    the checks recurse on the derivative functions: the jvp of `f` as a
    function of (primals, tangents), and the vjp of `f` applied to its output.

    Args:
      f: the function, of `len(args)` positional pytree arguments.
      args: the point (a tuple or list of arguments).
      order: the highest order of derivatives to check (1 or more).
      modes: which of "fwd" and "rev" to check.
      atol, rtol: tolerances (numbers or dicts dtype -> number); by default
        from the least precise floating dtype involved (loose for
        bfloat16 and float16).
      eps: the finite-difference step; by default from the inputs' dtypes.

    Raises:
      AssertionError: a derivative disagrees with finite differences.
      ValueError: an unknown mode.

    Example:
      >>> check_grads(lambda x, y: x * y, (np.float32(2.0), np.float32(3.0)), order=2)
    """
    args = tuple(args)
    unknown = set(modes) - {"fwd", "rev"}
    if unknown:
        raise ValueError(f"check_grads modes must be 'fwd' and/or 'rev', got {sorted(unknown)}")
    if order < 1:
        raise ValueError(f"check_grads order must be at least 1, got {order}")

    def check(fun: Callable[..., Any], fun_args: tuple, order: int, prefix: str) -> None:
        if "fwd" in modes:
            what = f"JVP of {prefix}" if prefix else "JVP"
            check_jvp(fun, partial(ad.jvp, fun), fun_args, atol, rtol, eps, what)
            if order > 1:
                jvp_fun = partial(ad.jvp, fun)
                tangents = tuple(tree_map(_zero_tangent_like, fun_args))
                check(jvp_fun, (fun_args, tangents), order - 1, what)
        if "rev" in modes:
            what = f"VJP of {prefix}" if prefix else "VJP"
            check_vjp(fun, partial(ad.vjp, fun), fun_args, atol, rtol, eps, what)
            if order > 1:

                def vjp_at_output(*primals: Any) -> Any:
                    out, vjp_fun = ad.vjp(fun, *primals)
                    return vjp_fun(tree_map(_zero_tangent_like, out))

                check(vjp_at_output, fun_args, order - 1, what)

    check(f, args, order, "")
