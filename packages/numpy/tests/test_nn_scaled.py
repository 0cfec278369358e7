"""`nn.scaled_matmul`, `nn.scaled_dot_general` and their configs.

Oracles: the definition in NumPy (data times repeated block scales, then the
contraction), `lax.dot_general` for values that quantize exactly, and the
quantization error bound of the data type otherwise.
"""

from __future__ import annotations

import numpy as np
import pytest

from polyjax_core import dtypes
from polyjax_interpreters.ad import grad
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax, nn
from polyjax_numpy import numpy as jnp

RNG = np.random.default_rng(0)


def test_configs():
    mx = nn.get_scaled_dot_general_config("mxfp8")
    assert (mx.mode, mx.block_size, mx.global_scale) == ("mxfp8", 32, None)
    assert mx.data_type == dtypes.float8_e4m3fn and mx.scale_type == dtypes.float8_e8m0fnu
    nv = nn.get_scaled_dot_general_config("nvfp4")
    assert (nv.block_size, nv.data_type) == (16, dtypes.float4_e2m1fn)
    np.testing.assert_array_equal(np.asarray(nv.global_scale), [1.0])
    with pytest.raises(ValueError, match="mode"):
        nn.get_scaled_dot_general_config("int8")


def test_scaled_matmul_definition():
    lhs = RNG.normal(size=(2, 3, 8)).astype(np.float32)
    rhs = RNG.normal(size=(2, 4, 8)).astype(np.float32)
    ls = np.exp2(RNG.integers(-2, 3, size=(2, 3, 2))).astype(np.float32)
    rs = np.exp2(RNG.integers(-2, 3, size=(2, 4, 2))).astype(np.float32)
    want = np.einsum("bmk,bnk->bmn", lhs * np.repeat(ls, 4, -1), rhs * np.repeat(rs, 4, -1))
    out = nn.scaled_matmul(
        lhs.astype(dtypes.float8_e4m3fn),
        rhs.astype(dtypes.float8_e4m3fn),
        ls.astype(dtypes.float8_e8m0fnu),
        rs.astype(dtypes.float8_e8m0fnu),
        preferred_element_type=np.float32,
    )
    lq = lhs.astype(dtypes.float8_e4m3fn).astype(np.float32)
    rq = rhs.astype(dtypes.float8_e4m3fn).astype(np.float32)
    want_q = np.einsum("bmk,bnk->bmn", lq * np.repeat(ls, 4, -1), rq * np.repeat(rs, 4, -1))
    assert out.shape == (2, 3, 4) and out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), want_q, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(out), want, rtol=0.2, atol=0.5)
    with pytest.raises(ValueError, match="blocks"):
        nn.scaled_matmul(lhs, rhs, ls[..., :1].repeat(3, -1), rs)


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
def test_scaled_dot_general(mode):
    lhs = RNG.normal(size=(5, 64)).astype(np.float32)
    rhs = RNG.normal(size=(64, 3)).astype(np.float32)
    dn = (((1,), (0,)), ((), ()))
    config = nn.get_scaled_dot_general_config(mode)
    f = jit(lambda a, b: nn.scaled_dot_general(a, b, dn, configs=[config] * 3))
    out = f(lhs, rhs)
    want = np.asarray(lax.dot_general(lhs, rhs, dn))
    assert out.shape == (5, 3) and out.dtype == np.float32
    # Relative error per element of the data type: 2^-3 for e4m3, 2^-1 for e2m1 (plus scale).
    rel = 0.07 if mode == "mxfp8" else 0.6
    bound = rel * np.abs(lhs) @ np.abs(rhs)
    assert np.all(np.abs(np.asarray(out) - want) <= bound)
    # Values that quantize exactly give the exact product (batched, contracting dim first).
    ones = np.ones((2, 40, 3), np.float32)
    dnb = (((1,), (1,)), ((0,), (0,)))
    exact = nn.scaled_dot_general(ones, 2 * ones, dnb, preferred_element_type=jnp.bfloat16)
    assert exact.dtype == jnp.bfloat16 and exact.shape == (2, 3, 3)
    np.testing.assert_array_equal(np.asarray(exact, np.float32), 80.0)


def test_scaled_dot_general_grad_is_straight_through():
    lhs = np.ones((2, 32), np.float32)
    rhs = RNG.normal(size=(32, 3)).astype(np.float32)
    dn = (((1,), (0,)), ((), ()))
    g = jit(grad(lambda a: jnp.sum(nn.scaled_dot_general(a, rhs, dn))))(lhs)
    # The derivative is the quantized rhs's row sums.
    q = np.asarray(
        jit(nn.scaled_dot_general, static_argnums=2)(np.eye(32, dtype=np.float32), rhs, dn)
    )
    np.testing.assert_allclose(np.asarray(g), np.broadcast_to(q.sum(1), (2, 32)), rtol=1e-6)
