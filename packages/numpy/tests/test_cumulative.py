"""cumsum, cumprod, cummax, cummin, cumlogsumexp against NumPy, with their rules."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from _jnp_helpers import random_data

from polyjax_core import make_jaxpr
from polyjax_interpreters import batching
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax

bf16 = np.dtype(ml_dtypes.bfloat16)

ORACLES = {
    "cumsum": np.cumsum,
    "cumprod": np.cumprod,
    "cummax": np.maximum.accumulate,
    "cummin": np.minimum.accumulate,
    "cumlogsumexp": np.logaddexp.accumulate,
}
DTYPES = {
    "cumsum": [np.float32, bf16, np.float16, np.int32, np.uint8, np.complex64],
    "cumprod": [np.float32, np.int32, np.uint8],
    "cummax": [np.float32, bf16, np.int32, np.uint8, np.bool_],
    "cummin": [np.float32, np.int32, np.bool_],
    "cumlogsumexp": [np.float32, bf16, np.float16],
}
CASES = [(n, d) for n, ds in DTYPES.items() for d in ds]


def _oracle(name, x, axis, reverse):
    f = ORACLES[name]
    wide = x.astype(np.float64) if x.dtype.kind == "f" or x.dtype == bf16 else x
    if reverse:
        return np.flip(f(np.flip(wide, axis), axis=axis), axis)
    return f(wide, axis=axis)


def _data(shape, dtype, seed=0):
    return random_data(shape, dtype, seed, int_high=3)


@pytest.mark.parametrize("name, dtype", CASES, ids=[f"{n}-{np.dtype(d).name}" for n, d in CASES])
@pytest.mark.parametrize(
    "shape, axis", [((6,), 0), ((3, 4), 1), ((3, 4), -2), ((0, 3), 0), ((2, 0), 1)]
)
def test_values(name, dtype, shape, axis):
    x = _data(shape, dtype)
    for reverse in (False, True):
        _check_values(name, dtype, x, axis, reverse)


def _check_values(name, dtype, x, axis, reverse):
    got = getattr(lax, name)(x, axis=axis, reverse=reverse)
    assert got.dtype == x.dtype and got.shape == x.shape
    want = _oracle(name, x, axis, reverse)
    tol = {np.dtype(bf16): 5e-2, np.dtype(np.float16): 5e-3}.get(np.dtype(dtype), 1e-5)
    np.testing.assert_allclose(np.asarray(got).astype(want.dtype), want, rtol=tol, atol=tol)


def test_rank0_and_infinities():
    np.testing.assert_array_equal(
        np.asarray(lax.cumlogsumexp(np.float32([-np.inf, -np.inf, 0.0, np.inf]))),
        [-np.inf, -np.inf, 0.0, np.inf],
    )
    np.testing.assert_array_equal(np.asarray(lax.cumprod(np.float32([2, 0, 3]))), [2, 0, 0])
    with pytest.raises(ValueError, match="out of bounds"):
        lax.cumsum(np.float32(1.0))
    with pytest.raises(TypeError, match="cumsum does not accept dtype bool"):
        lax.cumsum(np.array([True]))
    text = str(make_jaxpr(lambda x: lax.cummax(x, 1, reverse=True))(np.zeros((2, 3), np.float32)))
    assert "cummax[axis=1 reverse=True]" in text


@pytest.mark.parametrize("name", list(ORACLES))
@pytest.mark.parametrize("axis, reverse", [(0, False), (1, True)])
def test_grads(name, axis, reverse):
    rng = np.random.default_rng(3)
    x = (rng.permutation(12).reshape(3, 4) / 12 + 0.3).astype(np.float32)  # no ties
    x = x * rng.choice([-1, 1], x.shape).astype(np.float32) if name != "cumprod" else x
    check_grads(lambda x: getattr(lax, name)(x, axis, reverse), (x,), order=2)


def test_cumprod_grad_with_zero():
    from polyjax_interpreters import ad

    x = np.float32([2.0, 0.0, 3.0])
    g = ad.grad(lambda x: lax.reduce_sum(lax.cumprod(x), (0,)))(x)
    # d/dx of 2 + 2*x1 + 2*x1*x2 at x1 = 0: [1, 2 + 2*3, 0]
    np.testing.assert_allclose(np.asarray(g), [1.0, 8.0, 0.0])


@pytest.mark.parametrize("name", list(ORACLES))
@pytest.mark.parametrize("in_axis", [0, 1])
def test_vmap_matches_loop(name, in_axis):
    x = _data((3, 4, 2), np.float32)
    f = lambda x: getattr(lax, name)(x, axis=1, reverse=True)  # noqa: E731
    out = batching.vmap(f, in_axis)(x)
    for i in range(x.shape[in_axis]):
        np.testing.assert_allclose(np.asarray(out)[i], np.asarray(f(np.take(x, i, in_axis))),
                                   rtol=1e-6)  # fmt: skip


def test_jit_matches_eager():
    x = _data((4, 5), np.float32)
    f = lambda x: [getattr(lax, n)(x, 1) for n in ORACLES]  # noqa: E731
    for a, b in zip(jit(f)(x), f(x)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_complex_cummax_cummin_are_lexicographic():
    # Ties of the real parts are decided by the imaginary parts, as in NumPy.
    x = np.complex64([[1 + 2j, 1 + 3j, 5j, 1 + 1j, 1 + 4j], [-1j, 0j, -2j, 1j, -1 + 9j]])
    for name in ("cummax", "cummin"):
        for reverse in (False, True):
            got = getattr(lax, name)(x, 1, reverse=reverse)
            np.testing.assert_array_equal(np.asarray(got), _oracle(name, x, 1, reverse))
