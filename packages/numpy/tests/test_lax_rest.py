"""The last of `jax.lax` and `jax.lax.linalg` (issue 20): semantics and errors beyond the
uniform sweep of test_rules_coverage.py, against NumPy/SciPy and JAX's documented values."""

import functools

import ml_dtypes
import numpy as np
import pytest
import scipy.linalg

from polyjax_core.dce import dce_jaxpr
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_interpreters import ad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax
from polyjax_numpy.lax import linalg

RNG = np.random.default_rng(0)
TOL = dict(rtol=2e-5, atol=2e-5)


def _q_from_reflectors(packed, taus, lower=True):
    """``H_1 H_2 ...`` of ``sytrd``'s reflectors (below the subdiagonal, or above the
    superdiagonal in reverse order)."""
    n = packed.shape[0]
    q = np.eye(n, dtype=packed.dtype)
    for i in range(n - 1):
        v = np.zeros(n, packed.dtype)
        if lower:
            v[i + 1] = 1
            v[i + 2 :] = packed[i + 2 :, i]
            h = np.eye(n) - taus[i] * np.outer(v, np.conj(v))
            q = q @ h
        else:
            k = n - 2 - i  # reflector k zeroes column k + 1 above row k
            v[k] = 1
            v[:k] = packed[:k, k + 1]
            h = np.eye(n) - taus[k] * np.outer(v, np.conj(v))
            q = q @ h
    return q


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal_reduces_to_t(dtype, lower):
    b = RNG.normal(size=(4, 4)) + (1j * RNG.normal(size=(4, 4)) if dtype == np.complex64 else 0)
    a = (b + np.conj(b.T)).astype(dtype)
    packed, d, e, taus = (np.asarray(v) for v in linalg.tridiagonal(a, lower=lower))
    assert d.dtype == e.dtype == np.float32 and taus.dtype == dtype
    q = _q_from_reflectors(packed.astype(np.complex128), taus.astype(np.complex128), lower)
    t = np.conj(q.T) @ a.astype(np.complex128) @ q
    want = np.diag(d) + np.diag(e, -1) + np.diag(e, 1)
    np.testing.assert_allclose(np.abs(t), np.abs(want), atol=1e-4)
    np.testing.assert_allclose(np.linalg.eigvalsh(a), np.linalg.eigvalsh(want), atol=1e-4)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr_applies_q(left, transpose):
    x = RNG.normal(size=(4, 3)).astype(np.float32)
    (packed, taus), _ = scipy.linalg.qr(x, mode="raw")
    q = scipy.linalg.qr(x)[0]
    op = q.T if transpose else q
    c = RNG.normal(size=(4, 2) if left else (2, 4)).astype(np.float32)
    got = linalg.ormqr(packed.astype(np.float32), taus.astype(np.float32), c, left=left,
                       transpose=transpose)  # fmt: skip
    np.testing.assert_allclose(got, op @ c if left else c @ op, **TOL)


def test_ormqr_errors_name_the_shapes():
    with pytest.raises(ValueError, match="c must have 4 rows"):
        linalg.ormqr(np.zeros((4, 3), np.float32), np.zeros(3, np.float32),
                     np.zeros((3, 2), np.float32))  # fmt: skip
    with pytest.raises(TypeError, match="one dtype"):
        linalg.ormqr(np.zeros((4, 3), np.float32), np.zeros(3, np.complex64),
                     np.zeros((4, 2), np.float32))  # fmt: skip


def test_cholesky_update_is_the_factor_of_the_update():
    b = RNG.normal(size=(4, 4))
    a = b @ b.T + 4 * np.eye(4)
    r = np.linalg.cholesky(a).T.astype(np.float32)
    w = RNG.normal(size=4).astype(np.float32)
    got = np.asarray(jit(linalg.cholesky_update)(r, w))
    np.testing.assert_allclose(got, np.linalg.cholesky(a + np.outer(w, w)).T, rtol=1e-4, atol=1e-4)
    assert np.all(np.tril(got, -1) == 0)
    with pytest.raises(TypeError, match="float32 or float64"):
        linalg.cholesky_update(r.astype(np.complex64), w.astype(np.complex64))
    with pytest.raises(ValueError, match=r"\(4, 4\) and \(3,\)"):
        linalg.cholesky_update(r, w[:3])


def test_symmetric_product_and_symmetrize():
    a = RNG.normal(size=(3, 2)).astype(np.float32)
    c = RNG.normal(size=(3, 3)).astype(np.float32)
    got = linalg.symmetric_product(a, c, alpha=2.0, beta=3.0, symmetrize_output=True)
    want = 2 * a @ a.T + 3 * c
    np.testing.assert_allclose(got, (want + want.T) / 2, **TOL)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(got).T)
    with pytest.raises(ValueError, match=r"\[\.\.\., n, n\]"):
        linalg.symmetric_product(a, c[:2])
    with pytest.raises(TypeError, match="floating"):
        linalg.symmetric_product(a.astype(np.complex64), c.astype(np.complex64))


@pytest.mark.parametrize(("shape", "dtype"), [((5, 3), np.float32), ((3, 2), np.complex64)])
def test_qdwh_is_scipys_polar_decomposition(shape, dtype):
    x = RNG.normal(size=shape)
    if dtype == np.complex64:
        x = x + 1j * RNG.normal(size=shape)
    x = x.astype(dtype)
    u, h, iters, converged = jit(linalg.qdwh)(x)
    u_want, h_want = scipy.linalg.polar(x)
    np.testing.assert_allclose(u, u_want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(h, h_want, rtol=1e-4, atol=1e-4)
    assert bool(converged) and 0 < int(iters) <= 10
    assert np.asarray(iters).dtype == np.int32 and np.asarray(converged).dtype == np.bool_


def test_qdwh_limits_and_errors():
    x = RNG.normal(size=(3, 3)).astype(np.float32)
    once = jit(functools.partial(linalg.qdwh, max_iterations=1))
    *_, iters, converged = once(x)
    assert int(iters) == 1 and not bool(converged)
    u, h, _, _ = once(np.zeros((3, 3), np.float32))
    np.testing.assert_array_equal(h, np.zeros((3, 3)))
    with pytest.raises(ValueError, match="M >= N"):
        linalg.qdwh(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="not inexact"):
        linalg.qdwh(np.eye(2, dtype=np.int32))
    with pytest.raises(NotImplementedError, match="dynamic_shape"):
        linalg.qdwh(x, dynamic_shape=(2, 2))


def test_lu_pivots_to_permutation_is_a_primitive():
    p = np.array([2, 2, 3], np.int32)
    np.testing.assert_array_equal(linalg.lu_pivots_to_permutation(p, 4), [2, 0, 3, 1])
    text = str(make_jaxpr(lambda p: linalg.lu_pivots_to_permutation(p, 4))(p))
    assert "lu_pivots_to_permutation[permutation_size=4]" in text
    with pytest.raises(ValueError, match="permutation_size=2"):
        linalg.lu_pivots_to_permutation(p, 2)


def test_scaled_dot_dequantizes_in_bfloat16():
    lhs = (np.arange(64, dtype=np.float32) / 10).reshape(2, 32)
    rhs = np.ones((32, 3), np.float32)
    scales = np.array([[1.0, 2.0], [1.0, 2.0]], np.float32)
    got = lax.scaled_dot(lhs, rhs, lhs_scale=scales, rhs_scale=np.ones((2, 3), np.float32),
                         preferred_element_type=np.float32)  # fmt: skip
    rounded = lhs.astype(ml_dtypes.bfloat16).astype(np.float32)
    want = rounded[:, :16] @ rhs[:16] + 2 * (rounded[:, 16:] @ rhs[16:])
    np.testing.assert_allclose(got, want, rtol=1e-6)  # JAX 0.10.2 gives 87.188965, 240.8125
    default = lax.scaled_dot(np.ones((2, 4, 32), np.float32), np.ones((2, 32, 3), np.float32))
    assert default.shape == (2, 4, 3) and default.dtype == ml_dtypes.bfloat16
    with pytest.raises(TypeError, match="divisible by its scale's dim size 3"):
        lax.scaled_dot(lhs, rhs, lhs_scale=np.ones((2, 3), np.float32))


def test_dce_sink_survives_dead_code_elimination():
    closed = make_jaxpr(lambda x: (lax.dce_sink(x * 2), x)[1])(np.float32(1))
    pruned, _ = dce_jaxpr(closed.jaxpr, [True])
    assert [e.primitive.name for e in pruned.eqns] == ["mul", "dce_sink"]
    # With prevent_mlir_dce the compiled program keeps a side-effecting call, and runs.
    f = jit(lambda x: (lax.dce_sink(x, prevent_mlir_dce=True), x + 1)[1])
    assert "custom_call @dce_sink" in f.lower(np.float32(1)).as_text()
    assert float(f(np.float32(1))) == 2.0


def test_copy_p_is_linear():
    grad_jaxpr = str(make_jaxpr(ad.grad(lambda x: lax.copy_p.bind(x).sum()))(np.ones(3)))
    assert grad_jaxpr.count("copy") == 2  # the copy and its transpose, as in JAX
    # jnp.copy, jnp.array(copy=True) and x.copy() of a tracer stage it (JAX prints the same).
    from polyjax_numpy import numpy as jnp

    for f in (jnp.copy, lambda x: jnp.array(x, copy=True), lambda x: x.copy()):
        assert "= copy a" in str(make_jaxpr(f)(np.ones(2, np.float32)))
    assert "copy" not in str(make_jaxpr(jnp.asarray)(np.ones(2, np.float32)))
    assert lax.linear_solve_p is lax.custom_linear_solve_p
    assert lax.stop_gradient_p.name == "stop_gradient"


def test_dimension_comparisons():
    assert bool(lax.eq_to_p.bind(3, 3)) and bool(lax.le_to_p.bind(1.0, 2.0))
    assert not bool(lax.lt_to_p.bind(2, 2))
    assert "eq_to" in str(make_jaxpr(lambda a: lax.eq_to_p.bind(a, a))(1))


def test_ragged_all_to_all_documented_example():
    # The two-position example of JAX's documentation, positions as a vmapped axis.
    def f(*args):
        return lax.ragged_all_to_all(*args, axis_name="i")

    out = jit(vmap(f, axis_name="i"))(
        np.array([[1, 2, 2], [3, 4, 0]], np.float32),
        np.zeros((2, 4), np.float32),
        np.array([[0, 1], [0, 1]], np.int32),
        np.array([[1, 2], [1, 1]], np.int32),
        np.array([[0, 0], [1, 2]], np.int32),
        np.array([[1, 1], [2, 1]], np.int32),
    )
    np.testing.assert_array_equal(out, [[1, 3, 0, 0], [2, 2, 4, 0]])
    with pytest.raises(NotImplementedError, match="axis_index_groups"):
        lax.ragged_all_to_all(*[np.zeros(2)] * 2, *[np.zeros(2, np.int32)] * 4,
                              axis_name="i", axis_index_groups=[[0]])  # fmt: skip


def test_ragged_dot_general_ragged_batch_mode():
    # A ragged batch axis: each batch element has its own rhs, so the result is the
    # batched product whatever the groups (JAX 0.10.2 gives the same, rows past the
    # last group included).
    dn = lax.RaggedDotDimensionNumbers((((2,), (1,)), ((0,), (0,))), (0,), ())
    lhs = RNG.normal(size=(4, 5, 3)).astype(np.float32)
    rhs = RNG.normal(size=(4, 3, 2)).astype(np.float32)
    got = lax.ragged_dot_general(lhs, rhs, np.array([1, 2], np.int32), dn)
    np.testing.assert_allclose(got, np.einsum("bmk,bkn->bmn", lhs, rhs), **TOL)
