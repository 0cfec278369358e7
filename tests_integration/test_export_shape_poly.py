# ruff: noqa: E501  (one table row per line)
"""What works with symbolic shapes: every row of the table in docs/export.md.

Each case is exported once with symbolic dimensions, called for two concrete
shapes, and compared with the same function jitted for those shapes.
"""

import numpy as np
import pytest

import polyjax as jax
import polyjax.numpy as jnp
from polyjax import lax
from polyjax_export import export, symbolic_args_specs

_rng = np.random.default_rng(0)


def _arg(shape, dtype):
    if np.issubdtype(dtype, np.integer):
        return _rng.integers(0, 3, size=shape).astype(dtype)
    return _rng.standard_normal(shape).astype(dtype)


def _key_fn(sampler):
    def f(x):
        return sampler(jax.random.key(0), x.shape) + x

    return f


def _scan_cumsum(x):
    return lax.scan(lambda c, a: (c + a, c * a), jnp.zeros(x.shape[1:], x.dtype), x)


def _spd(x):
    """Symmetric positive definite matrices from any batch of square ones."""
    return x @ jnp.swapaxes(x, -1, -2) + 3 * jnp.eye(x.shape[-1], dtype=x.dtype)


def _fori_weighted_sum(x):
    return lax.fori_loop(0, x.shape[0], lambda i, c: c + x[i] * i, jnp.zeros(x.shape[1:], x.dtype))


def _while_prefix_sum(x):
    def body(c):
        i, total = c
        return i + 1, total + x[i]

    return lax.while_loop(lambda c: c[0] < x.shape[0] // 2, body, (0, jnp.float32(0)))[1]


F = np.float32
I32 = np.int32
M33 = [("b, 3, 3", F)]  # a symbolic batch of 3x3 matrices
M33_SHAPES = [[(2, 3, 3)], [(5, 3, 3)]]
# name, function, [(spec, dtype)], two concrete shape lists
CASES = [
    ("elementwise", lambda x: jnp.sin(x) * 2 + 1, [("b, 3", F)], [[(2, 3)], [(5, 3)]]),
    ("broadcasting", lambda x, y: x + y, [("b, 3", F), ("3", F)], [[(2, 3), (3,)], [(4, 3), (3,)]]),
    (
        "broadcast rank",
        lambda x, y: x * y,
        [("b, 1", F), ("1, c", F)],
        [[(2, 1), (1, 3)], [(3, 1), (1, 5)]],
    ),
    ("reshape -1", lambda x: x.reshape(-1, 2), [("b, 4", F)], [[(2, 4)], [(3, 4)]]),
    (
        "reshape dim arithmetic",
        lambda x: x.reshape(x.shape[0] * 2, 2),
        [("b, 4", F)],
        [[(2, 4)], [(3, 4)]],
    ),
    ("reshape merge", lambda x: jnp.reshape(x, (-1,)), [("a, b", F)], [[(2, 3)], [(4, 1)]]),
    ("transpose", lambda x: x.T, [("a, b", F)], [[(2, 3)], [(4, 1)]]),
    (
        "concatenate",
        lambda x, y: jnp.concatenate([x, y, x]),
        [("a, 2", F), ("b, 2", F)],
        [[(1, 2), (3, 2)], [(4, 2), (2, 2)]],
    ),
    ("stack", lambda x: jnp.stack([x, x], axis=1), [("b, 2", F)], [[(1, 2)], [(3, 2)]]),
    (
        "gather take",
        lambda x, i: jnp.take(x, i, axis=0),
        [("b, 3", F), ("k", I32)],
        [[(4, 3), (2,)], [(5, 3), (6,)]],
    ),
    (
        "scatter add",
        lambda x, i: x.at[i].add(1.0),
        [("b", F), ("k", I32)],
        [[(4,), (2,)], [(5,), (6,)]],
    ),
    ("sum", lambda x: x.sum(axis=0), [("b, 3", F)], [[(2, 3)], [(5, 3)]]),
    ("mean", lambda x: jnp.mean(x), [("b, 3", F)], [[(2, 3)], [(5, 3)]]),
    ("var", lambda x: jnp.var(x, axis=0), [("b, 3", F)], [[(2, 3)], [(5, 3)]]),
    (
        "max argmax",
        lambda x: (x.max(axis=1), jnp.argmax(x, axis=1)),
        [("b, c", F)],
        [[(2, 3)], [(5, 4)]],
    ),
    (
        "dot_general",
        lambda x, y: x @ y,
        [("b, k", F), ("k, 4", F)],
        [[(2, 3), (3, 4)], [(5, 2), (2, 4)]],
    ),
    (
        "einsum batch",
        lambda x, y: jnp.einsum("bij,bjk->bik", x, y),
        [("b, 2, 3", F), ("b, 3, 2", F)],
        [[(1, 2, 3), (1, 3, 2)], [(4, 2, 3), (4, 3, 2)]],
    ),
    (
        "conv batch and spatial",
        lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME"),
        [("b, 2, h, w", F), ("3, 2, 3, 3", F)],
        [[(1, 2, 5, 5), (3, 2, 3, 3)], [(2, 2, 4, 6), (3, 2, 3, 3)]],
    ),
    ("arange(b)", lambda x: x + jnp.arange(x.shape[0]), [("b", F)], [[(2,)], [(5,)]]),
    ("iota", lambda x: x + lax.iota(np.float32, x.shape[0]), [("b", F)], [[(2,)], [(5,)]]),
    (
        "zeros((b, 2))",
        lambda x: jnp.zeros((x.shape[0], 2)) + x[:, None],
        [("b", F)],
        [[(2,)], [(5,)]],
    ),
    (
        "ones_like full",
        lambda x: jnp.ones_like(x) + jnp.full(x.shape, 2.0),
        [("b, c", F)],
        [[(2, 3)], [(1, 4)]],
    ),
    ("pad", lambda x: jnp.pad(x, ((1, 2), (0, 1))), [("b, c", F)], [[(2, 3)], [(4, 1)]]),
    ("sort", lambda x: jnp.sort(x, axis=0), [("b, 3", F)], [[(2, 3)], [(5, 3)]]),
    ("argsort", lambda x: jnp.argsort(x), [("b", F)], [[(3,)], [(6,)]]),
    ("where", lambda x: jnp.where(x > 0, x, -x), [("b", F)], [[(2,)], [(5,)]]),
    ("tile repeat", lambda x: jnp.tile(x, 2), [("b", F)], [[(2,)], [(5,)]]),
    ("random.normal", _key_fn(jax.random.normal), [("b, 2", F)], [[(2, 2)], [(5, 2)]]),
    ("random.uniform", _key_fn(jax.random.uniform), [("b", F)], [[(3,)], [(7,)]]),
    ("scan over b", _scan_cumsum, [("b, 2", F)], [[(2, 2)], [(5, 2)]]),
    ("cond", lambda x: lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x), [("b", F)], [[(2,)], [(5,)]]),
    ("grad", jax.grad(lambda x: jnp.sum(jnp.sin(x) * x)), [("b", F)], [[(2,)], [(5,)]]),
    ("vmap", jax.vmap(lambda r: r @ r), [("b, 3", F)], [[(2, 3)], [(5, 3)]]),
    ("checkpoint", jax.checkpoint(lambda x: jnp.sin(jnp.sin(x))), [("b", F)], [[(2,)], [(5,)]]),
    (
        "grad of checkpoint",
        jax.grad(lambda x: jax.checkpoint(lambda y: jnp.sum(jnp.sin(y) ** 2))(x)),
        [("b", F)],
        [[(2,)], [(5,)]],
    ),
    ("softmax", jax.nn.softmax, [("b, 4", F)], [[(2, 4)], [(5, 4)]]),
    ("flip", lambda x: jnp.flip(x, 0), [("b, 2", F)], [[(2, 2)], [(5, 2)]]),
    ("fori_loop to b", _fori_weighted_sum, [("b, 2", F)], [[(1, 2)], [(5, 2)]]),
    ("while_loop to b // 2", _while_prefix_sum, [("b", F)], [[(2,)], [(7,)]]),
    (
        "scan length=b",
        lambda x: lax.scan(lambda c, _: (c * 2 + 1, c), 0.0, None, length=x.shape[0])[1] + x,
        [("b", F)],
        [[(2,)], [(5,)]],
    ),
    (
        "dimension as value",
        lambda x: (x * x.shape[0], x.sum() / x.shape[1], jnp.asarray(x.shape[0])),
        [("b, c", F)],
        [[(2, 3)], [(5, 1)]],
    ),
    (
        "slices of a symbolic axis",
        lambda x: (x[1:], x[:-1], x[1:-1], x[-2:], x[:2], x[::2], x[1:-1:3], x[::-2], x[3::-1]),
        [("b, 2", F)],
        [[(1, 2)], [(2, 2)], [(7, 2)]],
    ),
    (
        "updates through slices",
        lambda x: (
            x.at[1:].set(0.0),
            x.at[::2].add(1.0),
            x.at[::-1, 0].multiply(2.0),
            x.at[-1].set(5.0),
        ),
        [("b, 2", F)],
        [[(1, 2)], [(2, 2)], [(5, 2)]],
    ),
    (
        "slice and array index",
        lambda x, i: x[1:-1:2, i],
        [("b, 3", F), ("k", I32)],
        [[(1, 3), (2,)], [(6, 3), (4,)]],
    ),
    (
        "slices bounded by dimensions",
        lambda x: (x[: x.shape[0] // 2], x[x.shape[0] // 2 :], x[x.shape[0] - 1 :: -1]),
        [("b, 2", F)],
        [[(1, 2)], [(2, 2)], [(5, 2)]],
    ),
    (
        "ints into a symbolic axis",
        lambda x: (x[-1], x[-2], x[2], x[0]),
        [("b, 2", F)],
        [[(1, 2)], [(2, 2)], [(7, 2)]],
    ),
    (
        "cumulative along b",
        lambda x: (
            jnp.cumsum(x, 0),
            jnp.cumprod(x, 0),
            lax.cummax(x, 0, reverse=True),
            jnp.diff(x, axis=0),
        ),
        [("b, 2", F)],
        [[(1, 2)], [(6, 2)]],
    ),
    (
        "dimension with floats",
        lambda x: (x * (x.shape[0] / 2), np.float32(0.5) * x.shape[1] - 2.5, x.shape[0] * 3),
        [("b, c", F)],
        [[(2, 3)], [(5, 1)]],
    ),
    (
        "dynamic_slice symbolic size",
        lambda x, i: lax.dynamic_slice(x, (0, i), (x.shape[0], 2)),
        [("b, 3", F), ("", I32)],
        [[(2, 3), ()], [(5, 3), ()]],
    ),
    (
        "dynamic_update_slice symbolic",
        lambda x, i: lax.dynamic_update_slice(x, x[:, :1] * 2, (0, i)),
        [("b, 3", F), ("", I32)],
        [[(2, 3), ()], [(5, 3), ()]],
    ),
    (
        "slice at b // 2",
        lambda x: lax.slice_in_dim(x, x.shape[0] // 2, x.shape[0]),
        [("b", F)],
        [[(2,)], [(7,)]],
    ),
    ("roll static shift", lambda x: jnp.roll(x, 2, axis=0), [("b, 3", F)], [[(1, 3)], [(5, 3)]]),
    (
        "roll symbolic shift",
        lambda x: jnp.roll(x, (x.shape[0] // 2, x.shape[0]), axis=(0, 1)),
        [("b, 3", F)],
        [[(2, 3)], [(5, 3)]],
    ),
    (
        "roll traced shift",
        lambda x, s: jnp.roll(x, s),
        [("b", F), ("", I32)],
        [[(2,), ()], [(5,), ()]],
    ),
    ("linalg.cholesky", lambda x: jnp.linalg.cholesky(_spd(x)), M33, M33_SHAPES),
    ("linalg.qr", lambda x: jnp.abs(jnp.linalg.qr(x)[1]), M33, M33_SHAPES),
    ("linalg.svd", lambda x: jnp.linalg.svd(x, compute_uv=False), M33, M33_SHAPES),
    ("linalg.inv", lambda x: jnp.linalg.inv(_spd(x)), M33, M33_SHAPES),
    ("linalg.solve", lambda x: jnp.linalg.solve(_spd(x), x[..., :1]), M33, M33_SHAPES),
    ("linalg.eigh", lambda x: jnp.linalg.eigh(_spd(x))[0], M33, M33_SHAPES),
    ("linalg.det", lambda x: jnp.linalg.det(_spd(x)), M33, M33_SHAPES),
    ("linalg.slogdet", lambda x: jnp.linalg.slogdet(x), M33, M33_SHAPES),
    (
        "grad of linalg.cholesky",
        jax.grad(lambda x: jnp.linalg.cholesky(_spd(x)).sum()),
        M33,
        M33_SHAPES,
    ),
    ("b + 1 input", lambda x: jnp.sin(x).sum(), [("b + 1", F)], [[(2,)], [(6,)]]),
    ("2*b input", lambda x: x.reshape(2, -1).sum(0), [("2*b", F)], [[(4,)], [(10,)]]),
]


@pytest.mark.parametrize("name, fun, specs, shapes", CASES, ids=[c[0] for c in CASES])
def test_symbolic_shapes(name, fun, specs, shapes):
    protos = [np.zeros(s, d) for s, (_, d) in zip(shapes[0], specs)]
    args_specs = symbolic_args_specs(protos, [s for s, _ in specs])
    exp = export(jax.jit(fun))(*args_specs)
    for shape_list in shapes:
        args = [_arg(s, d) for s, (_, d) in zip(shape_list, specs)]
        got = exp.call(*args)
        want = jax.jit(fun)(*args)
        jax.tree.map(lambda g, w: np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5), got, want)


# Not yet supported: each raises an error that says so (see the table in docs/export.md).
UNSUPPORTED = [
    ("nonzero without size", jnp.nonzero, "b", "size argument of jnp.nonzero must be statically"),
]


@pytest.mark.parametrize("name, fun, spec, match", UNSUPPORTED, ids=[c[0] for c in UNSUPPORTED])
def test_unsupported_raise_clearly(name, fun, spec, match):
    (arg,) = symbolic_args_specs((np.zeros(3, np.float32),), spec)
    with pytest.raises(Exception, match=match) as e:
        export(jax.jit(fun))(arg)
    assert "symbolic" in str(e.value).lower() or "concrete" in str(e.value).lower()


def _b_spec(shape=(3,), spec="b"):
    return symbolic_args_specs((np.zeros(shape, np.float32),), spec)[0]


def test_dimension_as_value_is_a_weak_int_primitive():
    from polyjax_core.make_jaxpr import make_jaxpr

    closed = make_jaxpr(lambda x: jnp.asarray(x.shape[0]))(_b_spec())
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive.name == "dim_as_value" and str(eqn.params["dim"]) == "b"
    (out,) = closed.out_avals
    assert out.shape == () and out.dtype == np.int32 and out.weak_type
    # as a Python int would: an int8 array stays int8, a float32 one float32
    assert jax.eval_shape(lambda x: x.astype(np.int8) + x.shape[0], _b_spec()).dtype == np.int8
    assert jax.eval_shape(lambda x: x.shape[0] / x, _b_spec()).dtype == np.float32


def test_dimension_to_a_fractional_power_raises_as_jax():
    with pytest.raises(ValueError, match="cannot be raised to non-integer powers"):
        export(jax.jit(lambda x: x.shape[0] ** 0.5))(_b_spec())


def test_dimension_as_value_outside_export_raises_as_jax():
    from polyjax_export import symbolic_shape

    with pytest.raises(NotImplementedError, match="dim_as_value"):
        jnp.ones(3) * symbolic_shape("b")[0]


def test_grad_of_fori_loop_to_a_symbolic_bound_raises_as_jax():
    # The bound is a traced value there: a while loop, forward-mode only (as in JAX).
    f = jax.grad(lambda x: lax.fori_loop(0, x.shape[0], lambda i, c: c + x[i], 0.0))
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        export(jax.jit(f))(_b_spec())


@pytest.mark.parametrize(
    "fun",
    [
        lambda x: lax.dynamic_slice(x, (1,), (2,)),
        lambda x: lax.dynamic_update_slice(x, jnp.ones(2, x.dtype), (1,)),
    ],
    ids=["dynamic_slice", "dynamic_update_slice"],
)
def test_fixed_window_in_a_symbolic_axis_is_inconclusive_as_jax(fun):
    # b >= 2 is not known (b >= 1 only): JAX raises the same error.
    from polyjax_core.symbolic_dims import InconclusiveDimensionOperation

    with pytest.raises(InconclusiveDimensionOperation, match="'b' >= '2' is inconclusive"):
        export(jax.jit(fun))(_b_spec())
    (s,) = symbolic_args_specs((np.zeros(3, np.float32),), "b", constraints=["b >= 2"])
    x = _arg((4,), F)
    np.testing.assert_allclose(export(jax.jit(fun))(s).call(x), jax.jit(fun)(x), rtol=1e-6)


def test_dimension_as_an_index_raises_as_jax():
    # JAX refuses a dimension as an integer index (a slice bound is fine), and a
    # negative-or-not symbolic bound whose sign is unknown.
    from polyjax_core.symbolic_dims import InconclusiveDimensionOperation

    with pytest.raises(IndexError, match="valid indices. Got floordiv"):
        export(jax.jit(lambda x: x[x.shape[0] // 2]))(_b_spec())
    with pytest.raises(InconclusiveDimensionOperation, match="inconclusive"):
        export(jax.jit(lambda x: x[-(x.shape[0] // 2) :]))(_b_spec())
    with pytest.raises(NotImplementedError, match="slice step"):
        export(jax.jit(lambda x: x[:: x.shape[0]]))(_b_spec())


def test_solve_of_a_batch_of_vectors_raises_as_jax():
    # JAX 0.10.2 (since 0.5) refuses a (b, 3) right-hand side for a (b, 3, 3) matrix.
    with pytest.raises(ValueError, match="solve"):
        export(jax.jit(lambda a: jnp.linalg.solve(a, a[..., 0])))(_b_spec((2, 3, 3), "b, 3, 3"))
