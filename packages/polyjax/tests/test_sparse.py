"""`polyjax.experimental.sparse`: every format against its dense array (NumPy
oracles), BCOO's batch and dense dimensions in JAX's layout, its primitives
under jit, vmap and grad (`check_grads`), and `sparsify`. Most checks run in one
jitted function per test, to keep compilations few."""

from __future__ import annotations

import numpy as np
import pytest

import polyjax
import polyjax.numpy as jnp
from polyjax.experimental import sparse
from polyjax.test_util import check_grads

M = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]], np.float32)
V = np.arange(1.0, 4.0, dtype=np.float32)
# A (2, 3, 2) array: batch 2, then a 3x2 block with some all-zero rows.
A3 = np.array([[[0, 1], [0, 0], [2, 0]], [[3, 0], [4, 5], [0, 0]]], np.float32)


def _nse(dense: np.ndarray, n_batch: int, n_dense: int) -> int:
    mask = dense != 0
    if n_dense:
        mask = mask.any(axis=tuple(range(dense.ndim - n_dense, dense.ndim)))
    mask = mask.reshape(mask.shape[:n_batch] + (-1,)).sum(-1)
    return int(mask.max())


@pytest.mark.parametrize("n_batch,n_dense", [(0, 0), (1, 1)])
def test_bcoo_layout_and_operations(n_batch, n_dense):
    m = sparse.BCOO.fromdense(A3, n_batch=n_batch, n_dense=n_dense)
    nse = _nse(A3, n_batch, n_dense)
    n_sparse = 3 - n_batch - n_dense
    # JAX's layout and printed form.
    assert (m.n_batch, m.n_sparse, m.n_dense, m.nse) == (n_batch, n_sparse, n_dense, nse)
    assert m.data.shape == A3.shape[:n_batch] + (nse,) + A3.shape[3 - n_dense :]
    assert m.indices.shape == A3.shape[:n_batch] + (nse, n_sparse)
    assert m.indices.dtype == np.int32 and m.indices_sorted and m.unique_indices
    suffix = (f", n_batch={n_batch}" if n_batch else "") + (
        f", n_dense={n_dense}" if n_dense else ""
    )
    assert repr(m) == f"BCOO(float32[2, 3, 2], nse={nse}{suffix})"
    w = np.array([1.0, 10.0], np.float32)
    u = np.array([1.0, 2.0, 3.0], np.float32)
    dup = sparse.BCOO(
        (
            jnp.concatenate([m.data, m.data], axis=n_batch),
            jnp.concatenate([m.indices, m.indices], axis=n_batch),
        ),
        shape=m.shape,
    )

    @polyjax.jit
    def run(m, dup):
        return {
            "dense": m.todense(),
            "matvec": m @ w,  # contracts the last (sparse or dense) dimension
            "dot_mid": sparse.bcoo_dot_general(m, u, dimension_numbers=(([1], [0]), ([], []))),
            "batched": sparse.bcoo_dot_general(
                m, np.ones((2, 2), np.float32), dimension_numbers=(([2], [1]), ([0], [0]))
            ),
            "rdot": sparse.bcoo_dot_general(
                np.ones((2, 3), np.float32), m, dimension_numbers=(([1], [1]), ([0], [0]))
            ),
            "transposed": m.transpose((0, 1, 2)).todense() if n_batch + n_dense else m.T.todense(),
            "summed": dup.sum_duplicates(nse=nse).todense(),
            "sorted": dup.sort_indices().todense(),
            "times_dense": (m * A3).todense(),
            "extract": sparse.bcoo_extract(m, A3 + 1).todense(),
        }

    out = run(m, dup)
    expected = {
        "dense": A3,
        "matvec": A3 @ w,
        "dot_mid": np.einsum("bij,i->bj", A3, u),
        "batched": np.einsum("bij,bj->bi", A3, np.ones((2, 2))),
        "rdot": np.einsum("bi,bij->bj", np.ones((2, 3)), A3),
        "transposed": A3 if n_batch + n_dense else A3.T,
        "summed": 2 * A3,
        "sorted": 2 * A3,
        "times_dense": A3 * A3,
        "extract": np.where(A3 != 0, A3 + 1, 0) if not n_dense else None,
    }
    for key, value in expected.items():
        if value is not None:
            np.testing.assert_allclose(np.asarray(out[key]), value, err_msg=key)


def test_bcoo_fromdense_padding_and_duplicates_as_jax():
    p = sparse.BCOO.fromdense(M, nse=5)
    np.testing.assert_array_equal(np.asarray(p.data), [1, 2, 3, 0, 0])
    np.testing.assert_array_equal(np.asarray(p.indices), [[0, 1], [1, 0], [1, 2], [2, 3], [2, 3]])
    assert sparse.BCOO.fromdense(M, index_dtype=np.int8).indices.dtype == np.int8
    s = sparse.BCOO((jnp.array([1.0, 2.0, 3.0]), jnp.array([[1, 0], [0, 1], [1, 0]])), shape=(2, 2))
    t = s.sum_duplicates()
    assert repr(t) == "BCOO(float32[2, 2], nse=2)" and t.indices_sorted and t.unique_indices
    np.testing.assert_array_equal(np.asarray(t.indices), [[0, 1], [1, 0]])
    np.testing.assert_array_equal(np.asarray(t.data), [2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(s.sort_indices().indices), [[0, 1], [1, 0], [1, 0]])
    # Repeated indices (not known unique): the value goes to the first, as in JAX.
    np.testing.assert_array_equal(np.asarray(sparse.bcoo_extract(s, 2 * M[:, :2]).data), [4, 2, 0])
    with pytest.raises(ValueError, match="nse"):
        polyjax.jit(lambda a: sparse.BCOO.fromdense(a).data)(M)
    with pytest.raises(ValueError, match="do not describe"):
        sparse.BCOO((np.ones(3), np.zeros((3, 2), np.int32)), shape=(2,))
    with pytest.raises(ValueError, match="not aligned"):
        sparse.BCOO.fromdense(M) @ np.ones(2, np.float32)
    with pytest.raises(TypeError, match="do not match shapes"):
        sparse.bcoo_dot_general(p, np.ones(2), dimension_numbers=(([1], [0]), ([], [])))
    # The method drops zero sums (concrete values); the function keeps them, as JAX.
    z = sparse.BCOO((jnp.array([1.0, 0.0, 2.0]), jnp.array([[0], [1], [2]])), shape=(3,))
    assert (z.sum_duplicates().nse, sparse.bcoo_sum_duplicates(z).nse) == (2, 3)


def test_vmap_gives_batched_bcoo():
    stacked = np.stack([M, 2 * M])
    v = polyjax.vmap(lambda x: sparse.BCOO.fromdense(x, nse=3))(stacked)
    assert repr(v) == "BCOO(float32[2, 2, 3], nse=3, n_batch=1)"
    assert v.indices.shape == (2, 3, 2)
    jaxpr = str(
        polyjax.make_jaxpr(polyjax.vmap(lambda x: sparse.BCOO.fromdense(x, nse=3).data))(stacked)
    )
    assert "bcoo_fromdense" in jaxpr and "n_batch=1" in jaxpr
    # A batched product stays one sparse product with a batch dimension, as in JAX.
    jaxpr = str(polyjax.make_jaxpr(polyjax.vmap(lambda b, x: b @ x))(v, np.stack([V, V])))
    assert "bcoo_dot_general" in jaxpr and "shape=(2, 2, 3)" in jaxpr

    @polyjax.jit
    def run(v, m):
        return (
            polyjax.vmap(lambda b: b.todense())(v),
            polyjax.vmap(lambda b, x: b @ x)(v, np.stack([V, V + 1])),
            polyjax.vmap(lambda d: sparse.BCOO((d, m.indices), shape=m.shape).todense())(
                jnp.stack([m.data, 3 * m.data])
            ),
            polyjax.vmap(lambda x: m @ x, in_axes=1)(np.stack([V, V + 1], axis=1)),
            polyjax.vmap(lambda b, x: x @ b, in_axes=(0, 1))(v, np.ones((2, 2), np.float32)),
        )

    dense, prods, from_data, cols, left = run(v, sparse.BCOO.fromdense(M))
    np.testing.assert_allclose(np.asarray(left), np.stack([M.sum(0), 2 * M.sum(0)]))
    np.testing.assert_array_equal(np.asarray(dense), stacked)
    np.testing.assert_allclose(np.asarray(prods), np.stack([M @ V, 2 * M @ (V + 1)]))
    np.testing.assert_array_equal(np.asarray(from_data), np.stack([M, 3 * M]))
    np.testing.assert_allclose(np.asarray(cols), np.stack([M @ V, M @ (V + 1)]))


def test_primitives_gradients():
    m = sparse.BCOO.fromdense(A3, n_batch=1)
    csr, coo = sparse.CSR.fromdense(M), sparse.COO.fromdense(M)

    def f(data, rhs, dense, values, u):
        a = sparse.BCOO((data, m.indices), shape=m.shape)
        out = jnp.sum(jnp.sin(a.todense()) * dense)
        out += jnp.sum(
            sparse.bcoo_dot_general(a, rhs, dimension_numbers=(([2], [0]), ([], []))) ** 2
        )
        out += jnp.sum(a.transpose((0, 2, 1)).todense() ** 2)
        out += jnp.sum(sparse.BCOO.fromdense(dense * dense, nse=3, n_batch=1).data)
        out += jnp.sum(sparse.bcoo_extract(a, dense).data * data)
        # The other formats' products and todense, in their values and the dense operand.
        out += jnp.sum((sparse.CSR((values, csr.indices, csr.indptr), shape=M.shape) @ u) ** 2)
        out += jnp.sum((sparse.BCSR((values, csr.indices, csr.indptr), shape=M.shape) @ u) ** 3)
        c = sparse.COO((values, coo.row, coo.col), shape=M.shape)
        return out + jnp.sum((u @ c.T) * u[:2]) + jnp.sum(jnp.cos(sparse.todense(c)))

    args = (
        m.data + 0.5,
        np.array([[1.0, -1.0], [0.5, 2.0]], np.float32),
        A3 + 1.0,
        np.array([1.0, -2.0, 0.5], np.float32),
        V,
    )
    # Reverse mode runs every jvp rule (linearize) and every transpose rule.
    check_grads(polyjax.jit(f), args, order=1, modes=("rev",), atol=2e-2, rtol=2e-2)


def test_sparse_ad_transformations():
    m = sparse.BCOO.fromdense(M)
    rows, cols = np.asarray(m.indices).T
    loss = lambda a, x: jnp.sum((a @ x) ** 2)  # noqa: E731
    g = sparse.grad(loss)(m, V)
    assert isinstance(g, sparse.BCOO) and g.shape == m.shape
    np.testing.assert_array_equal(np.asarray(g.indices), np.asarray(m.indices))
    np.testing.assert_allclose(np.asarray(g.data), 2 * (M @ V)[rows] * V[cols], rtol=1e-6)
    (gm, gx), aux = sparse.grad(lambda a, x: (loss(a, x), 7), argnums=(0, 1), has_aux=True)(m, V)
    np.testing.assert_allclose(np.asarray(gx), 2 * M.T @ (M @ V), rtol=1e-6)
    assert aux == 7 and isinstance(gm, sparse.BCOO)
    value, g2 = sparse.value_and_grad(loss)(m, V)
    assert float(value) == pytest.approx(float(np.sum((M @ V) ** 2)))
    np.testing.assert_allclose(np.asarray(g2.data), np.asarray(g.data))
    jac = sparse.jacfwd(lambda a: a @ V)(m)
    assert repr(jac) == "BCOO(float32[2, 2, 3], nse=3, n_batch=1)"
    np.testing.assert_allclose(
        np.asarray(jac.todense()),
        np.einsum("ij,jk,ik->ijk", np.eye(2), np.ones((2, 3)), M != 0) * V,
    )


def test_structure_operations_as_jax():
    m = sparse.BCOO.fromdense(M)
    b = sparse.BCOO.fromdense(np.stack([M, 2 * M]), n_batch=1)

    @polyjax.jit
    def run(m, b):
        return {
            "slice": sparse.bcoo_slice(m, start_indices=(0, 1), limit_indices=(2, 3)),
            "reshape": sparse.bcoo_reshape(m, new_sizes=(3, 2)),
            "concatenate": sparse.bcoo_concatenate([m, m], dimension=0),
            "reduce_batch": sparse.bcoo_reduce_sum(b, axes=(0,)),
            "reduce_sparse": sparse.bcoo_reduce_sum(m, axes=(1,)),
            "rev": sparse.bcoo_rev(m, (1,)),
            "squeeze": sparse.bcoo_squeeze(
                sparse.bcoo_reshape(m, new_sizes=(1, 6)), dimensions=(0,)
            ),
            "broadcast": sparse.bcoo_broadcast_in_dim(
                m, shape=(2, 2, 3), broadcast_dimensions=(1, 2)
            ),
            "multiply_sparse": m * m,
            "spdot": sparse.bcoo_dot_general(m, m.T, dimension_numbers=(([1], [0]), ([], []))),
            "layout": sparse.bcoo_update_layout(b, n_batch=0),
            "dynamic_slice": sparse.bcoo_dynamic_slice(m, (1, 0), (1, 2)),
            "getitem": m[1, 1:],
        }

    expected = {
        "slice": (M[:, 1:], 3),
        "reshape": (M.reshape(3, 2), 3),
        "concatenate": (np.concatenate([M, M]), 6),
        "reduce_batch": (3 * M, 6),
        "reduce_sparse": (M.sum(1), 3),
        "rev": (M[:, ::-1], 3),
        "squeeze": (M.ravel(), 3),
        "broadcast": (np.stack([M, M]), 3),
        "multiply_sparse": (M * M, 6),
        "spdot": (M @ M.T, 4),
        "layout": (np.stack([M, 2 * M]), 6),
        "dynamic_slice": (M[1:, :2], 2),
        "getitem": (M[1, 1:], 2),
    }
    out = run(m, b)
    dense = polyjax.jit(lambda out: {k: v.todense() for k, v in out.items()})(out)
    for name, (value, nse) in expected.items():
        assert isinstance(out[name], sparse.BCOO) and out[name].nse == nse, (name, out[name])
        np.testing.assert_allclose(np.asarray(dense[name]), value, err_msg=name)
    with pytest.raises(sparse.SparseEfficiencyError, match="inefficient"):
        sparse.bcoo_update_layout(m, n_batch=1)
    with pytest.raises(ValueError, match="mixes"):
        sparse.bcoo_transpose(b, permutation=(1, 0, 2))


def test_legacy_formats_as_jax():
    c = sparse.COO.fromdense(M)
    assert repr(c) == "COO(float32[2, 3], nse=3)"
    np.testing.assert_array_equal(np.asarray(c.row), [0, 1, 1])
    np.testing.assert_array_equal(np.asarray(c.col), [1, 0, 2])
    r = sparse.CSR.fromdense(M)
    np.testing.assert_array_equal(np.asarray(r.indptr), [0, 1, 3])
    np.testing.assert_array_equal(np.asarray(r.indices), [1, 0, 2])
    cc = sparse.CSC.fromdense(M)
    assert repr(cc) == "CSC(float32[2, 3], nse=3)"
    np.testing.assert_array_equal(np.asarray(cc.indptr), [0, 1, 2, 3])
    np.testing.assert_array_equal(np.asarray(cc.indices), [1, 0, 1])
    np.testing.assert_array_equal(np.asarray(cc.data), [2.0, 1.0, 3.0])
    B = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    W = np.ones((2, 2), np.float32)

    @polyjax.jit
    def run(c, r, cc):
        return [
            c.todense(),
            c @ V,
            c @ B,
            W @ c,
            sparse.coo_matvec(c, np.ones(2, np.float32), transpose=True),
            r.todense(),
            r @ V,
            r @ B,
            W @ r,
            cc.todense(),
            cc @ V,
            cc @ B,
            W @ cc,
        ]

    got = run(c, r, cc)
    want = [M, M @ V, M @ B, W @ M, M.T @ np.ones(2)] + [M, M @ V, M @ B, W @ M] * 2
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w)
    g = polyjax.grad(lambda d: jnp.sum(sparse.CSR((d, r.indices, r.indptr), shape=(2, 3)) @ V))(
        r.data
    )
    np.testing.assert_allclose(np.asarray(g), V[[1, 0, 2]])
    with pytest.raises(ValueError, match="does not fit"):
        sparse.csr_matvec(r, np.ones(2, np.float32))


def test_bcsr_batched():
    stacked = np.stack([M, 2 * M])
    b = sparse.BCSR.fromdense(stacked, n_batch=1)
    assert repr(b) == "BCSR(float32[2, 2, 3], nse=3, n_batch=1)" and b.indptr.shape == (2, 3)
    one = sparse.BCSR((b.data[0], b.indices[0], b.indptr[0]), shape=M.shape)

    @polyjax.jit
    def run(b, one):
        return (
            b.todense(),
            b @ V,
            b.to_bcoo().todense(),
            sparse.BCSR.from_bcoo(one.to_bcoo()).indptr,
            sparse.bcsr_concatenate([one, one], dimension=0).todense(),
        )

    dense, prod, via_coo, indptr, cat = run(b, one)
    np.testing.assert_array_equal(np.asarray(dense), stacked)
    np.testing.assert_array_equal(np.asarray(via_coo), stacked)
    np.testing.assert_allclose(np.asarray(prod), stacked @ V)
    np.testing.assert_array_equal(np.asarray(indptr), [0, 1, 3])
    np.testing.assert_array_equal(np.asarray(cat), np.concatenate([M, M]))


def test_constructors_sparsify_linalg():
    a = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 0.0], [0.0, 0.0, 2.0]], np.float32)
    csr = sparse.CSR.fromdense(a)
    sym = np.diag(np.arange(1.0, 11.0, dtype=np.float32))
    m = sparse.BCOO.fromdense(M)

    @polyjax.jit
    def run(key, m, csr):
        theta, U, _ = sparse.linalg.lobpcg_standard(
            sparse.BCOO.fromdense(sym, nse=10), np.eye(10, 2, dtype=np.float32) + 0.1
        )
        return {
            "empty": sparse.empty((2, 3)),
            "eye": sparse.eye(3, k=1),
            "eye_bcsr": sparse.todense(sparse.eye(2, sparse_format="bcsr")),
            "random": sparse.random_bcoo(key, (3, 4), nse=0.5),
            "sparsify_dot": sparse.sparsify(lambda a, v: jnp.sum((2 * a) @ v))(m, V),
            "sparsify_scaled": sparse.sparsify(lambda a: -(a * 3.0))(m),
            "sparsify_cos": sparse.sparsify(jnp.cos)(m),
            "sparsify_csr": sparse.sparsify(jnp.sum)(csr),
            "sparsify_twice": sparse.sparsify(lambda x: x + x)(m),
            "sparsify_shapes": sparse.sparsify(
                lambda x: (x[:, 1:] / 2.0, jnp.concatenate([x, x]).reshape(3, 4))
            )(m),
            "sum": m.sum(),
            "spsolve": sparse.linalg.spsolve(csr.data, csr.indices, csr.indptr, V),
            "theta": theta,
            "U": U,
        }

    out = run(polyjax.random.key(0), m, csr)
    assert repr(out["empty"]) == "BCOO(float32[2, 3], nse=0)"
    assert repr(out["eye"]) == "BCOO(float32[3, 3], nse=2)"
    np.testing.assert_array_equal(np.asarray(out["eye"].indices), [[0, 1], [1, 2]])
    np.testing.assert_array_equal(np.asarray(out["eye_bcsr"]), np.eye(2))
    assert repr(out["random"]) == "BCOO(float32[3, 4], nse=6)"
    assert len({tuple(i) for i in np.asarray(out["random"].indices)}) == 6
    assert float(out["sparsify_dot"]) == pytest.approx(float(np.sum(2 * M @ V)))
    scaled = out["sparsify_scaled"]
    assert isinstance(scaled, sparse.BCOO) and scaled.nse == 3
    np.testing.assert_array_equal(np.asarray(scaled.data), -3 * np.asarray(m.data))
    np.testing.assert_allclose(np.asarray(out["sparsify_cos"]), np.cos(M), rtol=1e-6)
    assert float(out["sparsify_csr"]) == pytest.approx(a.sum())
    assert out["sparsify_twice"].nse == 3 and m.nse + m.nse == (m + m).nse  # as JAX
    np.testing.assert_array_equal(np.asarray(out["sparsify_twice"].data), 2 * np.asarray(m.data))
    assert float(out["sum"]) == pytest.approx(M.sum())
    sliced, joined = out["sparsify_shapes"]
    assert (repr(sliced), repr(joined)) == (
        "BCOO(float32[2, 2], nse=3)",
        "BCOO(float32[3, 4], nse=6)",
    )
    np.testing.assert_array_equal(np.asarray(sparse.todense(sliced)), M[:, 1:] / 2)
    np.testing.assert_array_equal(
        np.asarray(sparse.todense(joined)), np.concatenate([M, M]).reshape(3, 4)
    )
    np.testing.assert_allclose(np.asarray(out["spsolve"]), np.linalg.solve(a, V), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(out["theta"]), [10.0, 9.0], rtol=1e-4)
    np.testing.assert_allclose(np.abs(np.asarray(out["U"])[[9, 8], [0, 1]]), [1.0, 1.0], rtol=1e-3)
