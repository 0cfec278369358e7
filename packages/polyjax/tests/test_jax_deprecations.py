"""JAX's deprecated and removed names answer as JAX 0.10.2's do (polyjax._jax_deprecations)."""

from __future__ import annotations

import importlib
import re
import warnings

import numpy as np
import pytest

import polyjax

REMOVED = [
    ("polyjax", "device_put_sharded", "use polyjax.device_put instead"),
    ("polyjax", "device_put_replicated", "use polyjax.device_put instead"),
    ("polyjax.numpy", "fix", "Use polyjax.numpy.trunc instead."),
    ("polyjax.lax", "pvary", "Use polyjax.lax.pcast(..., to='varying') instead."),
    ("polyjax.scipy.special", "sph_harm", "Use polyjax.scipy.special.sph_harm_y instead."),
]


@pytest.mark.parametrize("module, name, advice", REMOVED)
def test_removed_names_raise_attribute_error_with_jax_advice(module, name, advice):
    mod = importlib.import_module(module)
    with pytest.raises(AttributeError, match=re.escape(advice)) as info:
        getattr(mod, name)
    assert str(info.value).startswith(f"{module}.{name}")
    assert not hasattr(mod, name)


def test_unknown_names_still_raise_the_plain_error():
    with pytest.raises(AttributeError, match="module 'polyjax.lax' has no attribute 'nope'"):
        polyjax.lax.nope  # noqa: B018


def test_experimental_shard_map_warns_and_works():
    from polyjax.sharding import PartitionSpec as P

    module = importlib.import_module("polyjax.experimental.shard_map")
    with pytest.warns(DeprecationWarning, match=r"Use polyjax\.shard_map instead\.") as caught:
        shard_map = module.shard_map
    assert caught[0].filename == __file__  # attributed to the caller's line
    mesh = polyjax.make_mesh((1,), ("x",), axis_types=(polyjax.sharding.AxisType.Auto,))
    out = shard_map(lambda a: a * 2, mesh, P("x"), P("x"))(np.arange(2.0, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(out), [0.0, 2.0])


@pytest.mark.parametrize("name", ["checkpoint", "remat"])
def test_ad_checkpoint_checkpoint_is_deprecated_but_works(name):
    from polyjax import ad_checkpoint

    with pytest.warns(DeprecationWarning, match=rf"Use polyjax\.{name} instead\."):
        fn = getattr(ad_checkpoint, name)
    assert fn is getattr(polyjax, name)
    grad = polyjax.grad(fn(lambda x: polyjax.numpy.sin(x) ** 2))(1.0)
    np.testing.assert_allclose(grad, np.sin(2.0), rtol=1e-6)


def test_star_import_of_a_facade_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        exec("from polyjax.numpy import *", {})
        exec("from polyjax.lax import *", {})
