"""Unreduced and reduced mesh axes in explicit-mode types, on 8 host devices.

Every expected type and error is what JAX 0.10.2 gives for the same program on a
(2, 4) mesh of Explicit axes ``a``, ``b`` (docs/explicit-sharding.md, "Unreduced
and reduced"); values are checked against the same program on one device (NumPy).
"""

import numpy as np
import pytest

import polyjax_numpy.numpy as jnp
from polyjax_core import config
from polyjax_core.aval_sharding import ShardingTypeError
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_interpreters import ad, array
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax
from polyjax_sharding import NamedSharding, make_mesh, reshard, set_mesh, shard_map
from polyjax_sharding import PartitionSpec as P

X = np.arange(32, dtype=np.float32).reshape(8, 4) / 8
W = np.arange(16, dtype=np.float32).reshape(4, 4) / 4
U = P("a", None, unreduced={"b"})  # x @ w contracted over b, left as partial sums


@pytest.fixture(scope="module")
def mesh():
    m = make_mesh((2, 4), ("a", "b"))
    with set_mesh(m):
        yield m


@pytest.fixture(scope="module")
def xw(mesh):
    put = lambda v, spec: array.device_put(v, NamedSharding(mesh, spec))  # noqa: E731
    return put(X, P("a", "b")), put(W, P("b", None)), put(X, P("a", None, reduced={"b"}))


def _partial(x, w):
    return jnp.dot(x, w, out_sharding=U)


# name -> (function of (x, w, xr), JAX 0.10.2's result type, one-device value).
CASES = {
    "dot unreduced": (lambda x, w, xr: _partial(x, w), "float32[8@a,4]{U:b}", X @ W),
    "lax.dot_general": (
        lambda x, w, xr: lax.dot_general(x, w, (([1], [0]), ([], [])), out_sharding=U),
        "float32[8@a,4]{U:b}",
        X @ W,
    ),
    "reshard reduces": (
        lambda x, w, xr: reshard(_partial(x, w), P("a", None)),
        "float32[8@a,4]",
        X @ W,
    ),
    "add u+u": (lambda x, w, xr: _partial(x, w) + _partial(x, w), "float32[8@a,4]{U:b}", 2 * X @ W),
    "mul u*reduced": (lambda x, w, xr: _partial(x, w) * xr, "float32[8@a,4]{U:b}", X @ W * X),
    "sum": (lambda x, w, xr: _partial(x, w).sum(0), "float32[4]{U:b}", (X @ W).sum(0)),
    "transpose": (lambda x, w, xr: _partial(x, w).T, "float32[4,8@a]{U:b}", (X @ W).T),
    "astype": (
        lambda x, w, xr: _partial(x, w).astype(jnp.float16),
        "float16[8@a,4]{U:b}",
        (X @ W).astype(np.float16),
    ),
    "reshard to unreduced": (
        lambda x, w, xr: reshard(xr, P("a", None, unreduced={"b"})),
        "float32[8@a,4]{U:b}",
        X,
    ),
    "reduced*2": (lambda x, w, xr: xr * 2.0, "float32[8@a,4]{R:b}", 2 * X),
    "reduced sin": (lambda x, w, xr: jnp.sin(xr), "float32[8@a,4]{R:b}", np.sin(X)),
    "reduced sum": (lambda x, w, xr: xr.sum(), "float32[]{R:b}", X.sum()),
    "reduced @": (lambda x, w, xr: xr @ w.T, "float32[8@a,4@b]", X @ W.T),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_types_and_values(xw, name):
    fn, expected, value = CASES[name]
    jaxpr = make_jaxpr(fn)(*xw)
    assert str(jaxpr.out_avals[0]) == expected
    out = jit(fn)(*xw)
    assert str(out.aval) == expected  # the array keeps the axes in its sharding
    np.testing.assert_allclose(np.asarray(out, np.float32), value, rtol=1e-3)


def test_printing_spec_and_eager_values(mesh, xw):
    x, w, xr = xw
    assert str(xr.aval) == "float32[8@a,4]{R:b}"
    y = jit(_partial)(x, w)
    assert y.aval.sharding.spec == U and y.sharding.spec.unreduced == {"b"}
    direct = lambda x, w: lax.dot_general(x, w, (([1], [0]), ([], [])), out_sharding=U)  # noqa: E731
    assert "c:f32[8@a,4]{U:b} = dot_general" in str(make_jaxpr(direct)(x, w))
    # Eagerly the array holds the full value: reshard and + need no jit.
    np.testing.assert_allclose(np.asarray(reshard(y, P("a", None))), X @ W, rtol=1e-6)
    assert str((y + y).aval) == "float32[8@a,4]{U:b}"


# name -> (function of (x, w, xr), error type, JAX 0.10.2's message, the start of it).
ERRORS = {
    "mul u*u": (
        lambda x, w, xr: _partial(x, w) * _partial(x, w),
        ShardingTypeError,
        "lhs and rhs to `mul` cannot be unreduced since mul is bilinear",
    ),
    "mul u*scalar": (
        lambda x, w, xr: _partial(x, w) * 2.0,
        ShardingTypeError,
        "RHS should be reduced along the same axes LHS is unreduced on",
    ),
    "add u+plain": (
        lambda x, w, xr: _partial(x, w) + reshard(x, P("a", None)),
        ShardingTypeError,
        "lhs is unreduced while rhs is not. `add` operation does not allow this",
    ),
    "sin u": (
        lambda x, w, xr: jnp.sin(_partial(x, w)),
        NotImplementedError,
        "unreduced rule for sin",
    ),
    "dot of u": (
        lambda x, w, xr: _partial(x, w) @ w,
        ShardingTypeError,
        "lhs or rhs passed to dot_general cannot be unreduced",
    ),
    "unreduced not the contraction": (
        lambda x, w, xr: jnp.dot(x, w, out_sharding=P(None, None, unreduced={"a"})),
        ShardingTypeError,
        "out_sharding's unreduced axes should be equal to the contracting specs",
    ),
    "reduced + replicated": (
        lambda x, w, xr: xr + reshard(x, P("a", None)),
        ShardingTypeError,
        "inputs cannot be replicated on the same axes that another input is reduced on",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(xw, name):
    fn, exc, message = ERRORS[name]
    with pytest.raises(exc, match=message.replace("(", r"\(").replace(")", r"\)")):
        make_jaxpr(fn)(*xw)


def test_lowering_leaves_partial_sums_to_shardy(xw):
    x, w, _ = xw
    text = jit(lambda x, w: reshard(_partial(x, w), P("a", None))).lower(x, w).as_text()
    assert '<@mesh, [{"a"}, {}], unreduced={"b"}>' in text
    assert '<@mesh, [{"a"}, {}]>' in text  # the reshard: where the sum happens


def test_gspmd_reduces_at_once_with_the_same_values(xw):
    x, w, _ = xw
    with config.use_shardy_partitioner(False):
        out = jit(lambda x, w: reshard(_partial(x, w), P("a", None)) + 1)(x, w)
    np.testing.assert_allclose(np.asarray(out), X @ W + 1, rtol=1e-6)


def test_grad_cotangent_of_reduced_is_unreduced_and_vice_versa(xw):
    x, w, xr = xw

    def through_partial_sums(x, w):
        return reshard(_partial(x, w), P("a", None)).sum()

    jaxpr = str(make_jaxpr(ad.grad(through_partial_sums, argnums=(0, 1)))(x, w))
    assert "f32[8@a,4]{R:b} = sharding_constraint" in jaxpr  # as JAX's reshard
    gx, gw = jit(ad.grad(through_partial_sums, argnums=(0, 1)))(x, w)
    assert (str(gx.aval), str(gw.aval)) == ("float32[8@a,4@b]", "float32[4@b,4]")
    ones = np.ones((8, 4), np.float32)
    np.testing.assert_allclose(np.asarray(gx), ones @ W.T, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gw), X.T @ ones, rtol=1e-6)

    w2 = reshard(w, P(None, "b"))
    g = jit(ad.grad(lambda xr, w: (xr @ w).sum()))(xr, w2)
    assert str(g.aval) == "float32[8@a,4]{U:b}"  # JAX's type: the cotangent of {R:b}
    np.testing.assert_allclose(np.asarray(g), ones @ W.T, rtol=1e-6)


def test_types_are_part_of_the_cache_key(xw):
    x, _, xr = xw
    traces = []

    @jit
    def f(v):
        traces.append(str(v.aval))
        return v * 2.0

    f(reshard(x, P("a", None)))
    f(xr)
    assert traces == ["float32[8@a,4]", "float32[8@a,4]{R:b}"]


# -- inside shard_map: pcast to unreduced/reduced and back, psum of partial sums


def _smap(body, in_spec, out_spec):
    return shard_map(body, in_specs=in_spec, out_specs=out_spec)


def test_pcast_unreduced_and_reduced_inside_shard_map(xw):
    x, _, _ = xw
    xa = reshard(x, P("a", None))
    partials = _smap(lambda v: lax.pcast(v, "b", to="unreduced"), P("a", "b"), U)
    text = str(make_jaxpr(partials)(x))
    assert "d:f32[4,1]{V:a, U:b} = vary_unreduced_cast[axes=('b',)] c" in text  # as JAX
    assert str(jit(partials)(x).aval) == "float32[8@a,1]{U:b}"
    row_sums = X.sum(1, keepdims=True)  # each device's column block, summed by reshard
    for run in (
        lambda v: reshard(partials(v), P("a", None)),
        jit(lambda v: reshard(partials(v), P("a", None))),
    ):
        np.testing.assert_allclose(np.asarray(run(x)), row_sums, rtol=1e-6)
    reduced = _smap(
        lambda v: lax.pcast(v, "b", to="reduced"), P("a", None), P("a", None, reduced={"b"})
    )
    assert "{V:a, R:b} = preduced[axes=('b',)]" in str(make_jaxpr(reduced)(xa))
    np.testing.assert_allclose(np.asarray(jit(reduced)(xa)), X)

    def summed(v):
        return lax.psum(lax.pcast(lax.pcast(v, "b", to="varying"), "b", to="unreduced"), "b")

    f = _smap(summed, P("a", None), P("a", None))
    assert "{V:a} = unreduced_psum[axes=('b',)]" in str(make_jaxpr(f)(xa))
    np.testing.assert_allclose(np.asarray(jit(f)(xa)), 4 * X)


def test_grad_through_unreduced_and_reduced_shard_maps(xw):
    x, _, _ = xw
    xa = reshard(x, P("a", None))
    partials = _smap(lambda v: lax.pcast(v, "b", to="unreduced"), P("a", "b"), U)
    reduced = _smap(
        lambda v: lax.pcast(v, "b", to="reduced"), P("a", None), P("a", None, reduced={"b"})
    )
    g_u = ad.grad(lambda v: reshard(partials(v), P("a", None)).sum())
    g_r = ad.grad(lambda v: reduced(v).sum())
    assert "reduced_vary_cast[axes=('b',)]" in str(make_jaxpr(g_u)(x))  # JAX's transposes
    assert "unreduced_psum[axes=('b',)]" in str(make_jaxpr(g_r)(xa))
    np.testing.assert_allclose(np.asarray(jit(g_u)(x)), np.ones((8, 4)))
    np.testing.assert_allclose(np.asarray(jit(g_r)(xa)), np.ones((8, 4)))


def test_vmap_of_an_unreduced_shard_map(mesh):
    from polyjax_interpreters.batching import vmap

    x3 = array.device_put(np.stack([X, 2 * X]), NamedSharding(mesh, P(None, "a", "b")))
    partials = _smap(lambda v: lax.pcast(v, "b", to="unreduced"), P("a", "b"), U)
    f = vmap(lambda v: reshard(partials(v), P("a", None)))
    assert "b:f32[2,8@a,1]{U:b} = shard_map" in str(make_jaxpr(f)(x3))  # the spec keeps U
    want = np.stack([X, 2 * X]).sum(2, keepdims=True)
    np.testing.assert_allclose(np.asarray(jit(f)(x3)), want, rtol=1e-6)


def test_pcast_errors(xw):
    x, _, _ = xw
    with pytest.raises(ValueError, match="Unsupported pcast from=invarying, to='unreduced'"):
        lax.pcast(x, "b", to="unreduced")
    back = lambda v: lax.pcast(lax.pcast(v, "b", to="unreduced"), "b", to="varying")  # noqa: E731
    with pytest.raises(ValueError, match="Unsupported pcast from=unreduced, to='varying'"):
        make_jaxpr(_smap(back, P("a", "b"), P("a", "b")))(x)
    untold = _smap(lambda v: lax.pcast(v, "b", to="unreduced"), P("a", "b"), P("a", None))
    with pytest.raises(ValueError, match="does not match the unreduced/reduced axes"):
        make_jaxpr(untold)(x)
