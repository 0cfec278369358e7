"""Complex numbers are ordered lexicographically (real part, then imaginary part) everywhere
an order is used, as in NumPy and JAX: comparisons, `maximum`/`minimum`, sorting, `max`/`min`
reductions, searching. NumPy (which orders complex numbers the same way) is the oracle.

Functions JAX refuses complex input for raise JAX's error: `argmax`/`argmin` (`TypeError`),
`clip` and the quantile family (`ValueError`).
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

from polyjax_interpreters.jit import jit
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp

# Ties in the real part (decided by the imaginary part), equal elements, signed zeros.
A = np.array([1 + 2j, 1 + 1j, 0 + 5j, 1 - 1j, -2 + 0j, 1 + 1j, 0j, -0.0 + 3j], np.complex64)
B = np.array([1 + 1j, 1 + 1j, 0 + 4j, 2 - 9j, -2 + 0j, 1 + 2j, 0j, 0.0 + 3j], np.complex64)
# NaNs in either part: a comparison in which a NaN decides is false (NumPy's and JAX's rule).
NAN = np.array([np.nan + 0j, 1 + np.nan * 1j, 1 + 1j, np.nan + np.nan * 1j], np.complex64)
NAN_OTHER = np.array([1 + 1j, 1 + 0j, 1 + np.nan * 1j, 0j], np.complex64)

COMPARISONS = ["greater", "greater_equal", "less", "less_equal", "equal", "not_equal"]
OPERATORS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "eq": "==", "ne": "!="}


@pytest.mark.parametrize("name", COMPARISONS)
@pytest.mark.parametrize("x, y", [(A, B), (B, A), (A, A), (NAN, NAN_OTHER), (NAN_OTHER, NAN)])
def test_comparisons_are_lexicographic(name, x, y):
    with np.errstate(invalid="ignore"):  # NumPy warns about the NaNs
        want = getattr(np, name)(x, y)
    for fn in (getattr(jnp, name), jit(getattr(jnp, name))):
        got = fn(x, y)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("op", sorted(OPERATORS))
def test_comparison_operators_on_complex_arrays_and_scalars(op):
    f = getattr(operator, op)
    for x, y in ((A, B), (A, 1 + 1j), (1 + 1j, A), (A, np.complex64(0j)), (A, 1.0)):
        want = f(np.asarray(x), y) if isinstance(x, np.ndarray) else f(x, np.asarray(y))
        got = f(jnp.asarray(x), y) if isinstance(x, np.ndarray) else f(x, jnp.asarray(y))
        np.testing.assert_array_equal(got, want, err_msg=f"{op} {x!r} {y!r}")


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_maximum_minimum_are_lexicographic(name):
    for x, y in ((A, B), (B, A)):
        got = getattr(jnp, name)(x, y)
        np.testing.assert_array_equal(got, getattr(np, name)(x, y), err_msg=name)


@pytest.mark.parametrize("name", ["max", "min", "nanmax", "nanmin", "ptp", "amax", "amin"])
def test_reductions_are_lexicographic(name):
    x = A.reshape(2, 4)
    for axis in (None, 0, 1):
        got = getattr(jnp, name)(x, axis=axis)
        np.testing.assert_array_equal(got, getattr(np, name)(x, axis=axis), err_msg=name)


def test_sorting_and_searching_are_lexicographic():
    np.testing.assert_array_equal(jnp.sort(A), np.sort(A))
    np.testing.assert_array_equal(jnp.sort(A, descending=True), np.sort(A)[::-1])
    np.testing.assert_array_equal(jnp.argsort(A, stable=True), np.argsort(A, stable=True))
    np.testing.assert_array_equal(jnp.sort_complex(A), np.sort_complex(A))
    np.testing.assert_array_equal(jnp.unique(A), np.unique(A))
    np.testing.assert_array_equal(jnp.lexsort([A]), np.lexsort([A]))
    s = np.sort(A)
    for side in ("left", "right"):
        got = jnp.searchsorted(s, B, side=side)
        np.testing.assert_array_equal(got, np.searchsorted(s, B, side=side), err_msg=side)
    for kth in (0, 3, 7):
        got = np.asarray(jnp.partition(A, kth))
        assert got[kth] == np.sort(A)[kth]
        assert np.all(np.less_equal(got[:kth], got[kth]))
        assert np.all(np.greater_equal(got[kth + 1 :], got[kth]))


def test_lax_orderings_are_lexicographic():
    np.testing.assert_array_equal(lax.sort(A), np.sort(A))
    np.testing.assert_array_equal(lax.reduce_max(A, (0,)), np.max(A))
    np.testing.assert_array_equal(lax.reduce_min(A, (0,)), np.min(A))
    np.testing.assert_array_equal(lax.max(A, B), np.maximum(A, B))
    np.testing.assert_array_equal(lax.cummax(A), np.maximum.accumulate(A))
    np.testing.assert_array_equal(lax.cummin(A), np.minimum.accumulate(A))


@pytest.mark.parametrize("name", ["argmax", "argmin", "nanargmax", "nanargmin"])
def test_argmax_of_complex_is_a_type_error(name):
    with pytest.raises(TypeError, match="complex64"):
        getattr(jnp, name)(A)


@pytest.mark.parametrize("name", ["gt", "lt", "ge", "le"])
def test_lax_comparisons_refuse_complex(name):
    with pytest.raises(TypeError, match="complex64"):
        getattr(lax, name)(A, B)


def test_quantiles_and_clip_refuse_complex():
    for f in (jnp.median, jnp.nanmedian, lambda x: jnp.quantile(x, 0.5)):
        with pytest.raises(ValueError, match="complex"):
            f(A)
    with pytest.raises(ValueError, match="omplex"):
        jnp.clip(A, 0j, 1 + 1j)


def test_digitize_orders_complex_bins_lexicographically():
    # NumPy refuses complex `x`; JAX orders it: the bin index is searchsorted's (right side
    # for increasing bins), which NumPy computes lexicographically.
    bins = np.sort(B)
    got = jnp.digitize(A, bins)
    np.testing.assert_array_equal(got, np.searchsorted(bins, A, side="right"))
    got = jnp.digitize(A, bins[::-1])  # decreasing bins count from the other end
    np.testing.assert_array_equal(got, len(bins) - np.searchsorted(bins, A, side="right"))


def test_interp_refuses_complex_x():
    with pytest.raises(ValueError, match="complex x"):
        jnp.interp(A, np.arange(3.0), np.arange(3.0))
    got = jnp.interp(np.float32(0.5), np.arange(2.0), np.array([0j, 2 + 2j]))  # complex fp
    np.testing.assert_allclose(got, 1 + 1j)
