"""Collectives over named axes under vmap, checked against NumPy on the stacked values."""

from __future__ import annotations

import re

import numpy as np
import pytest

from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_interpreters import ad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax

f32 = np.float32


def arr(*shape, start=0.0, dtype=f32):
    return (
        np.arange(start, start + int(np.prod(shape)), dtype=np.float64).reshape(shape).astype(dtype)
    )


def close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=1e-6, atol=1e-6)


X = (np.random.RandomState(0).randn(4, 3) * 10).round().astype(f32)


# ---------------------------------------------------------------------------
# Reductions


@pytest.mark.parametrize(
    "op, ref",
    [
        (lax.psum, np.sum),
        (lax.pmean, np.mean),
        (lax.pmax, np.max),
        (lax.pmin, np.min),
    ],
)
@pytest.mark.parametrize("in_axis", [0, 1])
def test_reductions_over_the_mapped_axis(op, ref, in_axis):
    x = X if in_axis == 0 else X.T
    out = vmap(lambda v: op(v, "i"), in_axes=in_axis, axis_name="i")(x)
    expected = np.broadcast_to(ref(X, axis=0), X.shape)
    close(out, expected)


def test_reductions_of_pytrees_ints_and_unmapped_values():
    n = 4
    ints = np.arange(8, dtype=np.int32).reshape(n, 2)

    def f(x, c):
        return lax.psum({"x": x, "c": c}, "i"), lax.pmax(c, "i"), lax.psum(1, "i")

    tree, cmax, count = vmap(f, in_axes=(0, None), axis_name="i")(ints, X[0])
    close(tree["x"], np.broadcast_to(ints.sum(0), ints.shape))
    assert np.asarray(tree["x"]).dtype == np.int32
    close(tree["c"], np.broadcast_to(n * X[0], (n, 3)))  # a sum of n equal values
    close(cmax, np.broadcast_to(X[0], (n, 3)))
    close(count, [n] * n)
    # pmean of integers is a floating-point mean
    out = vmap(lambda v: lax.pmean(v, "i"), axis_name="i")(np.array([1, 2], np.int32))
    close(out, [1.5, 1.5])


def test_psum_of_tracer_of_unmapped_value():
    # the value is a tracer (under jit) but not batched: n times it
    out = jit(lambda c: vmap(lambda x: lax.psum(c, "i"), axis_name="i")(X))(X[0])
    close(out, np.broadcast_to(4 * X[0], (4, 3)))


def test_axis_index_and_axis_size():
    idx = vmap(lambda _: lax.axis_index("i"), axis_name="i")(np.zeros(5, f32))
    np.testing.assert_array_equal(idx, np.arange(5))
    assert np.asarray(idx).dtype == np.int32
    sizes = []
    vmap(lambda x: sizes.append(lax.axis_size("i")) or x, axis_name="i")(np.zeros(5, f32))
    assert sizes == [5]
    out = vmap(lambda: lax.axis_index("i"), axis_size=3, axis_name="i")()
    np.testing.assert_array_equal(out, [0, 1, 2])


# ---------------------------------------------------------------------------
# Gathers, scatters, all-to-all, permutations


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("tiled", [False, True])
def test_all_gather(axis, tiled):
    x = arr(4, 2, 3)  # position k holds x[k], of shape (2, 3)
    out = vmap(lambda v: lax.all_gather(v, "i", axis=axis, tiled=tiled), axis_name="i")(x)
    if tiled:
        gathered = np.concatenate(list(x), axis=axis)
    else:
        gathered = np.stack(list(x), axis=axis)
    close(out, np.broadcast_to(gathered, (4, *gathered.shape)))


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("tiled", [False, True])
def test_psum_scatter(dim, tiled):
    n = 4
    shape = [3, 3]
    shape[dim] = 2 * n if tiled else n
    x = arr(n, *shape)
    out = vmap(
        lambda v: lax.psum_scatter(v, "i", scatter_dimension=dim, tiled=tiled), axis_name="i"
    )(x)
    total = x.sum(0)
    blocks = np.split(total, n, axis=dim)
    expected = np.stack(blocks if tiled else [np.squeeze(b, dim) for b in blocks])
    close(out, expected)


def _all_to_all_reference(x, split_axis, concat_axis, tiled):
    """x[j] is position j's value; returns the stacked results per position k."""
    n = x.shape[0]
    outs = []
    for k in range(n):
        parts = []
        for j in range(n):
            chunk = np.split(x[j], n, axis=split_axis)[k]
            if not tiled:
                chunk = np.squeeze(chunk, split_axis)
                chunk = np.expand_dims(chunk, concat_axis)
            parts.append(chunk)
        outs.append(np.concatenate(parts, axis=concat_axis))
    return np.stack(outs)


@pytest.mark.parametrize("split_axis, concat_axis", [(0, 0), (0, 1), (1, 0), (1, 2), (2, 0)])
@pytest.mark.parametrize("tiled", [False, True])
def test_all_to_all(split_axis, concat_axis, tiled):
    n = 3
    shape = [2, 4, 5]
    shape[split_axis] = 2 * n if tiled else n
    if not tiled and concat_axis > 1:
        concat_axis = 1  # the result has one dimension less
    x = arr(n, *shape)
    f = vmap(lambda v: lax.all_to_all(v, "i", split_axis, concat_axis, tiled=tiled), axis_name="i")
    close(f(x), _all_to_all_reference(x, split_axis, concat_axis, tiled))


def test_all_to_all_size_error():
    with pytest.raises(ValueError, match="all_to_all requires the size of the mapped axis"):
        vmap(lambda v: lax.all_to_all(v, "i", 0, 0), axis_name="i")(arr(3, 2))


def test_ppermute_and_pshuffle():
    n = 4
    x = arr(n, 2)
    shift = [(i, (i + 1) % n) for i in range(n)]
    out = vmap(lambda v: lax.ppermute(v, "i", shift), axis_name="i")(x)
    close(out, np.roll(x, 1, axis=0))
    partial_perm = [(0, 2), (3, 0)]  # positions 1 and 3 receive nothing: zeros
    out = vmap(lambda v: lax.ppermute(v, "i", partial_perm), axis_name="i")(x)
    close(out, np.stack([x[3], 0 * x[0], x[0], 0 * x[0]]))
    perm = [2, 0, 3, 1]  # position i receives from perm[i]
    out = vmap(lambda v: lax.pshuffle(v, "i", perm), axis_name="i")(x)
    close(out, x[perm])
    # an unbatched value sent around a full permutation stays unbatched
    out = vmap(lambda v: lax.ppermute(X[0], "i", shift), axis_name="i", out_axes=None)(x)
    close(out, X[0])
    with pytest.raises(ValueError, match="sources and destinations must be unique"):
        vmap(lambda v: lax.ppermute(v, "i", [(0, 1), (0, 2)]), axis_name="i")(x)
    with pytest.raises(ValueError, match="does not represent a permutation"):
        vmap(lambda v: lax.pshuffle(v, "i", [0, 0, 1, 2]), axis_name="i")(x)


# ---------------------------------------------------------------------------
# Nested vmaps, tuples of names


def _nested(f, x):
    """f under vmap over 'i' (outer, axis 0) and 'j' (inner, axis 1 of x)."""
    return vmap(vmap(f, axis_name="j"), axis_name="i")(x)


def test_nested_vmaps_with_different_names():
    x = arr(2, 3)
    close(_nested(lambda v: lax.psum(v, "i"), x), np.broadcast_to(x.sum(0), x.shape))
    close(_nested(lambda v: lax.psum(v, "j"), x), np.broadcast_to(x.sum(1, keepdims=True), x.shape))
    close(_nested(lambda v: lax.psum(v, ("i", "j")), x), np.full(x.shape, x.sum()))
    close(_nested(lambda v: lax.pmax(v, ("j", "i")), x), np.full(x.shape, x.max()))
    close(_nested(lambda v: lax.pmean(v, ("i", "j")), x), np.full(x.shape, x.mean()))
    close(_nested(lambda v: lax.axis_index("i"), x), np.broadcast_to([[0], [1]], x.shape))
    close(_nested(lambda v: lax.axis_index("j"), x), np.broadcast_to([0, 1, 2], x.shape))
    close(_nested(lambda v: lax.axis_index(("i", "j")), x), np.arange(6).reshape(2, 3))
    close(_nested(lambda v: lax.axis_index(("j", "i")), x), [[0, 2, 4], [1, 3, 5]])
    sizes = []
    _nested(lambda v: sizes.append(lax.axis_size(("i", "j"))) or v, x)
    assert sizes == [6]


@pytest.mark.parametrize("names", [("i", "j"), ("j", "i")])
@pytest.mark.parametrize("tiled", [False, True])
def test_all_gather_tuple_of_names(names, tiled):
    x = arr(2, 3, 2)  # position (i, j) holds x[i, j], of shape (2,)
    out = _nested(lambda v: lax.all_gather(v, names, axis=0, tiled=tiled), x)
    order = x.reshape(6, 2) if names == ("i", "j") else x.transpose(1, 0, 2).reshape(6, 2)
    gathered = order.reshape(12) if tiled else order
    close(out, np.broadcast_to(gathered, (2, 3, *gathered.shape)))


@pytest.mark.parametrize("names", [("i", "j"), ("j", "i")])
def test_psum_scatter_tuple_of_names(names):
    x = arr(2, 3, 12)  # position (i, j) holds x[i, j]; 6 positions, blocks of 2
    out = _nested(lambda v: lax.psum_scatter(v, names, tiled=True), x)
    blocks = x.sum((0, 1)).reshape(6, 2)
    flat = (lambda i, j: i * 3 + j) if names == ("i", "j") else (lambda i, j: j * 2 + i)
    expected = np.array([[blocks[flat(i, j)] for j in range(3)] for i in range(2)])
    close(out, expected)


def test_collective_over_outer_name_inside_inner_vmap_of_batched_value():
    x = arr(2, 3, 4)  # gather over i, of values batched over j
    out = vmap(vmap(lambda v: lax.all_gather(v, "i"), in_axes=1, axis_name="j"), axis_name="i")(
        np.swapaxes(x, 1, 2)
    )
    # position (i, j) gets stack over i' of x[i', j]: shape (2, 4)
    expected = np.stack([[x[:, j] for j in range(3)]] * 2)
    close(out, expected)


# ---------------------------------------------------------------------------
# Names, jaxprs, jit, autodiff


def test_unbound_axis_name_errors():
    with pytest.raises(NameError, match="unbound axis name: k"):
        vmap(lambda v: lax.psum(v, "k"), axis_name="i")(X)
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(X, "i")
    with pytest.raises(NameError, match="unbound axis name: j"):
        vmap(lambda v: lax.all_gather(v, ("i", "j")), axis_name="i")(X)
    with pytest.raises(NameError, match="unbound axis name: z"):
        lax.axis_index("z")
    with pytest.raises(NameError, match="unbound axis name: z"):
        lax.axis_size("z")


def test_make_jaxpr_with_axis_env():
    jaxpr = make_jaxpr(lambda x: lax.psum(x, "i"), axis_env=[("i", 4)])(X)
    assert str(jaxpr) == (
        "{ lambda ; a:f32[4,3]. let\n"
        "    b:f32[4,3] = psum[axes=('i',) axis_index_groups=None] a\n"
        "  in (b,) }"
    )
    jaxpr = make_jaxpr(lambda x: lax.all_gather(x, "i", tiled=True), axis_env=[("i", 2)])(X)
    assert jaxpr.out_avals[0].shape == (8, 3)


def test_collectives_inside_jit_inside_vmap_and_jit_outside():
    @jit
    def f(v):
        return lax.psum(v, "i"), lax.axis_index("i"), lax.all_gather(v, "i")

    s, idx, g = vmap(f, axis_name="i")(X)
    close(s, np.broadcast_to(X.sum(0), X.shape))
    np.testing.assert_array_equal(idx, np.arange(4))
    close(g, np.broadcast_to(X, (4, *X.shape)))
    shift = [(i, (i + 1) % 4) for i in range(4)]
    g = jit(
        vmap(lambda v: (lax.all_to_all(v, "i", 0, 0), lax.ppermute(v, "i", shift)), axis_name="i")
    )
    a2a, perm = g(arr(4, 4))
    close(a2a, arr(4, 4).T)
    close(perm, np.roll(arr(4, 4), 1, axis=0))


def test_jvp_and_grad_of_collectives_under_vmap():
    t = arr(4, 3, start=1.0)

    def jvp_psum(x, tx):
        return ad.jvp(lambda v: lax.psum(v, "i"), (x,), (tx,))

    out, tout = vmap(jvp_psum, axis_name="i")(X, t)
    close(out, np.broadcast_to(X.sum(0), X.shape))
    close(tout, np.broadcast_to(t.sum(0), t.shape))

    x = np.array([1.0, 3.0, 3.0, 2.0], f32)
    tx = np.array([10.0, 20.0, 40.0, 80.0], f32)
    _, tmax = vmap(lambda a, b: ad.jvp(lambda v: lax.pmax(v, "i"), (a,), (b,)), axis_name="i")(
        x, tx
    )
    close(tmax, [30.0] * 4)  # tie between positions 1 and 2: averaged

    # psum transposes to the identity (JAX's pbroadcast): each position gets its own ct
    g = vmap(ad.grad(lambda v: lax.psum(v, "i")), axis_name="i")(x)
    close(g, np.ones(4))
    # ppermute transposes to the inverse permutation
    shift = [(i, (i + 1) % 4) for i in range(4)]
    w = np.array([1.0, 2.0, 3.0, 4.0], f32)
    g = vmap(lambda a, b: ad.grad(lambda v: lax.ppermute(v, "i", shift) * b)(a), axis_name="i")(
        x, w
    )
    close(g, np.roll(w, -1))


def test_transposes_of_gather_scatter_all_to_all():
    # vjp of all_gather is psum_scatter; of psum_scatter, all_gather; of all_to_all, the
    # all_to_all with the axes swapped. Checked against the NumPy reference of each.
    x = arr(2, 3)
    ct_g = arr(2, 2, 3, start=1.0)  # per position: cotangent of the gathered (2, 3)

    def vjp_gather(v, ct):
        _, pull = ad.vjp(lambda u: lax.all_gather(u, "i"), v)
        return pull(ct)[0]

    out = vmap(vjp_gather, axis_name="i")(x, ct_g)
    close(out, ct_g.sum(0))  # position k: the sum over positions j of ct_j[k]
    ct_s = arr(2, 3, start=1.0)

    def vjp_scatter(v, ct):
        _, pull = ad.vjp(lambda u: lax.psum_scatter(u, "i"), v)
        return pull(ct)[0]

    out = vmap(vjp_scatter, axis_name="i")(arr(2, 2, 3), ct_s)
    close(out, np.broadcast_to(ct_s, (2, 2, 3)))

    def vjp_a2a(v, ct):
        _, pull = ad.vjp(lambda u: lax.all_to_all(u, "i", 0, 1, tiled=True), v)
        return pull(ct)[0]

    v = arr(2, 4, 3)
    ct = arr(2, 2, 6, start=1.0)
    out = vmap(vjp_a2a, axis_name="i")(v, ct)
    close(out, _all_to_all_reference(ct, 1, 0, True))


def test_axis_index_groups_unsupported():
    with pytest.raises(NotImplementedError, match=re.escape("axis_index_groups")):
        vmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1]]), axis_name="i")(arr(2))


@pytest.mark.parametrize("names", [("i", "j"), ("j", "i")])
def test_ppermute_and_all_to_all_over_tuple_of_names(names):
    x = arr(2, 3, 6)  # position (i, j) holds x[i, j]

    def flat(v):  # values in the row-major order of `names`
        return v.reshape(6, 6) if names == ("i", "j") else v.transpose(1, 0, 2).reshape(6, 6)

    def unflat(v):  # back to (i, j) positions
        v = np.asarray(v)
        if names == ("i", "j"):
            return v.reshape(2, 3, -1)
        return v.reshape(3, 2, -1).transpose(1, 0, 2)

    perm = [(k, (k + 2) % 6) for k in range(5)]  # position 2 receives nothing (from 5)
    out = _nested(lambda v: lax.ppermute(v, names, perm), x)
    expected = np.zeros((6, 6), f32)
    for src, dst in perm:
        expected[dst] = flat(x)[src]
    close(out, unflat(expected))

    out = _nested(lambda v: lax.all_to_all(v, names, 0, 0), x)  # the transpose over 6 positions
    close(out, unflat(flat(x).T))
    bools = x > 10
    out = _nested(lambda v: lax.ppermute(v, names, perm), bools)
    np.testing.assert_array_equal(out, unflat(expected > 10))


def test_pcast_to_varying_under_vmap():
    x = arr(3, 2)
    close(vmap(lambda v: lax.pcast(v, "i", to="varying"), axis_name="i")(x), x)
    close(jit(vmap(lambda v: lax.pcast(v * 2, ("i",), to="varying"), axis_name="i"))(x), 2 * x)
    jaxpr = make_jaxpr(lambda v: lax.pcast(v, "i", to="varying"), axis_env=[("i", 2)])(x[0])
    assert "pvary[axes=('i',)]" in str(jaxpr)
    with pytest.raises(ValueError, match="Allowed `to` values"):
        lax.pcast(x, "i", to="invariant")
    # (to reduced/unreduced only inside a checked shard_map body: md_reduced.py)
    with pytest.raises(ValueError, match="Unsupported pcast from=invarying, to='reduced'"):
        lax.pcast(x, "i", to="reduced")
    with pytest.raises(NameError, match="unbound axis name: j"):
        vmap(lambda v: lax.pcast(v, "j", to="varying"), axis_name="i")(x)


def test_collectives_outside_a_mapped_axis_cannot_lower():
    from polyjax_interpreters import mlir  # noqa: PLC0415

    jaxpr = make_jaxpr(lambda v: lax.psum(v, "i"), axis_env=[("i", 2)])(arr(2))
    with pytest.raises(NameError, match="not inside shard_map or pmap"):
        mlir.lower_jaxpr_to_module(jaxpr, module_name="m", platforms=["cpu"])
