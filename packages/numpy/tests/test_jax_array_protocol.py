"""Objects with `__jax_array__`, as JAX 0.10 treats them.

`jnp.asarray`/`jnp.array`, the operators of arrays and the functions that start
from `asarray` convert them; everything that abstractifies its arguments (jnp
ufuncs, lax primitives, jit/grad/vmap arguments, device_put, indexing) raises
JAX's ValueError.
"""

import operator

import numpy as np
import pytest

from polyjax_core.abstract_values import get_aval
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_interpreters import ad
from polyjax_interpreters.array import device_put
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp

MESSAGE = r"Triggering __jax_array__\(\) during abstractification is no longer supported"


class Wrapped:
    def __init__(self, x):
        self.x = x

    def __jax_array__(self):
        return jnp.asarray(self.x)


class HostWrapped:  # the protocol may also return a NumPy array
    def __jax_array__(self):
        return np.arange(1.0, 4.0, dtype=np.float32)


VALUE = np.arange(1.0, 4.0, dtype=np.float32)


def _same(a, b):
    assert a.dtype == b.dtype
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("obj", [Wrapped(VALUE), HostWrapped()], ids=["array", "host"])
def test_asarray_and_array_convert(obj):
    _same(jnp.asarray(obj), jnp.asarray(VALUE))
    _same(jnp.array(obj), jnp.asarray(VALUE))
    _same(jnp.asarray(obj, dtype=np.int32), jnp.asarray(VALUE, dtype=np.int32))
    _same(jnp.array([obj, obj]), jnp.stack([VALUE, VALUE]))


_OPERATORS = [
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.floordiv,
    operator.mod,
    operator.pow,
    operator.matmul,
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
    operator.eq,
    operator.ne,
]


@pytest.mark.parametrize("op", _OPERATORS, ids=lambda o: o.__name__)
def test_binary_operators_convert(op):
    x = jnp.asarray(np.array([2.0, 1.0, 3.0], np.float32))
    _same(op(x, Wrapped(VALUE)), op(x, jnp.asarray(VALUE)))
    _same(op(Wrapped(VALUE), x), op(jnp.asarray(VALUE), x))  # the reflected method
    out = jit(lambda x: op(x, Wrapped(VALUE)))(x)  # on tracers too
    _same(out, op(x, jnp.asarray(VALUE)))


def test_bitwise_operators_convert():
    x = jnp.asarray(np.array([6, 5, 3], np.int32))
    w = Wrapped(np.array([1, 2, 3], np.int32))
    for op in (operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift):
        _same(op(x, w), op(x, jnp.asarray(w.x)))


# The functions JAX converts with (they start from `asarray`): each gives what it
# gives on the converted array.
_CONVERTING = {
    "shape": jnp.shape,
    "ndim": jnp.ndim,
    "size": jnp.size,
    "reshape": lambda a: jnp.reshape(a, (3, 1)),
    "transpose": jnp.transpose,
    "squeeze": jnp.squeeze,
    "flip": jnp.flip,
    "flipud": jnp.flipud,
    "copy": jnp.copy,
    "astype": lambda a: jnp.astype(a, np.int32),
    "zeros_like": jnp.zeros_like,
    "ones_like": jnp.ones_like,
    "empty_like": lambda a: jnp.empty_like(a).shape,
    "full_like": lambda a: jnp.full_like(a, 7),
    "concatenate": lambda a: jnp.concatenate([a, a]),
    "stack": lambda a: jnp.stack((a, a)),
    "convert_element_type": lambda a: lax.convert_element_type(a, np.int32),
}


@pytest.mark.parametrize("name", list(_CONVERTING))
def test_converting_functions(name):
    f = _CONVERTING[name]
    want, got = f(jnp.asarray(VALUE)), f(Wrapped(VALUE))
    if isinstance(want, tuple | int):
        assert got == want
    else:
        _same(got, want)


# One-argument functions that JAX refuses such objects in (observed in JAX 0.10.2).
_UNARY = (
    "abs absolute arccos arccosh arcsin arcsinh arctan arctanh cbrt ceil conj conjugate cos "
    "cosh deg2rad degrees exp exp2 expm1 fabs floor imag invert isfinite isinf isnan log "
    "log10 log1p log2 logical_not negative positive rad2deg radians real reciprocal rint "
    "sign signbit sin sinc sinh sqrt square tan tanh trunc i0 frexp modf spacing round "
    "around sum prod mean max min cumsum ravel"
).split()


@pytest.mark.parametrize("name", sorted(_UNARY))
def test_jnp_functions_refuse(name):
    with pytest.raises(ValueError, match=MESSAGE):
        getattr(jnp, name)(Wrapped(VALUE))


_REFUSING = {
    "jnp.add": lambda w: jnp.add(w, 1),
    "jnp.sum": jnp.sum,
    "jnp.where": lambda w: jnp.where(True, w, 0),
    "jnp.dot": lambda w: jnp.dot(w, w),
    "jnp.take": lambda w: jnp.take(w, np.array([0])),
    "lax.sin": lax.sin,
    "lax.add": lambda w: lax.add(jnp.ones(3), w),
    "lax.reduce_sum": lambda w: lax.reduce_sum(w, (0,)),
    "jit": jit(lambda x: x),
    "jit_closure": lambda w: jit(lambda: jnp.sin(w))(),
    "grad": lambda w: ad.grad(lambda x: jnp.sum(x))(w),
    "vmap": vmap(jnp.sin),
    "device_put": device_put,
    "get_aval": get_aval,
    "make_jaxpr": lambda w: make_jaxpr(lambda: lax.sin(w))(),
    "index": lambda w: jnp.ones(3)[w],
}


@pytest.mark.parametrize("name", list(_REFUSING))
def test_abstractification_refuses(name):
    with pytest.raises(ValueError, match=MESSAGE):
        _REFUSING[name](Wrapped(np.array([0, 1], np.int32)))


def test_operator_with_unrelated_object_still_not_implemented():
    with pytest.raises(TypeError):
        jnp.ones(3) + object()
    with pytest.raises(TypeError, match="unsupported operand"):
        Wrapped(VALUE) + 1  # the object itself defines no arithmetic
