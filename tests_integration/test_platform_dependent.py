"""lax.platform_dependent: the branch of the platform lowered for."""

import numpy as np
import pytest

import polyjax as jax
import polyjax.numpy as jnp
from polyjax import lax


def f(x):
    return lax.platform_dependent(x, cpu=jnp.sin, cuda=jnp.cos, default=jnp.tan)


def test_chooses_cpu_branch_eager_jit_vmap_grad():
    x = np.float32(0.7)
    np.testing.assert_allclose(f(x), np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(f)(x), np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(f)(np.full(3, x)), np.sin(np.full(3, x)), rtol=1e-6)
    np.testing.assert_allclose(jax.grad(f)(x), np.cos(x), rtol=1e-6)


def test_default_and_gpu_alias():
    x = np.float32(0.3)
    g = lambda x: lax.platform_dependent(x, gpu=jnp.cos, tpu=jnp.cos, default=jnp.sin)  # noqa: E731
    np.testing.assert_allclose(jax.jit(g)(x), np.sin(x), rtol=1e-6)


def test_jaxpr_has_platform_index():
    text = str(jax.make_jaxpr(f)(1.0))
    assert "platform_index[platforms=(('cpu',), ('cuda',), None)]" in text
    assert "cond[" in text


def test_missing_platform_raises():
    with pytest.raises(NotImplementedError, match="no function for platform 'cpu'"):
        jax.jit(lambda x: lax.platform_dependent(x, tpu=jnp.sin))(1.0)
    with pytest.raises(TypeError, match="at least one"):
        lax.platform_dependent(1.0)
