"""custom_jvp / custom_vjp: the rules replace autodiff, under jit, vmap and higher-order AD.

The functions are built from conftest's toy primitives. To prove that a rule is
what differentiation uses, most rules here are deliberately *not* the true
derivative of the function (e.g. `2 cos(x)` for `sin`): the results must follow
the rule. `check_grads` checks the rules that are true derivatives.
"""

from __future__ import annotations

import numpy as np
import pytest

from polyjax_core.abstract_values import get_aval
from polyjax_core.errors import UnexpectedTracerError
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_interpreters import ad, batching
from polyjax_interpreters.custom_derivatives import (
    CustomJVPException,
    CustomVJPException,
    CustomVJPPrimal,
    SymbolicZero,
    custom_jvp,
    custom_jvp_call_p,
    custom_vjp,
    custom_vjp_call_p,
)
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads

F32 = np.float32
X = np.array([0.1, 0.5, -1.2], F32)
Y = np.array([1.5, -2.0, 0.75], F32)
XS = np.array([[0.1, 0.5, -1.2], [0.3, -0.4, 2.0]], F32)
ONES = np.ones(3, F32)


# ---------------------------------------------------------------------------
# Toy batching rules and array operations (what polyjax-numpy provides for lax)


def _same_shape_rule(prim):
    def rule(args, dims):
        size = next(get_aval(a).shape[d] for a, d in zip(args, dims) if d is not None)
        return prim.bind(*[batching.bdim_at_front(a, d, size) for a, d in zip(args, dims)]), 0

    return rule


@pytest.fixture(autouse=True)
def _toy_transform_rules(toy, monkeypatch):
    for p in (toy.add_p, toy.mul_p):
        batching.primitive_batchers.setdefault(p, _same_shape_rule(p))
    for p in (toy.sin_p, toy.cos_p, toy.neg_p):
        if p not in batching.primitive_batchers:
            batching.defvectorized(p)

    def sum_rule(args, dims):
        (x,), (d,) = args, dims
        return toy.reduce_axes(batching.moveaxis(x, d, 0), (1,)), 0

    batching.primitive_batchers.setdefault(toy.sum_p, sum_rule)

    def reduce_axes_transpose(ct, x, *, axes):
        kept = tuple(i for i in range(len(x.aval.shape)) if i not in axes)
        return [toy.broadcast_in_dim(ct, x.aval.shape, kept)]

    def broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
        new = tuple(i for i in range(len(shape)) if i not in broadcast_dimensions)
        return [toy.reduce_axes(ct, new)]

    if toy.reduce_axes_p not in ad.primitive_jvps:
        ad.deflinear2(toy.reduce_axes_p, reduce_axes_transpose)
    if toy.broadcast_in_dim_p not in ad.primitive_jvps:
        ad.deflinear2(toy.broadcast_in_dim_p, broadcast_in_dim_transpose)
    # Restored after each test: polyjax-numpy registers lax's own in other test modules.
    for name in ("transpose", "broadcast_in_dim", "reshape"):
        monkeypatch.setattr(batching._ops, name, getattr(toy, name))
    monkeypatch.setattr(batching._ops, "reduce_sum", toy.reduce_axes)


def _close(a, b, **kw):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6, **kw)


# ---------------------------------------------------------------------------
# custom_jvp


def _sin_with_double_rule(toy, calls=None):
    """sin, whose rule claims the derivative is 2 cos(x)."""

    @custom_jvp
    def f(x):
        return toy.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        if calls is not None:
            calls.append(1)
        (x,), (t,) = primals, tangents
        return f(x), toy.mul(toy.mul(toy.cos(x), 2.0), t)

    return f


def test_custom_jvp_evaluates_the_function_not_the_rule(toy):
    calls = []
    f = _sin_with_double_rule(toy, calls)
    _close(f(X), np.sin(X))
    _close(jit(f)(X), np.sin(X))
    assert calls == []


def test_custom_jvp_jaxpr_prints_like_jax(toy):
    f = _sin_with_double_rule(toy)
    assert str(make_jaxpr(f)(X)) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = custom_jvp_call[\n"
        "      name=f\n"
        "      call_jaxpr={ lambda ; c:f32[3]. let d:f32[3] = sin c in (d,) }\n"
        "      jvp=f_jvp\n"
        "      symbolic_zeros=False\n"
        "    ] a\n"
        "  in (b,) }"
    )


@pytest.mark.parametrize(
    "transform",
    ["plain", "jit_inside", "jit_outside"],
)
def test_custom_jvp_rule_is_used_by_jvp_and_grad(toy, transform):
    f = _sin_with_double_rule(toy)
    loss = lambda x: toy.sum(f(x))
    jvp = lambda x, t: ad.jvp(f, (x,), (t,))
    grad = ad.grad(loss)
    if transform == "jit_inside":
        jvp = lambda x, t: ad.jvp(jit(f), (x,), (t,))
        grad = ad.grad(jit(loss))
    elif transform == "jit_outside":
        jvp, grad = jit(jvp), jit(grad)
    y, t = jvp(X, Y)
    _close(y, np.sin(X))
    _close(t, 2 * np.cos(X) * Y)
    _close(grad(X), 2 * np.cos(X))


def test_custom_jvp_higher_order_differentiates_the_rule(toy):
    f = _sin_with_double_rule(toy)
    x = F32(0.7)
    _close(ad.grad(f)(x), 2 * np.cos(x))
    _close(ad.grad(ad.grad(f))(x), -2 * np.sin(x))  # d/dx of the rule's 2 cos(x)
    _close(ad.grad(ad.grad(ad.grad(f)))(x), -2 * np.cos(x))


def test_custom_jvp_check_grads_with_a_true_rule(toy):
    @custom_jvp
    def f(x, y):
        return toy.mul(toy.sin(x), y)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        out = f(x, y)
        return out, toy.add(toy.mul(toy.mul(toy.cos(x), y), tx), toy.mul(toy.sin(x), ty))

    check_grads(f, (X, Y), order=2)
    check_grads(jit(f), (X, Y), order=1)


def test_custom_jvp_under_vmap(toy):
    f = _sin_with_double_rule(toy)
    _close(batching.vmap(f)(XS), np.sin(XS))
    # jvp of vmap: the batched primitive runs the rule under a batch trace
    y, t = ad.jvp(batching.vmap(f), (XS,), (np.ones_like(XS),))
    _close(y, np.sin(XS))
    _close(t, 2 * np.cos(XS))
    # vmap of jvp: the rule is batched like any function
    y, t = batching.vmap(lambda x: ad.jvp(f, (x,), (ONES,)))(XS)
    _close(t, 2 * np.cos(XS))
    # grad of vmap and vmap of grad
    g = ad.grad(lambda xs: toy.sum(batching.vmap(lambda x: toy.sum(f(x)))(xs)))(XS)
    _close(g, 2 * np.cos(XS))
    _close(batching.vmap(ad.grad(lambda x: toy.sum(f(x))))(XS), 2 * np.cos(XS))
    _close(jit(batching.vmap(ad.grad(lambda x: toy.sum(f(x)))))(XS), 2 * np.cos(XS))


def test_custom_jvp_vmap_with_unbatched_operand(toy):
    @custom_jvp
    def f(x, y):
        return toy.mul(x, y)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return f(x, y), toy.add(toy.mul(tx, 10.0), toy.mul(ty, 100.0))

    fv = batching.vmap(f, in_axes=(0, None))
    _close(fv(XS, Y), XS * Y)
    _, t = ad.jvp(fv, (XS, Y), (np.ones_like(XS), ONES))
    _close(t, np.full_like(XS, 110.0))
    summed = batching.vmap(lambda x, y: toy.sum(f(x, y)), in_axes=(0, None))
    gx, gy = ad.grad(lambda xs, y: toy.sum(summed(xs, y)), argnums=(0, 1))(XS, Y)
    _close(gx, np.full_like(XS, 10.0))
    _close(gy, np.full(3, 200.0))  # summed over the batch


def test_custom_jvp_nondiff_argnums(toy):
    @custom_jvp
    def apply(fn, x):
        return fn(x)

    apply = custom_jvp(apply.fun, nondiff_argnums=(0,))

    @apply.defjvp
    def apply_jvp(fn, primals, tangents):
        (x,), (t,) = primals, tangents
        return apply(fn, x), toy.mul(t, 7.0)

    assert float(ad.grad(lambda x: apply(toy.sin, x))(F32(0.3))) == 7.0
    _close(jit(ad.grad(lambda x: apply(toy.sin, x)))(F32(0.3)), 7.0)


def test_custom_jvp_nondiff_array_argument_is_not_differentiated(toy):
    from functools import partial

    @partial(custom_jvp, nondiff_argnums=(0,))
    def scale(c, x):
        return toy.mul(c, x)

    @scale.defjvp
    def scale_jvp(c, primals, tangents):
        (x,), (t,) = primals, tangents
        return scale(c, x), toy.mul(c, t)

    # c is a traced value of the outer vmap and of the outer grad: no derivative through it
    _close(ad.grad(lambda c, x: toy.sum(scale(c, x)))(Y, X), np.zeros(3))
    _close(ad.grad(lambda c, x: toy.sum(scale(c, x)), argnums=1)(Y, X), Y)
    out = batching.vmap(lambda c: ad.grad(lambda x: toy.sum(scale(c, x)))(X))(XS)
    _close(out, XS)
    _, t = ad.jvp(batching.vmap(lambda c, x: scale(c, x)), (XS, XS), (XS, np.ones_like(XS)))
    _close(t, XS)


def test_custom_jvp_defjvps_and_pytrees(toy):
    @custom_jvp
    def f(d):
        return {"s": toy.sin(d["x"]), "p": toy.mul(d["x"], d["y"])}

    @f.defjvp
    def f_jvp(primals, tangents):
        (d,), (t,) = primals, tangents
        out = f(d)
        return out, {
            "s": toy.mul(toy.cos(d["x"]), t["x"]),
            "p": toy.add(toy.mul(t["x"], d["y"]), toy.mul(d["x"], t["y"])),
        }

    check_grads(f, ({"x": X, "y": Y},), order=2)

    @custom_jvp
    def h(x, y):
        return toy.mul(toy.sin(x), y)

    h.defjvps(
        lambda tx, ans, x, y: toy.mul(toy.mul(toy.cos(x), y), tx),
        lambda ty, ans, x, y: toy.mul(toy.sin(x), ty),
    )
    check_grads(h, (X, Y), order=2)


def test_custom_jvp_symbolic_zeros(toy):
    seen = []

    @custom_jvp
    def f(x, y):
        return toy.mul(x, y)

    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        seen.append((type(tx), type(ty)))
        out = f(x, y)
        if isinstance(ty, SymbolicZero):
            return out, toy.mul(tx, y)
        return out, SymbolicZero.from_primal_value(out)

    f.defjvp(f_jvp, symbolic_zeros=True)
    _, t = ad.jvp(lambda x: f(x, Y), (X,), (ONES,))
    _close(t, Y)
    assert seen[-1] == (type(ONES), SymbolicZero)
    _, t = ad.jvp(lambda y: f(X, y), (Y,), (ONES,))
    assert seen[-1][0] is SymbolicZero
    _close(t, np.zeros(3))  # the rule's symbolic zero output, instantiated by jvp


def test_custom_jvp_closure(toy):
    f_of = lambda c: _closure_fn(toy, c)
    # closing over a vmapped value works
    out = batching.vmap(lambda c: f_of(c)(X))(XS)
    _close(out, XS * np.sin(X))
    # differentiating w.r.t. a closed-over value is an error (the rule cannot know)
    with pytest.raises(CustomJVPException, match="closed-over value"):
        ad.grad(lambda c: toy.sum(f_of(c)(X)))(Y)
    # ... but closing over a value that is not differentiated is fine
    _close(ad.grad(lambda x: toy.sum(f_of(Y)(x)))(X), Y * np.cos(X))


def _closure_fn(toy, c):
    @custom_jvp
    def f(x):
        return toy.mul(c, toy.sin(x))

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), toy.mul(toy.mul(c, toy.cos(x)), t)

    return f


def test_custom_jvp_keyword_arguments_and_defaults(toy):
    @custom_jvp
    def f(x, y=2.0):
        return toy.mul(x, y)

    @f.defjvp
    def f_jvp(primals, tangents):
        assert len(primals) == 2
        (x, y), (tx, _) = primals, tangents
        return f(x, y), toy.mul(tx, 5.0)

    assert float(ad.grad(lambda x: f(x=x))(F32(1.0))) == 5.0
    assert float(f(x=F32(3.0))) == 6.0


def test_custom_jvp_errors(toy):
    @custom_jvp
    def f(x):
        return toy.sin(x)

    with pytest.raises(AttributeError, match="No JVP defined for custom_jvp function f"):
        f(X)
    f.defjvp(lambda p, t: (f(p[0]), [t[0]]))
    with pytest.raises(TypeError, match="equal container"):
        ad.jvp(f, (X,), (ONES,))
    f.defjvp(lambda p, t: (f(p[0]),))
    with pytest.raises(TypeError, match="must produce a pair"):
        ad.jvp(f, (X,), (ONES,))
    f.defjvp(lambda p, t: (f(p[0]), toy.sum(t[0])))
    with pytest.raises(TypeError, match=r"Expected float32\[3\].*but got float32\[\]"):
        ad.jvp(f, (X,), (ONES,))


# ---------------------------------------------------------------------------
# custom_vjp


def _g(toy):
    """sin(x) * y, whose bwd triples the x cotangent."""

    @custom_vjp
    def g(x, y):
        return toy.mul(toy.sin(x), y)

    def g_fwd(x, y):
        return g(x, y), (toy.cos(x), {"sin": toy.sin(x), "y": y})

    def g_bwd(res, ct):
        cos_x, d = res
        return toy.mul(toy.mul(toy.mul(cos_x, d["y"]), ct), 3.0), toy.mul(d["sin"], ct)

    g.defvjp(g_fwd, g_bwd)
    return g


def test_custom_vjp_evaluates_the_function(toy):
    g = _g(toy)
    _close(g(X, Y), np.sin(X) * Y)
    _close(jit(g)(X, Y), np.sin(X) * Y)
    _close(batching.vmap(g, in_axes=(0, None))(XS, Y), np.sin(XS) * Y)


def test_custom_vjp_jaxpr_prints_like_jax(toy):
    g = _g(toy)
    assert str(make_jaxpr(g)(X, Y)) == (
        "{ lambda ; a:f32[3] b:f32[3]. let\n"
        "    c:f32[3] = custom_vjp_call[\n"
        "      name=g\n"
        "      bwd=g_bwd\n"
        "      call_jaxpr={ lambda ; d:f32[3] e:f32[3]. let\n"
        "          f:f32[3] = sin d\n"
        "          g:f32[3] = mul f e\n"
        "        in (g,) }\n"
        "      fwd=g_fwd\n"
        "      symbolic_zeros=False\n"
        "    ] a b\n"
        "  in (c,) }"
    )
    jaxpr = str(make_jaxpr(lambda x, y: ad.jvp(g, (x, y), (x, y)))(X, Y))
    assert "custom_lin[\n      bwd=g_bwd\n      in_zeros=[False, False]\n      num_res=3\n" in jaxpr


@pytest.mark.parametrize("transform", ["plain", "jit_inside", "jit_outside"])
def test_custom_vjp_bwd_is_used_by_grad(toy, transform):
    g = _g(toy)
    loss = lambda x, y: toy.sum(g(x, y))
    grad = ad.grad(jit(loss) if transform == "jit_inside" else loss, argnums=(0, 1))
    if transform == "jit_outside":
        grad = jit(grad)
    gx, gy = grad(X, Y)
    _close(gx, 3 * np.cos(X) * Y)
    _close(gy, np.sin(X))
    out, vjp_fn = ad.vjp(g, X, Y)
    _close(out, np.sin(X) * Y)
    cx, cy = vjp_fn(ONES * 2)
    _close(cx, 6 * np.cos(X) * Y)


def test_custom_vjp_under_jvp_raises_jax_error(toy):
    g = _g(toy)
    msg = r"can't apply forward-mode autodiff \(jvp\) to a custom_vjp function\."
    with pytest.raises(TypeError, match=msg):
        ad.jvp(g, (X, Y), (ONES, ONES))
    with pytest.raises(TypeError, match=msg):
        jit(lambda x, y: ad.jvp(g, (x, y), (x, y)))(X, Y)
    with pytest.raises(TypeError, match=msg):
        batching.vmap(lambda x: ad.jvp(g, (x, Y), (x, Y)))(XS)
    with pytest.raises(TypeError, match=msg):
        ad.jvp(lambda x: ad.jvp(g, (x, Y), (x, Y))[1], (X,), (ONES,))
    # a zero tangent never reaches the rule: then it is plain evaluation
    out, t = ad.jvp(lambda x: g(X, Y), (X,), (ONES,))
    _close(t, np.zeros(3))


def test_custom_vjp_under_vmap(toy):
    g = _g(toy)
    gv = batching.vmap(g, in_axes=(0, None))
    gx, gy = ad.grad(
        lambda xs, y: toy.sum(batching.vmap(lambda x: toy.sum(g(x, y)))(xs)), argnums=(0, 1)
    )(XS, Y)
    _close(gx, 3 * np.cos(XS) * Y)
    _close(gy, np.sin(XS).sum(0))  # the unbatched input's cotangent is summed over the batch
    gx, gy = batching.vmap(
        ad.grad(lambda x, y: toy.sum(g(x, y)), argnums=(0, 1)), in_axes=(0, None)
    )(XS, Y)
    _close(gx, 3 * np.cos(XS) * Y)
    _close(gy, np.sin(XS))
    gx = jit(ad.grad(lambda xs: toy.sum(batching.vmap(lambda x: toy.sum(g(x, Y)))(xs))))(XS)
    _close(gx, 3 * np.cos(XS) * Y)
    _close(gv(XS, Y), np.sin(XS) * Y)


def test_custom_vjp_second_order_differentiates_fwd_and_bwd(toy):
    @custom_vjp
    def f(x):
        return toy.sin(x)

    f.defvjp(lambda x: (f(x), toy.cos(x)), lambda c, g: (toy.mul(toy.mul(c, g), 2.0),))
    x = F32(0.4)
    _close(ad.grad(f)(x), 2 * np.cos(x))
    _close(ad.grad(ad.grad(f))(x), -2 * np.sin(x))
    _close(jit(ad.grad(ad.grad(f)))(x), -2 * np.sin(x))


def test_custom_vjp_check_grads_reverse_mode(toy):
    @custom_vjp
    def f(x, y):
        return toy.mul(toy.sin(x), y)

    def f_fwd(x, y):
        return f(x, y), (x, y)

    def f_bwd(res, ct):
        x, y = res
        return toy.mul(toy.mul(toy.cos(x), y), ct), toy.mul(toy.sin(x), ct)

    f.defvjp(f_fwd, f_bwd)
    check_grads(f, (X, Y), order=2, modes=("rev",))


def test_custom_vjp_bwd_none_means_zero(toy):
    @custom_vjp
    def f(x, d):
        return toy.mul(x, d["a"])

    f.defvjp(lambda x, d: (f(x, d), d["a"]), lambda a, ct: (toy.mul(a, ct), None))
    gx, gd = ad.grad(lambda x, d: toy.sum(f(x, d)), argnums=(0, 1))(X, {"a": Y})
    _close(gx, Y)
    _close(gd["a"], np.zeros(3))

    @custom_vjp
    def h(x, d):
        return toy.mul(x, d["a"])

    h.defvjp(
        lambda x, d: (h(x, d), (x, d["a"])),
        lambda r, ct: (toy.mul(r[1], ct), {"a": None, "b": toy.mul(r[0], ct)}),
    )
    gd = ad.grad(lambda d: toy.sum(h(X, d)))({"a": Y, "b": Y})
    _close(gd["a"], np.zeros(3))
    _close(gd["b"], X)


def test_custom_vjp_nondiff_argnums(toy):
    from functools import partial

    @partial(custom_vjp, nondiff_argnums=(0,))
    def apply(fn, x):
        return fn(x)

    apply.defvjp(lambda fn, x: (apply(fn, x), x), lambda fn, x, ct: (toy.mul(fn(x), ct),))
    _close(ad.grad(lambda x: toy.sum(apply(toy.sin, x)))(X), np.sin(X))
    with pytest.raises(UnexpectedTracerError, match="nondiff_argnums"):
        ad.grad(lambda x: toy.sum(apply(x, x)))(X)


def test_custom_vjp_symbolic_zeros(toy):
    seen = {}

    @custom_vjp
    def f(x, y):
        return toy.mul(x, y), toy.sin(x)

    def f_fwd(x, y):
        seen["perturbed"] = (x.perturbed, y.perturbed)
        assert isinstance(x, CustomVJPPrimal)
        return f(x.value, y.value), (x.value, y.value)

    def f_bwd(res, cts):
        x, y = res
        ct_p, ct_s = cts
        seen["ct_s"] = type(ct_s)
        return toy.mul(ct_p, y), toy.mul(ct_p, x)

    f.defvjp(f_fwd, f_bwd, symbolic_zeros=True)
    g = ad.grad(lambda x: toy.sum(f(x, Y)[0]))(X)
    _close(g, Y)
    assert seen == {"perturbed": (True, False), "ct_s": SymbolicZero}


def test_custom_vjp_closure_over_a_differentiated_value_raises(toy):
    def make(c):
        @custom_vjp
        def f(x):
            return toy.mul(c, x)

        f.defvjp(lambda x: (f(x), None), lambda _, ct: (toy.mul(c, ct),))
        return f

    with pytest.raises(CustomVJPException, match="closed-over value"):
        ad.grad(lambda c: toy.sum(make(c)(X)))(Y)
    _close(ad.grad(lambda x: toy.sum(make(Y)(x)))(X), Y)
    _close(batching.vmap(lambda c: make(c)(X))(XS), XS * X)


def test_custom_vjp_bwd_errors(toy):
    @custom_vjp
    def f(x, y):
        return toy.mul(x, y)

    with pytest.raises(AttributeError, match="No VJP defined for custom_vjp function f"):
        f(X, Y)
    loss = lambda x: toy.sum(f(x, Y))
    f.defvjp(lambda x, y: (f(x, y), y), lambda y, ct: (toy.mul(y, ct),))
    with pytest.raises(TypeError, match="tuple of length equal to the number of arguments"):
        ad.grad(loss)(X)
    f.defvjp(lambda x, y: (f(x, y), y), lambda y, ct: (toy.sum(ct), None))
    with pytest.raises(ValueError, match=r"same shape/dtypes.*float32\[\]"):
        ad.grad(loss)(X)
    f.defvjp(lambda x, y: (toy.sum(x), y), lambda y, ct: (ct, None))
    with pytest.raises(TypeError, match="fwd rule"):
        ad.grad(loss)(X)


def test_primitives_are_exported():
    assert custom_jvp_call_p.name == "custom_jvp_call"
    assert custom_vjp_call_p.name == "custom_vjp_call"


def test_jacobians_and_remat_compose(toy):
    from polyjax_interpreters.remat import checkpoint

    f = _sin_with_double_rule(toy)
    _close(ad.jacfwd(f)(X), np.diag(2 * np.cos(X)))
    _close(ad.jacrev(f)(X), np.diag(2 * np.cos(X)))
    _close(ad.grad(checkpoint(lambda x: toy.sum(f(x))))(X), 2 * np.cos(X))
    g = _g(toy)
    _close(ad.jacrev(g)(X, Y), np.diag(3 * np.cos(X) * Y))
    _close(ad.grad(checkpoint(lambda x: toy.sum(g(x, Y))))(X), 3 * np.cos(X) * Y)

    # Forward over reverse differentiates fwd and bwd (as in JAX, a fwd that calls the
    # custom_vjp function itself would be differentiated in forward mode: an error).
    @custom_vjp
    def h(x):
        return toy.sin(x)

    h.defvjp(lambda x: (toy.sin(x), toy.cos(x)), lambda c, ct: (toy.mul(toy.mul(c, ct), 3.0),))
    hvp = ad.jvp(ad.grad(lambda x: toy.sum(h(x))), (X,), (ONES,))[1]
    _close(hvp, -3 * np.sin(X))
    with pytest.raises(TypeError, match="forward-mode autodiff"):
        ad.jvp(ad.grad(lambda x: toy.sum(g(x, Y))), (X,), (ONES,))
