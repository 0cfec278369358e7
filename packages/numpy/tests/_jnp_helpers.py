"""Helpers shared by the jnp test modules: dtype names, test data, NumPy comparisons.

Tests run with `--import-mode=importlib`, which puts no test directory on
`sys.path`; `conftest.py` registers this module, so a test module imports it by
name (`from _jnp_helpers import wide`).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_core.make_jaxpr import make_jaxpr

bf16 = np.dtype(ml_dtypes.bfloat16)
f16, f32, c64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.complex64)
i8, i16, i32 = np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32)
u8, u32 = np.dtype(np.uint8), np.dtype(np.uint32)
boolean = np.dtype(np.bool_)


def random_data(shape, dtype, seed=0, low=-1.5, high=1.5, int_high=4, imag=(-1, 1)):
    """Values in [low, high) (complex: imaginary parts in `imag`); integers in
    [0, int_high); booleans."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == boolean:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0, int_high, shape).astype(dtype)
    x = rng.uniform(low, high, shape)
    if dtype.kind == "c":
        x = x + 1j * rng.uniform(*imag, shape)
    return x.astype(dtype)


def normal_data(rng, shape, dtype):
    """Standard normal values drawn from `rng` (complex: independent real and imaginary parts)."""
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def wide(x):
    """`x` as a NumPy array, floats (bfloat16 too) as float64 and complex as complex128."""
    x = np.asarray(x)
    if x.dtype == bf16 or x.dtype.kind == "f":
        return x.astype(np.float64)
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    return x


def assert_equal(got, want, err=""):
    """`got` has `want`'s shape and values (compared widened, so NaNs match NaNs)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (err, got.shape, want.shape)
    np.testing.assert_array_equal(wide(got), wide(want), err_msg=err)


def flat_jaxpr(fun, *args) -> str:
    """The printed jaxpr of `fun(*args)` on one line (params JAX would wrap joined back)."""
    flat = " ".join(str(make_jaxpr(fun)(*args)).split())
    return flat.replace("[ ", "[").replace(" ]", "]")


def out_aval(fun, *args):
    """The abstract value of `fun(*args)`'s one output."""
    (out,) = make_jaxpr(fun)(*args).out_avals
    return out


def sds(dtype, shape=(3,), weak=False):
    """A `ShapeDtypeStruct` (of shape (3,) unless given)."""
    return ShapeDtypeStruct(shape, dtype, weak_type=weak)
