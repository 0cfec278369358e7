"""shard_map, its collectives, pmap on 8 host devices: values against a NumPy model of
the per-device blocks, derivatives against one device and finite differences, errors."""

import math

import numpy as np
import pytest
from _sharding_facade import pj  # on sys.path by the conftest

import polyjax_numpy.numpy as jnp
from polyjax_core import config
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax
from polyjax_sharding import AxisType, shard_map
from polyjax_sharding import PartitionSpec as P


def _axis_choices(names):
    """Single first and last axes, and the tuple of all axes (and a reordered pair)."""
    out = [(names[0],), (names[-1],), tuple(names)]
    if len(names) >= 2:
        out.append((names[-1], names[0]))
    return out


def _groups(sizes, names, chosen):
    """For each linear device position: (its group's positions in index order, its index)."""
    n = math.prod(sizes)
    grid = np.arange(n).reshape(sizes)
    where = [names.index(a) for a in chosen]
    rest = [i for i in range(len(names)) if i not in where]
    rows = np.transpose(grid, rest + where).reshape(-1, math.prod(sizes[i] for i in where))
    info = {}
    for row in rows:
        for j, k in enumerate(row):
            info[k] = (list(row), j)
    return [info[k] for k in range(n)]


def test_collectives_match_numpy_model(mesh):
    names, sizes = tuple(mesh.axis_names), tuple(mesh.axis_sizes)
    n = math.prod(sizes)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n * 2, 8)).astype(np.float32)
    blocks = x.reshape(n, 2, 8)
    everything = P(names)
    for chosen in _axis_choices(names):
        g = math.prod(mesh.shape[a] for a in chosen)
        ring = [(i, (i + 1) % g) for i in range(g)]

        def f(a, chosen=chosen, ring=ring, g=g):
            return (
                lax.psum(a, chosen),
                lax.pmax(a, chosen),
                lax.pmin(a, chosen),
                lax.pmean(a, chosen),
                lax.all_gather(a, chosen, axis=0, tiled=True),
                lax.all_gather(a, chosen, axis=1),
                lax.psum_scatter(a, chosen, scatter_dimension=1, tiled=True),
                lax.all_to_all(a, chosen, 1, 0, tiled=True),
                lax.ppermute(a, chosen, ring),
                lax.ppermute(a, chosen, [(0, g - 1)]),
                jnp.reshape(lax.axis_index(chosen), (1,)),
                jnp.reshape(jnp.float32(lax.axis_size(chosen)), (1,)),
            )

        outs = pj.jit(
            shard_map(f, mesh=mesh, in_specs=everything, out_specs=everything, check_vma=False)
        )(x)
        groups = _groups(sizes, names, chosen)
        expect = [[] for _ in range(12)]
        for k in range(n):
            row, j = groups[k]
            mine = blocks[row]
            expect[0].append(mine.sum(0))
            expect[1].append(mine.max(0))
            expect[2].append(mine.min(0))
            expect[3].append(mine.mean(0))
            expect[4].append(np.concatenate(list(mine), 0))
            expect[5].append(np.stack(list(mine), 1))
            expect[6].append(np.split(mine.sum(0), g, axis=1)[j])
            expect[7].append(np.concatenate([np.split(b, g, axis=1)[j] for b in mine], 0))
            expect[8].append(blocks[row[(j - 1) % g]])
            expect[9].append(blocks[row[0]] if j == g - 1 else np.zeros_like(blocks[k]))
            expect[10].append(np.array([j]))
            expect[11].append(np.array([g], np.float32))
        for i, (got, want) in enumerate(zip(outs, expect)):
            np.testing.assert_allclose(
                np.asarray(got), np.concatenate(want, 0), rtol=1e-5, atol=1e-5,
                err_msg=f"output {i} over {chosen} on mesh {sizes}",
            )  # fmt: skip


def test_gspmd_lowering_and_eager_agree(mesh):
    names = tuple(mesh.axis_names)
    x = np.arange(8 * 4 * 2, dtype=np.float32).reshape(8 * 2, 4)

    def f(a):
        return lax.psum(a, names[0]) * lax.axis_index(names[-1])

    g = shard_map(f, mesh=mesh, in_specs=P(names), out_specs=P(names), check_vma=False)
    shardy = np.asarray(pj.jit(g)(x))
    eager = np.asarray(g(x))
    with config.use_shardy_partitioner(False):
        gspmd = np.asarray(pj.jit(g)(x))
    np.testing.assert_allclose(shardy, eager)
    np.testing.assert_allclose(shardy, gspmd)


def _mesh2(devices=None):
    # Auto axes: these tests place unsharded inputs into shard_map, which an Explicit
    # mesh's types would refuse (as JAX does; docs/explicit-sharding.md).
    return pj.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


def test_grads_match_one_device_and_finite_differences():
    mesh = _mesh2()
    x = np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32)

    def per_device(a):
        s = lax.psum(jnp.sin(a), "x")  # the same along x
        return lax.pmean(jnp.sum(s * a), ("x", "y"))

    sm = shard_map(per_device, mesh=mesh, in_specs=P("x", "y"), out_specs=P())

    def one_device(a):
        blocks = a.reshape(2, 4, 4, 2).transpose(0, 2, 1, 3)  # (x, rows, y, cols)
        s = jnp.sin(blocks).sum(0, keepdims=True)
        return jnp.sum(s * blocks) / 8

    np.testing.assert_allclose(sm(x), one_device(x), rtol=1e-5)
    np.testing.assert_allclose(pj.grad(sm)(x), pj.grad(one_device)(x), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(pj.jit(pj.grad(sm))(x), pj.grad(one_device)(x), rtol=1e-4, atol=1e-5)
    check_grads(sm, (x.astype(np.float64),), order=1, modes=("rev",), atol=2e-2, rtol=2e-2)


def test_grads_of_collectives():
    mesh = _mesh2()
    x = np.random.default_rng(2).standard_normal((8, 16)).astype(np.float32)
    ring = [(i, (i + 1) % 4) for i in range(4)]

    def f(a):
        b = lax.all_gather(a, "y", axis=1, tiled=True)
        c = lax.psum_scatter(jnp.sin(b), "y", scatter_dimension=1, tiled=True)
        d = lax.ppermute(c * a, "y", ring)
        e = lax.all_to_all(d, "x", 0, 0, tiled=True)
        return e * lax.pmax(a, "x")

    g = shard_map(f, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"), check_vma=False)
    loss = lambda a: jnp.sum(jnp.cos(g(a)))  # noqa: E731
    check_grads(loss, (x.astype(np.float64),), order=1, modes=("rev", "fwd"), atol=3e-2, rtol=3e-2)


def test_check_vma_errors_and_opt_out():
    mesh = _mesh2()
    x = np.ones((8, 8), np.float32)
    with pytest.raises(ValueError, match=r"out_specs is P\(\) which implies .* and not \{x,y\}"):
        shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("x", "y"), out_specs=P())(x)
    with pytest.raises(ValueError, match=r"replicated across mesh axis 'y', but could not infer"):
        shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x"))(x)
    # psum makes the value invariant; axis_index and cond on a varying predicate do not.
    ok = shard_map(lambda a: lax.psum(a, "y"), mesh=mesh, in_specs=P("x", "y"), out_specs=P("x"))
    assert ok(x).shape == (8, 2)

    def branchy(a):
        return lax.cond(lax.axis_index("y") > 1, lambda v: v + 1, lambda v: v, lax.psum(a, "y"))

    with pytest.raises(ValueError, match="replication which can't be statically inferred"):
        shard_map(branchy, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x"))(x)
    out = shard_map(branchy, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x"), check_vma=False)
    assert out(x).shape == (8, 2)


def test_bad_specs():
    mesh = _mesh2()
    x = np.ones((6, 8), np.float32)
    with pytest.raises(ValueError, match="not evenly divisible"):
        shard_map(lambda a: a, mesh=mesh, in_specs=P("y"), out_specs=P("y"))(x)
    with pytest.raises(ValueError, match="not an axis of the mesh"):
        shard_map(lambda a: a, mesh=mesh, in_specs=P("z"), out_specs=P())(x)
    with pytest.raises(ValueError, match="context mesh cannot be empty"):
        shard_map(lambda a: a, in_specs=P(), out_specs=P())(x)


def test_mesh_from_context_and_decorator():
    mesh = _mesh2()
    x = np.arange(16.0, dtype=np.float32).reshape(8, 2)

    @shard_map(in_specs=P("x"), out_specs=P())
    def total(a):
        return lax.psum(jnp.sum(a, 0), "x")

    with pj.set_mesh(mesh):
        np.testing.assert_allclose(total(x), x.sum(0))


def test_vmap_of_shard_map_and_spmd_axis_name():
    mesh = _mesh2()
    xs = np.random.default_rng(3).standard_normal((4, 8, 8)).astype(np.float32)
    f = shard_map(lambda a: lax.psum(a, "y"), mesh=mesh, in_specs=P(None, "y"), out_specs=P())
    want = np.stack([np.asarray(f(x)) for x in xs])
    np.testing.assert_allclose(pj.vmap(f)(xs), want, rtol=1e-5)
    got = pj.vmap(f, spmd_axis_name="x")(xs)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert got.sharding.spec == P("x")
    # a collective over the vmapped axis inside the per-device function
    g = shard_map(
        pj.vmap(lambda r: lax.psum(r, "b") + lax.psum(r, "y"), axis_name="b"),
        mesh=mesh, in_specs=P(None, "y"), out_specs=P(None, "y"),
    )  # fmt: skip
    x = xs[0]
    want = x.sum(0, keepdims=True) + x.reshape(8, 4, 2).sum(1).reshape(8, 1, 2).repeat(
        4, 1
    ).reshape(8, 8)
    np.testing.assert_allclose(g(x), want, rtol=1e-5, atol=1e-5)


def test_control_flow_inside_and_around():
    mesh = _mesh2()
    x = np.random.default_rng(4).standard_normal((8, 8)).astype(np.float32)

    def body(a):
        def step(c, _):
            return c + lax.psum(a, "x"), None

        # The carry's type says it varies over "y" (as the body's output does); a
        # zeros_like(a) would vary over "x" too, and the output check would refuse it.
        c, _ = lax.scan(step, lax.pcast(jnp.zeros(a.shape), "y", to="varying"), None, length=3)
        c = lax.while_loop(lambda v: jnp.max(v) < 100.0, lambda v: v * 2 + 1, lax.pmax(c, "y"))
        return lax.cond(jnp.sum(c) > 0, lambda v: v + 1, lambda v: v - 1, c)

    sm = shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P())

    def ref(a):
        s = a.reshape(2, 4, 4, 2).sum(0)  # (rows, y, cols)
        c = 3 * s.max(1)
        while c.max() < 100:
            c = c * 2 + 1
        return c + 1 if c.sum() > 0 else c - 1

    np.testing.assert_allclose(sm(x), ref(x), rtol=1e-5)
    # shard_map inside scan (run eagerly and under jit), under grad and checkpoint
    inner = shard_map(
        lambda a: jnp.sin(a) * lax.pmean(a, "y"), mesh=mesh, in_specs=P("x", "y"),
        out_specs=P("x", "y"),
    )  # fmt: skip

    def loop(a):
        c, _ = lax.scan(lambda c, _: (pj.checkpoint(inner)(c), None), a, None, length=2)
        return jnp.sum(c)

    def loop_on_one_device(a):
        def step(c, _):
            m = c.reshape(8, 4, 2).mean(1, keepdims=True)
            return jnp.sin(c) * jnp.broadcast_to(m, (8, 4, 2)).reshape(8, 8), None

        return jnp.sum(lax.scan(step, a, None, length=2)[0])

    np.testing.assert_allclose(loop(x), loop_on_one_device(x), rtol=1e-5)
    want = pj.grad(loop_on_one_device)(x)
    np.testing.assert_allclose(pj.grad(loop)(x), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(pj.jit(pj.grad(loop))(x), want, rtol=1e-4, atol=1e-5)
    check_grads(loop, (x.astype(np.float64),), order=1, modes=("rev",), atol=3e-2, rtol=3e-2)


def test_pmap_matches_vmap_and_errors():
    x = np.random.default_rng(5).standard_normal((8, 3)).astype(np.float32)

    def f(v, w):
        return jnp.sin(v) * lax.pmean(v, "i") + w, lax.psum(jnp.sum(v), "i")

    p = pj.pmap(f, axis_name="i", in_axes=(0, None), out_axes=(0, None))
    got = p(x, 2.0)
    want = pj.vmap(f, axis_name="i", in_axes=(0, None), out_axes=(0, None))(x, 2.0)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
    # results feed the next call without moving data
    q = pj.pmap(lambda v: v * 2 + 1)
    y = q(x)
    z = q(y)
    assert z.sharding.device_set == y.sharding.device_set
    assert z.sharding.is_equivalent_to(y.sharding, 2)
    np.testing.assert_allclose(z, (x * 2 + 1) * 2 + 1, rtol=1e-6)

    # nested pmap: a mesh of two axes when the devices suffice, else vmap inside
    def both(v):
        return lax.psum(v, ("i", "j")) + 10 * lax.axis_index("i") + lax.axis_index("j")

    nested = pj.pmap(pj.pmap(both, axis_name="j"), axis_name="i")
    y = nested(np.arange(8.0).reshape(2, 4))
    np.testing.assert_allclose(y, 28.0 + 10 * np.arange(2)[:, None] + np.arange(4))
    assert y.sharding.spec == P("i", "j") and dict(y.sharding.mesh.shape) == {"i": 2, "j": 4}
    means = pj.pmap(pj.pmap(lambda v: lax.pmean(v, "j"), axis_name="j"), axis_name="i")
    z = means(np.arange(12.0).reshape(3, 4))  # 12 positions, 8 devices
    np.testing.assert_allclose(
        z, np.repeat(np.arange(12.0).reshape(3, 4).mean(1, keepdims=True), 4, 1)
    )
    with pytest.raises(ValueError, match="requires 9 logical devices"):
        pj.pmap(lambda v: v)(np.zeros((9, 2)))
    with pytest.raises(ValueError, match=r"inconsistent sizes(.|\n)*argument a(.|\n)*argument b"):
        pj.pmap(lambda a, b: a)(np.zeros((4, 2)), np.zeros((3, 2)))


def test_docs_examples():
    # A data-parallel training step: each device's gradient, averaged with pmean.
    mesh = pj.make_mesh((8,), ("batch",), axis_types=(AxisType.Auto,))
    rng = np.random.default_rng(6)
    xs = rng.standard_normal((64, 3)).astype(np.float32)
    ys = xs @ np.array([1.0, -2.0, 0.5], np.float32)
    w = np.zeros(3, np.float32)

    def loss(w, x, y):
        return jnp.mean((x @ w - y) ** 2)

    @pj.jit
    def step(w, x, y):
        def per_device(w, x, y):
            # The gradient at a varying copy of `w` is this device's own.
            local = pj.grad(loss)(lax.pcast(w, "batch", to="varying"), x, y)
            return w - 0.1 * lax.pmean(local, "batch")

        return shard_map(
            per_device, mesh=mesh, in_specs=(P(), P("batch"), P("batch")), out_specs=P()
        )(w, x, y)

    np.testing.assert_allclose(step(w, xs, ys), w - 0.1 * pj.grad(loss)(w, xs, ys), rtol=1e-5)

    # A ring all-reduce with ppermute: n - 1 steps, each passing a block to the right.
    def ring_sum(a):
        n = lax.axis_size("batch")
        perm = [(i, (i + 1) % n) for i in range(n)]
        total, block = a, a
        for _ in range(n - 1):
            block = lax.ppermute(block, "batch", perm)
            total = total + block
        return total

    f = shard_map(ring_sum, mesh=mesh, in_specs=P("batch"), out_specs=P("batch"), check_vma=False)
    np.testing.assert_allclose(f(xs), np.tile(xs.reshape(8, 8, 3).sum(0), (8, 1)), rtol=1e-5)


def test_pcast_to_varying():
    mesh = pj.make_mesh((8,), ("x",))
    x = np.arange(3.0, dtype=np.float32)
    with pytest.raises(ValueError, match="replication which can't be statically inferred"):
        shard_map(lambda a: lax.pcast(a, "x", to="varying"), mesh=mesh, in_specs=P(),
                  out_specs=P())(x)  # fmt: skip
    f = shard_map(lambda a: lax.pcast(a, "x", to="varying"), mesh=mesh, in_specs=P(),
                  out_specs=P("x"))  # fmt: skip
    np.testing.assert_allclose(f(x), np.tile(x, 8))
    # its derivative: each device's copy gets its cotangent; the replicated input sums them
    np.testing.assert_allclose(pj.grad(lambda a: f(a).sum())(x), np.full(3, 8.0))
    with pytest.raises(ValueError, match="Allowed `to` values"):
        lax.pcast(x, "x", to="invariant")


def test_partial_manual_axes():
    mesh = _mesh2()
    x = np.arange(64.0, dtype=np.float32).reshape(8, 8)
    f = shard_map(
        lambda a: lax.psum(a, "x") * 2, mesh=mesh, in_specs=P("x"), out_specs=P(), axis_names={"x"}
    )
    want = (x[:4] + x[4:]) * 2
    text = pj.jit(f).lower(x).as_text()
    assert 'manual_axes={"x"}' in text
    np.testing.assert_allclose(f(x), want)
    sharded = pj.device_put(x, pj.NamedSharding(mesh, P("x", "y")))
    y = pj.jit(f)(sharded)  # "y" stays with the partitioner
    np.testing.assert_allclose(y, want)
    grad = pj.grad(lambda a: jnp.sum(jnp.sin(f(a))))(x)
    np.testing.assert_allclose(grad, np.tile(2 * np.cos(want), (2, 1)), rtol=1e-5)
    with pytest.raises(ValueError, match="not one of the manual axes"):
        shard_map(lambda a: a, mesh=mesh, in_specs=P("y"), out_specs=P("y"), axis_names={"x"})(x)


def test_inside_cond_and_while_loop():
    mesh = _mesh2()
    x = np.arange(64.0, dtype=np.float32).reshape(8, 8)
    total = shard_map(lambda b: lax.psum(b, ("x", "y")), mesh=mesh, in_specs=P("x", "y"),
                      out_specs=P())  # fmt: skip
    h = pj.jit(lambda a, p: lax.cond(p, total, lambda v: v[:4, :2], a))
    np.testing.assert_allclose(h(x, True), x.reshape(2, 4, 4, 2).sum((0, 2)))
    np.testing.assert_allclose(h(x, False), x[:4, :2])
    step = shard_map(lambda b: b + lax.pmean(b, "y"), mesh=mesh, in_specs=P(None, "y"),
                     out_specs=P(None, "y"))  # fmt: skip
    out, _ = lax.while_loop(lambda c: c[1] < 3, lambda c: (step(c[0]), c[1] + 1), (x, 0))
    want = x
    for _ in range(3):
        m = want.reshape(8, 4, 2).mean(1, keepdims=True)
        want = want + np.broadcast_to(m, (8, 4, 2)).reshape(8, 8)
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_in_specs_inferred_from_arguments():
    mesh = _mesh2()
    x = np.arange(64.0, dtype=np.float32).reshape(8, 8)
    xs = pj.device_put(x, pj.NamedSharding(mesh, P("x", "y")))
    f = shard_map(lambda a: a * lax.axis_index("y"), mesh=mesh, out_specs=P("x", "y"))
    np.testing.assert_allclose(f(xs), x * np.repeat(np.arange(4), 2)[None, :])
    g = shard_map(lambda a: a.sum(keepdims=True), mesh=mesh, out_specs=P(), check_vma=False)
    np.testing.assert_allclose(g(x), [[x.sum()]])  # a host array: replicated
    committed = pj.device_put(x, pj.devices()[0])
    with pytest.raises(ValueError, match="incompatible devices"):
        shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(committed)


def test_vmap_axis_name_used_inside_the_body():
    mesh = pj.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
    xs = np.arange(3 * 16, dtype=np.float32).reshape(3, 16)
    f = shard_map(lambda a: lax.psum(a, "b") + lax.psum(a, "x"), mesh=mesh, in_specs=P("x"),
                  out_specs=P("x"), check_vma=False)  # fmt: skip
    want = xs.sum(0, keepdims=True) + np.tile(xs.reshape(3, 8, 2).sum(1), (1, 8))
    np.testing.assert_allclose(pj.vmap(f, axis_name="b")(xs), want)
    np.testing.assert_allclose(pj.jit(pj.vmap(f, axis_name="b"))(xs), want)


# ---------------------------------------------------------------------------
# smap: shard_map over one mesh axis with vmap-style axes


def test_smap_maps_one_axis_and_leaves_the_others_to_the_partitioner():
    from polyjax_interpreters.jit import jit
    from polyjax_sharding import make_mesh, set_mesh, smap

    mesh = make_mesh((4, 2), ("x", "y"))
    x = np.arange(16.0, dtype=np.float32).reshape(2, 8)
    with set_mesh(mesh):
        # Blocks of 2 columns; each adds the sum of the blocks' first columns.
        f = smap(lambda a: a * 2 + lax.psum(a[:, :1], "x"), in_axes=1, out_axes=1, axis_name="x")
        expected = x * 2 + x[:, ::2].sum(1, keepdims=True)
        np.testing.assert_array_equal(f(x), expected)
        np.testing.assert_array_equal(jit(f)(x), expected)
        # None: a replicated argument or output; a tuple: one entry per argument.
        g = smap(
            lambda a, b: lax.psum(jnp.sum(a), "x") + b,
            in_axes=(0, None),
            out_axes=None,
            axis_name="x",
        )
        assert float(g(np.arange(8.0, dtype=np.float32), np.float32(1.0))) == 29.0


def test_smap_infers_in_axes_from_explicit_shardings_and_checks_axes():
    from polyjax_interpreters.array import device_put
    from polyjax_sharding import NamedSharding, make_mesh, set_mesh, smap

    mesh = make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = device_put(np.arange(8.0, dtype=np.float32), NamedSharding(mesh, P("x")))
    with set_mesh(mesh):
        f = smap(lambda a: lax.psum(a, "x"), out_axes=0, axis_name="x")
        blocks = np.arange(8.0).reshape(4, 2)
        np.testing.assert_array_equal(f(x), np.tile(blocks.sum(0), 4))
        with pytest.raises(ValueError, match="out of range for a value of rank 1"):
            smap(lambda a: a, in_axes=1, out_axes=0, axis_name="x")(x)
        with pytest.raises(TypeError, match="must be ints or None"):
            smap(lambda a: a, in_axes=0, out_axes="0", axis_name="x")
