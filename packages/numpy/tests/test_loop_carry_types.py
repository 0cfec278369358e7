"""Carry types of `scan`, `while_loop` and `fori_loop`, and branch output types of
`cond`/`switch`, as JAX types them.

A weakly typed initial carry whose body output has another type is promoted with
that type (strong) and the body traced again; any other mismatch is a TypeError
naming the carry component. The expected dtypes and weak types follow JAX's
documented promotion rules; the values are plain arithmetic.
"""

import numpy as np
import pytest

from polyjax_interpreters.jit import jit
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp

F32, F16, I8, I32, C64 = (np.dtype(t) for t in ("float32", "float16", "int8", "int32", "complex64"))

# (id, initial carry, body step, expected dtype, expected weak type, value after 3 steps);
# a dtype of None means the loop must raise TypeError.
CASES = [
    ("weak_int_plus_half", 0, lambda c: c + 0.5, F32, False, 1.5),
    ("weak_int_plus_f16", 0, lambda c: c + np.float16(1), F16, False, 3.0),
    ("weak_int_plus_i8", 0, lambda c: c + jnp.int8(1), I8, False, 3),
    ("weak_int_plus_imag", 0, lambda c: c + 1j, C64, False, 3j),
    ("weak_int_plus_f32_array", 0, lambda c: c + jnp.ones((), F32), F32, False, 3.0),
    ("weak_float_times_f32", 0.0, lambda c: c * jnp.float32(1) + 1, F32, False, 3.0),
    ("weak_float_stays_weak", 0.0, lambda c: c + 1, F32, True, 3.0),
    ("weak_int_stays_weak", 0, lambda c: c + 2, I32, True, 6),
    ("strong_f32_plus_weak", jnp.float32(0), lambda c: c + 0.5, F32, False, 1.5),
    ("weak_int_to_bool", 0, lambda c: c > 1, None, None, None),
    ("weak_float_to_strong_int", 0.0, lambda c: jnp.int32(1), None, None, None),
    ("strong_int_to_float", jnp.int32(0), lambda c: c + 0.5, None, None, None),
    ("weak_float_to_vector", 0.0, lambda c: c + jnp.zeros(2), None, None, None),
]


def _scan(init, step):
    return lax.scan(lambda c, _: (step(c), None), init, length=3)[0]


def _while(init, step):
    out = lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, step(s[1])), (jnp.int32(0), init))
    return out[1]


def _fori_scan(init, step):
    return lax.fori_loop(0, 3, lambda i, c: step(c), init)


def _fori_while(init, step):  # traced bounds: the while_loop form
    return jit(lambda n: lax.fori_loop(0, n, lambda i, c: step(c), init))(3)


def _fori_unrolled(init, step):
    return lax.fori_loop(0, 3, lambda i, c: step(c), init, unroll=True)


def _scan_jit(init, step):
    return jit(lambda: _scan(init, step))()


LOOPS = [_scan, _scan_jit, _while, _fori_scan, _fori_while, _fori_unrolled]


@pytest.mark.parametrize("loop", LOOPS, ids=lambda f: f.__name__.lstrip("_"))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_weak_carry_promotion(loop, case):
    _, init, step, dtype, weak, value = case
    if dtype is None:
        with pytest.raises(TypeError, match="carry input and carry output must have equal types"):
            loop(init, step)
        return
    out = loop(init, step)
    assert out.dtype == dtype
    assert out.aval.weak_type == weak
    np.testing.assert_allclose(np.asarray(out), value)


def test_promotion_happens_once():
    # The second carry only changes type once the first is promoted: JAX traces the
    # body once more after promoting, then reports what still differs.
    with pytest.raises(TypeError, match=r"component loop_carry\[1\]\[1\] has type int32\[\]"):
        lax.fori_loop(0, 3, lambda i, c: (c[0] + 0.5, c[0]), (0, 0))


def test_carry_mismatch_messages_name_components():
    with pytest.raises(TypeError) as e:
        lax.scan(lambda c, x: ((c[0] > 1, c[1] > 1), None), (0, 1), length=2)
    msg = str(e.value)
    assert msg.startswith("scan body function carry input and carry output must have equal types")
    assert "  * the input carry component c[0] has type int32[]" in msg
    assert "  * the input carry component c[1] has type int32[] but the corresponding" in msg
    with pytest.raises(
        TypeError,
        match=r"The input carry val has type float32\[\] but .* "
        r"float32\[2\], so the shapes do not match",
    ):
        lax.while_loop(lambda v: True, lambda val: val + jnp.zeros(2), 0.0)
    with pytest.raises(TypeError, match=r"the dtypes do not match, and the shapes do not match"):
        lax.scan(lambda c, x: (jnp.zeros(2, I32), None), 0.0, length=2)
    with pytest.raises(TypeError, match=r"(?s)while_loop .* component loop_carry\[2\]\['a'\]"):
        jit(lambda n: lax.fori_loop(0, n, lambda i, c: {"a": c["a"] > 1}, {"a": 0}))(3)
    with pytest.raises(TypeError, match="must have the same pytree structure"):
        lax.while_loop(lambda c: True, lambda c: (c,), 0)


@pytest.mark.parametrize(
    ("lower", "upper", "traced", "dtype", "weak"),
    [
        (0, 3, False, I32, True),
        (np.int16(0), np.int16(3), False, I32, True),  # concrete bounds count as Python ints
        (np.int64(0), 3, False, I32, True),
        (0, 3, True, I32, True),
        (np.int16(0), 3, True, np.dtype("int16"), False),
        (np.uint8(0), np.uint8(3), True, np.dtype("uint8"), False),
    ],
)
def test_fori_index_type(lower, upper, traced, dtype, weak):
    seen = []

    def body(i, c):
        seen.append((i.dtype, i.aval.weak_type))
        return c + i

    if traced:
        out = jit(lambda a, b: lax.fori_loop(a, b, body, 0))(lower, upper)
    else:
        out = lax.fori_loop(lower, upper, body, 0)
    assert seen[0] == (dtype, weak)
    assert int(out) == 3


@pytest.mark.parametrize(
    ("lower", "upper"),
    [(np.uint8(0), 3), (np.int16(0), np.int32(3)), (0, 3.0), (True, 3), (0, np.uint8(5))],
)
def test_fori_bounds_must_agree(lower, upper):
    with pytest.raises(TypeError, match="lower and upper arguments to fori_loop must have equal"):
        lax.fori_loop(lower, upper, lambda i, c: c, 0)


@pytest.mark.parametrize("pred", [True, False])
def test_cond_weak_type_follows_false_branch(pred):
    # As in JAX, the output's weak type is that of branch 0 (false_fun).
    out = lax.cond(pred, lambda: jnp.float32(1), lambda: 0.5)
    assert out.dtype == F32 and out.aval.weak_type
    np.testing.assert_allclose(np.asarray(out), 1.0 if pred else 0.5)
    out = jit(lambda p: lax.cond(p, lambda: 0.5, lambda: jnp.float32(1)))(pred)
    assert out.dtype == F32 and not out.aval.weak_type
    np.testing.assert_allclose(np.asarray(out), 0.5 if pred else 1.0)
    out = lax.cond(pred, lambda: 1, lambda: jnp.int32(2))
    assert out.dtype == I32 and not out.aval.weak_type


def test_cond_and_switch_type_errors():
    with pytest.raises(TypeError) as e:
        lax.cond(True, lambda: (1, {"a": 2}), lambda: (1.0, {"a": jnp.zeros(2)}))
    msg = str(e.value)
    assert msg.startswith("cond branches must have equal output types but they differ.")
    assert "true_fun is <lambda> at " in msg and "false_fun is <lambda> at " in msg
    assert "  * the output of true_fun at path [0] has type int32[] but the corresponding " in msg
    assert "path [1]['a'] has type int32[] but the corresponding output of false_fun has " in msg
    with pytest.raises(TypeError, match=r"The output of branch 0 has type int32\[\] .* branch2"):
        lax.switch(0, [lambda: 1, lambda: 1, lambda: 2.0])
    with pytest.raises(TypeError, match="cond branch outputs must have the same pytree structure"):
        lax.cond(True, lambda: (1, 2), lambda: [1, 2])
    # A weak int and a strong float32 do not promote across branches.
    with pytest.raises(TypeError, match="so the dtypes do not match"):
        lax.cond(True, lambda: 1, lambda: jnp.float32(2))
