"""chex 0.1.92 on polyjax: a JAX test module, run unmodified under ``polyjax.as_jax``.

Written as a JAX user writes chex tests (``import jax``, ``chex.TestCase``,
``@chex.variants``); tests_integration/test_chex.py runs it with
``python -m polyjax.as_jax`` in a fresh process with 4 host devices and reads
absltest's summary. Each test asserts what chex's helper must accept and
what it must reject, so a helper that accepted everything would fail here.
"""

import dataclasses

import chex
import jax  # noqa: TID251  (this module runs under polyjax.as_jax: jax is polyjax)
import jax.numpy as jnp  # noqa: TID251  (as above)
import numpy as np
from absl.testing import absltest


class AssertsTest(chex.TestCase):
    def test_shape_rank_and_type(self):
        x = jnp.ones((2, 3), jnp.float32)
        chex.assert_shape(x, (2, 3))
        chex.assert_rank(x, 2)
        chex.assert_type(x, jnp.float32)
        chex.assert_equal_shape([x, jnp.zeros((2, 3))])
        chex.assert_axis_dimension(x, 1, 3)
        with self.assertRaises(AssertionError):
            chex.assert_shape(x, (3, 2))
        with self.assertRaises(AssertionError):
            chex.assert_type(x, jnp.int32)

    def test_trees(self):
        a = {"w": jnp.arange(3.0), "b": (jnp.ones(2), jnp.ones(()))}
        b = jax.tree.map(lambda v: v + 1e-7, a)
        chex.assert_trees_all_close(a, b, atol=1e-6)
        chex.assert_trees_all_equal_shapes(a, b)
        chex.assert_tree_all_finite(a)
        with self.assertRaises(AssertionError):
            chex.assert_trees_all_close(a, jax.tree.map(lambda v: v + 1.0, a))
        with self.assertRaises(AssertionError):
            chex.assert_tree_all_finite({"x": jnp.array([1.0, jnp.nan])})

    def test_scalars_and_devices(self):
        chex.assert_scalar_positive(2.0)
        chex.assert_scalar_in(3, 1, 4)
        with self.assertRaises(AssertionError):
            chex.assert_scalar_negative(1.0)
        chex.assert_devices_available(4, "cpu")
        with self.assertRaises(AssertionError):
            chex.assert_gpu_available()

    def test_broadcastable_and_ndarrays(self):
        chex.assert_is_broadcastable((3, 1), (2, 3, 4))
        with self.assertRaises(AssertionError):
            chex.assert_is_broadcastable((3, 2), (2, 3, 4))
        chex.assert_tree_has_only_ndarrays({"a": jnp.ones(2), "b": np.ones(1)})
        with self.assertRaises(AssertionError):
            chex.assert_tree_has_only_ndarrays({"a": 1.0})

    def test_max_traces(self):
        @jax.jit
        @chex.assert_max_traces(n=1)
        def f(x):
            return x + 1

        f(jnp.ones(2))
        f(jnp.ones(2))
        with self.assertRaises(AssertionError):
            f(jnp.ones(3))  # a new shape traces again

    def test_numerical_grads(self):
        chex.assert_numerical_grads(lambda x: jnp.sum(jnp.sin(x)), (jnp.arange(3.0),), order=1)


@chex.dataclass
class Params:
    w: chex.Array
    b: chex.Array


class DataclassTest(chex.TestCase):
    def test_is_a_pytree_and_a_mapping(self):
        p = Params(w=jnp.ones(2), b=jnp.zeros(()))
        doubled = jax.tree.map(lambda v: v * 2, p)
        self.assertIsInstance(doubled, Params)
        np.testing.assert_array_equal(np.asarray(doubled.w), [2.0, 2.0])
        self.assertEqual(sorted(p.keys()), ["b", "w"])
        grads = jax.grad(lambda q: jnp.sum(q.w * 3.0) + q.b)(p)
        np.testing.assert_array_equal(np.asarray(grads.w), [3.0, 3.0])
        self.assertEqual(float(grads.b), 1.0)

    def test_frozen(self):
        @chex.dataclass(frozen=True)
        class Frozen:
            x: chex.Array

        with self.assertRaises(dataclasses.FrozenInstanceError):
            Frozen(x=jnp.ones(1)).x = 2


class ArrayTypesTest(chex.TestCase):
    def test_array_aliases(self):
        self.assertIsInstance(jnp.ones(2), chex.Array)
        self.assertIsInstance(jnp.ones(2), chex.ArrayDevice)
        chex.assert_type(jnp.ones(2, jnp.int32), int)


class VariantsTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True, with_device=True, without_device=True)
    def test_function_variants(self):
        traced = []

        @self.variant
        def f(x, y):
            traced.append(isinstance(x, jax.core.Tracer))
            return x * y + 1

        out = f(jnp.arange(3.0), 2.0)
        np.testing.assert_allclose(np.asarray(out), [1.0, 3.0, 5.0])
        self.assertEqual(traced, [self.variant.type == chex.ChexVariantType.WITH_JIT])

    @chex.variants(with_pmap=True)
    def test_pmap_variant(self):
        # Each of the 4 devices gets the whole argument; the output is device 0's.
        @self.variant
        def f(x):
            return jax.lax.psum(x, "i")

        out = f(jnp.arange(4.0))
        np.testing.assert_allclose(np.asarray(out), [0.0, 4.0, 8.0, 12.0])

    @chex.all_variants(with_pmap=False)
    def test_all_variants_without_pmap(self):
        out = self.variant(lambda x: jnp.sum(x**2))(jnp.arange(3.0))
        self.assertEqual(float(out), 5.0)


if __name__ == "__main__":
    absltest.main()
