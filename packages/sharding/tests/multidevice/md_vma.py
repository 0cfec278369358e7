"""check_vma as types, on 8 host devices: inside a shard_map body each value's type
records the manual axes it varies over, printed and propagated as JAX 0.10.2 does
(the expected strings are what JAX prints for the same programs)."""

import re

import numpy as np
import pytest

import polyjax_numpy.numpy as jnp
from polyjax_core.abstract_values import ShapedArray
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_interpreters import ad, backends
from polyjax_interpreters.batching import vmap
from polyjax_numpy import lax
from polyjax_sharding import Mesh, shard_map
from polyjax_sharding import PartitionSpec as P


def _mesh(names=("i", "j")):
    return Mesh(np.array(backends.devices()).reshape(2, 4), names)


def _types(body, in_specs, *args, names=("i", "j"), check_vma=True):
    """The printed types `body` records (via `seen(label, value)`) while traced."""
    seen = {}

    def f(*a):
        outs = body(lambda k, v: seen.__setitem__(k, str(ShapedArray.__str__(v.aval))), *a)
        return a[0] if outs is None else outs

    sm = shard_map(f, mesh=_mesh(names), in_specs=in_specs, out_specs=in_specs[0],
                   check_vma=check_vma)  # fmt: skip
    make_jaxpr(sm)(*args)
    return seen


X = np.ones((8, 8), np.float32)
Y = np.ones((4, 2), np.float32)


def test_arguments_are_typed_by_their_specs():
    def body(seen, x, y, z, w):
        for k, v in zip("xyzw", (x, y, z, w)):
            seen(k, v)

    specs = (P("i", "j"), P(), P(None, "j"), P(("i", "j")))
    got = _types(body, specs, X, Y, np.ones((4, 8), np.float32), np.ones((8, 2), np.float32))
    assert got == {
        "x": "float32[4,2]{V:(i,j)}",
        "y": "float32[4,2]",
        "z": "float32[4,2]{V:j}",
        "w": "float32[1,2]{V:(i,j)}",
    }


def test_collectives_change_the_type_as_in_jax():
    def body(seen, x, y):
        seen("sum", x + y)
        seen("psum_i", lax.psum(x, "i"))
        seen("psum_ij", lax.psum(x + 1, ("j", "i")))
        seen("pmean", lax.pmean(x, ("i", "j")))
        seen("pmax", lax.pmax(x, "j"))
        seen("psum_invariant", lax.psum(y, "i"))
        seen("all_gather", lax.all_gather(x, "j"))
        seen("all_gather_inv", lax.all_gather(y, "i"))
        seen("axis_index", lax.axis_index("j"))
        seen("axis_index_ij", lax.axis_index(("i", "j")))
        seen("pcast", lax.pcast(y, ("i",), to="varying"))
        seen("pcast_ij", lax.pcast(y, ("i", "j"), to="varying"))
        seen("ppermute", lax.ppermute(x, "i", [(0, 1), (1, 0)]))
        seen("ppermute_inv", lax.ppermute(y, "i", [(0, 1), (1, 0)]))
        seen("psum_scatter", lax.psum_scatter(x, "j", tiled=True))
        seen("all_to_all", lax.all_to_all(x, "j", 0, 0, tiled=True))
        seen("weak", 1.0 * x)
        seen("weak_inv", y * 2.0)
        seen("mixed", lax.pcast(y, "i", to="varying") + lax.pcast(y, "j", to="varying"))

    got = _types(body, (P("i", "j"), P()), X, Y)
    assert got == {
        "sum": "float32[4,2]{V:(i,j)}",
        "psum_i": "float32[4,2]{V:j}",
        "psum_ij": "float32[4,2]",
        "pmean": "float32[4,2]",
        "pmax": "float32[4,2]{V:i}",
        "psum_invariant": "float32[4,2]",
        "all_gather": "float32[4,4,2]{V:(i,j)}",
        "all_gather_inv": "float32[2,4,2]{V:i}",
        "axis_index": "int32[]{V:j}",
        "axis_index_ij": "int32[]{V:(i,j)}",
        "pcast": "float32[4,2]{V:i}",
        "pcast_ij": "float32[4,2]{V:(i,j)}",
        "ppermute": "float32[4,2]{V:(i,j)}",
        "ppermute_inv": "float32[4,2]{V:i}",
        "psum_scatter": "float32[1,2]{V:(i,j)}",
        "all_to_all": "float32[4,2]{V:(i,j)}",
        "weak": "float32[4,2]{V:(i,j)}",
        "weak_inv": "float32[4,2]",
        "mixed": "float32[4,2]{V:(i,j)}",
    }


def test_varying_axes_print_in_mesh_order():
    def body(seen, x, y):
        seen("x", x)
        seen("mixed", lax.pcast(y, "i", to="varying") + lax.pcast(y, "j", to="varying"))

    got = _types(body, (P("i", "j"), P()), X, np.ones((2, 4), np.float32), names=("j", "i"))
    assert got == {"x": "float32[2,4]{V:(j,i)}", "mixed": "float32[2,4]{V:(j,i)}"}


def test_arrays_made_like_a_value_vary_like_it():
    def body(seen, x, y):
        seen("zeros_like", jnp.zeros_like(x))
        seen("full_like", lax.full_like(x, 2.0))
        seen("zeros", jnp.zeros(x.shape))
        seen("ones_like_inv", jnp.ones_like(y))

    got = _types(body, (P("i", "j"), P()), X, Y)
    assert got == {
        "zeros_like": "float32[4,2]{V:(i,j)}",
        "full_like": "float32[4,2]{V:(i,j)}",
        "zeros": "float32[4,2]",
        "ones_like_inv": "float32[4,2]",
    }


def test_transformations_inside_keep_the_types():
    def body(seen, x, y):
        g = ad.grad(lambda a: jnp.sum(jnp.sin(a) * y))(x)
        seen("grad", g)
        seen("vmap", vmap(lambda r: r * y[0])(x))
        seen("scan", lax.scan(lambda c, r: (c + r, c), x[0], x)[0])
        seen("cond", lax.cond(y[0, 0] > 0, lambda a: a + 1, lambda a: a - 1, x))
        seen("cond_varying_pred", lax.cond(x[0, 0] > 0, lambda a: a + 1, lambda a: a, y))
        n = lax.axis_index("j").astype(np.float32)
        seen("while_varying_pred", lax.while_loop(lambda c: c[0, 0] < n, lambda c: c + 1, y))
        return g

    got = _types(body, (P("i", "j"), P()), X, Y)
    assert got == {
        "grad": "float32[4,2]{V:(i,j)}",
        "vmap": "float32[4,2]{V:(i,j)}",
        "scan": "float32[2]{V:(i,j)}",
        "cond": "float32[4,2]{V:(i,j)}",
        # JAX types these outputs invariant; a predicate that differs between devices
        # makes the results differ too, so polyjax types them varying (docs/sharding.md).
        "cond_varying_pred": "float32[4,2]{V:(i,j)}",
        "while_varying_pred": "float32[4,2]{V:j}",
    }


def test_no_types_without_check_vma():
    def body(seen, x, y):
        seen("x", x)
        seen("axis_index", lax.axis_index("i"))
        seen("pcast", lax.pcast(y, "i", to="varying"))

    got = _types(body, (P("i", "j"), P()), X, Y, check_vma=False)
    assert got == {"x": "float32[4,2]", "axis_index": "int32[]", "pcast": "float32[4,2]"}


def test_jaxpr_shows_types_and_implicit_pvary():
    def f(x, y):
        return x + y, lax.psum(x, "i") * 2.0

    sm = shard_map(f, mesh=_mesh(), in_specs=(P("i", "j"), P()), out_specs=(P("i", "j"), P("j")))
    text = str(make_jaxpr(sm)(X, Y))
    assert re.search(r"\{ lambda ; (\w+):f32\[4,2\]\{V:\(i,j\)\} (\w+):f32\[4,2\]\. let", text)
    # JAX casts the invariant operand before mixing it with a varying one.
    assert re.search(r"(\w+):f32\[4,2\]\{V:\(i,j\)\} = pvary\[axes=\('i', 'j'\)\] \w+\n", text)
    assert re.search(r"\w+:f32\[4,2\]\{V:j\} = psum\[axes=\('i',\)", text)
    # a weak scalar is cast too (JAX: `pvary[axes=('j',)] 2.0:f32[]`)
    assert re.search(r"\w+:f32\[\]\{V:j\} = pvary\[axes=\('j',\)\] 2\.0:f32\[\]", text)
    # Outside the body the results are global arrays: no varying axes.
    assert re.search(r"\w+:f32\[8,8\] \w+:f32\[16,2\] = shard_map\[", text)


def test_values_are_unchanged_by_implicit_casts():
    def f(x, y):
        return x * y + lax.axis_index("j").astype(np.float32)

    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    y = np.arange(8, dtype=np.float32).reshape(4, 2)
    out = shard_map(f, mesh=_mesh(), in_specs=(P("i", "j"), P()), out_specs=P("i", "j"))(x, y)
    want = x * np.tile(y, (2, 4)) + np.repeat(np.arange(4.0), 2)[None, :]
    np.testing.assert_allclose(out, want)


def test_carry_and_branch_types_must_agree():
    def grows(x, y):
        return lax.scan(lambda c, _: (c + x, None), y, None, length=2)[0]

    sm = shard_map(grows, mesh=_mesh(), in_specs=(P("i", "j"), P()), out_specs=P("i", "j"))
    with pytest.raises(TypeError, match=r"(?s)the manual axis types do not match.*"
                       r"pcast\(\.\.\., \('i', 'j'\), to='varying'\)"):  # fmt: skip
        sm(X, Y)
    fixed = shard_map(
        lambda x, y: lax.scan(
            lambda c, _: (c + x, None), lax.pcast(y, ("i", "j"), to="varying"), None, length=2
        )[0],
        mesh=_mesh(), in_specs=(P("i", "j"), P()), out_specs=P("i", "j"),
    )  # fmt: skip
    np.testing.assert_allclose(fixed(X, Y), np.full((8, 8), 3.0))

    def branches(x, y):
        return lax.cond(y[0, 0] > 0, lambda: x, lambda: y)

    sm = shard_map(branches, mesh=_mesh(), in_specs=(P("i", "j"), P()), out_specs=P("i", "j"))
    with pytest.raises(TypeError, match=r"(?s)cond branches must have equal output types.*"
                       r"the manual axis types do not match"):  # fmt: skip
        sm(X, Y)


def test_a_varying_predicate_makes_results_vary():
    def f(x, y):
        n = lax.axis_index("j").astype(np.float32)
        return lax.while_loop(lambda c: c[0, 0] < n, lambda c: c + 1, y)

    specs = (P("i", "j"), P())
    with pytest.raises(ValueError, match="can't be statically inferred"):
        shard_map(f, mesh=_mesh(), in_specs=specs, out_specs=P())(X, Y)
    out = shard_map(f, mesh=_mesh(), in_specs=specs, out_specs=P(None, "j"))(X, Y)
    np.testing.assert_allclose(out, np.tile(np.repeat([1.0, 1.0, 2.0, 3.0], 2), (4, 1)))


def test_grad_inside_sums_over_devices_as_in_jax():
    # JAX 0.10.2 gives [56, 64] (typed) and device 0's [12, 16] (check_vma=False).
    x = np.arange(16, dtype=np.float32).reshape(8, 2)
    w = np.ones((2,), np.float32)

    def f(w, x):
        return ad.grad(lambda w: jnp.sum(x * w))(w)

    for check, want in ((True, [56.0, 64.0]), (False, [12.0, 16.0])):
        sm = shard_map(f, mesh=_mesh(), in_specs=(P(), P("i")), out_specs=P(), check_vma=check)
        np.testing.assert_allclose(sm(w, x), want)
    # psum of a replicated value is n times it, and so is its derivative
    g = shard_map(
        lambda w: ad.grad(lambda v: jnp.sum(lax.psum(v, "j")))(w),
        mesh=_mesh(), in_specs=P(), out_specs=P(),
    )  # fmt: skip
    np.testing.assert_allclose(g(w), [4.0, 4.0])


def test_outer_grads_agree_typed_and_untyped():
    from polyjax_interpreters.test_util import check_grads

    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 8)).astype(np.float32)
    w = rng.standard_normal((4, 2)).astype(np.float32)

    def body(x, w):
        b = lax.all_gather(x * w, "j", tiled=True, axis=1)
        c = lax.psum_scatter(b, "j", scatter_dimension=1, tiled=True)
        d = lax.ppermute(c, "i", [(0, 1), (1, 0)])
        e = lax.all_to_all(d, "j", 0, 0, tiled=True)
        g = jnp.sum(lax.all_gather(w, "i")) + lax.pmean(jnp.sum(x) * w, ("i", "j"))
        return jnp.sin(e) + lax.psum(w * x, "i") * g

    def total(check):
        sm = shard_map(body, mesh=_mesh(), in_specs=(P("i", "j"), P()),
                       out_specs=P("i", "j"), check_vma=check)  # fmt: skip
        return lambda x, w: jnp.sum(sm(x, w) ** 2)

    typed = ad.grad(total(True), argnums=(0, 1))(x, w)
    untyped = ad.grad(total(False), argnums=(0, 1))(x, w)
    for a, b in zip(typed, untyped):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    check_grads(total(True), (x.astype(np.float64), w.astype(np.float64)), order=1,
                modes=("rev",), atol=3e-2, rtol=3e-2)  # fmt: skip


def test_checkpoint_and_custom_vjp_inside():
    from polyjax_interpreters import custom_derivatives, remat

    x = np.arange(64, dtype=np.float32).reshape(8, 8) / 10
    w = np.ones((4, 2), np.float32)

    def f(x, w):
        return ad.grad(lambda w: jnp.sum(remat.checkpoint(lambda v: jnp.sin(v * x))(w)))(w)

    got = shard_map(f, mesh=_mesh(), in_specs=(P("i", "j"), P()), out_specs=P())(x, w)
    blocks = x.reshape(2, 4, 4, 2).transpose(0, 2, 1, 3).reshape(8, 4, 2)
    np.testing.assert_allclose(got, np.sum(np.cos(w * blocks) * blocks, 0), rtol=1e-5)

    @custom_derivatives.custom_vjp
    def mul(a, b):
        return a * b

    mul.defvjp(lambda a, b: (a * b, (a, b)), lambda r, g: (g * r[1], g * r[0]))
    bad = shard_map(lambda x, w: ad.grad(lambda v: jnp.sum(mul(x, v)))(w), mesh=_mesh(),
                    in_specs=(P("i", "j"), P()), out_specs=P())  # fmt: skip
    msg = r"output\[1\] .* of type float32\[4,2\]\{V:\(i,j\)\} .* manual axis types do not"
    with pytest.raises(ValueError, match=msg):
        bad(x, w)


def test_pcast_of_a_varying_value_is_refused_as_in_jax():
    def again(x):
        return lax.pcast(x, "i", to="varying")

    def partly(x):
        return lax.pcast(x, ("i", "j"), to="varying")

    sm = shard_map(again, mesh=_mesh(), in_specs=P("i"), out_specs=P("i"))
    with pytest.raises(ValueError, match="Unsupported pcast from=varying, to='varying'"):
        sm(X)
    sm = shard_map(partly, mesh=_mesh(), in_specs=P("i"), out_specs=P("i"))
    msg = r"Got input type: float32\[4,8\]\{V:i\}, axes: \('i', 'j'\) and input state"
    with pytest.raises(ValueError, match=msg):
        sm(X)
    # without check_vma nothing is typed, so nothing is refused
    sm = shard_map(again, mesh=_mesh(), in_specs=P("i"), out_specs=P("i"), check_vma=False)
    np.testing.assert_allclose(sm(X), X)


_BODIES = {
    "psum_pmean": lambda a: jnp.sin(lax.psum(a * a, "y")) * lax.pmean(a, "y"),
    "gather_scatter": lambda a: lax.psum_scatter(
        jnp.cos(lax.all_gather(a, "y", axis=1, tiled=True)), "y", scatter_dimension=1, tiled=True
    ),
    "ring": lambda a: a * lax.ppermute(a, "y", [(k, (k + 1) % 4) for k in range(4)]),
    "index": lambda a: a * (1.0 + lax.axis_index("y")) + lax.pmax(a, "y"),
}


@pytest.mark.parametrize("name", sorted(_BODIES))
def test_derivatives_typed_match_untyped(name):
    from polyjax_interpreters import remat
    from polyjax_interpreters.jit import jit

    mesh = Mesh(np.array(backends.devices()).reshape(2, 4), ("x", "y"))
    xs = np.random.default_rng(5).standard_normal((4, 8, 8)).astype(np.float32)

    def derivatives(check):
        f = shard_map(_BODIES[name], mesh=mesh, in_specs=P(None, "y"), out_specs=P(None, "y"),
                      check_vma=check)  # fmt: skip

        def loss(g):
            return lambda v: jnp.sum(g(v) ** 2)

        x = xs[0]
        return [
            ad.grad(loss(f))(x),
            jit(ad.grad(loss(remat.checkpoint(f))))(x),
            ad.grad(loss(vmap(f)))(xs),
            ad.grad(loss(vmap(f, spmd_axis_name="x")))(xs),
            ad.jvp(f, (x,), (xs[1],))[1],
            ad.grad(lambda t: ad.grad(lambda s: loss(f)(x * s))(t))(np.float32(0.7)),
        ]

    for typed, untyped in zip(derivatives(True), derivatives(False)):
        np.testing.assert_allclose(typed, untyped, rtol=2e-4, atol=2e-4)


def test_xmap_grads_with_resources_match_vmap():
    from polyjax_sharding import set_mesh
    from polyjax_sharding._xmap import xmap

    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)

    def body(v):
        return jnp.sin(lax.psum(v, "i")) * v + lax.pmean(v * v, ("i", "j"))

    def loss(f):
        return lambda v: jnp.sum(f(v) ** 2)

    want = ad.grad(loss(vmap(vmap(body, 1, 1, axis_name="j"), 0, 0, axis_name="i")))(x)
    with set_mesh(Mesh(np.array(backends.devices()).reshape(2, 4), ("a", "b"))):
        for resources in ({"i": "a", "j": "b"}, {"j": "b"}):
            f = xmap(body, in_axes=["i", None, "j"], out_axes=["i", None, "j"],
                     axis_resources=resources)  # fmt: skip
            np.testing.assert_allclose(ad.grad(loss(f))(x), want, rtol=1e-4, atol=1e-5)
