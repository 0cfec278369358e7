"""Control flow: cond/switch, scan, while_loop, fori_loop, map, associative_scan.

Values are checked against Python loops and NumPy, derivatives with
`check_grads`, vmap against a loop over the examples (a batched predicate too),
jit against eager.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_interpreters import ad, batching
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax

f32 = np.float32


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape).astype(f32)


# ---------------------------------------------------------------------------
# cond / switch


def _piecewise(x):
    return lax.cond(lax.reduce_sum(x, (0,)) > 0, lambda x: x * x * 3.0, lambda x: lax.sin(x), x)


@pytest.mark.parametrize("pred", [True, False, 0, 2])
def test_cond_values(pred):
    x = _rand(3)
    got = lax.cond(pred, lambda x: x * 3.0, lambda x: -x, x)
    np.testing.assert_allclose(np.asarray(got), x * 3 if pred else -x, rtol=1e-6)


@pytest.mark.parametrize("index", [-1, 0, 1, 2, 7])
def test_switch_values_clamps(index):
    x = _rand(3)
    fns = [lambda x: x + 1.0, lambda x: x * 2.0, lambda x: lax.sin(x)]
    want = [x + 1, x * 2, np.sin(x)][min(max(index, 0), 2)]
    got = lax.switch(np.int32(index), fns, x)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_cond_pytree_operands_and_closure():
    x, y = _rand(2), _rand(2, seed=1)
    c = np.float32(4.0)

    def f(x, y):
        return lax.cond(
            x[0] > -2,
            lambda t: {"a": t[0] * c, "b": t[1]},
            lambda t: {"a": t[1], "b": t[0]},
            (x, y),
        )

    out = jit(f)(x, y)
    np.testing.assert_allclose(np.asarray(out["a"]), x * 4, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out["b"]), y, rtol=1e-6)


def test_cond_branch_type_mismatch():
    with pytest.raises(TypeError, match="cond branches must have equal output types"):
        lax.cond(True, lambda x: x, lambda x: x.astype(np.int32), _rand(2))
    with pytest.raises(TypeError, match="structure"):
        lax.cond(True, lambda x: (x, x), lambda x: x, _rand(2))


def test_cond_printed_jaxpr():
    text = str(make_jaxpr(lambda p, x: lax.cond(p, lambda x: x * 3.0, lambda x: -x, x))(True, 2.0))
    assert "cond[" in text and "branches=(" in text
    assert "neg" in text and "mul" in text
    assert "convert_element_type[new_dtype=int32" in text


@pytest.mark.parametrize("positive,order", [(True, 2), (False, 1)])
def test_cond_grads(positive, order):
    x = np.abs(_rand(3)) + 0.5
    check_grads(jit(_piecewise), (x if positive else -x,), order=order)


def test_cond_grad_closed_over():
    x = np.float32(2.0)
    g = ad.grad(lambda y: lax.cond(x > 1, lambda z: z * y * y, lambda z: z, x))(np.float32(5))
    np.testing.assert_allclose(g, 20.0)


def test_cond_vmap_batched_predicate():
    xs = _rand(6, 3)
    got = batching.vmap(_piecewise)(xs)
    want = np.stack([np.asarray(_piecewise(x)) for x in xs])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
    g = batching.vmap(ad.grad(lambda x: lax.reduce_sum(_piecewise(x), (0,))))(xs)
    want_g = np.stack([6 * x if x.sum() > 0 else np.cos(x) for x in xs])
    np.testing.assert_allclose(np.asarray(g), want_g, rtol=1e-5)


def test_cond_vmap_unbatched_predicate():
    xs = _rand(5, 2)
    f = lambda p, x: lax.switch(p, [lambda x: x, lambda x: x * 2.0, lambda x: -x], x)  # noqa: E731
    got = batching.vmap(f, in_axes=(None, 0))(np.int32(2), xs)
    np.testing.assert_allclose(np.asarray(got), -xs)
    got = batching.vmap(f, in_axes=(0, 1))(np.array([0, 1], np.int32), xs)
    np.testing.assert_allclose(np.asarray(got), np.stack([xs[:, 0], xs[:, 1] * 2]))


def test_cond_jit_matches_eager():
    x = _rand(4)
    np.testing.assert_allclose(np.asarray(jit(_piecewise)(x)), np.asarray(_piecewise(x)))


# ---------------------------------------------------------------------------
# scan


def _cell(c, x):
    h, n = c
    h = lax.tanh(h * 0.5 + x)
    return (h, n + 1), lax.sin(h) * 2.0


def _scan_oracle(c, xs, reverse=False):
    h, n = c
    ys = [None] * len(xs)
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for i in order:
        h = np.tanh(h * 0.5 + xs[i])
        n = n + 1
        ys[i] = np.sin(h) * 2
    return (h, n), np.stack(ys)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("unroll", [1, 2, 3, True])
def test_scan_values(reverse, unroll):
    xs, h0 = _rand(5, 2), _rand(2, seed=1)
    (h, n), ys = lax.scan(_cell, (h0, np.int32(0)), xs, reverse=reverse, unroll=unroll)
    (wh, wn), wys = _scan_oracle((h0, 0), xs, reverse)
    np.testing.assert_allclose(np.asarray(h), wh, rtol=1e-5, atol=1e-6)
    assert int(n) == wn == 5
    np.testing.assert_allclose(np.asarray(ys), wys, rtol=1e-5, atol=1e-6)


def test_scan_no_xs_and_errors():
    c, ys = lax.scan(lambda c, _: (c * 2.0, c), np.float32(1.0), None, length=4)
    assert float(c) == 16.0
    np.testing.assert_allclose(np.asarray(ys), [1, 2, 4, 8])
    with pytest.raises(ValueError, match="length"):
        lax.scan(lambda c, _: (c, c), np.float32(1.0), None)
    with pytest.raises(TypeError, match="carry"):
        lax.scan(lambda c, x: (c.astype(np.int32), x), np.float32(1.0), _rand(3))
    with pytest.raises(TypeError, match="structure"):
        lax.scan(lambda c, x: ((c, c), x), np.float32(1.0), _rand(3))


def test_scan_printed_params_and_hoisted_consts():
    w = _rand(3, seed=4)
    jaxpr = make_jaxpr(lambda c, xs: lax.scan(lambda c, x: (c * w + x, c), c, xs))(
        _rand(3), _rand(4, 3)
    )
    text = str(jaxpr)
    for p in ["scan[", "length=4", "num_consts=1", "num_carry=1", "reverse=False", "unroll=1"]:
        assert p in text, p
    # The closed-over array enters as an operand, outside the loop body.
    assert str(jaxpr.jaxpr.eqns[0].params["jaxpr"]).count("mul") == 1


def test_scan_dce_drops_unused_outputs_and_carries():
    from polyjax_core.jaxpr_eval import eval_jaxpr
    from polyjax_interpreters import partial_eval as pe

    def f(c, xs):
        def body(c, x):
            a, b = c
            return (a * x, b + 1.0), (lax.sin(a), a * 3.0)

        (a, b), (y1, y2) = lax.scan(body, (c, c), xs)
        return a, b, y1, y2

    xs = _rand(3)
    closed = make_jaxpr(f)(np.float32(0.5), xs)
    pruned, _ = pe.dce_jaxpr(closed.jaxpr, [True, False, False, True], instantiate=True)
    body = str(pruned.eqns[0].params["jaxpr"])
    assert "sin" not in body and "add" not in body
    got = eval_jaxpr(pruned, closed.consts, np.float32(0.5), xs)
    want = f(np.float32(0.5), xs)
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got[1]), np.asarray(want[3]), rtol=1e-6)


def test_scan_jit_matches_eager():
    xs, h0 = _rand(6, 2), _rand(2, seed=1)
    f = lambda h0, xs: lax.scan(_cell, (h0, np.int32(0)), xs)  # noqa: E731
    a, b = jit(f)(h0, xs), f(h0, xs)
    np.testing.assert_allclose(np.asarray(a[1]), np.asarray(b[1]), rtol=1e-6)


def _scan_loss(h0, xs, w):
    def body(h, x):
        h = lax.tanh(h * w + x)
        return h, h * h

    h, ys = lax.scan(body, h0, xs)
    return lax.reduce_sum(ys, (0, 1)) + lax.reduce_sum(h, (0,))


def test_scan_grads():
    args = (_rand(2), _rand(4, 2, seed=1), _rand(2, seed=2))
    check_grads(jit(_scan_loss), args, order=2)
    check_grads(
        jit(lambda h, xs: lax.scan(_cell, (h, np.int32(0)), xs, reverse=True)[1]),
        args[:2],
        order=1,
    )


def test_scan_grad_against_unrolled():
    h0, xs, w = _rand(2), _rand(4, 2, seed=1), _rand(2, seed=2)

    def unrolled(h, xs, w):
        tot = 0.0
        for i in range(4):
            h = lax.tanh(h * w + xs[i])
            tot = tot + lax.reduce_sum(h * h, (0,))
        return tot + lax.reduce_sum(h, (0,))

    for a, b in zip(
        ad.grad(_scan_loss, argnums=(0, 1, 2))(h0, xs, w),
        ad.grad(unrolled, argnums=(0, 1, 2))(h0, xs, w),
    ):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("in_axes", [(0, None, None), (None, 1, None), (0, 0, 0)])
def test_scan_vmap(in_axes):
    h0, xs, w = _rand(3, 2), _rand(3, 4, 2, seed=1), _rand(3, 2, seed=2)
    args = [a if ax is not None else a[0] for a, ax in zip((h0, xs, w), in_axes)]
    if in_axes[1] == 1:
        args[1] = np.moveaxis(xs, 0, 1)
    got = batching.vmap(_scan_loss, in_axes=in_axes)(*args)
    want = [
        float(
            _scan_loss(
                h0[i] if in_axes[0] is not None else args[0],
                xs[i] if in_axes[1] is not None else args[1],
                w[i] if in_axes[2] is not None else args[2],
            )
        )
        for i in range(3)
    ]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


# ---------------------------------------------------------------------------
# Loop invariants: computed once, outside the lowered loop


def _ops_outside_and_inside_loops(lowered):
    """The op names of a lowered module outside every `stablehlo.while`, and inside one."""
    outside, inside = [], []

    def visit(op, in_loop):
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    child = child.operation
                    (inside if in_loop else outside).append(child.name)
                    visit(child, in_loop or child.name == "stablehlo.while")

    visit(lowered.compiler_ir().operation, False)
    return outside, inside


def _rnn_with_invariants(w, u, b, h0, xs):
    """An RNN whose cell computes from its closed-over weights alone: `sin(w)`, `u @ u.T`
    and a broadcast of the scalar `b`."""

    def cell(h, x):
        uut = lax.dot(u, lax.transpose(u, (1, 0)))
        h = lax.tanh(lax.dot(lax.sin(w), h) + lax.dot(uut, h) + x + lax.broadcast(b, h.shape))
        return h, h

    return lax.scan(cell, h0, xs)


def test_scan_lowering_computes_loop_invariants_before_the_loop():
    w, u, b = _rand(4, 4), _rand(4, 3, seed=1), np.float32(0.1)
    h0, xs = _rand(4, seed=2), _rand(5, 4, seed=3)
    f = jit(_rnn_with_invariants)
    outside, inside = _ops_outside_and_inside_loops(f.lower(w, u, b, h0, xs))
    assert inside.count("stablehlo.while") == 0 and outside.count("stablehlo.while") == 1
    # sin(w) and u @ u.T once, before the loop; the loop does the two mat-vecs.
    assert outside.count("stablehlo.sine") == 1 and "stablehlo.sine" not in inside
    assert outside.count("stablehlo.transpose") == 1 and "stablehlo.transpose" not in inside
    assert outside.count("stablehlo.dot_general") == 1
    assert inside.count("stablehlo.dot_general") == 2
    # A broadcast grows its operand: it stays in the loop, for XLA to fuse.
    assert "stablehlo.broadcast_in_dim" in inside
    h, want = h0, []
    for x in xs:
        h = np.tanh(np.sin(w) @ h + (u @ u.T) @ h + x + b)
        want.append(h)
    got_h, got_ys = f(w, u, b, h0, xs)
    np.testing.assert_allclose(np.asarray(got_ys), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(got_h), want[-1], rtol=1e-5, atol=1e-6)


def _invariant_loss(w, h0, xs, unroll=1):
    def cell(h, x):
        h = lax.tanh(lax.dot(lax.sin(w), h) + x)
        return h, h

    h, ys = lax.scan(cell, h0, xs, unroll=unroll)
    return lax.reduce_sum(ys * ys, (0, 1)) + lax.reduce_sum(h, (0,))


def test_scan_grad_recomputes_invariant_residuals_instead_of_stacking():
    w, h0, xs = _rand(3, 3), _rand(3, seed=1), _rand(5, 3, seed=2)
    grads = []
    for unroll in (1, 2):  # 2: two steps per trip, the fifth after the loop
        loss = functools.partial(_invariant_loss, unroll=unroll)
        # sin(w) and cos(w) (its derivative) are not saved once per step, as f32[5,3,3]...
        jaxpr = make_jaxpr(ad.grad(loss))(w, h0, xs)
        scans = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
        assert len(scans) == 2
        assert all(v.aval.shape != (5, 3, 3) for e in scans for v in e.outvars)
        # ...and the loops compute neither: each is computed before its loop.
        g = jit(ad.grad(loss))
        lowered = g.lower(w, h0, xs)
        outside, inside = _ops_outside_and_inside_loops(lowered)
        assert outside.count("stablehlo.while") == 2
        for op in ("stablehlo.sine", "stablehlo.cosine"):
            assert op in outside and op not in inside, op
        assert "5x3x3" not in lowered.as_text()
        grads.append(np.asarray(g(w, h0, xs)))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)
    # Reverse mode is what goes through partial evaluation (forward: `test_scan_grads`).
    check_grads(jit(_invariant_loss), (w, h0, xs), order=2, modes=("rev",))


def test_while_lowering_computes_loop_invariants_before_the_loop():
    w = _rand(3, 3)

    def f(n, x):
        return lax.fori_loop(0, n, lambda i, x: lax.dot(lax.cos(w), x) + 1.0, x)

    outside, inside = _ops_outside_and_inside_loops(jit(f).lower(np.int32(3), _rand(3)))
    assert outside.count("stablehlo.cosine") == 1 and "stablehlo.cosine" not in inside
    assert inside.count("stablehlo.dot_general") == 1
    x, want = _rand(3, seed=1), _rand(3, seed=1)
    for _ in range(3):
        want = np.cos(w) @ want + 1.0
    np.testing.assert_allclose(np.asarray(jit(f)(np.int32(3), x)), want, rtol=1e-5)


# ---------------------------------------------------------------------------
# while_loop / fori_loop


def _collatz_steps(n):
    return lax.while_loop(
        lambda c: c[0] != 1,
        lambda c: (lax.select(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1), c[1] + 1),
        (n, np.int32(0)),
    )[1]


def _py_collatz(n):
    k = 0
    while n != 1:
        n, k = (n // 2 if n % 2 == 0 else 3 * n + 1), k + 1
    return k


def test_while_values_and_jit():
    assert int(lax.while_loop(lambda x: x < 10, lambda x: x * 2, 1)) == 16
    for n in [1, 6, 7]:
        assert int(_collatz_steps(np.int32(n))) == _py_collatz(n)
    assert int(jit(_collatz_steps)(np.int32(27))) == _py_collatz(27)


def test_while_vmap_batched_predicate():
    ns = np.array([1, 6, 7, 27, 3], np.int32)
    got = batching.vmap(_collatz_steps)(ns)
    np.testing.assert_array_equal(np.asarray(got), [_py_collatz(int(n)) for n in ns])


def test_while_vmap_unbatched_predicate():
    f = lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, x))  # noqa: E731
    xs = _rand(4)
    got = batching.vmap(f)(xs)[1]
    np.testing.assert_allclose(np.asarray(got), xs**4, rtol=1e-5)


def _sin3(x):
    return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, lax.sin(c[1])), (0, x))[1]


def test_while_jvp_and_reverse_error():
    x = np.float32(0.8)
    check_grads(_sin3, (x,), order=2, modes=("fwd",))
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        ad.grad(_sin3)(x)


def test_while_dce_drops_unneeded_carry():
    from polyjax_core.jaxpr_eval import eval_jaxpr
    from polyjax_interpreters import partial_eval as pe

    def f(x):
        return lax.while_loop(
            lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * 2.0, lax.sin(c[2])), (0, x, x)
        )

    closed = make_jaxpr(f)(np.float32(0.5))
    pruned, _ = pe.dce_jaxpr(closed.jaxpr, [False, True, False], instantiate=True)
    assert "sin" not in str(pruned.eqns[-1].params["body_jaxpr"])
    (got,) = eval_jaxpr(pruned, closed.consts, np.float32(0.5))
    assert float(got) == 8.0


def test_fori_loop():
    assert float(lax.fori_loop(0, 5, lambda i, x: x + i, 0.0)) == 10.0
    assert float(jit(lambda n: lax.fori_loop(0, n, lambda i, x: x + i, 0.0))(np.int32(5))) == 10.0
    # Static bounds: a scan, so reverse mode works.
    g = lambda x: lax.fori_loop(1, 4, lambda i, x: lax.sin(x) * x + i, x)  # noqa: E731
    assert "scan[" in str(make_jaxpr(g)(np.float32(0.5)))
    check_grads(jit(g), (np.float32(0.7),), order=2)
    text = str(make_jaxpr(lambda n, x: lax.fori_loop(0, n, lambda i, x: x * 2.0, x))(3, 1.0))
    assert "while[" in text


# ---------------------------------------------------------------------------
# map / associative_scan


@pytest.mark.parametrize("batch_size", [None, 2, 3, 7, 10])
def test_map(batch_size):
    xs = _rand(7, 2)
    got = lax.map(lambda x: {"s": lax.sin(x)}, xs, batch_size=batch_size)
    np.testing.assert_allclose(np.asarray(got["s"]), np.sin(xs), rtol=1e-6)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan(n, reverse):
    y = np.arange(1, n + 1, dtype=f32)
    got = lax.associative_scan(lax.add, y, reverse=reverse)
    want = np.cumsum(y[::-1])[::-1] if reverse else np.cumsum(y)
    np.testing.assert_allclose(np.asarray(got), want)


def test_associative_scan_axis_and_pytree():
    m = np.abs(_rand(3, 6)) + 0.5
    got = lax.associative_scan(lambda a, b: (a[0] * b[0], lax.max(a[1], b[1])), (m, m), axis=1)
    np.testing.assert_allclose(np.asarray(got[0]), np.cumprod(m, 1), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got[1]), np.maximum.accumulate(m, 1))


def test_scan_symbolic_length_traces_and_lowers():
    from polyjax_core import symbolic_dims as sd
    from polyjax_core.abstract_values import ShapedArray, ShapeDtypeStruct
    from polyjax_core.jaxpr_tracing import trace_to_jaxpr

    n = sd.symbolic_dim("n")

    def f(h, xs):
        c, ys = lax.scan(lambda c, x: (lax.sin(c) * x, c * 2.0), h, xs, reverse=True)
        return lax.reduce_sum(ys, (0, 1)) + lax.reduce_sum(c, (0,))

    avals = [ShapedArray((3,), f32), ShapedArray((n, 3), f32)]
    g = trace_to_jaxpr(lambda h, x: [ad.grad(f, argnums=1)(h, x)], avals)
    assert g.jaxpr.outvars[0].aval.shape == (n, 3)
    v = trace_to_jaxpr(
        lambda h, x: [batching.vmap(f, (None, 1))(h, x)], [avals[0], ShapedArray((n, 4, 3), f32)]
    )
    assert v.jaxpr.outvars[0].aval.shape == (4,)
    text = jit(f).lower(ShapeDtypeStruct((3,), f32), ShapeDtypeStruct((n, 3), f32)).as_text()
    assert "stablehlo.while" in text and 'jax.global_constant = "n"' in text
