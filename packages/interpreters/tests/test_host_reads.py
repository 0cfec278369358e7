"""Host reads of NumPy dtypes on CPU never search for JAX's modules.

jaxlib's C++ looks for ``jax.core`` and two ``jax._src`` modules when it copies
a buffer to the host; without JAX installed, each failed import costs a search
of ``sys.path``, which made every ``np.asarray`` of a fresh result ~10x slower
than JAX's. polyjax reads such buffers through the buffer protocol instead
(`array._host_view`).
"""

from __future__ import annotations

import sys

import ml_dtypes
import numpy as np
import pytest

from polyjax_interpreters import array
from polyjax_interpreters.jit import jit


class _Spy:
    def __init__(self):
        self.asked: list[str] = []

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "jax":
            self.asked.append(name)
        return None


@pytest.fixture
def spy():
    finder = _Spy()
    sys.meta_path.insert(0, finder)
    yield finder
    sys.meta_path.remove(finder)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_, np.complex64])
def test_host_reads_of_numpy_dtypes_do_not_look_for_jax(spy, dtype):
    x = array.device_put(np.arange(6).reshape(2, 3).astype(dtype))
    y = jit(lambda a: a)(x)
    spy.asked.clear()
    value = np.asarray(y)
    assert spy.asked == []
    np.testing.assert_array_equal(value, np.arange(6).reshape(2, 3).astype(dtype))
    assert value.dtype == dtype and not value.flags.writeable


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.int4])
def test_host_reads_of_ml_dtypes_keep_their_dtype(dtype):
    host = np.arange(6).reshape(2, 3).astype(dtype)
    value = np.asarray(array.device_put(host))
    assert value.dtype == dtype
    np.testing.assert_array_equal(value.astype(np.float32), host.astype(np.float32))
