"""`ds` slices (`polyjax_numpy.indexing`): static and traced starts, reads and updates."""

from __future__ import annotations

import numpy as np
import pytest

from polyjax_core.tree_util import tree_flatten, tree_unflatten
from polyjax_interpreters.ad import grad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_numpy import numpy as jnp
from polyjax_numpy.indexing import Slice, ds

X = np.arange(10.0, dtype=np.float32)


def _expected(start, size, stride, n=10):
    # dynamic_slice's rule: a negative start counts from the end once; indices clamp.
    start = start + n if start < 0 else start
    if stride == 1:
        start = min(max(start, 0), n - size)
        return X[start : start + size]
    return X[np.clip(start + stride * np.arange(size), 0, n - 1)]


@pytest.mark.parametrize(
    "start, size, stride", [(2, 3, 1), (9, 3, 1), (-2, 2, 1), (1, 3, 3), (8, 2, 2)]
)
def test_ds_reads_like_dynamic_slice_for_static_and_traced_starts(start, size, stride):
    expected = _expected(start, size, stride)
    np.testing.assert_array_equal(jnp.asarray(X)[ds(start, size, stride)], expected)
    traced = jit(lambda x, i: x[ds(i, size, stride)])(X, np.int32(start))
    np.testing.assert_array_equal(traced, expected)


def test_ds_short_forms_and_two_axes():
    x = jnp.asarray(X)
    assert ds(None) == slice(None)
    np.testing.assert_array_equal(x[ds(3)], X[:3])
    m = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    out = jit(lambda m, i: m[ds(i, 2), i, None])(m, np.int32(1))
    np.testing.assert_array_equal(out, m[1:3, 1, None])


def test_ds_updates_vmap_and_grad():
    out = jit(lambda x, i: x.at[ds(i, 2, 3)].set(-1.0))(X, np.int32(1))
    expected = X.copy()
    expected[[1, 4]] = -1.0
    np.testing.assert_array_equal(out, expected)
    m = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    rows = vmap(lambda row, i: row[ds(i, 2)])(m, np.arange(3, dtype=np.int32))
    np.testing.assert_array_equal(rows, [m[0, 0:2], m[1, 1:3], m[2, 2:4]])
    g = grad(lambda x, i: x[ds(i, 2)].sum())(X, np.int32(3))
    np.testing.assert_array_equal(g, (np.arange(10) // 3 == 1) & (np.arange(10) < 5))


def test_slice_is_a_pytree_and_checks_its_arguments():
    leaves, tree = tree_flatten(ds(1, 2))
    assert leaves == [] and tree_unflatten(tree, leaves) == Slice(1, 2)
    leaves, tree = tree_flatten(ds(jnp.int32(1), 2))
    assert len(leaves) == 1 and tree_unflatten(tree, leaves).size == 2
    with pytest.raises(TypeError, match="size and stride must be static integers"):
        ds(0, 2.5)
    with pytest.raises(ValueError, match="stride must be positive"):
        ds(0, 2, 0)
    with pytest.raises(TypeError, match="must be an integer"):
        jnp.asarray(X)[ds(jnp.float32(1), 2)]
