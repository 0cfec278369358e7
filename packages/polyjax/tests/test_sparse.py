"""`polyjax.experimental.sparse`: BCOO and BCSR against their dense matrices
(NumPy oracles), under jit, grad and vmap, and `sparsify`."""

from __future__ import annotations

import numpy as np
import pytest

import polyjax
import polyjax.numpy as jnp
from polyjax.experimental import sparse

M = np.array([[0.0, 1.0, 0.0, 0.0], [2.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, 4.0]], np.float32)
V = np.arange(1.0, 5.0, dtype=np.float32)
W = np.arange(6.0, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize("cls", [sparse.BCOO, sparse.BCSR])
@pytest.mark.parametrize("nse", [None, 6])
def test_roundtrip_and_products(cls, nse):
    m = cls.fromdense(M, nse=nse)
    assert m.nse == (4 if nse is None else nse) and m.shape == M.shape and m.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(m.todense()), M)
    np.testing.assert_allclose(np.asarray(m @ V), M @ V)
    np.testing.assert_allclose(np.asarray(m @ np.stack([V, 2 * V], 1)), M @ np.stack([V, 2 * V], 1))
    np.testing.assert_allclose(np.asarray(W @ m), W @ M)
    np.testing.assert_array_equal(np.asarray(m.T.todense()), M.T)
    # A pytree: through jit.
    np.testing.assert_allclose(np.asarray(polyjax.jit(lambda a, v: a @ v)(m, V)), M @ V)
    with pytest.raises(ValueError, match="not aligned"):
        m @ np.ones(3, np.float32)


def test_formats_agree():
    csr = sparse.BCSR.fromdense(M)
    np.testing.assert_array_equal(np.asarray(csr.indptr), [0, 1, 3, 4])
    np.testing.assert_array_equal(np.asarray(csr.to_bcoo().todense()), M)
    np.testing.assert_array_equal(np.asarray(sparse.BCOO.fromdense(M).to_bcsr().todense()), M)


def test_grad_vmap_jit():
    m = sparse.BCOO.fromdense(M)

    def loss(data):
        return jnp.sum((sparse.BCOO((data, m.indices), shape=m.shape) @ V) ** 2)

    g = polyjax.grad(loss)(m.data)
    rows, cols = np.asarray(m.indices).T
    np.testing.assert_allclose(np.asarray(g), 2 * (M @ V)[rows] * V[cols], rtol=1e-6)
    # Gradient through fromdense reaches the stored entries of the dense input.
    gd = polyjax.grad(lambda a: jnp.sum(sparse.BCOO.fromdense(a, nse=4) @ V))(M)
    np.testing.assert_allclose(np.asarray(gd), (M != 0) * V[None, :])
    dense = polyjax.vmap(lambda d: sparse.BCOO((d, m.indices), shape=m.shape).todense())(
        jnp.stack([m.data, 2 * m.data])
    )
    np.testing.assert_array_equal(np.asarray(dense), np.stack([M, 2 * M]))
    data = polyjax.jit(lambda a: sparse.BCOO.fromdense(a, nse=4).data)(M)
    np.testing.assert_array_equal(np.asarray(data), [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="nse"):
        polyjax.jit(lambda a: sparse.BCOO.fromdense(a).data)(M)


def test_sparsify():
    m = sparse.BCOO.fromdense(M)
    out = sparse.sparsify(lambda a, v: jnp.sum((2 * a) @ v))(m, V)
    assert float(out) == pytest.approx(float(np.sum(2 * M @ V)))
    scaled = sparse.sparsify(lambda a: -(a * 3.0))(m)
    assert isinstance(scaled, sparse.BCOO) and scaled.nse == 4
    np.testing.assert_array_equal(np.asarray(scaled.todense()), -3 * M)
    # Operations without a sparse rule run on the dense array.
    np.testing.assert_allclose(np.asarray(sparse.sparsify(jnp.cos)(m)), np.cos(M), rtol=1e-6)
    total = sparse.sparsify(jnp.sum)(sparse.BCSR.fromdense(M))
    assert float(total) == pytest.approx(M.sum())
