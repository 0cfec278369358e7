"""The abstract `Array` type (`polyjax_core.basearray`) and the `typing` annotations."""

import numpy as np
import pytest

from polyjax_core import basearray, tracing
from polyjax_core import typing as pjt
from polyjax_core.basearray import Array
from polyjax_core.make_jaxpr import make_jaxpr

f32 = np.float32


def test_tracers_are_arrays_but_tracer_classes_are_not_subclasses(toy):
    seen = []

    def f(x):
        seen.append((type(x), isinstance(x, Array), isinstance(x, np.ndarray)))
        return toy.sin.bind(x)

    make_jaxpr(f)(np.ones(3, f32))
    ((cls, is_array, is_ndarray),) = seen
    assert issubclass(cls, tracing.Tracer) and is_array and not is_ndarray
    # As in JAX: the check is on values, not classes.
    assert not issubclass(cls, Array) and not issubclass(tracing.Tracer, Array)


@pytest.mark.parametrize("value", [np.ones(3, f32), np.float32(1), 1.0, 3, True, [1.0], None])
def test_host_values_are_not_arrays(value):
    assert not isinstance(value, Array)


def test_registered_types_are_arrays_and_array_cannot_be_built():
    class Concrete:
        pass

    basearray.Array.register(Concrete)
    assert isinstance(Concrete(), Array) and issubclass(Concrete, Array)
    with pytest.raises(TypeError, match="not created directly"):
        Array()


def test_subclasses_of_array_do_not_admit_tracers(toy):
    class Special(Array):
        pass

    seen = []
    make_jaxpr(lambda x: seen.append(isinstance(x, Special)) or x)(np.ones(2, f32))
    assert seen == [False]


def test_typing_names():
    assert pjt.__all__ == ["ArrayLike", "DTypeLike"]
    members = pjt.ArrayLike.__args__
    assert Array in members and np.ndarray in members
    for value in (np.ones(2), np.float32(1), np.bool_(True), True, 1, 1.0, 1j):
        assert isinstance(value, members)
    assert not isinstance("1", members) and not isinstance([1], members)
    dtype_members = pjt.DTypeLike.__args__
    assert str in dtype_members and np.dtype in dtype_members
