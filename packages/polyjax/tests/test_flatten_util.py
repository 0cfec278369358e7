"""polyjax.flatten_util.ravel_pytree: values, dtypes, round trips, derivatives, errors."""

import numpy as np
import pytest

import polyjax
import polyjax.numpy as jnp
from polyjax.flatten_util import ravel_pytree


def test_round_trip_keeps_structure_shapes_and_dtypes():
    tree = {"a": jnp.arange(2, dtype=jnp.int32), "b": (jnp.full((2, 2), 0.5),)}
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == jnp.float32 and flat.shape == (6,)
    np.testing.assert_array_equal(flat, [0, 1, 0.5, 0.5, 0.5, 0.5])
    back = unravel(flat)
    assert back["a"].dtype == jnp.int32 and back["b"][0].shape == (2, 2)
    np.testing.assert_array_equal(back["a"], [0, 1])
    np.testing.assert_array_equal(back["b"][0], np.full((2, 2), 0.5))


def test_python_scalars_and_empty_trees():
    flat, unravel = ravel_pytree([1.0, 2])
    assert flat.dtype == jnp.float32
    one, two = unravel(flat)
    assert (one.dtype, two.dtype) == (jnp.float32, jnp.int32)
    assert not one.aval.weak_type
    flat, unravel = ravel_pytree([])
    assert flat.shape == (0,) and flat.dtype == jnp.float32
    assert unravel(flat) == []


def test_unravel_is_differentiable_and_jittable():
    tree = {"w": jnp.ones((2, 3)), "b": jnp.zeros(3)}
    flat, unravel = ravel_pytree(tree)

    def loss(v):
        t = unravel(v)
        return jnp.sum(t["w"] ** 2) + jnp.sum(3.0 * t["b"])

    g = polyjax.jit(polyjax.grad(loss))(flat)
    # Leaves in key order: "b" then "w".
    np.testing.assert_allclose(g, [3.0] * 3 + [2.0] * 6)


def test_unravel_rejects_a_wrong_shape():
    _, unravel = ravel_pytree([jnp.ones(2)])
    with pytest.raises(ValueError, match=r"shape \(2,\).*got shape \(3,\)"):
        unravel(jnp.ones(3))
