"""Python scalars in eager expressions come from the device-scalar cache: no
host-to-device transfer per call, and no new compilation per value (docs/jit.md)."""

from __future__ import annotations

import numpy as np
import pytest

import polyjax_numpy  # noqa: F401  (registers the Array operators)
from polyjax_interpreters import dispatch
from polyjax_interpreters.array import device_put
from polyjax_interpreters.jit import jit


@pytest.fixture
def transfers(monkeypatch):
    """Counts host-to-device transfers made by dispatch."""
    count = []
    original = dispatch.put_value

    def counting(*args, **kwargs):
        count.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(dispatch, "put_value", counting)
    return count


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_scalars_in_eager_expressions_are_not_transferred_per_call(transfers, dtype):
    x = device_put(np.arange(4).astype(dtype))
    out = x * 2.0 + 1
    del transfers[:]
    for _ in range(3):
        out = x * 2.0 + 1
        out = 1 - out
    assert not transfers
    np.testing.assert_allclose(np.asarray(out), 1 - (np.arange(4) * 2.0 + 1))
    assert out.dtype == dtype and not out.weak_type


def test_each_value_is_exact_and_compiles_nothing_new(monkeypatch):
    x = device_put(np.ones(3, np.float32))
    x * 1.0  # compile once
    compiles = []
    original = dispatch.compile_lowered
    monkeypatch.setattr(dispatch, "compile_lowered", lambda *a: compiles.append(1) or original(*a))
    for v in (0.0, -0.0, 2.5, -7, float("inf")):
        got = np.asarray(x * v)
        np.testing.assert_array_equal(got, np.ones(3, np.float32) * np.float32(v))
        assert np.signbit(got).tolist() == np.signbit(np.float32(v) * np.ones(3)).tolist()
    assert not compiles


def test_weak_operands_and_promotion_are_unchanged():
    weak = device_put(np.float32(2.0)) * 1.0  # an Array times a Python float
    half = device_put(np.ones(2, np.float16))
    assert (half * 3.0).dtype == np.float16
    ints = device_put(np.arange(3, dtype=np.int32))
    assert (ints * 2.5).dtype == np.float32  # not the fast path: promoted as before
    np.testing.assert_allclose(np.asarray(ints * 2.5), [0, 2.5, 5])
    assert float(weak) == 2.0


def test_host_scalars_passed_to_jit_are_cached(transfers):
    f = jit(lambda x, s: x * s)
    x = device_put(np.ones(2, np.float32))
    f(x, 3.0)
    del transfers[:]
    for _ in range(3):
        out = f(x, 3.0)
    assert not transfers
    np.testing.assert_allclose(np.asarray(out), [3, 3])
