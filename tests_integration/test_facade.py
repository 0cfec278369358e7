"""The `polyjax` facade: lazy loading, the public names, and JAX-shaped behaviour.

Lazy loading is checked in fresh interpreters (this test process has usually
loaded the runtime already): `import polyjax` must load neither jaxlib nor any
sibling package, and each name loads only what it needs.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import threading

import numpy as np
import pytest

import polyjax

HEAVY = ("jaxlib", "polyjax_interpreters", "polyjax_numpy")
SUBMODULES = [
    "dlpack",
    "dtypes",
    "errors",
    "lax",
    "nn",
    "numpy",
    "random",
    "scipy",
    "sharding",
    "stages",
    "tree",
    "tree_util",
    "typing",
]


def _loaded_after(code: str) -> set[str]:
    """Top-level packages among HEAVY (+ numpy, core) that `code` loads in a fresh process."""
    probe = (
        f"{code}\nimport sys\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'jaxlib', 'numpy', 'polyjax_core', 'polyjax_interpreters', 'polyjax_numpy'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return set(eval(out.strip().splitlines()[-1]))


# ---------------------------------------------------------------------------
# Lazy loading


def test_import_polyjax_loads_nothing_heavy():
    assert _loaded_after("import polyjax") == set()


def test_dir_lists_every_public_name_without_loading_anything():
    code = "import polyjax\nnames = dir(polyjax)\nassert set(polyjax.__all__) <= set(names)"
    assert _loaded_after(code) == set()


@pytest.mark.parametrize(
    "code",
    [
        "import polyjax; polyjax.config.update('jax_enable_checks', False)",
        "import polyjax; polyjax.tree_util.tree_leaves([1, (2,)])",
        "import polyjax; polyjax.tree.map(lambda x: x, {'a': 1})",
        "import polyjax; polyjax.dtypes.result_type('float32', 2.0)",
        "import polyjax; polyjax.errors.TracerBoolConversionError",
        "import polyjax; polyjax.ShapeDtypeStruct((2,), 'float32')",
        "import polyjax; polyjax.clear_caches()",
        "import polyjax\nwith polyjax.enable_x64(True): pass",
        "import polyjax\nwith polyjax.disable_jit(): pass",
    ],
)
def test_core_only_names_do_not_load_jaxlib(code):
    loaded = _loaded_after(code)
    assert not loaded & set(HEAVY), loaded


def test_runtime_names_load_the_operators_too():
    # An Array reached without naming lax still has its operators.
    code = (
        "import numpy as np, polyjax\n"
        "x = polyjax.device_put(np.arange(3, dtype=np.float32))\n"
        "assert np.asarray(x * 2 + 1).tolist() == [1.0, 3.0, 5.0]\n"
    )
    assert {"jaxlib", "polyjax_numpy"} <= _loaded_after(code)


# ---------------------------------------------------------------------------
# The public names


def test_all_is_sorted_and_unique():
    assert polyjax.__all__ == sorted(set(polyjax.__all__))


@pytest.mark.parametrize("name", polyjax.__all__)
def test_every_public_name_resolves(name):
    value = getattr(polyjax, name)
    assert value is not None
    assert name in dir(polyjax)
    # Resolved once, then a plain module attribute.
    assert name == "__version__" or vars(polyjax)[name] is value


@pytest.mark.parametrize(
    "name, module, attr",
    [(n, m, a) for n, (m, a) in polyjax._LAZY_ATTRS.items()],
)
def test_names_are_the_implementations(name, module, attr):
    assert getattr(polyjax, name) is getattr(importlib.import_module(module), attr)


@pytest.mark.parametrize("name", SUBMODULES)
def test_submodules_import_both_ways(name):
    by_attr = getattr(polyjax, name)
    by_import = importlib.import_module(f"polyjax.{name}")
    assert by_attr is by_import is sys.modules[f"polyjax.{name}"]
    assert by_import.__all__, name
    for public in by_import.__all__:
        assert hasattr(by_import, public), (name, public)  # (numpy.newaxis is None)
        assert public in dir(by_import)


def test_unknown_name_raises_attribute_error():
    with pytest.raises(AttributeError, match="module 'polyjax' has no attribute 'nope'"):
        polyjax.nope
    assert not hasattr(polyjax, "grad_of_the_future")


def test_lax_reexports_polyjax_numpy_lax():
    import polyjax.lax as lax
    import polyjax_numpy.lax as impl

    assert lax.__all__ == impl.__all__
    for name in impl.__all__:
        if name != "linalg":
            assert getattr(lax, name) is getattr(impl, name)
    assert lax.sin_p.name == "sin"
    # `polyjax.lax.linalg` is a module of the facade (so `import polyjax.lax.linalg`
    # works) holding the implementation's names.
    assert lax.linalg.__name__ == "polyjax.lax.linalg"
    assert lax.linalg.__all__ == impl.linalg.__all__
    for name in impl.linalg.__all__:
        assert getattr(lax.linalg, name) is getattr(impl.linalg, name)


def test_numpy_reexports_polyjax_numpy_numpy():
    import polyjax.numpy as jnp
    import polyjax_numpy.numpy as impl

    assert jnp.__all__ == impl.__all__
    for name in impl.__all__:
        assert getattr(jnp, name) is getattr(impl, name)
    assert polyjax.numpy is jnp


def test_nn_reexports_polyjax_numpy_nn():
    import polyjax.nn.initializers as initializers

    import polyjax.nn as nn
    import polyjax_numpy.nn as impl

    assert nn.__all__ == impl.__all__
    for name in impl.__all__:
        assert getattr(nn, name) is getattr(impl, name)
    assert initializers is impl.initializers


def test_random_reexports_polyjax_numpy_random():
    import polyjax.random as random
    import polyjax_numpy.random as impl

    assert random.__all__ == impl.__all__
    for name in impl.__all__:
        assert getattr(random, name) is getattr(impl, name)


def test_tree_aliases():
    from polyjax_core import tree_util as core_tree

    tree = {"b": [1, 2], "a": (3, None)}
    assert polyjax.tree.leaves(tree) == core_tree.tree_leaves(tree) == [3, 1, 2]
    assert polyjax.tree.map(lambda x: x * 10, tree) == {"b": [10, 20], "a": (30, None)}
    leaves, treedef = polyjax.tree.flatten(tree)
    assert polyjax.tree.unflatten(treedef, leaves) == tree
    assert polyjax.tree.structure(tree) == treedef
    assert polyjax.tree.reduce(lambda a, b: a + b, tree) == 6
    assert polyjax.tree.all([True, (1, 2)])
    # The facade is JAX's view (polyjax_core.jax_tree_util): key arrays are leaves.
    from polyjax_core import jax_tree_util

    assert polyjax.tree_util.tree_map is jax_tree_util.tree_map is polyjax.tree.map
    keys = polyjax.random.split(polyjax.random.key(0), 3)
    assert polyjax.tree.leaves({"k": keys}) == [keys]
    assert len(core_tree.tree_leaves(keys)) == 1 and core_tree.tree_leaves(keys)[0] is not keys


def test_dtypes_follow_weak_type_promotion():
    assert polyjax.dtypes.result_type(np.float32, 2.0) == np.float32
    assert polyjax.dtypes.result_type(np.int32, 2.0) == np.float32
    assert polyjax.dtypes.issubdtype(polyjax.dtypes.bfloat16, np.floating)
    assert polyjax.dtypes.finfo(np.float32).bits == 32


def test_errors():
    e = polyjax.errors
    assert issubclass(e.TracerBoolConversionError, e.ConcretizationTypeError)
    assert issubclass(e.ConcretizationTypeError, TypeError)
    assert issubclass(e.JaxRuntimeError, Exception)
    assert "JaxRuntimeError" in dir(e)


def test_typeof_gives_the_abstract_value():
    aval = polyjax.typeof(np.ones((2, 3), np.float32))
    assert aval.shape == (2, 3) and aval.dtype == np.float32
    assert polyjax.typeof(polyjax.device_put(np.ones(4, np.int32))).shape == (4,)


# ---------------------------------------------------------------------------
# Configuration like JAX's


def test_config_update_and_read():
    before = polyjax.config.jax_enable_x64
    try:
        polyjax.config.update("jax_enable_x64", True)
        assert polyjax.config.jax_enable_x64 is True
        assert polyjax.enable_x64.value is True
    finally:
        polyjax.config.update("jax_enable_x64", before)
    assert polyjax.config.jax_enable_x64 is before
    with pytest.raises(AttributeError):
        polyjax.config.update("jax_no_such_option", 1)


@pytest.mark.parametrize(
    "name, value",
    [
        ("enable_x64", True),
        ("enable_checks", True),
        ("debug_nans", True),
        ("debug_infs", True),
        ("log_compiles", True),
        ("explain_cache_misses", True),
        ("check_tracer_leaks", True),
        ("numpy_rank_promotion", "raise"),
        ("numpy_dtype_promotion", "strict"),
        ("default_matmul_precision", "highest"),
        ("transfer_guard", "disallow"),
    ],
)
def test_config_context_managers_are_thread_local(name, value):
    state = getattr(polyjax, name)
    option = f"jax_{name}"
    outside = polyjax.config.read(option)
    seen_in_other_thread = []
    with state(value):
        assert polyjax.config.read(option) == value
        t = threading.Thread(target=lambda: seen_in_other_thread.append(state.value))
        t.start()
        t.join()
    assert seen_in_other_thread == [outside]
    assert polyjax.config.read(option) == outside


def test_disable_jit_defaults_to_true():
    assert polyjax.config.jax_disable_jit is False
    with polyjax.disable_jit():
        assert polyjax.config.jax_disable_jit is True
        with polyjax.disable_jit(False):
            assert polyjax.config.jax_disable_jit is False
    assert polyjax.config.jax_disable_jit is False


# ---------------------------------------------------------------------------
# End to end through the facade


def _f(x, y):
    return polyjax.lax.sin(x) * 2.0 + y


def test_jit_runs_and_matches_numpy():
    x = np.linspace(0, 1, 5, dtype=np.float32)
    y = np.ones(5, np.float32)
    out = polyjax.jit(_f)(x, y)
    assert isinstance(out, polyjax.Array)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), np.sin(x) * 2.0 + y, rtol=1e-6)


def test_make_jaxpr_and_stages():
    x = np.ones(3, np.float32)
    text = str(polyjax.make_jaxpr(_f)(x, x))
    assert "sin" in text and "f32[3]" in text
    jitted = polyjax.jit(_f)
    assert isinstance(jitted, polyjax.stages.Wrapped)
    traced = jitted.trace(x, x)
    assert isinstance(traced, polyjax.stages.Traced)
    lowered = jitted.lower(polyjax.ShapeDtypeStruct((3,), np.float32), x)
    assert isinstance(lowered, polyjax.stages.Lowered)
    assert "stablehlo.sine" in lowered.as_text()
    compiled = lowered.compile()
    assert isinstance(compiled, polyjax.stages.Compiled)
    np.testing.assert_allclose(np.asarray(compiled(x, x)), np.sin(x) * 2 + 1, rtol=1e-6)


def test_eval_shape():
    out = polyjax.eval_shape(_f, polyjax.ShapeDtypeStruct((2, 3), np.float32), 1.0)
    assert out.shape == (2, 3) and out.dtype == np.float32


def test_devices_and_backend():
    devices = polyjax.devices()
    assert len(devices) == polyjax.device_count() >= 1
    assert polyjax.local_device_count() == len(polyjax.local_devices())
    assert polyjax.default_backend() == devices[0].platform
    assert polyjax.process_index() == 0 and polyjax.process_count() == 1


def test_device_put_get_and_sharding():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    dev = polyjax.devices()[0]
    y = polyjax.device_put(x, dev)
    assert isinstance(y.sharding, polyjax.sharding.Sharding)
    assert isinstance(y.sharding, polyjax.sharding.SingleDeviceSharding)
    assert y.sharding == polyjax.sharding.SingleDeviceSharding(dev)
    got = polyjax.device_get({"y": y})
    assert isinstance(got["y"], np.ndarray)
    np.testing.assert_array_equal(got["y"], x)
    assert polyjax.block_until_ready([y])[0] is y


def test_dlpack_round_trip():
    x = np.arange(4, dtype=np.float32)
    y = polyjax.dlpack.from_dlpack(x)
    assert isinstance(y, polyjax.Array)
    np.testing.assert_array_equal(np.from_dlpack(y), x)


def test_clear_caches_empties_jit_caches():
    f = polyjax.jit(lambda x: x + 1.0)
    x = np.ones(2, np.float32)
    f(x)
    assert f._cache_size() == 1
    polyjax.clear_caches()
    assert f._cache_size() == 0
    np.testing.assert_array_equal(np.asarray(f(x)), x + 1)
