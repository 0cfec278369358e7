"""vmap: batch tracers, rule helpers, in_axes/out_axes, errors, nesting, named axes, jit."""

from __future__ import annotations

import re

import numpy as np
import pytest

from polyjax_core import axis_env
from polyjax_core.abstract_values import ShapedArray
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_core.primitive import Primitive
from polyjax_interpreters import batching
from polyjax_interpreters.batching import (
    AxisData,
    BatchTracer,
    batch_jaxpr,
    bdim_at_front,
    defbroadcasting,
    defvectorized,
    matchaxis,
    moveaxis,
    not_mapped,
    primitive_batchers,
    vmap,
)
from polyjax_interpreters.jit import jit

from .conftest import TOY

f32 = np.float32


def arr(*shape, start=0.0):
    return np.arange(start, start + int(np.prod(shape)), dtype=f32).reshape(shape)


# ---------------------------------------------------------------------------
# Batching rules of the toy primitives (what polyjax-numpy does for lax's)


def _equal_shape_rule(prim):
    """Toy add/mul need equal shapes: batch everything at 0, broadcasting unbatched ones."""

    def rule(args, dims, **params):
        size = next(
            np.shape(x)[d] if not hasattr(x, "aval") else x.aval.shape[d]
            for x, d in zip(args, dims)
            if d is not None
        )
        return prim.bind(*(bdim_at_front(x, d, size) for x, d in zip(args, dims)), **params), 0

    primitive_batchers[prim] = rule


_equal_shape_rule(TOY.add_p)
_equal_shape_rule(TOY.mul_p)
defvectorized(TOY.sin_p)


def _sum_rule(args, dims):
    (x,), (d,) = args, dims
    ndim = len(batching._shape(x))
    return TOY.reduce_axes(x, [i for i in range(ndim) if i != d]), 0


primitive_batchers[TOY.sum_p] = _sum_rule


def _reduce_axes_rule(args, dims, *, axes):
    (x,), (d,) = args, dims
    axes = [a + (a >= d) for a in axes]
    return TOY.reduce_axes(x, axes), d - sum(a < d for a in axes)


primitive_batchers[TOY.reduce_axes_p] = _reduce_axes_rule


def _transpose_rule(args, dims, *, permutation):
    (x,), (d,) = args, dims
    x = moveaxis(x, d, 0)
    return TOY.transpose(x, (0, *(p + 1 for p in permutation))), 0


primitive_batchers[TOY.transpose_p] = _transpose_rule


def _broadcast_in_dim_rule(args, dims, *, shape, broadcast_dimensions):
    (x,), (d,) = args, dims
    x = moveaxis(x, d, 0)
    size = batching._shape(x)[0]
    return TOY.broadcast_in_dim(x, (size, *shape), (0, *(b + 1 for b in broadcast_dimensions))), 0


primitive_batchers[TOY.broadcast_in_dim_p] = _broadcast_in_dim_rule


def _reshape_rule(args, dims, *, new_sizes):
    (x,), (d,) = args, dims
    x = moveaxis(x, d, 0)
    return TOY.reshape(x, (batching._shape(x)[0], *new_sizes)), 0


primitive_batchers[TOY.reshape_p] = _reshape_rule


# A toy n-ary op with lax's broadcasting shape rule (same rank or rank 0; dims agree or 1),
# with a NumPy impl, to test `defbroadcasting`.
def _lax_broadcasting_rule(*avals):
    ranks = {a.ndim for a in avals if a.ndim}
    if len(ranks) > 1:
        raise TypeError(f"badd: ranks differ: {avals}")
    shape = np.broadcast_shapes(*(a.shape for a in avals))
    for a in avals:
        if a.ndim and any(d not in (1, s) for d, s in zip(a.shape, shape)):
            raise TypeError(f"badd: incompatible {avals}")
    return ShapedArray(shape, avals[0].dtype)


badd_p = Primitive("badd")
badd_p.def_abstract_eval(_lax_broadcasting_rule)
badd_p.def_impl(lambda *xs: np.asarray(sum(np.asarray(x) for x in xs), dtype=f32))
defbroadcasting(badd_p)

neg_p = Primitive("neg")
neg_p.def_abstract_eval(lambda x: x)
neg_p.def_impl(lambda x: np.negative(np.asarray(x)))
defvectorized(neg_p)


@pytest.fixture(autouse=True)
def toy_array_ops():
    """Registers the toy array ops for the test, restoring whatever was registered."""
    saved = dict(vars(batching._ops))
    batching.register_array_ops(
        transpose=TOY.transpose,
        broadcast_in_dim=TOY.broadcast_in_dim,
        reshape=TOY.reshape,
        reduce_sum=TOY.reduce_axes,
    )
    yield
    for name in ("transpose", "broadcast_in_dim", "reshape", "reduce_sum"):
        setattr(batching._ops, name, saved.get(name))


def loop(f, *xs, in_axes=0):
    """Reference: f applied example by example, stacked at 0."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(xs)
    n = next(np.shape(x)[a] for x, a in zip(xs, axes) if a is not None)
    outs = []
    for i in range(n):
        outs.append(f(*(x if a is None else np.take(x, i, axis=a) for x, a in zip(xs, axes))))
    return np.stack([np.asarray(o) for o in outs])


# ---------------------------------------------------------------------------
# Helpers


def test_moveaxis_broadcast_matchaxis():
    x = arr(2, 3, 4)
    np.testing.assert_array_equal(moveaxis(x, 0, 2), np.moveaxis(x, 0, 2))
    np.testing.assert_array_equal(moveaxis(x, -1, 0), np.moveaxis(x, -1, 0))
    assert moveaxis(x, 1, 1) is x
    np.testing.assert_array_equal(batching.broadcast(x, 5, 1), np.stack([x] * 5, 1))
    assert batching.broadcast(x, 5, None) is x
    np.testing.assert_array_equal(bdim_at_front(x, None, 2), np.stack([x, x]))
    np.testing.assert_array_equal(bdim_at_front(x, 2, 4), np.moveaxis(x, 2, 0))
    np.testing.assert_array_equal(matchaxis("i", 2, 0, 1, x), np.moveaxis(x, 0, 1))
    np.testing.assert_array_equal(matchaxis("i", 2, None, 0, x), np.stack([x, x]))
    np.testing.assert_array_equal(matchaxis("i", 2, 0, None, x, sum_match=True), x.sum(0))
    with pytest.raises(ValueError, match=re.escape("vmap has mapped output (axis_name='i')")):
        matchaxis("i", 2, 0, None, x)


def test_missing_array_ops_error():
    batching.register_array_ops()  # nothing changes
    saved = batching._ops.transpose
    batching._ops.transpose = None
    try:
        with pytest.raises(RuntimeError, match="register_array_ops"):
            moveaxis(arr(2, 3), 0, 1)
    finally:
        batching._ops.transpose = saved


def test_missing_rule_names_primitive():
    p = Primitive("mystery")
    p.def_abstract_eval(lambda x: x)
    with pytest.raises(NotImplementedError, match="mystery"):
        vmap(p.bind)(arr(3))


# ---------------------------------------------------------------------------
# vmap basics


def test_vmap_unary_and_binary():
    x, y = arr(4, 3), arr(4, 3, start=1.0)
    np.testing.assert_allclose(vmap(TOY.sin)(x), np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(vmap(TOY.add)(x, y), x + y)
    # one unbatched operand
    out = vmap(TOY.mul, in_axes=(0, None))(x, y[0])
    np.testing.assert_allclose(out, x * y[0])


def test_tracer_sees_per_example_type():
    seen = []

    def f(x):
        seen.append((type(x), x.shape, x.dtype))
        return TOY.sin(x)

    vmap(f, in_axes=1)(arr(3, 5, 2))
    assert seen == [(BatchTracer, (3, 2), np.dtype(f32))]


@pytest.mark.parametrize("in_axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("out_axis", [0, 1, -1, 2])
def test_in_and_out_axes(in_axis, out_axis):
    x = arr(2, 3, 4)
    out = vmap(TOY.sin, in_axes=in_axis, out_axes=out_axis)(x)
    expected = np.moveaxis(np.sin(np.moveaxis(x, in_axis, 0)), 0, out_axis)
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_reductions_and_shape_ops_in_body():
    x = arr(3, 4, 5)

    def f(x):  # per example: (4, 5) -> (5, 4) -> sum over axis 1 -> (5,)
        return TOY.reduce_axes(TOY.transpose(x, (1, 0)), (1,))

    np.testing.assert_allclose(vmap(f, in_axes=1)(x), loop(f, x, in_axes=1))
    np.testing.assert_allclose(vmap(TOY.sum)(x), x.sum((1, 2)))


def test_defbroadcasting_ranks():
    x = arr(4, 3)  # batched rank-1 examples
    s = arr(4)  # batched scalar examples
    c = arr(3, start=10.0)  # unbatched rank 1
    np.testing.assert_allclose(vmap(badd_p.bind)(x, s), x + s[:, None])
    np.testing.assert_allclose(vmap(badd_p.bind, in_axes=(0, None))(x, c), x + c)
    np.testing.assert_allclose(vmap(badd_p.bind, in_axes=(1, None))(x.T, c), x + c)
    np.testing.assert_allclose(
        vmap(badd_p.bind, in_axes=(None, 0, None))(c, s, f32(1)), c + s[:, None] + 1
    )
    # same dim, same rank: no data movement, batch dim kept
    out = vmap(badd_p.bind, in_axes=1, out_axes=1)(x.T, x.T)
    np.testing.assert_allclose(out, 2 * x.T)
    jaxpr = make_jaxpr(vmap(badd_p.bind, in_axes=1, out_axes=1))(x.T, x.T)
    assert [e.primitive.name for e in jaxpr.eqns] == ["badd"]
    # ... also next to unbatched scalars, and unbatched arrays get a 1 at the batch dim
    f = vmap(badd_p.bind, in_axes=(1, None, None), out_axes=1)
    np.testing.assert_allclose(f(x.T, f32(2), c), x.T + 2 + c[:, None])
    jaxpr = make_jaxpr(f)(x.T, f32(2), c)
    assert [e.primitive.name for e in jaxpr.eqns] == ["reshape", "badd"]
    assert jaxpr.eqns[0].params["new_sizes"] == (3, 1)
    # mixed dims: all to the front
    np.testing.assert_allclose(vmap(badd_p.bind, in_axes=(0, 1))(x, x.T), 2 * x)


def test_unmapped_values_pass_through():
    c = arr(3)
    out_c, out_x = vmap(lambda x, c: (neg_p.bind(c), neg_p.bind(x)), in_axes=(0, None))(
        arr(2, 3), c
    )
    np.testing.assert_array_equal(out_c, np.stack([-c, -c]))  # broadcast at out_axes 0
    out = vmap(lambda x, c: neg_p.bind(c), in_axes=(0, None), out_axes=None)(arr(2, 3), c)
    np.testing.assert_array_equal(out, -c)
    with pytest.raises(ValueError, match="vmap has mapped output"):
        vmap(lambda x: x, out_axes=None)(arr(2))


def test_pytrees_prefixes_and_kwargs():
    def f(a, b, *, scale):
        return {"sum": TOY.add(a["x"], b[0]), "pair": (TOY.mul(a["y"], scale), b[1])}

    a = {"x": arr(3, 2), "y": arr(2, 3)}
    b = (arr(3, 2, start=1.0), arr(2))
    scale = arr(3, 2, start=2.0)
    out = vmap(
        f,
        in_axes=({"x": 0, "y": 1}, (0, None)),
        out_axes={"sum": 1, "pair": (0, None)},
    )(a, b, scale=scale)
    np.testing.assert_allclose(out["sum"], (a["x"] + b[0]).T)
    np.testing.assert_allclose(out["pair"][0], a["y"].T * scale)
    np.testing.assert_allclose(out["pair"][1], b[1])
    # a list at the top level means a tuple
    out = vmap(lambda x, y: TOY.add(x, y), in_axes=[0, 1])(arr(3, 2), arr(2, 3))
    np.testing.assert_allclose(out, arr(3, 2) + arr(2, 3).T)


def test_axis_size_with_no_mapped_input():
    out = vmap(lambda x: TOY.sin(x), in_axes=None, axis_size=3)(arr(2))
    np.testing.assert_allclose(out, np.stack([np.sin(arr(2))] * 3), rtol=1e-6)
    out = vmap(lambda: np.float32(1.0), axis_size=2)()
    np.testing.assert_array_equal(out, [1.0, 1.0])


# ---------------------------------------------------------------------------
# Errors


def test_error_inconsistent_sizes_names_arguments():
    def f(x, y, z):
        return x

    with pytest.raises(ValueError) as e:
        vmap(f)(arr(2), arr(3), {"a": arr(2, 1)})
    assert str(e.value) == (
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * most axes (2 of them) had size 2, e.g. axis 0 of argument x of type float32[2];\n"
        "  * one axis had size 3: axis 0 of argument y of type float32[3]"
    )
    with pytest.raises(ValueError, match=re.escape("axis 1 of argument z['a'] of type")):
        vmap(f, in_axes=(0, 0, 1))(arr(2), arr(2), {"a": arr(2, 3)})


def test_error_rank_too_small():
    with pytest.raises(ValueError) as e:
        vmap(lambda x: x, in_axes=2)(arr(3, 4))
    assert str(e.value) == (
        "vmap was requested to map its argument along axis 2, which implies that its rank "
        "should be at least 3, but is only 2 (its shape is (3, 4))"
    )
    with pytest.raises(ValueError, match="rank should be at least 3, but is only 2"):
        vmap(lambda x: x, in_axes=-3)(arr(3, 4))
    with pytest.raises(ValueError, match="but is only 0"):
        vmap(lambda x: x)(1.0)


def test_error_no_mapped_input():
    with pytest.raises(ValueError, match="vmap must have at least one non-None value in in_axes"):
        vmap(lambda x: x, in_axes=None)(arr(2))
    with pytest.raises(ValueError, match="must be passed at least one argument containing an"):
        vmap(lambda: 1.0)()


def test_error_axes_specs():
    with pytest.raises(TypeError, match="vmap in_axes must be an int, None, or"):
        vmap(lambda x: x, in_axes=1.5)
    with pytest.raises(TypeError, match="or a tuple of entries corresponding to the positional"):
        vmap(lambda x: x, in_axes={"a": 0})
    with pytest.raises(TypeError, match="vmap out_axes must be an int, None, or"):
        vmap(lambda x: x, out_axes="a")
    with pytest.raises(ValueError, match=re.escape("len(in_axes)=2, len(args)=1")):
        vmap(lambda x: x, in_axes=(0, 0))(arr(2))
    with pytest.raises(ValueError, match="vmap in_axes specification must be a tree prefix"):
        vmap(lambda x: x, in_axes=({"a": 0},))({"b": arr(2)})
    with pytest.raises(ValueError, match="vmap out_axes specification must be a tree prefix"):
        vmap(lambda x: (x, x), out_axes=(0, 0, 0))(arr(2))
    with pytest.raises(ValueError, match="inconsistent sizes"):
        vmap(lambda x: x, axis_size=3)(arr(2))


def test_escaped_tracer():
    from polyjax_core.errors import UnexpectedTracerError

    leaked = []
    vmap(lambda x: leaked.append(x) or x)(arr(2))
    with pytest.raises(UnexpectedTracerError):
        vmap(lambda y: TOY.add(y, leaked[0]))(arr(2))


# ---------------------------------------------------------------------------
# Nesting, jit, jaxprs


def test_nested_vmaps():
    x = arr(2, 3, 4)
    f = vmap(vmap(TOY.sum, in_axes=1), in_axes=0)  # per (i, k): sum over j -> out (2, 4)
    np.testing.assert_allclose(f(x), x.sum(1))
    g = vmap(vmap(lambda a, b: TOY.mul(a, b), in_axes=(0, None)), in_axes=(None, 0))
    a, b = arr(3, 4), arr(2, 4, start=1.0)
    np.testing.assert_allclose(g(a, b), a[None] * b[:, None])
    h = vmap(vmap(lambda x: TOY.transpose(x, (1, 0)), in_axes=2, out_axes=1), in_axes=1)
    y = arr(2, 3, 4, 5)
    expected = np.stack([np.stack([y[:, j, :, m].T for m in range(5)], axis=1) for j in range(3)])
    np.testing.assert_allclose(h(y), expected)


def test_vmap_of_jit_and_jit_of_vmap():
    x, y = arr(4, 3), arr(3, start=1.0)

    @jit
    def f(a, b):
        return TOY.sin(TOY.add(a, b))

    out = vmap(f, in_axes=(0, None))(x, y)
    np.testing.assert_allclose(out, np.sin(x + y), rtol=1e-6)
    jaxpr = make_jaxpr(vmap(f, in_axes=(0, None)))(x, y)
    (eqn,) = jaxpr.eqns
    assert eqn.primitive.name == "jit"
    assert [str(a) for a in eqn.params["jaxpr"].in_avals] == [
        "float32[4,3]",
        "float32[3]",
    ]
    out = jit(vmap(f, in_axes=(1, None)))(x.T, y)
    np.testing.assert_allclose(out, np.sin(x + y), rtol=1e-6)


def test_batch_jaxpr_specs():
    closed = make_jaxpr(lambda a, b: (TOY.sin(a), b, TOY.transpose(a, (1, 0))))(arr(2, 3), arr(3))
    axis = AxisData(None, 5, None)
    batched, out_dims = batch_jaxpr(closed, axis, [1, None], False)
    assert out_dims == [0, None, 0]
    assert [a.shape for a in batched.in_avals] == [(2, 5, 3), (3,)]
    assert [a.shape for a in batched.out_avals] == [(5, 2, 3), (3,), (5, 3, 2)]
    batched, out_dims = batch_jaxpr(closed, axis, [1, None], [False, True, False])
    assert out_dims == [0, 0, 0] and batched.out_avals[1].shape == (5, 3)
    batched, out_dims = batch_jaxpr(closed, axis, [0, None], [2, None, 1])
    assert out_dims == [2, None, 1]
    assert [a.shape for a in batched.out_avals] == [(2, 3, 5), (3,), (3, 5, 2)]
    # cached
    assert batch_jaxpr(closed, axis, [0, None], [2, None, 1])[0] is batched
    x = arr(5, 2, 3)
    from polyjax_core.jaxpr_eval import jaxpr_as_fun

    outs = jaxpr_as_fun(batched)(x, arr(3))
    np.testing.assert_allclose(outs[0], np.moveaxis(np.sin(x), 0, 2), rtol=1e-6)
    np.testing.assert_allclose(outs[2], np.moveaxis(np.swapaxes(x, 1, 2), 0, 1))


def test_make_jaxpr_of_vmap():
    jaxpr = make_jaxpr(vmap(TOY.sin, in_axes=1, out_axes=1))(arr(3, 4))
    assert str(jaxpr) == "{ lambda ; a:f32[3,4]. let b:f32[3,4] = sin a in (b,) }"
    jaxpr = make_jaxpr(vmap(TOY.sin, in_axes=1))(arr(3, 4))
    assert [e.primitive.name for e in jaxpr.eqns] == ["sin", "transpose"]


# ---------------------------------------------------------------------------
# Named axes


def test_axis_name_is_bound_during_the_call():
    seen = []

    def f(x):
        seen.append((axis_env.axis_size(axis_env.bound_axis_names()), axis_env.bound_axis_names()))
        return x

    vmap(f, axis_name="i")(arr(3))
    assert seen == [(3, ("i",))]  # a tuple of names: the product of sizes
    assert axis_env.bound_axis_names() == ()
    seen.clear()
    vmap(vmap(f, axis_name="j", in_axes=0), axis_name="i", in_axes=1)(arr(2, 5))
    assert seen == [(10, ("i", "j"))]
    with pytest.raises(NameError, match="unbound axis name: i"):
        axis_env.axis_size("i")


def test_spmd_axis_name_recorded():
    seen = []

    class Probe(Primitive):
        pass

    probe_p = Probe("probe")
    probe_p.def_abstract_eval(lambda x: x)

    def rule(axis_data, args, dims):
        seen.append(axis_data)
        return args[0], dims[0]

    batching.axis_primitive_batchers[probe_p] = rule
    vmap(probe_p.bind, axis_name="i", spmd_axis_name="data")(arr(2))
    assert seen == [AxisData("i", 2, "data")]
    assert not_mapped is None
