"""polyjax.as_jax: `jax` and `jax.*` resolve to polyjax only under the opt-in.

The hook changes the interpreter it is installed in, so each check runs in a
fresh one. Checks that share an interpreter run as one script that prints
its findings as JSON; the tests assert on those.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest


def _run(code: str, *args: str, env: dict[str, str] | None = None, cwd: str | None = None):
    proc = subprocess.run(
        [sys.executable, *args] if args else [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )
    return proc


def _findings(code: str, env: dict[str, str] | None = None) -> dict:
    proc = _run(code, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_without_the_opt_in_there_is_no_jax():
    found = _findings(
        """
        import json, numpy as np
        import polyjax, polyjax.numpy as jnp
        x = np.asarray(polyjax.jit(lambda v: v * 2)(jnp.arange(3)))
        try:
            import jax
            outcome = "imported " + repr(jax)
        except ModuleNotFoundError as err:
            outcome = err.name
        print(json.dumps({"jax": outcome, "x": x.tolist()}))
        """
    )
    assert found == {"jax": "jax", "x": [0, 2, 4]}


@pytest.fixture(scope="module")
def aliased() -> dict:
    return _findings(
        """
        import polyjax.as_jax
        import importlib, json, pkgutil, sys
        import jax
        import jax.numpy as jnp
        import jax.scipy.stats.norm
        from jax import lax
        from jax.scipy.stats import norm
        from jax.tree_util import tree_map
        import jax.flatten_util
        import polyjax

        def refused(name):
            try:
                importlib.import_module(name)
            except ModuleNotFoundError as err:
                return err.name
            return None

        print(json.dumps({
            "version": jax.__version__,
            "version_info": list(jax.__version_info__),
            "numpy_registered": sys.modules["jax.numpy"] is jnp,
            "numpy_attribute": jax.numpy is jnp,
            "same_function": jnp.add is polyjax.numpy.add,
            "lax_registered": sys.modules["jax.lax"] is lax,
            "norm_import_forms": norm is jax.scipy.stats.norm
                is importlib.import_module("jax.scipy.stats.norm"),
            "norm_cdf": norm.cdf(jnp.array([0.0])).tolist(),
            "tree_map": tree_map(lambda v: v + 1, [1, 2]),
            "resolve_name": pkgutil.resolve_name("jax.numpy:add") is polyjax.numpy.add,
            "jit": float(jax.jit(lambda v: v * 3)(2.0)),
            "array_type": isinstance(jnp.ones(2), jax.Array),
            "star": "zeros" in jnp.__all__ and "zeros" in dir(jnp),
            "missing_attribute": str(getattr(jnp, "no_such_name", None)),
            "private": refused("jax._src.dispatch"),
            "private_deep": refused("jax._src.sharding_impls"),
            "private_underscore": refused("jax.numpy._private"),
            "core_tracer": jax.jit(
                lambda v: jnp.asarray(isinstance(v, jax.core.Tracer))
            )(1.0).item(),
            "core_concrete": isinstance(jnp.ones(2), jax.core.Tracer),
            "core_shaped_array": repr(jax.core.ShapedArray((3,), jnp.float32)),
            "unknown": refused("jax.no_such_module"),
            "flatten_util": jax.flatten_util.ravel_pytree([jnp.ones(2)])[0].tolist(),
        }))
        """
    )


@pytest.mark.parametrize(
    "key, expected",
    [
        ("version", "0.10.2"),
        ("version_info", [0, 10, 2]),
        ("numpy_registered", True),
        ("numpy_attribute", True),
        ("same_function", True),
        ("lax_registered", True),
        ("norm_import_forms", True),
        ("norm_cdf", [0.5]),
        ("tree_map", [2, 3]),
        ("resolve_name", True),
        ("jit", 6.0),
        ("array_type", True),
        ("star", True),
        ("missing_attribute", "None"),
        ("private", "jax._src.dispatch"),
        ("private_deep", "jax._src.sharding_impls"),
        ("private_underscore", "jax.numpy._private"),
        ("core_tracer", True),
        ("core_concrete", False),
        ("core_shaped_array", "ShapedArray(float32[3])"),
        ("unknown", "jax.no_such_module"),
        ("flatten_util", [1.0, 1.0]),
    ],
)
def test_alias_resolves_public_modules(aliased, key, expected):
    assert aliased[key] == expected


def test_host_copies_of_sharded_arrays_under_the_alias():
    # jaxlib's C++ imports `jax.core` and `jax._src.sharding_impls` when it makes
    # per-device arrays: under the alias `jax.core.ShapedArray` is polyjax's, which
    # takes jaxlib's (shape, dtype, weak_type); `jax._src.sharding_impls` is refused,
    # so jaxlib uses its own sharding type. The host copies stay right.
    found = _findings(
        """
        import polyjax.as_jax
        import json, numpy as np
        import jax, jax.numpy as jnp
        from jax.sharding import NamedSharding, PartitionSpec as P
        mesh = jax.make_mesh((8,), ("x",))
        x = jax.device_put(jnp.arange(16.0), NamedSharding(mesh, P("x")))
        y = jax.jit(lambda v: v * 2)(x)
        print(json.dumps({
            "x": np.asarray(x).tolist(),
            "y": np.asarray(y).tolist(),
            "shards": [np.asarray(s.data).tolist() for s in y.addressable_shards],
            "core": "jax.core" in __import__("sys").modules,
            "shard_aval": repr(x._impl._arrays[0].aval),
        }))
        """,
        env={"JAX_NUM_CPU_DEVICES": "8", "JAX_PLATFORMS": "cpu"},
    )
    assert found["x"] == list(map(float, range(16)))
    assert found["y"] == [2.0 * i for i in range(16)]
    assert found["shards"] == [[4.0 * i, 4.0 * i + 2] for i in range(8)]
    assert found["core"] is True
    assert found["shard_aval"] == "ShapedArray(float32[2])"


def test_a_library_wrapping_jax_src_compiler_sees_every_compile():
    # chex.restrict_backends replaces `jax._src.compiler.backend_compile_and_load`
    # to forbid compiling for a platform; polyjax's compiles must go through it.
    found = _findings(
        """
        import polyjax.as_jax
        import json
        import jax
        from jax._src import compiler

        seen = []
        inner = compiler.backend_compile_and_load
        def forbid_cpu(backend, *args):
            seen.append(backend.platform)
            if backend.platform == "cpu":
                raise RuntimeError("compiling for cpu is forbidden")
            return inner(backend, *args)

        compiler.backend_compile_and_load = forbid_cpu
        try:
            jax.jit(lambda v: v + 1)(1.0)
            outcome = "compiled"
        except RuntimeError as err:
            outcome = str(err)
        compiler.backend_compile_and_load = inner
        after = float(jax.jit(lambda v: v + 2)(1.0))
        print(json.dumps({"outcome": outcome, "seen": seen, "after": after}))
        """
    )
    assert found == {"outcome": "compiling for cpu is forbidden", "seen": ["cpu"], "after": 3.0}


def test_compile_logs_use_jax_logger_names_and_wording():
    found = _findings(
        """
        import polyjax.as_jax
        import json, logging
        import jax, jax.numpy as jnp

        records = []
        class Keep(logging.Handler):
            def emit(self, record):
                records.append((record.name, record.getMessage()))
        logging.getLogger("jax").addHandler(Keep())
        seen = {}

        def f(v):
            return v * 2

        g = jax.jit(f)
        x3, x4 = jnp.ones(3), jnp.ones(4)
        with jax.log_compiles():
            for step, arg in [("first", x3), ("hit", x3), ("new_shape", x4)]:
                records.clear()
                g(arg)
                seen[step] = list(records)
        print(json.dumps(seen))
        """
    )
    assert found["hit"] == []
    for step, shape in [("first", "float32[3]"), ("new_shape", "float32[4]")]:
        names = [name for name, _ in found[step]]
        assert names == ["jax._src.interpreters.pxla", "jax._src.dispatch"]
        compiling, finished = (message for _, message in found[step])
        assert (
            compiling == f"Compiling jit(f) with global shapes and types (ShapedArray({shape}),)."
        )
        assert finished.startswith("Finished XLA compilation of jit(f) in ")
        assert finished.endswith(" sec")


def test_run_a_script_with_its_arguments(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        "import sys, jax.numpy as jnp\n"
        "print(sys.argv, sys.path[0] == __import__('os').path.dirname(__file__), __name__)\n"
        "print(jnp.arange(3).sum())\n"
    )
    proc = _run("", "-m", "polyjax.as_jax", str(script), "a", "--b")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"[{str(script)!r}, 'a', '--b'] True __main__", "3"]


def test_run_a_module_with_its_arguments(tmp_path):
    (tmp_path / "mymod.py").write_text(
        "import sys, jax\nprint(sys.argv[1:], sys.argv[0].endswith('mymod.py'), __name__)\n"
    )
    proc = _run("", "-m", "polyjax.as_jax", "-m", "mymod", "x", "-y", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["['x', '-y'] True __main__"]


def test_as_a_pytest_plugin(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_uses_jax.py").write_text(
        "import jax.numpy as jnp\n\ndef test_sum():\n    assert int(jnp.arange(4).sum()) == 6\n"
    )
    proc = _run(
        "",
        "-m",
        "pytest",
        "-p",
        "polyjax.as_jax",
        "-q",
        "-p",
        "no:cacheprovider",
        cwd=str(tmp_path),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


def test_usage_error_without_a_program():
    proc = _run("", "-m", "polyjax.as_jax")
    assert proc.returncode == 2
    assert "usage: python -m polyjax.as_jax" in proc.stderr


def test_docstring_examples():
    found = _findings(
        """
        import doctest, json
        import polyjax.as_jax, polyjax.as_jax.__main__
        results = [doctest.testmod(m) for m in (polyjax.as_jax, polyjax.as_jax.__main__)]
        print(json.dumps([[r.failed, r.attempted] for r in results]))
        """
    )
    assert found[0][0] == 0 and found[0][1] >= 3
    assert found[1][0] == 0
