"""Partial evaluation: known/unknown splitting, residuals, DCE, the jit rules."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

from polyjax_core.dce import dce_jaxpr
from polyjax_core.jaxpr import ClosedJaxpr
from polyjax_core.jaxpr_check import check_jaxpr
from polyjax_core.jaxpr_eval import eval_jaxpr
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_interpreters import ad
from polyjax_interpreters import partial_eval as pe
from polyjax_interpreters.jit import jit, jit_p
from polyjax_interpreters.remat import checkpoint


def _run_split(closed, unknowns, instantiate, args):
    """Runs the known then the unknown jaxpr; returns outputs in the original order."""
    known, unknown, out_uk, res_avals = pe.partial_eval_jaxpr_nounits(closed, unknowns, instantiate)
    check_jaxpr(known)
    check_jaxpr(unknown)
    k_args = [a for a, u in zip(args, unknowns) if not u]
    u_args = [a for a, u in zip(args, unknowns) if u]
    k_outs = eval_jaxpr(known.jaxpr, known.consts, *k_args)
    n_known = len(k_outs) - len(res_avals)
    known_outs, residuals = k_outs[:n_known], k_outs[n_known:]
    assert [np.shape(r) for r in residuals] == [a.shape for a in res_avals]
    u_outs = eval_jaxpr(unknown.jaxpr, unknown.consts, *residuals, *u_args)
    kit, uit = iter(known_outs), iter(u_outs)
    return [next(uit) if u else next(kit) for u in out_uk], out_uk, known, unknown, res_avals


def _prims(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


@pytest.fixture
def f3(toy):
    def f(x, y):
        a = toy.sin(x)
        b = toy.mul(a, y)
        c = toy.mul(b, toy.sin(a))
        return c, a, toy.add(x, 2.0)

    return f


X = np.array([0.5, 1.0, -2.0], np.float32)
Y = np.array([3.0, -1.0, 0.25], np.float32)


@pytest.mark.parametrize(
    "unknowns, instantiate, expect_out_uk",
    [
        ([False, True], False, [True, False, False]),
        ([False, True], True, [True, True, True]),
        ([False, True], [False, True, False], [True, True, False]),
        ([True, False], False, [True, True, True]),
        ([False, False], False, [False, False, False]),
        ([True, True], False, [True, True, True]),
        ([False, False], [True, False, False], [True, False, False]),
    ],
)
def test_split_matches_whole(f3, unknowns, instantiate, expect_out_uk):
    closed = make_jaxpr(f3)(X, Y)
    want = eval_jaxpr(closed.jaxpr, closed.consts, X, Y)
    got, out_uk, *_ = _run_split(closed, unknowns, instantiate, [X, Y])
    assert out_uk == expect_out_uk
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_known_part_and_residuals(f3):
    closed = make_jaxpr(f3)(X, Y)
    known, unknown, out_uk, res_avals = pe.partial_eval_jaxpr_nounits(closed, [False, True], False)
    # Every sin and the add are known; the two muls read y, so they are unknown.
    assert _prims(known) == ["sin", "sin", "add"]
    assert _prims(unknown) == ["mul", "mul"]
    # Residuals: sin(x) and sin(sin(x)); known outputs come first.
    assert len(res_avals) == 2
    assert len(known.jaxpr.outvars) == 2 + 2
    # The unknown jaxpr takes residuals, then y.
    assert len(unknown.jaxpr.invars) == 3
    assert not unknown.consts


def test_residuals_deduplicated_literals_inline(toy):
    def f(x, y):
        s = toy.sin(x)
        # s is read by three unknown equations, and 3.0 is a literal.
        return toy.add(toy.mul(s, y), toy.mul(toy.mul(s, y), s)), toy.mul(y, 3.0)

    closed = make_jaxpr(f)(np.float32(1.0), np.float32(2.0))
    known, unknown, _, res_avals = pe.partial_eval_jaxpr_nounits(closed, [False, True], False)
    assert len(res_avals) == 1
    assert known.jaxpr.outvars == [known.jaxpr.eqns[0].outvars[0]]
    # No literal became a residual or a const.
    assert not unknown.consts and not known.consts


def test_forced_known_input_and_constant_output(toy):
    def f(x, y):
        return toy.mul(x, y), 2.0, y

    closed = make_jaxpr(f)(np.float32(1.0), np.float32(2.0))
    got, out_uk, known, unknown, res = _run_split(
        closed, [True, False], [False, True, True], [np.float32(3.0), np.float32(5.0)]
    )
    assert out_uk == [True, True, True]
    assert [float(np.asarray(g)) for g in got] == [15.0, 2.0, 5.0]
    # y is known: it is forwarded as a residual, and the literal output stays inline.
    assert len(res) == 1 and not known.jaxpr.eqns


def test_unused_residuals_and_equations_pruned(toy):
    def f(x, y):
        dead = toy.sin(toy.sin(x))  # noqa: F841 (never used)
        s = toy.sin(x)
        u = toy.mul(s, y)
        toy.mul(toy.sin(s), y)  # unknown, unused: pruned, and its residual with it
        return (u,)

    closed = make_jaxpr(f)(np.float32(1.0), np.float32(2.0))
    assert len(closed.jaxpr.eqns) == 6
    known, unknown, _, res_avals = pe.partial_eval_jaxpr_nounits(closed, [False, True], False)
    assert _prims(known) == ["sin"]
    assert _prims(unknown) == ["mul"]
    assert len(res_avals) == 1


def test_consts_are_known(toy):
    c = np.arange(3, dtype=np.float32)

    def f(x, y):
        return (toy.mul(toy.sin(c), toy.add(x, y)), toy.add(x, c))

    closed = make_jaxpr(f)(X, Y)
    assert len(closed.consts) == 1
    want = eval_jaxpr(closed.jaxpr, closed.consts, X, Y)
    got, out_uk, known, unknown, _ = _run_split(closed, [False, True], False, [X, Y])
    assert out_uk == [True, False]
    assert not unknown.consts  # consts reach the unknown side as residuals
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_cached_weakly_on_the_jaxpr(f3):
    closed = make_jaxpr(f3)(X, Y)
    first = pe.partial_eval_jaxpr_nounits(closed, [False, True], False)
    again = pe.partial_eval_jaxpr_nounits(closed, (False, True), [False, False, False])
    assert first[0] is again[0] and first[1] is again[1]
    other = pe.partial_eval_jaxpr_nounits(closed, [True, False], False)
    assert other[0] is not first[0]
    ref = weakref.ref(closed)
    del closed, first, again, other
    gc.collect()
    assert ref() is None


def test_bad_flags(f3):
    closed = make_jaxpr(f3)(X, Y)
    with pytest.raises(ValueError, match="unknowns"):
        pe.partial_eval_jaxpr_nounits(closed, [True], False)
    with pytest.raises(ValueError, match="instantiate"):
        pe.partial_eval_jaxpr_nounits(closed, [True, False], [True])


# ---------------------------------------------------------------------------
# jit


def _jit_eqns(closed):
    return [e for e in closed.jaxpr.eqns if e.primitive is jit_p]


def test_jit_split_into_known_and_unknown_jits(toy):
    @jit
    def inner(x, y):
        s = toy.sin(x)
        return toy.mul(s, y), toy.sin(s)

    def f(x, y):
        a, b = inner(x, y)
        return toy.add(a, b), b

    closed = make_jaxpr(f)(X, Y)
    want = eval_jaxpr(closed.jaxpr, closed.consts, X, Y)
    got, out_uk, known, unknown, res = _run_split(closed, [False, True], False, [X, Y])
    assert out_uk == [True, False]
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    (kj,) = _jit_eqns(known)
    (uj,) = _jit_eqns(unknown)
    assert _prims(kj.params["jaxpr"]) == ["sin", "sin"]
    assert _prims(uj.params["jaxpr"]) == ["mul"]
    # The known jit hands sin(x) over; the unknown one reads it, then y.
    assert len(res) == 2  # sin(x) from the jit, and b for the outer add
    assert len(uj.invars) == 2 and len(uj.params["donated_invars"]) == 2


def test_jit_all_known_stays_whole(toy):
    @jit
    def inner(x):
        return toy.sin(x)

    closed = make_jaxpr(lambda x, y: toy.mul(inner(x), y))(X, Y)
    known, unknown, _, _ = pe.partial_eval_jaxpr_nounits(closed, [False, True], False)
    (kj,) = _jit_eqns(known)
    assert kj.params["jaxpr"] is closed.jaxpr.eqns[0].params["jaxpr"]
    assert _prims(unknown) == ["mul"]


def test_jit_dce_prunes_outputs_inputs_and_body(toy):
    @jit
    def inner(x, y, z):
        return toy.sin(x), toy.mul(y, y), toy.sin(toy.sin(z))

    def f(x, y, z):
        a, b, c = inner(x, y, z)
        return (toy.add(a, b),)

    closed = make_jaxpr(f)(X, Y, Y)
    new, used_in = dce_jaxpr(closed.jaxpr, [True])
    assert used_in == [True, True, False]
    (eqn,) = _jit_eqns(ClosedJaxpr(new, []))
    assert len(eqn.outvars) == 2 and len(eqn.invars) == 2
    assert _prims(eqn.params["jaxpr"]) == ["sin", "mul"]
    check_jaxpr(new)
    # Nothing used: the jit goes.
    new, used_in = dce_jaxpr(closed.jaxpr, [False])
    assert not new.eqns and used_in == [False, False, False]


def test_jit_dce_keeps_the_producers_of_inputs_after_a_dropped_one(toy):
    inner = jit(lambda x, y, z: toy.mul(x, z))  # y unused: the new jit takes (x, z)

    def f(x):
        return (inner(toy.sin(x), toy.cos(x), toy.neg(x)),)

    closed = make_jaxpr(f)(X)
    new, _ = dce_jaxpr(closed.jaxpr, [True])
    assert _prims(ClosedJaxpr(new, [])) == ["sin", "neg", "jit"]
    check_jaxpr(new)
    np.testing.assert_allclose(eval_jaxpr(new, [], X)[0], -np.sin(X) * X, rtol=1e-6)


def test_jit_dce_keep_unused(toy):
    inner = jit(lambda x, y: toy.sin(x), keep_unused=True)
    closed = make_jaxpr(lambda x, y: inner(x, y))(X, Y)
    new, used_in = dce_jaxpr(closed.jaxpr, [True])
    assert used_in == [True, True]
    assert new.eqns[0] is closed.jaxpr.eqns[0]


def test_jit_dce_keeps_identity_when_nothing_changes(toy):
    inner = jit(lambda x: toy.sin(x))
    closed = make_jaxpr(lambda x: inner(x))(X)
    new, _ = dce_jaxpr(closed.jaxpr, [True])
    assert new.eqns[0] is closed.jaxpr.eqns[0]


def test_linearize_through_jit_keeps_only_the_linear_part_unknown(toy):
    f = jit(lambda x: toy.sin(toy.sin(x)))
    y, f_jvp = ad.linearize(f, X)
    np.testing.assert_allclose(np.asarray(y), np.sin(np.sin(X)), rtol=1e-6)
    t = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(np.asarray(f_jvp(t)), np.cos(np.sin(X)) * np.cos(X) * t, rtol=1e-5)
    lin = make_jaxpr(f_jvp)(t)
    (eqn,) = _jit_eqns(lin)
    # The unknown jit multiplies by the residuals cos(x), cos(sin(x)); no sin/cos.
    assert _prims(eqn.params["jaxpr"]) == ["mul", "mul"]
    assert len(eqn.invars) == 3


def test_dce_reaches_into_nested_subjaxprs(toy):
    inner = checkpoint(lambda x: (toy.sin(x), toy.cos(toy.cos(x))))

    @jit
    def f(x):
        a, b = inner(x)
        return (a,)

    closed = make_jaxpr(lambda x: f(x))(X)
    (jit_eqn,) = closed.jaxpr.eqns
    (remat_eqn,) = jit_eqn.params["jaxpr"].jaxpr.eqns
    assert len(remat_eqn.params["jaxpr"].jaxpr.eqns) == 3
    new, _ = dce_jaxpr(closed.jaxpr, [True])
    (jit_eqn,) = new.eqns
    (remat_eqn,) = jit_eqn.params["jaxpr"].jaxpr.eqns
    assert _prims(remat_eqn.params["jaxpr"]) == ["sin"]
    assert len(remat_eqn.outvars) == 1
    check_jaxpr(new)


@pytest.mark.parametrize("save_sin", [False, True])
def test_partial_eval_jaxpr_custom_policy(toy, save_sin):
    def f(x, y):
        s = toy.sin(x)
        return toy.mul(toy.cos(s), y), s

    closed = make_jaxpr(f)(X, Y)

    def saveable(eqn):
        return save_sin and eqn.primitive is toy.sin_p

    known, staged, out_uk, residuals, staged_known_ins = pe.partial_eval_jaxpr_custom(
        closed.jaxpr, [False, True], False, saveable
    )
    assert out_uk == [True, False]
    if save_sin:
        # sin(x) is saved; cos is recomputed from it; x itself is not needed.
        assert [v.aval.shape for v in residuals] == [(3,)]
        assert staged_known_ins == [False]
        assert [e.primitive.name for e in staged.eqns] == ["cos", "mul"]
    else:
        # Nothing saved: the staged side recomputes sin and cos from x.
        assert residuals == []
        assert staged_known_ins == [True]
        assert [e.primitive.name for e in staged.eqns] == ["sin", "cos", "mul"]
    # Run both parts and compare with the whole.
    k_outs = eval_jaxpr(known, [], X)
    n_res = len(residuals)
    res = k_outs[len(k_outs) - n_res :]
    known_x = [X] if staged_known_ins[0] else []
    (u,) = eval_jaxpr(staged, [], *res, *known_x, Y)
    np.testing.assert_allclose(np.asarray(u), np.cos(np.sin(X)) * Y, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(k_outs[0]), np.sin(X), rtol=1e-6)


def test_convert_constvars_jaxpr(toy):
    c = np.ones(3, np.float32)
    closed = make_jaxpr(lambda x: toy.mul(x, c))(X)
    open_ = pe.convert_constvars_jaxpr(closed.jaxpr)
    assert not open_.constvars and len(open_.invars) == 2
    (out,) = eval_jaxpr(open_, [], c, X)
    np.testing.assert_allclose(np.asarray(out), X)
