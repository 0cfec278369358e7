"""xmap on 8 host devices: against nested vmaps (no resources) and against shard_map
(with resources), named axes in dict and list forms, axis_sizes, and its errors."""

import numpy as np
import pytest
from _sharding_facade import pj  # on sys.path by the conftest

from polyjax_numpy import lax
from polyjax_sharding import PartitionSpec as P
from polyjax_sharding import shard_map, xmap

X = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)


def body(v):
    return lax.psum(v, "i") * lax.axis_index("j") + lax.pmax(v, ("i", "j"))


def test_against_nested_vmaps():
    f = xmap(body, in_axes=["i", None, "j"], out_axes={1: "j"})
    inner = pj.vmap(body, in_axes=1, out_axes=1, axis_name="j")  # over j (dim 2 -> 1)
    want = pj.vmap(inner, in_axes=0, out_axes=None, axis_name="i")
    np.testing.assert_allclose(f(X), want(X), rtol=1e-6)
    # dict form, named dims moved, an axis only in axis_sizes
    g = xmap(
        lambda v: v * lax.axis_index("k") + lax.psum(v, "i"),
        in_axes={0: "i"},
        out_axes={0: "k", 1: "i"},
        axis_sizes={"k": 5},
    )
    y = g(X)
    assert y.shape == (5, 2, 3, 4)
    k = np.arange(5).reshape(5, 1, 1, 1)
    np.testing.assert_allclose(y, X[None] * k + X.sum(0)[None, None], rtol=1e-6)
    # pytree prefixes
    h = xmap(
        lambda a, b: {"s": a + b},
        in_axes=(["i", ...], [...]),
        out_axes={"s": [..., "i"]},
    )
    out = h(X, X[0])
    np.testing.assert_allclose(out["s"], np.moveaxis(X + X[0], 0, -1), rtol=1e-6)


def test_against_shard_map_with_resources():
    mesh = pj.make_mesh((2, 4), ("a", "b"))
    with pj.set_mesh(mesh):
        f = xmap(
            body,
            in_axes=["i", None, "j"],
            out_axes={1: "j"},
            axis_resources={"i": "a", "j": "b"},
        )
        got = f(X)
        half = xmap(body, in_axes=["i", None, "j"], out_axes={1: "j"}, axis_resources={"j": "b"})
        np.testing.assert_allclose(half(X), got, rtol=1e-6)
    renamed = pj.Mesh(mesh.devices, ("i", "j"))

    def per_device(v):
        return body(v[0, :, 0])[:, None]

    want = shard_map(per_device, mesh=renamed, in_specs=P("i", None, "j"), out_specs=P(None, "j"))
    np.testing.assert_allclose(got, want(X), rtol=1e-6)
    want_vmap = pj.vmap(pj.vmap(body, 1, 1, axis_name="j"), 0, None, axis_name="i")(X)
    np.testing.assert_allclose(got, want_vmap, rtol=1e-6)


def test_control_flow_in_fun():
    def fun(v):
        def step(c, row):
            return c + lax.psum(row, "i"), lax.all_gather(row, "i")

        c, ys = lax.scan(step, np.zeros(4, np.float32), v)
        return lax.cond(c.sum() > 0, lambda: c, lambda: -c), ys

    f = xmap(fun, in_axes=["i", ...], out_axes=([...], ["i", ...]))
    c, ys = f(X)
    total = X.sum((0, 1))
    np.testing.assert_allclose(c, total if total.sum() > 0 else -total, rtol=1e-5)
    assert ys.shape == (2, 3, 2, 4)


def test_errors():
    with pytest.raises(ValueError, match="varies over the named axis 'i'"):
        xmap(lambda v: v, in_axes=["i", ...], out_axes=[...])(X)
    with pytest.raises(ValueError, match="inconsistent sizes"):
        xmap(lambda a, b: a, in_axes=(["i", ...], ["i", ...]), out_axes=["i", ...])(X, X[0])
    with pytest.raises(NameError, match="unbound axis name"):
        xmap(lambda v: lax.psum(v, "zz"), in_axes=["i", ...], out_axes=["i", ...])(X)
    with pytest.raises(ValueError, match="needs a Mesh in context"):
        xmap(lambda v: v, in_axes=["i", ...], out_axes=["i", ...], axis_resources={"i": "a"})(X)


def test_output_broadcast_along_named_axis():
    f = xmap(lambda v: v.sum(), in_axes=[...], out_axes=["k", ...], axis_sizes={"k": 3})
    np.testing.assert_allclose(f(X), np.full(3, X.sum()), rtol=1e-5)
