"""checkpoint / remat: same values, and the backward pass recomputes instead of saving."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core.abstract_values import ShapedArray
from polyjax_core.dce import dce_jaxpr
from polyjax_core.jaxpr import ClosedJaxpr, jaxprs_in_params
from polyjax_core.jaxpr_check import check_jaxpr
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, batching, dispatch, mlir
from polyjax_interpreters import partial_eval as pe
from polyjax_interpreters.jit import jit
from polyjax_interpreters.remat import (
    checkpoint,
    checkpoint_name,
    checkpoint_policies,
    name_p,
    remat,
    remat_p,
)

from .conftest import TOY as toy

# ---------------------------------------------------------------------------
# A toy `dot_general` (for the dot policies): operands of one shape, every
# dimension a batch dimension (so it is an elementwise product), or rank 0 (no
# batch dimensions).


def _dot_rule(x, y, *, dimension_numbers):
    if x.shape != y.shape or x.dtype != y.dtype:
        raise TypeError("toy dot_general needs equal types")
    return ShapedArray(x.shape, x.dtype)


dot_p = Primitive("dot_general")
dot_p.def_abstract_eval(_dot_rule)
dot_p.def_impl(functools.partial(dispatch.apply_primitive, dot_p))
mlir.register_lowering(dot_p, lambda ctx, x, y, *, dimension_numbers: [hlo.multiply(x, y)])


def dot(x, y):
    dims = tuple(range(np.ndim(x) if not hasattr(x, "aval") else x.aval.ndim))
    return dot_p.bind(x, y, dimension_numbers=(((), ()), (dims, dims)))


ad.defjvp(
    dot_p,
    lambda g, x, y, *, dimension_numbers: dot_p.bind(g, y, dimension_numbers=dimension_numbers),
    lambda g, x, y, *, dimension_numbers: dot_p.bind(x, g, dimension_numbers=dimension_numbers),
)


def _dot_transpose(ct, x, y, *, dimension_numbers):
    if ad.is_undefined_primal(x):
        return [dot_p.bind(ct, y, dimension_numbers=dimension_numbers), None]
    return [None, dot_p.bind(x, ct, dimension_numbers=dimension_numbers)]


ad.primitive_transposes[dot_p] = _dot_transpose


# Batching rules of the toys (registered here unless another test module did),
# and the array operations batching needs.
batching.register_array_ops(
    transpose=toy.transpose,
    broadcast_in_dim=toy.broadcast_in_dim,
    reshape=toy.reshape,
    reduce_sum=toy.reduce_axes,
)


def _size(args, dims):
    return next(
        x.shape[d] if hasattr(x, "aval") else np.shape(x)[d]
        for x, d in zip(args, dims)
        if d is not None
    )


def _equal_shape_batcher(prim):
    def rule(args, dims, **params):
        size = _size(args, dims)
        args = [batching.bdim_at_front(x, d, size) for x, d in zip(args, dims)]
        return prim.bind(*args, **params), 0

    return rule


def _sum_batcher(args, dims):
    (x,), (d,) = args, dims
    ndim = x.aval.ndim if hasattr(x, "aval") else np.ndim(x)
    return toy.reduce_axes(x, [i for i in range(ndim) if i != d]), 0


def _bcast_batcher(args, dims, *, shape):
    (x,), (d,) = args, dims
    n = x.shape[d]
    return toy.broadcast_in_dim(x, (n, *shape), (0,)), 0


_TOY_BATCHERS = {
    toy.sin_p: _equal_shape_batcher(toy.sin_p),
    toy.cos_p: _equal_shape_batcher(toy.cos_p),
    toy.neg_p: _equal_shape_batcher(toy.neg_p),
    toy.mul_p: _equal_shape_batcher(toy.mul_p),
    toy.add_p: _equal_shape_batcher(toy.add_p),
    toy.sum_p: _sum_batcher,
    toy.bcast_p: _bcast_batcher,
    dot_p: lambda args, dims, **_: (dot(*_equal_args(args, dims)), 0),
}


def _equal_args(args, dims):
    size = _size(args, dims)
    return [batching.bdim_at_front(x, d, size) for x, d in zip(args, dims)]


for _p, _rule in _TOY_BATCHERS.items():
    if _p not in batching.primitive_batchers:
        batching.primitive_batchers[_p] = _rule


# ---------------------------------------------------------------------------
# Helpers


def _all_eqns(jaxpr):
    """Every equation of `jaxpr` and of the jaxprs in its params, recursively."""
    jaxpr = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    for eqn in jaxpr.eqns:
        yield eqn
        for sub in jaxprs_in_params(eqn.params):
            yield from _all_eqns(sub)


def _count(jaxpr, name):
    return sum(e.primitive.name == name for e in _all_eqns(jaxpr))


def mlp(ws, x):
    """An MLP in miniature: each layer multiplies by a weight and applies sin."""
    for w in ws:
        x = toy.sin(toy.mul(w, x))
    return toy.sum(x)


def mlp_dots(ws, x):
    for w in ws:
        x = toy.sin(dot(w, x))
    return toy.sum(x)


N_LAYERS = 4
WS = [np.linspace(0.5, 1.5, 3, dtype=np.float32) * (i + 1) / 3 for i in range(N_LAYERS)]
X = np.array([0.3, -0.7, 1.1], np.float32)


def _backward_jaxpr(f, *args):
    """The jaxpr of vjp's backward function: residuals are its consts."""
    _, f_vjp = ad.vjp(f, *args)
    return make_jaxpr(f_vjp)(np.float32(1.0))


# ---------------------------------------------------------------------------
# Values


def test_checkpoint_same_values_eager_and_jit():
    want = np.asarray(mlp(WS, X))
    np.testing.assert_allclose(np.asarray(checkpoint(mlp)(WS, X)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jit(checkpoint(mlp))(WS, X)), want, rtol=1e-6)
    assert remat is checkpoint


def test_checkpoint_equation_printed():
    closed = make_jaxpr(checkpoint(lambda x: toy.sin(toy.sin(x))))(X)
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive is remat_p
    text = str(closed)
    assert "checkpoint[" in text and "prevent_cse=True" in text
    assert "differentiated=False" in text and "policy=None" in text
    check_jaxpr(closed)


def test_static_argnums_and_argnames():
    def f(x, n, *, scale):
        for _ in range(n):
            x = toy.sin(x)
        return toy.mul(x, np.full(x.shape, scale, np.float32))

    g = checkpoint(f, static_argnums=1, static_argnames="scale")
    closed = make_jaxpr(lambda x: g(x, 3, scale=2.0))(X)
    (eqn,) = closed.jaxpr.eqns
    assert _count(eqn.params["jaxpr"], "sin") == 3
    np.testing.assert_allclose(np.asarray(g(X, 2, scale=2.0)), 2 * np.sin(np.sin(X)), rtol=1e-6)


def test_closure_over_traced_value_is_differentiated():
    def f(x):
        g = checkpoint(lambda y: toy.sin(toy.mul(x, y)))
        return toy.sum(g(x))

    got = np.asarray(ad.grad(f)(X))
    np.testing.assert_allclose(got, 2 * X * np.cos(X * X), rtol=1e-5)


@pytest.mark.parametrize(
    "policy",
    [
        None,
        checkpoint_policies.everything_saveable,
        checkpoint_policies.nothing_saveable,
        checkpoint_policies.dots_saveable,
        checkpoint_policies.save_only_these_names("h"),
    ],
)
def test_grad_matches_without_remat(policy):
    def f(ws, x):
        for w in ws:
            x = checkpoint_name(toy.sin(dot(w, x)), "h")
        return toy.sum(x)

    want = ad.grad(f, argnums=(0, 1))(WS, X)
    got = ad.grad(checkpoint(f, policy=policy), argnums=(0, 1))(WS, X)
    for g, w in zip(got[0] + [got[1]], want[0] + [want[1]]):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5)


def test_jvp_of_checkpoint():
    f = checkpoint(lambda x: toy.sin(toy.sin(x)))
    out, tangent = ad.jvp(f, (X,), (np.ones_like(X),))
    np.testing.assert_allclose(np.asarray(out), np.sin(np.sin(X)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tangent), np.cos(np.sin(X)) * np.cos(X), rtol=1e-5)
    closed = make_jaxpr(lambda x, t: ad.jvp(f, (x,), (t,)))(X, X)
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive is remat_p and eqn.params["differentiated"] is True


def test_grad_of_grad_through_checkpoint():
    f = checkpoint(lambda x: toy.sin(toy.sin(x)))
    d2 = ad.grad(ad.grad(lambda x: toy.sum(f(x)) if np.ndim(x) else f(x)))
    x = np.float32(0.7)
    s = np.sin(x)
    want = -np.sin(s) * np.cos(x) ** 2 - np.cos(s) * np.sin(x)
    np.testing.assert_allclose(np.asarray(d2(x)), want, rtol=1e-5)


# ---------------------------------------------------------------------------
# Recompute instead of save


def test_remat_recomputes_instead_of_saving():
    plain = _backward_jaxpr(mlp, WS, X)
    rematted = _backward_jaxpr(checkpoint(mlp), WS, X)
    check_jaxpr(plain)
    check_jaxpr(rematted)
    # Without remat the backward pass reads saved cos(...) values and never
    # recomputes the forward pass: no sin at all.
    assert _count(plain, "sin") == 0
    assert _count(plain, "cos") == 0
    # With remat it recomputes every layer's sin (the last layer's output is not
    # needed) and the cos of each layer, inside a checkpoint equation ...
    assert _count(rematted, "checkpoint") == 1
    assert _count(rematted, "sin") == N_LAYERS - 1
    assert _count(rematted, "cos") == N_LAYERS
    # ... and saves only the inputs: fewer residuals than without remat.
    assert len(rematted.consts) == N_LAYERS + 1
    assert len(plain.consts) > len(rematted.consts)
    # More equations are run backward with remat: the recomputation.
    assert len(list(_all_eqns(rematted))) > len(list(_all_eqns(plain)))


def test_everything_saveable_saves_like_no_remat():
    plain = _backward_jaxpr(mlp, WS, X)
    saved = _backward_jaxpr(checkpoint(mlp, policy=checkpoint_policies.everything_saveable), WS, X)
    assert _count(saved, "sin") == _count(saved, "cos") == 0
    assert len(saved.consts) == len(plain.consts)


def test_dots_saveable_saves_dot_outputs():
    plain = _backward_jaxpr(mlp_dots, WS, X)
    nothing = _backward_jaxpr(checkpoint(mlp_dots), WS, X)
    dots = _backward_jaxpr(checkpoint(mlp_dots, policy=checkpoint_policies.dots_saveable), WS, X)
    # The backward pass has two transposed dots per layer; nothing_saveable adds
    # the recomputation of each layer's forward dot, dots_saveable does not ...
    assert _count(plain, "dot_general") == _count(dots, "dot_general") == 2 * N_LAYERS
    assert _count(nothing, "dot_general") == 3 * N_LAYERS
    # ... because the dot outputs are saved: one more residual per layer.
    assert len(dots.consts) == len(nothing.consts) + N_LAYERS
    # What is not a dot is still recomputed (from the saved dots): cos of each
    # layer, and the sins feeding the next layer's dot (needed for d/dw).
    assert _count(dots, "cos") == N_LAYERS
    assert _count(dots, "sin") == N_LAYERS - 1
    assert checkpoint_policies.checkpoint_dots is checkpoint_policies.dots_saveable


def test_dots_with_no_batch_dims_saveable():
    policy = checkpoint_policies.dots_with_no_batch_dims_saveable
    aval = ShapedArray((3,), np.float32)
    assert policy(dot_p, aval, aval, dimension_numbers=(((), ()), ((), ())))
    assert not policy(dot_p, aval, aval, dimension_numbers=(((), ()), ((0,), (0,))))
    assert not policy(toy.mul_p, aval, aval)

    # In a backward pass: rank-0 dots have no batch dims (saved), rank-1 ones do.
    def f(w, x):  # rank 0: a dot without batch dims
        return toy.sin(toy.sin(dot(w, x)))

    x, w = np.float32(0.4), np.float32(1.1)
    saved = _backward_jaxpr(checkpoint(f, policy=policy), w, x)
    recomputed = _backward_jaxpr(checkpoint(f), w, x)
    assert _count(saved, "dot_general") == 2
    assert _count(recomputed, "dot_general") == 3
    # Rank 1: every dimension is a batch dimension, so nothing is saved.
    batched = _backward_jaxpr(checkpoint(mlp_dots, policy=policy), WS, X)
    assert _count(batched, "dot_general") == 3 * N_LAYERS


def test_save_only_these_names():
    def f(ws, x):
        for i, w in enumerate(ws):
            x = checkpoint_name(toy.sin(toy.mul(w, x)), f"layer{i}")
        return toy.sum(x)

    nothing = _backward_jaxpr(checkpoint(f), WS, X)
    named = _backward_jaxpr(
        checkpoint(f, policy=checkpoint_policies.save_only_these_names("layer0", "layer1")),
        WS,
        X,
    )
    # layer0's and layer1's outputs are saved: their sins are not recomputed.
    assert _count(nothing, "sin") == N_LAYERS - 1
    assert _count(named, "sin") == N_LAYERS - 3
    but = _backward_jaxpr(
        checkpoint(f, policy=checkpoint_policies.save_any_names_but_these("layer0")), WS, X
    )
    assert _count(but, "sin") == 1  # only layer0's output is recomputed


def test_checkpoint_name_is_identity_with_rules():
    np.testing.assert_array_equal(np.asarray(checkpoint_name(X, "a")), X)
    closed = make_jaxpr(lambda x: checkpoint_name({"a": x}, "n"))(X)
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive is name_p and eqn.params == {"name": "n"}
    assert "name[name=n]" in str(closed)
    g = ad.grad(lambda x: toy.sum(toy.sin(checkpoint_name(x, "n"))))(X)
    np.testing.assert_allclose(np.asarray(g), np.cos(X), rtol=1e-6)
    out = batching.vmap(lambda x: checkpoint_name(x, "n"))(np.stack([X, X]))
    np.testing.assert_array_equal(np.asarray(out), np.stack([X, X]))
    np.testing.assert_array_equal(np.asarray(jit(lambda x: checkpoint_name(x, "n"))(X)), X)


# ---------------------------------------------------------------------------
# Lowering, batching, DCE, partial evaluation


def test_lowering_barrier_only_when_differentiated_and_prevent_cse():
    def loss(x, prevent_cse):
        return toy.sum(checkpoint(lambda y: toy.sin(toy.sin(y)), prevent_cse=prevent_cse)(x))

    fwd = jit(functools.partial(loss, prevent_cse=True)).lower(X).as_text()
    assert "optimization_barrier" not in fwd
    g = jit(ad.grad(functools.partial(loss, prevent_cse=True))).lower(X).as_text()
    assert "optimization_barrier" in g
    g_cse = jit(ad.grad(functools.partial(loss, prevent_cse=False))).lower(X).as_text()
    assert "optimization_barrier" not in g_cse
    got = jit(ad.grad(functools.partial(loss, prevent_cse=True)))(X)
    np.testing.assert_allclose(np.asarray(got), np.cos(np.sin(X)) * np.cos(X), rtol=1e-5)


def test_vmap_of_checkpoint():
    f = checkpoint(lambda w, x: toy.sin(toy.mul(w, toy.sin(x))))
    ws, xs = np.stack(WS[:3]), np.stack([X, 2 * X, -X])
    out = batching.vmap(f)(ws, xs)
    np.testing.assert_allclose(np.asarray(out), np.sin(ws * np.sin(xs)), rtol=1e-6)
    closed = make_jaxpr(batching.vmap(f))(ws, xs)
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive is remat_p
    assert eqn.params["jaxpr"].in_avals[0].shape == (3, 3)


def test_dce_prunes_inside_checkpoint():
    def f(x, y):
        a, b = checkpoint(lambda x, y: (toy.sin(x), toy.cos(toy.cos(y))))(x, y)
        return a, b

    closed = make_jaxpr(f)(X, X)
    new, used_in = dce_jaxpr(closed.jaxpr, [True, False])
    assert used_in == [True, False]
    (eqn,) = new.eqns
    assert len(eqn.outvars) == 1 and len(eqn.invars) == 1
    assert [e.primitive.name for e in eqn.params["jaxpr"].jaxpr.eqns] == ["sin"]
    check_jaxpr(new)
    new, _ = dce_jaxpr(closed.jaxpr, [False, False])
    assert not new.eqns


def test_partial_eval_rule_obeys_policy():
    def body(x, y):
        s = checkpoint_name(toy.sin(x), "s")
        return (toy.mul(toy.sin(s), y),)

    for policy, saved_sins in [(None, 0), (checkpoint_policies.save_only_these_names("s"), 1)]:
        closed = make_jaxpr(checkpoint(body, policy=policy))(X, X)
        known, unknown, out_uk, res = pe.partial_eval_jaxpr_nounits(closed, [False, True], False)
        assert out_uk == [True]
        check_jaxpr(known)
        check_jaxpr(unknown)
        # The unknown side recomputes what was not saved.
        assert _count(unknown, "sin") == 2 - saved_sins
        assert _count(known, "sin") == saved_sins


# ---------------------------------------------------------------------------
# Composition with jit, vmap and grad


def _grad_close(f, args, want, argnums=0):
    got = ad.grad(f, argnums=argnums)(*args)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


def test_grad_of_jit_of_checkpoint():
    f = jit(checkpoint(lambda x: toy.sum(toy.sin(toy.sin(x)))))
    _grad_close(f, (X,), np.cos(np.sin(X)) * np.cos(X))
    # The jit is split into a known and an unknown jit; the unknown one holds the
    # checkpoint, which recomputes sin.
    back = _backward_jaxpr(f, X)
    assert _count(back, "jit") == 1 and _count(back, "checkpoint") == 1
    assert _count(back, "sin") == 1


@pytest.mark.parametrize("policy", [None, checkpoint_policies.dots_saveable])
def test_grad_of_checkpoint_of_jit(policy):
    inner = jit(lambda w, x: toy.sin(dot(w, toy.sin(x))))
    f = checkpoint(lambda w, x: toy.sum(inner(w, x)), policy=policy)
    w = WS[1]
    want_x = np.cos(w * np.sin(X)) * w * np.cos(X)
    _grad_close(f, (w, X), want_x, argnums=1)
    back = _backward_jaxpr(f, w, X)
    # Not saveable under either policy (a jit is not a dot): recomputed whole.
    assert _count(back, "checkpoint") == 1 and _count(back, "jit") >= 1


def test_vmap_of_grad_and_grad_of_vmap_of_checkpoint():
    f = checkpoint(lambda x: toy.sin(toy.sin(x)))
    xs = np.stack([X, 2 * X])
    want = np.cos(np.sin(xs)) * np.cos(xs)
    got = batching.vmap(ad.grad(lambda x: toy.sum(f(x))))(xs)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
    got = ad.grad(lambda x: toy.sum(batching.vmap(f)(x)))(X)
    np.testing.assert_allclose(np.asarray(got), want[0], rtol=1e-5)


def test_nested_checkpoints():
    inner = checkpoint(lambda x: toy.sin(toy.sin(x)))
    outer = checkpoint(lambda x: toy.sum(inner(toy.sin(x))))
    s = np.sin(X)
    _grad_close(outer, (X,), np.cos(np.sin(s)) * np.cos(s) * np.cos(X))
    # Second derivative (elementwise: the Hessian is diagonal) against finite
    # differences of the first.
    g = ad.grad(outer)
    d2 = ad.grad(lambda x: toy.sum(g(x)))
    eps = np.float32(1e-2)
    fd = (np.asarray(g(X + eps)) - np.asarray(g(X - eps))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(d2(X)), fd, rtol=2e-2, atol=1e-3)


def test_second_order_with_jit_inside_checkpoint():
    inner = jit(lambda x: toy.sin(toy.sin(x)))
    f = checkpoint(lambda x: toy.sum(toy.sin(inner(x))))
    g = ad.grad(f)
    d2 = ad.grad(lambda x: toy.sum(g(x)))
    eps = np.float32(1e-2)
    fd = (np.asarray(g(X + eps)) - np.asarray(g(X - eps))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(d2(X)), fd, rtol=2e-2, atol=1e-3)
