"""Python ints beside integer and bool arrays: weakly typed, wrapped, range-checked (JAX's rules).

A Python int is a weakly typed value of the default integer type (int32 without x64). Next to
an array of a narrower integer type it takes that type the way a cast does, wrapping around
(`int8_array + 300` adds 44); next to a bool array it stays the default integer. An int
outside the default integer type's range is an `OverflowError`, whatever the other operand.

Two oracles: the same call with the int given as a weakly typed int32 array (`jnp.asarray(v)`,
which the promotion rules treat identically, and which lax casts on the device: a mechanism
independent of the host conversion of Python ints), and NumPy on the value cast by NumPy
(`np.int64(v).astype(dtype)`) for the operations whose NumPy and JAX semantics agree.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from polyjax_core.config import enable_x64
from polyjax_interpreters.jit import jit
from polyjax_numpy import numpy as jnp

# A breadth sweep: the main test run has it; the isolated re-run of this package skips it.
pytestmark = pytest.mark.sweep

# The narrow integer dtypes (and bool), and Python ints that do not fit some of them. The
# sweeps over every function use a subset (signed and unsigned narrow types, uint32, bool):
# each call compiles per dtype.
DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.int32, np.bool_]
VALUES = [300, -1, 70000, -129, 2**31 - 1, -(2**31)]
SWEEP_DTYPES = [np.int8, np.uint16, np.uint32, np.bool_]
SWEEP_VALUES = [300, -1, 70000]


def _operand(dtype: Any) -> np.ndarray:
    if dtype is np.bool_:
        return np.array([True, False, True])
    return np.array([0, 1, 5], dtype)


# Every binary elementwise function of `jnp` (and the methods and operators below): each
# is called with the array first and with the int first.
BINARY = """
add subtract multiply divide true_divide floor_divide remainder mod fmod divmod power pow
float_power arctan2 atan2 hypot copysign nextafter ldexp logaddexp logaddexp2 maximum minimum
fmax fmin bitwise_and bitwise_or bitwise_xor left_shift right_shift bitwise_left_shift
bitwise_right_shift logical_and logical_or logical_xor equal not_equal greater greater_equal
less less_equal gcd lcm heaviside isclose array_equal array_equiv allclose
""".split()

OPERATORS = {
    name: getattr(operator, name)
    for name in "add sub mul truediv floordiv mod pow and_ or_ xor lshift rshift "
    "eq ne lt le gt ge".split()
}

# Other functions taking a fill value, bound or operand that may be a Python int.
OTHERS: dict[str, Callable[[Any, Any], Any]] = {
    "where": lambda x, v: jnp.where(np.array([True, False, True]), x, v),
    "clip_max": lambda x, v: jnp.clip(x, None, v),
    "clip_min": lambda x, v: jnp.clip(x, v, None),
    "full_like": lambda x, v: jnp.full_like(x, v),
    "at_set": lambda x, v: jnp.asarray(x).at[1].set(v),
    "at_add": lambda x, v: jnp.asarray(x).at[1].add(v),
    "at_mul": lambda x, v: jnp.asarray(x).at[1].multiply(v),
    "at_min": lambda x, v: jnp.asarray(x).at[1].min(v),
    "at_max": lambda x, v: jnp.asarray(x).at[1].max(v),
    "max_initial": lambda x, v: jnp.max(x, initial=v),
    "min_initial": lambda x, v: jnp.min(x, initial=v),
    "select": lambda x, v: jnp.select([np.array([True, False, True])], [x], v),
    "insert": lambda x, v: jnp.insert(x, 1, v),
    "place": lambda x, v: jnp.place(x, np.array([True, False, True]), v, inplace=False),
    "pad": lambda x, v: jnp.pad(x, 1, constant_values=v),
    "searchsorted": lambda x, v: jnp.searchsorted(x, v),
    "polyval": lambda x, v: jnp.polyval(x, v),
    "isin": lambda x, v: jnp.isin(x, v),
    "append": lambda x, v: jnp.append(x, v),
}


def _outcome(f: Callable[..., Any], *args: Any) -> Any:
    """The result as NumPy arrays (dtype kept), or the type of the exception raised."""
    try:
        out = f(*args)
    except Exception as e:  # the int and the weak array must fail alike
        return type(e)
    if isinstance(out, tuple):
        return tuple(np.asarray(o) for o in out)
    return (np.asarray(out),)


def _assert_same(got: Any, want: Any, what: str) -> None:
    if isinstance(want, type) or isinstance(got, type):
        assert got == want, f"{what}: {got} != {want}"
        return
    assert [g.dtype for g in got] == [w.dtype for w in want], what
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w, err_msg=what)


def _check_like_weak_array(f: Callable[[Any, Any], Any], name: str) -> None:
    for dtype in SWEEP_DTYPES:
        x = _operand(dtype)
        for v in SWEEP_VALUES:
            weak = jnp.asarray(v)
            assert weak.weak_type
            for order in ("array first", "int first"):
                if order == "array first" and name in _STATIC_EXPONENT:
                    continue
                args, oracle = (
                    ((x, v), (x, weak)) if order == "array first" else ((v, x), (weak, x))
                )
                what = f"{name}({order}) with {np.dtype(dtype).name} and {v}"
                _assert_same(_outcome(f, *args), _outcome(f, *oracle), what)


# A Python int exponent is static, as in JAX (`lax.integer_pow`: exact, and an error when
# negative for integer bases), not a weak value: see test_python_int_exponent_is_static.
_STATIC_EXPONENT = {"power", "pow"}


@pytest.mark.parametrize("name", BINARY)
def test_binary_function_takes_python_int_as_weak_int32(name):
    _check_like_weak_array(getattr(jnp, name), name)


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operator_takes_python_int_as_weak_int32(name):
    op = OPERATORS[name]
    _check_like_weak_array(
        lambda a, b: op(jnp.asarray(a), b) if isinstance(a, np.ndarray) else op(a, jnp.asarray(b)),
        name,
    )


@pytest.mark.parametrize("name", sorted(OTHERS))
def test_function_taking_a_scalar_wraps_python_int(name):
    f = OTHERS[name]
    for dtype in SWEEP_DTYPES:
        x = _operand(dtype)
        for v in SWEEP_VALUES:
            _assert_same(_outcome(f, x, v), _outcome(f, x, jnp.asarray(v)), f"{name} {dtype} {v}")


def test_every_binary_ufunc_object_is_swept():
    ufuncs = {n for n in jnp.__all__ if isinstance(getattr(jnp, n), jnp.ufunc)}
    binary = {n for n in ufuncs if getattr(jnp, n).nin == 2}
    assert binary and binary <= set(BINARY), sorted(binary - set(BINARY))


# NumPy agrees with JAX on these once the int is cast to the array's dtype (NumPy's own
# integer cast wraps too); for bool arrays the int stays int32.
_NUMPY_AGREES = "add subtract multiply bitwise_and bitwise_or bitwise_xor maximum minimum "
_NUMPY_AGREES += "equal not_equal less less_equal greater greater_equal"


@pytest.mark.parametrize("name", _NUMPY_AGREES.split())
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_wrapped_values_match_numpy(name, dtype):
    x = _operand(dtype)
    for v in VALUES:
        cast = np.int64(v).astype(np.int32 if dtype is np.bool_ else dtype)
        for args, np_args in (((x, v), (x, cast)), ((v, x), (cast, x))):
            got = getattr(jnp, name)(*args)
            want = getattr(np, name)(*np_args)
            assert got.dtype == want.dtype, (name, dtype, v)
            np.testing.assert_array_equal(got, want, err_msg=f"{name} {dtype} {v}")


def test_issue_examples():
    got = jnp.ones(2, jnp.int8) + 300
    assert got.dtype == np.int8 and list(np.asarray(got)) == [45, 45]
    assert int(jnp.uint8(1) - 300) == 213
    got = jnp.array([True]) + 300
    assert got.dtype == np.int32 and int(got[0]) == 301


@pytest.mark.parametrize("dtype", [np.int8, np.uint32, np.float32, np.bool_, np.float16])
@pytest.mark.parametrize("v", [2**31, -(2**31) - 1, 2**63, 2**70])
def test_int_outside_default_int_range_is_overflow_error(dtype, v):
    x = jnp.ones(2, dtype)
    for f in (operator.add, operator.mul, jnp.maximum, lambda a, b: jnp.where(True, a, b)):
        with pytest.raises(OverflowError, match="int32"):
            f(x, v)
        with pytest.raises(OverflowError, match="int32"):
            f(v, x)


def test_x64_checks_the_int64_range_and_wraps_from_it():
    with enable_x64(True):
        got = jnp.ones(2, jnp.int8) + (2**40 + 300)
        assert got.dtype == np.int8 and list(np.asarray(got)) == [45, 45]
        got = jnp.ones(2, jnp.uint64) - 2
        assert list(np.asarray(got)) == [2**64 - 1] * 2
        with pytest.raises(OverflowError, match="int64"):
            jnp.ones(2, jnp.uint64) + 2**63


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.uint16, np.bool_])
def test_jit_wraps_like_eager(dtype):
    x = _operand(dtype)
    for v in (300, -1, 70000):
        fns = (
            lambda a, v=v: a + v,
            lambda a, v=v: v - a,
            lambda a, v=v: a == v,
            lambda a, v=v: a.at[0].set(v),
        )
        for f in fns:
            _assert_same(_outcome(jit(f), x), _outcome(f, jnp.asarray(x)), f"jit {dtype} {v}")


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16])
def test_python_int_exponent_is_static(dtype):
    x = np.array([0, 1, 3, 5], dtype)
    bits = np.dtype(dtype).itemsize * 8
    for power in (jnp.power, operator.pow):
        got = power(jnp.asarray(x), 300)  # 3**300, not 3**44: the exponent is not wrapped
        want = np.array([pow(int(b), 300, 2**bits) for b in x]).astype(np.int64).astype(dtype)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, want)
        with pytest.raises(TypeError, match="negative powers"):
            power(jnp.asarray(x), -1)


def test_list_elements_are_data_not_weak_operands():
    # In a list, a Python int is an element of the array being built: it must fit the
    # dtype (NumPy's and JAX's OverflowError), beside arrays or not.
    for build in (
        lambda: jnp.array([jnp.int8(1), 300]),
        lambda: jnp.array([np.int8(1), 300]),
        lambda: jnp.array([1, 300], jnp.int8),
    ):
        with pytest.raises(OverflowError, match="300"):
            build()
    got = jnp.array([jnp.int8(1), 127])
    assert got.dtype == np.int8 and list(np.asarray(got)) == [1, 127]
