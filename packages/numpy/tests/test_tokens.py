"""Tokens (`lax.create_token`, `lax.after_all`) and the GPU-only `psend`/`precv`.

Expected jaxpr texts are JAX 0.10.2's (which ends a line that has no operands
with a space; polyjax's printer strips trailing spaces, so lines are compared
stripped).
"""

import numpy as np
import pytest

from polyjax_core import axis_env
from polyjax_core.abstract_values import AbstractToken, ShapeDtypeStruct, Token, get_aval
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_core.tree_util import tree_leaves
from polyjax_interpreters.ad import grad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax


def _lines(text):
    return [line.rstrip() for line in str(text).splitlines()]


def test_eager_tokens_are_leaves_of_type_tok():
    t = lax.create_token()
    assert type(t) is Token and type(lax.after_all(t, lax.create_token(1.0))) is Token
    assert get_aval(t) == AbstractToken() and get_aval(t).str_short() == "Tok"
    assert repr(get_aval(t)) == "AbstractToken()"
    assert tree_leaves([t, (t,)]) == [t, t]
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        lax.after_all(t, 1.0)
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        make_jaxpr(lambda x: lax.after_all(x))(1.0)


def test_jaxpr_prints_as_jax():
    f = lambda x: lax.after_all(lax.create_token(x), lax.create_token())  # noqa: E731
    assert _lines(make_jaxpr(f)(np.float32(1))) == _lines(
        "{ lambda ; a:f32[]. let\n"
        "    b:Tok = create_token \n"
        "    c:Tok = create_token \n"
        "    d:Tok = after_all b c\n"
        "  in (d,) }"
    )


def test_jit_takes_and_returns_tokens():
    f = jit(lambda t, x: (lax.after_all(t, lax.create_token()), x + 1))
    for _ in range(2):  # the second call runs the cached executable
        t, y = f(lax.create_token(), np.float32(1))
        assert type(t) is Token and float(y) == 2.0
    text = f.lower(lax.create_token(), np.float32(1)).as_text()
    assert "tensor<0xi1>" in text and "stablehlo.after_all" in text
    t, y = jit(lambda x: (lax.create_token(x), x * 2))(np.float32(3))
    assert type(t) is Token and float(y) == 6.0


def test_grad_and_vmap_through_tokens():
    def f(x):
        lax.after_all(lax.create_token(x))
        return x * x

    assert float(grad(f)(np.float32(3))) == 6.0
    assert float(grad(lambda x: jit(lambda y: (lax.create_token(y), f(y)))(x)[1])(2.0)) == 4.0
    np.testing.assert_array_equal(vmap(f)(np.arange(3, dtype=np.float32)), [0, 1, 4])


def _send_then_receive(x):
    t = lax.psend(x, "i", [(0, 1)])
    return lax.precv(t, ShapeDtypeStruct((1,), np.float32), "i", [(0, 1)])


def test_psend_precv_jaxpr_and_cpu_error():
    with axis_env.extend_axis_env([("i", 1)]):
        text = make_jaxpr(_send_then_receive)(np.ones(1, np.float32))
    assert _lines(text)[1:3] == [
        "    b:Tok = psend[axis_name=('i',) perm=((0, 1),)] a",
        "    c:f32[1] = precv[axis_name=('i',) out_shape=float32[1] perm=((0, 1),)] b",
    ]
    with pytest.raises(NameError):
        make_jaxpr(_send_then_receive)(np.ones(1, np.float32))
    with pytest.raises(NameError):  # eagerly, outside any map: an unbound axis
        lax.psend(np.ones(1, np.float32), "i", [(0, 1)])
    with axis_env.extend_axis_env([("i", 1)]):
        with pytest.raises(NotImplementedError, match="psend is currently only implemented"):
            jit(_send_then_receive)(np.ones(1, np.float32))


def test_tokens_through_control_flow_eval_shape_and_vmap_outputs():
    from polyjax_interpreters.array import device_put
    from polyjax_interpreters.jit import eval_shape

    def f(p, t, xs):
        t = lax.cond(p, lambda t: lax.after_all(t), lambda t: t, t)
        (t, s), _ = lax.scan(lambda c, x: ((lax.after_all(c[0]), c[1] + x), None), (t, 0.0), xs)
        return lax.while_loop(lambda c: c[1] < 5, lambda c: (lax.after_all(c[0]), c[1] + 1), (t, s))

    t, s = jit(f)(True, lax.create_token(), np.ones(3, np.float32))
    assert type(t) is Token and float(s) == 5.0
    assert eval_shape(lambda x: (lax.create_token(), x), 1.0)[0] == AbstractToken()
    assert type(device_put(lax.create_token())) is Token
    g = lambda x: (lax.create_token(x), x * 2)  # noqa: E731
    assert type(vmap(g, out_axes=(None, 0))(np.ones(2, np.float32))[0]) is Token
    with pytest.raises(TypeError, match="tokens are never batched"):
        vmap(g)(np.ones(2, np.float32))
