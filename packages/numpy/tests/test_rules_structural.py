"""jvp, transpose and vmap rules of the shape ops, reductions and dot_general.

Derivatives are checked with `check_grads` (forward mode against finite
differences, reverse mode by the transposition identity) up to order 2; vmap is
checked against a Python loop over the examples, with the batch axis at several
positions and some operands unmapped.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import ShapedArray
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_interpreters import ad, batching
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax

bf16 = np.dtype(ml_dtypes.bfloat16)
f32 = np.dtype(np.float32)
c64 = np.dtype(np.complex64)

_rng = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _reseed():
    """Each test draws the same values however tests are ordered or distributed."""
    global _rng
    _rng = np.random.default_rng(1234)


def rand(shape, dtype=f32):
    """Random values of magnitude in [0.5, 1.5] (away from zero), random signs."""
    x = _rng.uniform(0.5, 1.5, shape) * _rng.choice([-1.0, 1.0], shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * _rng.uniform(0.5, 1.5, shape)
    return np.asarray(x).astype(dtype)


def distinct(shape, dtype=f32):
    """Values with no ties, so max/min are differentiable everywhere around them."""
    n = int(np.prod(shape))
    return (_rng.permutation(n).reshape(shape) / max(n, 1) + 0.25).astype(dtype)


DNUMS_MATMUL = (((1,), (0,)), ((), ()))
DNUMS_BATCHED = (((1, 2), (3, 0)), ((0,), (1,)))  # f[b,i,j] x f[j,b,k,i] -> f[b,k]

# (id, function, argument shapes) of functions differentiable everywhere near
# random points. Each is checked in f32 up to order 2, forward and reverse.
GRAD_CASES = [
    ("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)), [(3, 4)]),
    ("broadcast_stretch", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (0, 2)), [(1, 4)]),
    ("broadcast_rank0", lambda x: lax.broadcast_in_dim(x, (2, 3), ()), [()]),
    ("expand_dims", lambda x: lax.expand_dims(x, (0, -1)), [(3,)]),
    ("reshape", lambda x: lax.reshape(x, (2, 6)), [(3, 4)]),
    ("reshape_permuted", lambda x: lax.reshape(x, (6, 4), (2, 0, 1)), [(2, 3, 4)]),
    ("reshape_rank0", lambda x: lax.reshape(x, (1, 1)), [()]),
    ("reshape_size0", lambda x: lax.reshape(x, (3, 0)), [(0, 3)]),
    ("transpose", lambda x: lax.transpose(x, (2, 0, 1)), [(2, 3, 4)]),
    ("squeeze", lambda x: lax.squeeze(x, (0, 2)), [(1, 3, 1)]),
    ("slice", lambda x: lax.slice(x, (1, 0), (4, 6), (1, 2)), [(5, 6)]),
    ("slice_strided_tail", lambda x: lax.slice(x, (1,), (7,), (3,)), [(9,)]),
    ("slice_size0", lambda x: lax.slice(x, (2, 0), (2, 3)), [(4, 3)]),
    ("concatenate", lambda x, y: lax.concatenate([x, y, x], 1), [(2, 3), (2, 1)]),
    (
        "pad",
        lambda x, v: lax.pad(x, v, ((1, -1, 1), (-2, 3, 0), (0, 0, 2))),
        [(3, 4, 2), ()],
    ),
    ("pad_rank0", lambda x, v: lax.pad(x, v, ()), [(), ()]),
    ("rev", lambda x: lax.rev(x, (0, 2)), [(2, 3, 4)]),
    ("reduce_sum", lambda x: lax.reduce_sum(x, (1,)), [(3, 4)]),
    ("reduce_sum_all", lambda x: lax.reduce_sum(x, (0, 1, 2)), [(2, 3, 2)]),
    ("reduce_sum_none", lambda x: lax.reduce_sum(x, ()), [()]),
    ("reduce_sum_size0", lambda x: lax.reduce_sum(x, (0,)), [(0, 3)]),
    ("reduce_prod", lambda x: lax.reduce_prod(x, (1,)), [(3, 5)]),
    ("reduce_prod_all", lambda x: lax.reduce_prod(x, (0, 2)), [(3, 2, 4)]),
    ("reduce_prod_size0", lambda x: lax.reduce_prod(x, (1,)), [(2, 0)]),
    ("dot_general", lambda x, y: lax.dot_general(x, y, DNUMS_MATMUL), [(3, 4), (4, 5)]),
    (
        "dot_general_batched",
        lambda x, y: lax.dot_general(x, y, DNUMS_BATCHED),
        [(2, 3, 4), (4, 2, 5, 3)],
    ),
    ("dot_general_outer", lambda x, y: lax.dot_general(x, y, (((), ()), ((), ()))), [(2,), (3,)]),
    ("dot_vector", lambda x, y: lax.dot(x, y), [(4,), (4,)]),
    ("dot_size0", lambda x, y: lax.dot(x, y), [(2, 0), (0, 3)]),
    ("getitem", lambda x: x[1:3, ::-2], [(4, 5)]),
    ("getitem_int", lambda x: x[1, None, :2], [(4, 5)]),
    ("T", lambda x: x.T, [(3, 4)]),
    ("matmul", lambda x, y: x @ y, [(2, 3, 4), (4, 5)]),
    ("sum_method", lambda x: x.sum(), [(3, 4)]),
    ("sum_axis", lambda x: x.sum(axis=0), [(3, 4)]),
]


@pytest.mark.parametrize("fun,shapes", [c[1:] for c in GRAD_CASES], ids=[c[0] for c in GRAD_CASES])
def test_grads_f32(fun, shapes):
    args = [rand(s) for s in shapes]
    check_grads(fun, args, order=2)


MAX_MIN_CASES = [
    ("reduce_max", lambda x: lax.reduce_max(x, (1,)), (3, 4)),
    ("reduce_max_all", lambda x: lax.reduce_max(x, (0, 1)), (3, 4)),
    ("reduce_min", lambda x: lax.reduce_min(x, (0,)), (3, 4)),
    ("reduce_min_rank0", lambda x: lax.reduce_min(x, ()), ()),
    ("max_method", lambda x: x.max(axis=1), (2, 5)),
]


@pytest.mark.parametrize(
    "fun,shape", [c[1:] for c in MAX_MIN_CASES], ids=[c[0] for c in MAX_MIN_CASES]
)
def test_grads_max_min(fun, shape):
    check_grads(fun, [distinct(shape)], order=2)


# A few cases in other dtypes: bfloat16 (loose tolerances) and complex64.
DTYPE_CASES = [
    ("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3), (1,)), [(3,)], [bf16, c64]),
    ("reshape", lambda x: lax.reshape(x, (3, 2), (1, 0)), [(2, 3)], [bf16, c64]),
    ("slice", lambda x: lax.slice(x, (1,), (6,), (2,)), [(7,)], [bf16, c64]),
    ("pad", lambda x, v: lax.pad(x, v, ((1, 2, 1),)), [(3,), ()], [bf16, c64]),
    ("concatenate", lambda x, y: lax.concatenate([x, y], 0), [(2,), (3,)], [bf16, c64]),
    ("reduce_sum", lambda x: lax.reduce_sum(x, (0,)), [(3, 2)], [bf16, c64]),
    ("reduce_prod", lambda x: lax.reduce_prod(x, (0,)), [(3, 2)], [c64]),
    ("reduce_max", lambda x: lax.reduce_max(x, (0,)), [(3, 2)], [bf16]),
    (
        "dot_general",
        lambda x, y: lax.dot_general(x, y, DNUMS_MATMUL),
        [(2, 3), (3, 2)],
        [bf16, c64],
    ),
]


@pytest.mark.parametrize(
    "fun,shapes,dtype",
    [(c[1], c[2], dt) for c in DTYPE_CASES for dt in c[3]],
    ids=[f"{c[0]}-{np.dtype(dt).name}" for c in DTYPE_CASES for dt in c[3]],
)
def test_grads_dtypes(fun, shapes, dtype):
    args = [distinct(s, dtype) if dtype == bf16 else rand(s, dtype) for s in shapes]
    check_grads(fun, args, order=2)


def test_dot_general_mixed_dtypes_cotangents_keep_operand_dtypes():
    x, y = rand((2, 3), bf16), rand((3, 4), f32)
    out, f_vjp = ad.vjp(lambda x, y: lax.dot_general(x, y, DNUMS_MATMUL), x, y)
    assert out.dtype == f32
    ct_x, ct_y = f_vjp(np.ones((2, 4), f32))
    assert ct_x.dtype == bf16 and ct_y.dtype == f32
    np.testing.assert_allclose(np.asarray(ct_x, f32), np.ones((2, 4)) @ y.T, rtol=1e-2)


def test_dot_general_preferred_element_type_transposes_to_operand_dtype():
    x, y = rand((2, 3), bf16), rand((3, 4), bf16)

    def f(x, y):
        return lax.dot_general(x, y, DNUMS_MATMUL, preferred_element_type=np.float32)

    _, f_vjp = ad.vjp(f, x, y)
    ct_x, ct_y = f_vjp(np.ones((2, 4), f32))
    assert (ct_x.dtype, ct_y.dtype) == (bf16, bf16)


def test_dot_general_real_times_complex_cotangent_is_real():
    x, y = rand((2, 3), f32), rand((3,), c64)
    _, f_vjp = ad.vjp(lambda x, y: lax.dot(x, y), x, y)
    ct = rand((2,), c64)
    ct_x, _ = f_vjp(ct)
    assert ct_x.dtype == f32
    np.testing.assert_allclose(ct_x, np.real(np.outer(ct, y)), rtol=1e-5)


def test_reduce_max_ties_share_the_tangent_equally():
    x = np.float32([1.0, 3.0, 3.0, 2.0])
    t = np.float32([10.0, 1.0, 2.0, 100.0])
    out, tangent = ad.jvp(lambda x: lax.reduce_max(x, (0,)), (x,), (t,))
    assert float(out) == 3.0 and float(tangent) == 1.5
    grad = ad.grad(lambda x: lax.reduce_min(x, (0,)))(np.float32([2.0, 1.0, 1.0, 1.0]))
    np.testing.assert_allclose(grad, [0.0, 1 / 3, 1 / 3, 1 / 3], rtol=1e-6)


def test_reduce_prod_derivative_at_zeros():
    # d/dx_i prod(x) = prod of the others: exact at a zero (no division by x_i).
    x = np.float32([2.0, 0.0, 3.0, 5.0, 0.5])
    grad = ad.grad(lambda x: lax.reduce_prod(x, (0,)))(x)
    np.testing.assert_allclose(grad, [0.0, 15.0, 0.0, 0.0, 0.0])
    x2 = np.float32([[0.0, 2.0, 0.0], [1.0, 2.0, 3.0]])
    grad2 = ad.grad(lambda x: lax.reduce_prod(x, (1,)).sum())(x2)
    np.testing.assert_allclose(grad2, [[0.0, 0.0, 0.0], [6.0, 3.0, 2.0]])


def test_argmax_argmin_have_float0_tangents():
    x = distinct((3, 4))
    for fn in (lax.argmax, lax.argmin):
        out, tangent = ad.jvp(lambda x, fn=fn: fn(x, 1, np.int32), (x,), (np.ones_like(x),))
        assert out.dtype == np.int32
        assert tangent.dtype == dtypes.float0 and tangent.shape == (3,)

    # The index picks a value through a one-hot mask: the gradient is that mask.
    def pick_max(x):
        hot = lax.eq(lax.iota(np.int32, 3), lax.argmax(x, 0, np.int32))
        return lax.reduce_sum(x * lax.convert_element_type(hot, np.float32), (0,))

    np.testing.assert_allclose(ad.grad(pick_max)(np.float32([1.0, 4.0, 2.0])), [0.0, 1.0, 0.0])


def test_iota_under_jvp_and_grad():
    def f(x):
        return lax.reduce_sum(x * lax.iota(np.float32, 4), (0,))

    np.testing.assert_allclose(ad.grad(f)(rand((4,))), [0.0, 1.0, 2.0, 3.0])


def test_linear_rules_transpose_exactly():
    """The vjp of a linear function is its matrix transpose (checked densely)."""
    x = rand((2, 3))

    def f(x):
        y = lax.pad(x, np.float32(0), ((1, 0, 1), (0, -1, 0)))  # (4, 2)
        y = lax.concatenate([lax.rev(y, (0,)), lax.slice(y, (0, 0), (4, 2), (2, 1))], 0)
        return lax.reshape(lax.transpose(y, (1, 0)), (12,))

    n_in, n_out = x.size, 12
    jac = np.stack(
        [
            np.asarray(ad.jvp(f, (x,), (np.eye(n_in, dtype=f32)[i].reshape(x.shape),))[1])
            for i in range(n_in)
        ],
        axis=1,
    )
    _, f_vjp = ad.vjp(f, x)
    rows = np.stack(
        [np.asarray(f_vjp(np.eye(n_out, dtype=f32)[j])[0]).ravel() for j in range(n_out)]
    )
    np.testing.assert_array_equal(rows, jac)


# ---------------------------------------------------------------------------
# vmap against a Python loop


def _take(x, i, axis):
    return x if axis is None else np.take(x, i, axis)


def check_vmap(fun, in_axes, args, out_axes=0, rtol=1e-5):
    n = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    expected = np.stack(
        [np.asarray(fun(*[_take(a, i, ax) for a, ax in zip(args, in_axes)])) for i in range(n)],
        axis=out_axes,
    )
    got = batching.vmap(fun, in_axes=tuple(in_axes), out_axes=out_axes)(*args)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(np.asarray(got), expected, rtol=rtol, atol=1e-6)


def _dot(dnums):
    return lambda x, y: lax.dot_general(x, y, dnums)


# (id, function, in_axes, argument shapes (with the batch axis))
VMAP_CASES = [
    ("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (0, 2)), (1,), [(2, 3, 4)]),
    ("broadcast_rank0", lambda x: lax.broadcast_in_dim(x, (2, 3), ()), (0,), [(3,)]),
    ("reshape", lambda x: lax.reshape(x, (6,)), (1,), [(2, 3, 3)]),
    ("reshape_permuted", lambda x: lax.reshape(x, (4, 3), (1, 0)), (2,), [(3, 4, 5)]),
    ("transpose", lambda x: lax.transpose(x, (2, 0, 1)), (1,), [(2, 5, 3, 4)]),
    ("squeeze", lambda x: lax.squeeze(x, (0, 2)), (2,), [(1, 3, 4, 1)]),
    ("expand_dims", lambda x: lax.expand_dims(x, (1,)), (1,), [(3, 4)]),
    ("slice", lambda x: lax.slice(x, (1, 0), (4, 5), (2, 2)), (1,), [(5, 3, 6)]),
    ("slice_last", lambda x: lax.slice(x, (1,), (3,)), (1,), [(4, 3)]),
    (
        "concatenate",
        lambda x, y, z: lax.concatenate([x, y, z], 1),
        (0, None, 2),
        [(3, 2, 4), (2, 1), (2, 5, 3)],
    ),
    ("pad", lambda x, v: lax.pad(x, v, ((1, -1, 1), (0, 2, 0))), (2, None), [(3, 4, 5), ()]),
    (
        "pad_batched_value",
        lambda x, v: lax.pad(x, v, ((1, -1, 1), (0, 2, 0))),
        (1, 0),
        [(3, 4, 2), (4,)],
    ),
    ("pad_only_value", lambda x, v: lax.pad(x, v, ((2, 1, 1),)), (None, 0), [(3,), (4,)]),
    ("rev", lambda x: lax.rev(x, (0, 1)), (1,), [(2, 4, 3)]),
    ("reduce_sum", lambda x: lax.reduce_sum(x, (0, 2)), (1,), [(2, 5, 3, 4)]),
    ("reduce_max", lambda x: lax.reduce_max(x, (1,)), (0,), [(4, 2, 3)]),
    ("reduce_min", lambda x: lax.reduce_min(x, (0,)), (2,), [(3, 2, 4)]),
    ("reduce_prod", lambda x: lax.reduce_prod(x, (1,)), (1,), [(2, 3, 4)]),
    ("argmax", lambda x: lax.argmax(x, 1, np.int32), (2,), [(3, 4, 5)]),
    ("argmin", lambda x: lax.argmin(x, 0, np.int32), (0,), [(3, 4, 5)]),
    ("dot_lhs_only", _dot(DNUMS_MATMUL), (1, None), [(2, 4, 3), (3, 5)]),
    ("dot_rhs_only", _dot(DNUMS_MATMUL), (None, 2), [(2, 3), (3, 5, 4)]),
    ("dot_both", _dot(DNUMS_MATMUL), (0, 1), [(4, 2, 3), (3, 4, 5)]),
    ("dot_batched_both", _dot(DNUMS_BATCHED), (3, 0), [(2, 3, 4, 6), (6, 4, 2, 5, 3)]),
    ("dot_batched_lhs", _dot(DNUMS_BATCHED), (1, None), [(2, 6, 3, 4), (4, 2, 5, 3)]),
    ("dot_batched_rhs", _dot(DNUMS_BATCHED), (None, 4), [(2, 3, 4), (4, 2, 5, 3, 6)]),
    ("getitem", lambda x: x[1:3, ::-1], (1,), [(4, 3, 5)]),
    ("matmul", lambda x, y: x @ y, (0, None), [(3, 2, 4), (4, 5)]),
    ("T", lambda x: x.T, (2,), [(3, 4, 2)]),
    ("sum_method", lambda x: x.sum(axis=1), (1,), [(3, 2, 4)]),
]


@pytest.mark.parametrize(
    "fun,in_axes,shapes", [c[1:] for c in VMAP_CASES], ids=[c[0] for c in VMAP_CASES]
)
def test_vmap_matches_loop(fun, in_axes, shapes):
    args = [distinct(s) for s in shapes]
    check_vmap(fun, in_axes, args)


def test_vmap_out_axes_and_iota():
    # iota inside the mapped function: created once, combined with the batched value.
    x = rand((3, 4))
    check_vmap(lambda x: x * lax.iota(np.float32, 4), (0,), [x], out_axes=1)
    check_vmap(
        lambda x: lax.broadcasted_iota(np.int32, (2, 4), 1) + lax.argmax(x, 0, np.int32), (1,), [x]
    )


def test_vmap_of_grad_and_grad_of_vmap():
    xs, y = rand((3, 4)), rand((4, 2))

    def loss(x, y):
        return lax.reduce_sum(lax.dot(x, y) * lax.dot(x, y), (0,))

    per_example = batching.vmap(ad.grad(loss), in_axes=(0, None))(xs, y)
    expected = np.stack([2 * y @ (x @ y) for x in xs])
    np.testing.assert_allclose(per_example, expected, rtol=1e-5)

    def total(y):
        return lax.reduce_sum(batching.vmap(loss, in_axes=(0, None))(xs, y), (0,))

    np.testing.assert_allclose(ad.grad(total)(y), 2 * xs.T @ (xs @ y), rtol=1e-5)


def test_rules_compose_under_jit_and_nested_vmap():
    x, y = rand((2, 3, 4)), rand((4, 5))

    def f(x, y):
        z = lax.pad(lax.rev(x, (1,)), np.float32(0.5), ((0, 0, 0), (1, 1, 0), (0, 0, 1)))
        z = lax.slice(z, (0, 1, 0), (2, 4, 7), (1, 1, 2))  # back to (2, 3, 4)
        return lax.reduce_max(lax.dot_general(z, y, (((2,), (0,)), ((), ()))), (1,))

    check_grads(jit(f), (x, y), order=1)
    g = jit(ad.grad(lambda x, y: lax.reduce_sum(f(x, y), (0, 1))))
    np.testing.assert_allclose(
        g(x, y), ad.grad(lambda x, y: lax.reduce_sum(f(x, y), (0, 1)))(x, y), rtol=1e-6
    )
    assert "stablehlo.dot_general" in g.lower(x, y).as_text()
    # vmap of vmap of jit, with the batch axes at different positions.
    xs = rand((3, 2, 3, 4, 2))
    nested = batching.vmap(batching.vmap(jit(f), in_axes=(3, None)), in_axes=(0, None))
    expected = np.stack([np.stack([f(xs[i, ..., j], y) for j in range(2)]) for i in range(3)])
    np.testing.assert_allclose(nested(xs, y), expected, rtol=1e-5)


def test_rules_trace_with_symbolic_dimensions():
    n = sd.symbolic_dim("n")

    def f(x):
        y = lax.pad(lax.slice(x, (1, 0), (n, 4), (1, 2)), 0.0, ((1, 0, 0), (0, 0, 0)))
        y = lax.concatenate([y, lax.rev(y, (0,))], 0)
        y = lax.broadcast_in_dim(lax.reduce_max(y, (1,)), (3, 2 * n), (1,))
        return lax.reduce_sum(y, (0, 1))

    grad = trace_to_jaxpr(lambda x: [ad.grad(f)(x)], [ShapedArray((n, 4), f32)])
    assert grad.jaxpr.outvars[0].aval.shape == (n, 4)
    batched = trace_to_jaxpr(
        lambda x: [batching.vmap(f, in_axes=1)(x)], [ShapedArray((n, 5, 4), f32)]
    )
    assert batched.jaxpr.outvars[0].aval.shape == (5,)
