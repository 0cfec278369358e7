"""Host reads never search for JAX's modules, and the fast "no module named jax" is exact.

jaxlib's C++ looks for ``jax.core`` and two ``jax._src`` modules when it copies
a buffer to the host; without JAX installed, each failed import used to cost a
search of ``sys.path`` on every ``np.asarray`` (polyjax_interpreters._absent_jax).
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

from polyjax_interpreters import _absent_jax, array, backends
from polyjax_interpreters.jit import jit


class _Spy:
    def __init__(self):
        self.asked: list[str] = []

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "jax":
            self.asked.append(name)
        return None


@pytest.fixture
def spy():
    finder = _Spy()
    sys.meta_path.insert(0, finder)
    yield finder
    sys.meta_path.remove(finder)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_, np.complex64])
def test_host_reads_of_numpy_dtypes_do_not_look_for_jax(spy, dtype):
    x = array.device_put(np.arange(6).reshape(2, 3).astype(dtype))
    y = jit(lambda a: a)(x)
    spy.asked.clear()
    value = np.asarray(y)
    assert spy.asked == []
    np.testing.assert_array_equal(value, np.arange(6).reshape(2, 3).astype(dtype))
    assert value.dtype == dtype and not value.flags.writeable


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.int4])
def test_host_reads_of_ml_dtypes_keep_their_dtype(dtype):
    host = np.arange(6).reshape(2, 3).astype(dtype)
    value = np.asarray(array.device_put(host))
    assert value.dtype == dtype
    np.testing.assert_array_equal(value.astype(np.float32), host.astype(np.float32))


def test_the_finder_is_installed_with_the_backends():
    backends.get_backend()
    assert _absent_jax._FINDER in sys.meta_path


def test_import_jax_still_fails_as_before_when_absent():
    # The workspace never installs JAX (uv's override keeps it out).
    backends.get_backend()
    with pytest.raises(ModuleNotFoundError, match="No module named 'jax'") as info:
        importlib.import_module("jax.core")
    assert info.value.name == "jax"


def test_a_jax_that_appears_later_is_imported(tmp_path):
    # In a fresh process: a `jax` package put on sys.path after the backends
    # started is found (the finder re-asks the others when sys.path changes).
    (tmp_path / "jax").mkdir()
    (tmp_path / "jax" / "__init__.py").write_text("MARK = 'found'\n")
    code = textwrap.dedent(f"""
        import sys, importlib
        from polyjax_interpreters import array, backends
        backends.get_backend()
        try:
            import jax
            print("unexpected")
        except ModuleNotFoundError:
            pass
        sys.path.insert(0, {str(tmp_path)!r})
        import jax
        print(jax.MARK)
    """)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
        env={"JAX_PLATFORMS": "cpu", "PATH": ""},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["found"]
