"""polyjax_core.deprecations: JAX-style deprecation warnings for names that move."""

from __future__ import annotations

import types
import warnings

import pytest

from polyjax_core.deprecations import deprecated, deprecation_getattr, deprecation_message
from polyjax_core.versioning import version_getattr


def _new(x, *, scale=2):
    """Doubles."""
    return x * scale


def test_message_reads_as_jax_words_it():
    assert deprecation_message(
        "polyjax.numpy.fix", since="0.2.0", removal="0.3.0", use="polyjax.numpy.trunc"
    ) == (
        "polyjax.numpy.fix was deprecated in polyjax v0.2.0, and will be removed in "
        "polyjax v0.3.0. Use polyjax.numpy.trunc instead."
    )
    gone = deprecation_message("m.f", since="1.0.0", removal="2.0.0", package="p", removed=True)
    assert gone == "m.f was deprecated in p v1.0.0, and removed in p v2.0.0."


def test_deprecated_callable_warns_at_the_caller_and_still_works():
    old = deprecated(_new, "m.old", since="0.2.0", removal="0.3.0", use="m.new")
    with pytest.warns(
        DeprecationWarning, match=r"^m\.old was deprecated .* v0\.3\.0\. Use m\.new"
    ) as rec:
        assert old(3, scale=3) == 9
    assert rec[0].filename == __file__
    assert old.__name__ == "_new" and old.__doc__ == "Doubles."
    assert "v0.3.0" in old.__deprecated__


def _fake_module():
    mod = types.ModuleType("fake_pkg")
    mod.__getattr__ = deprecation_getattr(
        "fake_pkg",
        {
            "moved": ("fake_pkg.moved was deprecated ... Use fake_pkg.new instead.", _new),
            "gone": (
                deprecation_message("fake_pkg.gone", since="0.1.0", removal="0.2.0", removed=True),
                None,
            ),
        },  # fmt: skip
        fallback=version_getattr("fake_pkg", "polyjax-core"),
    )
    return mod


def test_module_getattr_warns_for_moved_names():
    mod = _fake_module()
    with pytest.warns(DeprecationWarning, match="Use fake_pkg.new instead") as rec:
        assert mod.moved is _new
    assert rec[0].filename == __file__


def test_module_getattr_removed_and_unknown_names():
    mod = _fake_module()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match=r"fake_pkg\.gone was deprecated in polyjax "
                           r"v0\.1\.0, and removed in polyjax v0\.2\.0\."):  # fmt: skip
            mod.gone
        with pytest.raises(AttributeError, match="module 'fake_pkg' has no attribute 'nope'"):
            mod.nope
        assert mod.__version__.count(".") == 2  # the fallback
        assert not hasattr(mod, "gone")
