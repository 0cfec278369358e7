"""Tracing Python functions into jaxprs, printing, evaluating and checking them."""

import threading

import numpy as np
import pytest

from polyjax_core import config
from polyjax_core.abstract_values import ShapedArray, ShapeDtypeStruct
from polyjax_core.dce import dce_jaxpr
from polyjax_core.effects import Effect
from polyjax_core.errors import JaxprTypeError
from polyjax_core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, jaxprs_in_params
from polyjax_core.jaxpr_check import check_jaxpr
from polyjax_core.jaxpr_eval import eval_jaxpr, jaxpr_as_fun
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_core.primitive import Primitive
from polyjax_core.tracing import EvalTrace, current_trace

f32 = np.float32


def test_prints_like_jax(toy):
    jaxpr = make_jaxpr(lambda x: toy.sin.bind(x))(np.zeros(3, f32))
    assert str(jaxpr) == "{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }"


def test_long_jaxpr_prints_one_equation_per_line(toy):
    def f(x, y):
        z = toy.sin.bind(x) * 3.0
        return toy.reduce_sum.bind(z + y, axes=(0,))

    text = str(make_jaxpr(f)(np.zeros(8, f32), np.ones(8, f32)))
    assert text == (
        "{ lambda ; a:f32[8] b:f32[8]. let\n"
        "    c:f32[8] = sin a\n"
        "    d:f32[8] = mul c 3.0:f32[]\n"
        "    e:f32[8] = add d b\n"
        "    f:f32[] = reduce_sum[axes=(0,)] e\n"
        "  in (f,) }"
    )


def _one_line_from_multi_line(text: str) -> str:
    """JAX's rule: a jaxpr that fits prints its equations on one line, separated by `; `."""
    head, *eqns, tail = text.split("\n")
    return f"{head} {'; '.join(e.strip() for e in eqns)} {tail.strip()}"


@pytest.mark.parametrize("n_eqns", [1, 2, 3, 5])
def test_one_line_form_is_the_multi_line_form_joined_with_semicolons(toy, n_eqns):
    def f(x, y):
        for _ in range(n_eqns):
            x = x * y
        return x

    closed = make_jaxpr(f)(f32(1.0), f32(2.0))
    one_line, multi_line = closed.pretty_print(width=10_000), closed.pretty_print(width=1)
    assert "\n" not in one_line and multi_line.count("\n") == n_eqns + 1
    assert one_line == _one_line_from_multi_line(multi_line)
    # str() uses JAX's width of 80 columns.
    assert str(closed) == str(closed.jaxpr) == (one_line if len(one_line) <= 80 else multi_line)
    if n_eqns == 2:  # the example, as JAX prints it
        assert (
            one_line
            == "{ lambda ; a:f32[] b:f32[]. let c:f32[] = mul a b; d:f32[] = mul c b in (d,) }"
        )


def test_closures_over_constants(toy):
    table = np.arange(3, dtype=f32)

    def f(x):
        return x * table + 2  # array constant hoisted, int scalar inline

    closed = make_jaxpr(f)(np.ones(3, f32))
    assert len(closed.consts) == 1 and closed.consts[0] is table
    assert len(closed.jaxpr.constvars) == 1
    assert "2:i32[]" in str(closed)
    x = np.full(3, 5.0, f32)
    np.testing.assert_allclose(jaxpr_as_fun(closed)(x)[0], x * table + 2)


def test_constant_used_twice_is_hoisted_once(toy):
    c = np.ones(4, f32)
    closed = make_jaxpr(lambda x: x * c + c)(np.ones(4, f32))
    assert len(closed.consts) == 1


def test_nested_python_functions_inline(toy):
    def inner(y):
        return toy.cos.bind(toy.sin.bind(y))

    def outer(x):
        return inner(x) * inner(x)

    closed = make_jaxpr(outer)(f32(1.0))
    prims = [e.primitive.name for e in closed.eqns]
    assert prims == ["sin", "cos", "sin", "cos", "mul"]
    np.testing.assert_allclose(
        jaxpr_as_fun(closed)(f32(0.3))[0], np.cos(np.sin(f32(0.3))) ** 2, rtol=1e-6
    )


def test_pytrees_in_and_out(toy):
    def f(params, x):
        return {"y": params["w"] * x, "z": (x, params["b"])}

    params = {"w": np.ones(2, f32), "b": f32(3.0)}
    closed, shapes = make_jaxpr(f, return_shape=True)(params, np.zeros(2, f32))
    # dict children are flattened in sorted key order: b, w, then x.
    assert [v.aval.str_short(short_dtypes=True) for v in closed.jaxpr.invars] == [
        "f32[]",
        "f32[2]",
        "f32[2]",
    ]
    assert len(closed.jaxpr.outvars) == 3
    assert shapes == {
        "y": ShapeDtypeStruct((2,), f32),
        "z": (ShapeDtypeStruct((2,), f32), ShapeDtypeStruct((), f32)),
    }


def test_keyword_arguments_are_traced(toy):
    closed = make_jaxpr(lambda x, *, y: x * y)(f32(1.0), y=np.ones(3, f32))
    assert [v.aval.shape for v in closed.jaxpr.invars] == [(), (3,)]


def test_static_argnums(toy):
    def f(x, n):
        for _ in range(n):
            x = toy.sin.bind(x)
        return x

    closed = make_jaxpr(f, static_argnums=1)(f32(1.0), 3)
    assert [e.primitive.name for e in closed.eqns] == ["sin"] * 3
    assert len(closed.jaxpr.invars) == 1
    with pytest.raises(ValueError, match="static_argnums"):
        make_jaxpr(f, static_argnums=5)(f32(1.0), 3)


def test_shape_dtype_struct_arguments(toy):
    closed = make_jaxpr(lambda x: toy.sin.bind(x))(ShapeDtypeStruct((2, 5), np.float16))
    assert closed.in_avals == [ShapedArray((2, 5), np.float16)]


def test_weak_types_of_python_scalars(toy):
    closed = make_jaxpr(lambda x: x)(1.5)
    assert closed.in_avals[0] == ShapedArray((), f32, weak_type=True)
    with config.enable_x64(True):
        closed64 = make_jaxpr(lambda x: x)(1.5)
    assert closed64.in_avals[0].dtype == np.float64


def test_outputs_may_be_inputs_or_constants(toy):
    closed = make_jaxpr(lambda x: (x, 2.0, np.ones(2, f32)))(f32(1.0))
    assert closed.jaxpr.outvars[0] is closed.jaxpr.invars[0]
    assert str(closed) == "{ lambda a:f32[2]; b:f32[]. let  in (b, 2.0:f32[], a) }"
    out = jaxpr_as_fun(closed)(f32(4.0))
    assert out[0] == 4.0 and out[1] == 2.0
    np.testing.assert_array_equal(out[2], np.ones(2, f32))


def test_invalid_output_type_is_rejected(toy):
    with pytest.raises(TypeError, match="not a valid JAX type"):
        make_jaxpr(lambda x: "text")(f32(1.0))


# ---------------------------------------------------------------------------
# Higher-order primitives: sub-jaxprs in params


def _toy_call(toy, fun, *args):
    closed = make_jaxpr(fun)(*args)
    return toy.call.bind(*closed.consts, *args, jaxpr=_close_consts(closed))


def _close_consts(closed):
    """The jaxpr with its constvars turned into leading invars (as jit does)."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.outvars, j.eqns), [])


def test_sub_jaxprs_print_indented_and_evaluate(toy):
    def f(x):
        (y,) = _toy_call(toy, lambda a: toy.sin.bind(a) * 2.0, x)
        return toy.cos.bind(y)

    closed = make_jaxpr(f)(np.ones(3, f32))
    text = str(closed)
    assert text == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = toy_call[\n"
        "      jaxpr={ lambda ; c:f32[3]. let\n"
        "          d:f32[3] = sin c\n"
        "          e:f32[3] = mul d 2.0:f32[]\n"
        "        in (e,) }\n"
        "    ] a\n"
        "    f:f32[3] = cos b\n"
        "  in (f,) }"
    )
    check_jaxpr(closed)
    x = np.linspace(0, 1, 3, dtype=f32)
    np.testing.assert_allclose(jaxpr_as_fun(closed)(x)[0], np.cos(np.sin(x) * 2), rtol=1e-6)


def test_print_params_chooses_the_printed_params(toy, monkeypatch):
    closed = make_jaxpr(lambda x: toy.reduce_sum.bind(x, axes=(0,)))(np.ones(3, f32))
    assert "reduce_sum[axes=(0,)] a" in str(closed)
    monkeypatch.setattr(toy.reduce_sum, "print_params", lambda p: {})
    assert "= reduce_sum a" in str(closed)


def test_tuple_of_sub_jaxprs(toy):
    branches = tuple(
        _close_consts(make_jaxpr(b)(f32(0.0)))
        for b in (lambda a: toy.sin.bind(a), lambda a: toy.cos.bind(a))
    )

    def f(i, x):
        return toy.switch.bind(i, x, branches=branches)

    closed = make_jaxpr(f)(np.int32(0), f32(0.0))
    (eqn,) = closed.eqns
    assert list(jaxprs_in_params(eqn.params)) == list(branches)
    check_jaxpr(closed)
    assert jaxpr_as_fun(closed)(np.int32(1), f32(0.5))[0] == pytest.approx(np.cos(0.5))
    assert "branches=(" in str(closed)


def test_closure_over_an_outer_tracer(toy):
    def outer(x):
        inner = make_jaxpr(lambda y: y * x)(f32(1.0))
        # The outer tracer `x` became a const of the inner jaxpr.
        assert len(inner.consts) == 1 and inner.consts[0] is x
        return toy.call.bind(*inner.consts, f32(2.0), jaxpr=_close_consts(inner))[0]

    closed = make_jaxpr(outer)(f32(3.0))
    check_jaxpr(closed)
    assert jaxpr_as_fun(closed)(f32(3.0))[0] == 6.0


# ---------------------------------------------------------------------------
# eval_jaxpr


def test_eval_jaxpr_matches_numpy(toy):
    def f(x, y):
        return toy.sin.bind(x) * y + x

    x, y = np.linspace(-1, 1, 5, dtype=f32), np.arange(5, dtype=f32)
    closed = make_jaxpr(f)(x, y)
    (out,) = eval_jaxpr(closed.jaxpr, closed.consts, x, y)
    np.testing.assert_allclose(out, np.sin(x) * y + x, rtol=1e-6)
    with pytest.raises(TypeError, match="takes 0 consts and 2 args"):
        eval_jaxpr(closed.jaxpr, closed.consts, x)


def test_eval_jaxpr_under_a_trace_retraces(toy):
    closed = make_jaxpr(lambda x: toy.sin.bind(x) * 2.0)(f32(1.0))
    again = make_jaxpr(jaxpr_as_fun(closed))(f32(1.0))
    assert str(again) == str(closed)


# ---------------------------------------------------------------------------
# check_jaxpr


def _declared(closed, eqn_index, aval):
    eqn = closed.jaxpr.eqns[eqn_index]
    bad = eqn.replace(outvars=[Var(aval)])
    eqns = list(closed.jaxpr.eqns)
    eqns[eqn_index] = bad
    outvars = [bad.outvars[0] if v is eqn.outvars[0] else v for v in closed.jaxpr.outvars]
    return closed.jaxpr.replace(eqns=eqns, outvars=outvars)


def test_check_jaxpr_names_the_offending_equation(toy):
    def f(x):
        return toy.sin.bind(x)  # the line the error must name

    line = f.__code__.co_firstlineno + 1
    closed = make_jaxpr(f)(np.ones(3, f32))
    bad = _declared(closed, 0, ShapedArray((), np.int32))
    with pytest.raises(JaxprTypeError) as info:
        check_jaxpr(bad)
    msg = str(info.value)
    assert "'sin' applied to (f32[3]) produces f32[3], but the equation declares i32[]" in msg
    assert "b:i32[] = sin a" in msg
    assert f"test_tracing.py:{line} (f)" in msg


def test_check_jaxpr_use_before_definition(toy):
    closed = make_jaxpr(lambda x: toy.cos.bind(toy.sin.bind(x)))(f32(1.0))
    j = closed.jaxpr
    swapped = j.replace(eqns=[j.eqns[1], j.eqns[0]])
    with pytest.raises(JaxprTypeError, match="used before it is defined"):
        check_jaxpr(swapped)


def test_check_jaxpr_rejects_bad_inputs_to_a_rule(toy):
    x = Var(ShapedArray((3,), f32))
    y = Var(ShapedArray((4,), f32))
    out = Var(ShapedArray((3,), f32))
    eqn = JaxprEqn([x, y], [out], toy.add, {})
    with pytest.raises(
        JaxprTypeError, match=r"'add' rejects the input types \(f32\[3\], f32\[4\]\)"
    ):
        check_jaxpr(Jaxpr([], [x, y], [out], [eqn]))


def test_check_jaxpr_recurses_into_sub_jaxprs(toy):
    inner = make_jaxpr(lambda a: toy.sin.bind(a))(f32(1.0))
    bad_inner = ClosedJaxpr(_declared(inner, 0, ShapedArray((2,), f32)), [])
    x = Var(ShapedArray((), f32))
    out = Var(ShapedArray((2,), f32))
    outer = Jaxpr([], [x], [out], [JaxprEqn([x], [out], toy.call, {"jaxpr": bad_inner})])
    with pytest.raises(JaxprTypeError, match="In a sub-jaxpr of primitive 'toy_call'"):
        check_jaxpr(outer)


def test_enable_checks_checks_every_trace(toy):
    bad = Primitive("bad")
    calls = []

    def rule(x):  # a shape rule that contradicts itself from one call to the next
        calls.append(1)
        return ShapedArray((len(calls) % 2,), x.dtype)

    bad.def_abstract_eval(rule)
    make_jaxpr(lambda x: bad.bind(x))(f32(1.0))  # checks off: nothing re-runs the rule
    assert len(calls) == 1
    with config.enable_checks(True), pytest.raises(JaxprTypeError):
        make_jaxpr(lambda x: bad.bind(x))(f32(1.0))


# ---------------------------------------------------------------------------
# Dead-code elimination


class _Log(Effect):
    pass


def test_dce_removes_unused_equations_and_inputs(toy):
    def f(x, y):
        unused = toy.cos.bind(y)  # noqa: F841
        return toy.sin.bind(x), toy.cos.bind(x)

    closed = make_jaxpr(f)(f32(1.0), f32(2.0))
    pruned, used_inputs = dce_jaxpr(closed.jaxpr, [True, False])
    assert [e.primitive.name for e in pruned.eqns] == ["sin"]
    assert used_inputs == [True, False]
    assert len(pruned.invars) == 1 and len(pruned.outvars) == 1
    kept, used_inputs = dce_jaxpr(closed.jaxpr, [True, False], instantiate=True)
    assert used_inputs == [True, True] and len(kept.invars) == 2
    check_jaxpr(pruned)


def test_dce_keeps_effectful_equations(toy):
    log_p = Primitive("log_effect")
    log_p.def_effectful_abstract_eval(lambda x: (ShapedArray(x.shape, x.dtype), {_Log()}))
    closed = make_jaxpr(lambda x: (log_p.bind(x), x)[1])(f32(1.0))
    assert closed.jaxpr.effects
    pruned, _ = dce_jaxpr(closed.jaxpr, [True])
    assert [e.primitive.name for e in pruned.eqns] == ["log_effect"]


def test_dce_prunes_inside_sub_jaxprs(toy):
    def body(a):
        toy.cos.bind(a)  # dead inside the body
        return toy.sin.bind(a)

    def f(x):
        return _toy_call(toy, body, x)[0]

    closed = make_jaxpr(f)(f32(1.0))
    inner_before = closed.eqns[0].params["jaxpr"]
    assert len(inner_before.eqns) == 2
    pruned, _ = dce_jaxpr(closed.jaxpr, [True])
    assert len(pruned.eqns[0].params["jaxpr"].eqns) == 1
    assert len(inner_before.eqns) == 2  # the original is untouched
    assert jaxpr_as_fun(ClosedJaxpr(pruned, []))(f32(0.5))[0] == pytest.approx(np.sin(0.5))


def _last_input_primitive(rule_drops_flags: bool = False) -> Primitive:
    """`last(*xs) = xs[-1]`, with a DCE rule that drops every other input."""
    from polyjax_core.dce import dce_rules

    last_p = Primitive("last")
    last_p.def_abstract_eval(lambda *avals: avals[-1])
    last_p.def_impl(lambda *xs: xs[-1])

    def dce(used_outputs, eqn):
        flags = [False] * (len(eqn.invars) - 1) + [True]
        return (flags[-1:] if rule_drops_flags else flags), eqn.replace(invars=eqn.invars[-1:])

    dce_rules[last_p] = dce
    return last_p


def test_dce_rule_flags_refer_to_the_original_inputs(toy):
    # The rule keeps only the last input: its producer must survive, the others go
    # (the flags were once read against the new equation's inputs, which dropped it).
    last_p = _last_input_primitive()

    def f(x, y):
        return last_p.bind(toy.sin.bind(x), toy.cos.bind(y))

    closed = make_jaxpr(f)(f32(1.0), f32(2.0))
    pruned, used_inputs = dce_jaxpr(closed.jaxpr, [True])
    assert [e.primitive.name for e in pruned.eqns] == ["cos", "last"]
    assert used_inputs == [False, True]
    check_jaxpr(pruned)
    assert jaxpr_as_fun(ClosedJaxpr(pruned, []))(f32(2.0))[0] == pytest.approx(np.cos(2.0))


def test_dce_rule_with_wrong_number_of_flags():
    last_p = _last_input_primitive(rule_drops_flags=True)
    closed = make_jaxpr(lambda x, y: last_p.bind(x, y))(f32(1.0), f32(2.0))
    with pytest.raises(ValueError, match="returned 1 used-input flags .* 2 inputs"):
        dce_jaxpr(closed.jaxpr, [True])


# ---------------------------------------------------------------------------
# The current-trace context


def test_bind_outside_any_trace_evaluates(toy):
    assert isinstance(current_trace(), EvalTrace)
    np.testing.assert_allclose(toy.sin.bind(np.ones(2, f32)), np.sin(np.ones(2, f32)))


def test_missing_impl_and_abstract_eval_are_named():
    p = Primitive("nothing_yet")
    with pytest.raises(NotImplementedError, match="Evaluation rule for primitive 'nothing_yet'"):
        p.bind(1.0)
    with pytest.raises(
        NotImplementedError, match="Abstract evaluation for primitive 'nothing_yet'"
    ):
        make_jaxpr(lambda x: p.bind(x))(1.0)


def test_two_threads_trace_at_once(toy):
    barrier = threading.Barrier(2, timeout=10)
    results = {}

    def worker(name, prim, n):
        def f(x):
            for _ in range(n):
                x = prim.bind(x)
                barrier.wait()  # interleave the two traces step by step
            return x

        results[name] = make_jaxpr(f)(f32(1.0))

    threads = [
        threading.Thread(target=worker, args=("sin", toy.sin, 3)),
        threading.Thread(target=worker, args=("cos", toy.cos, 3)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [e.primitive.name for e in results["sin"].eqns] == ["sin"] * 3
    assert [e.primitive.name for e in results["cos"].eqns] == ["cos"] * 3


def test_retraced_equations_keep_the_users_line(toy):
    def f(x):
        return toy.sin.bind(x)  # the line every copy must keep

    line = f.__code__.co_firstlineno + 1
    closed = make_jaxpr(f)(f32(1.0))
    again = make_jaxpr(jaxpr_as_fun(closed))(f32(1.0))
    (eqn,) = again.eqns
    assert (eqn.source_info.frame.function_name, eqn.source_info.frame.line) == ("f", line)
    assert f"test_tracing.py:{line} (f)" in again.pretty_print(source_info=True)


def test_symbolic_shapes_trace_and_print(toy):
    from polyjax_core.symbolic_dims import symbolic_dim

    b = symbolic_dim("b")
    closed = make_jaxpr(lambda x, y: (toy.sin.bind(x), y * 2.0))(
        ShapeDtypeStruct((b, 3), f32), ShapeDtypeStruct((2 * b,), f32)
    )
    assert str(closed) == (
        "{ lambda ; a:f32[b,3] b:f32[2*b]. let\n"
        "    c:f32[b,3] = sin a\n"
        "    d:f32[2*b] = mul b 2.0:f32[]\n"
        "  in (c, d) }"
    )
    check_jaxpr(closed)


def test_params_print_sorted_by_name_unless_the_primitive_orders_them(toy):
    p = Primitive("toy_params")
    p.def_impl(lambda x, **params: x)
    p.def_abstract_eval(lambda x, **params: x)
    closed = make_jaxpr(lambda x: p.bind(x, zeta=1, alpha=2, mid=3))(f32(1.0))
    assert (
        str(closed)
        == "{ lambda ; a:f32[]. let b:f32[] = toy_params[alpha=2 mid=3 zeta=1] a in (b,) }"
    )
    p.print_params = lambda params: {"zeta": params["zeta"], "mid": params["mid"]}
    closed = make_jaxpr(lambda x: p.bind(x, zeta=1, alpha=2, mid=3))(f32(1.0))
    assert "toy_params[zeta=1 mid=3] a" in str(closed)


def test_a_callee_jaxpr_is_named_after_the_call(toy):
    from polyjax_core.jaxpr import CalleeJaxpr

    inner = make_jaxpr(lambda y: toy.sin.bind(y))(f32(1.0))
    p = Primitive("toy_callee")
    p.def_impl(lambda x, *, jaxpr: x)
    p.def_abstract_eval(lambda x, *, jaxpr: x)
    p.print_params = lambda params: {"jaxpr": CalleeJaxpr(params["jaxpr"])}
    closed = make_jaxpr(lambda x: toy.sin.bind(p.bind(toy.sin.bind(x), jaxpr=inner)))(f32(1.0))
    # Inputs and outputs take the call's names (b, c); the rest continue (d), as in JAX.
    assert str(closed.jaxpr.pretty_print(width=1000)) == (
        "{ lambda ; a:f32[]. let b:f32[] = sin a; "
        "c:f32[] = toy_callee[jaxpr={ lambda ; b:f32[]. let c:f32[] = sin b in (c,) }] b; "
        "d:f32[] = sin c in (d,) }"
    )
