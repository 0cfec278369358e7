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


F = np.float32
I32 = np.int32
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
    ("slice with start", lambda x: x[1:], "b", "Slicing a symbolic axis of size b"),
    ("slice with stop", lambda x: x[:-1], "b", "Slicing a symbolic axis of size b"),
    ("negative index", lambda x: x[-1], "b", "Integer index -1 into the symbolic axis"),
    ("cumsum", lambda x: jnp.cumsum(x), "b", "cumsum along a symbolic-size axis"),
    ("cumprod", lambda x: jnp.cumprod(x), "b", "cumprod along a symbolic-size axis"),
    ("nonzero without size", jnp.nonzero, "b", "size argument of jnp.nonzero must be statically"),
]


@pytest.mark.parametrize("name, fun, spec, match", UNSUPPORTED, ids=[c[0] for c in UNSUPPORTED])
def test_unsupported_raise_clearly(name, fun, spec, match):
    (arg,) = symbolic_args_specs((np.zeros(3, np.float32),), spec)
    with pytest.raises(Exception, match=match) as e:
        export(jax.jit(fun))(arg)
    assert "symbolic" in str(e.value).lower() or "concrete" in str(e.value).lower()
