"""`polyjax.scipy.<sub>` re-exports `polyjax_numpy.scipy.<sub>` unchanged.

The functions themselves are tested in packages/numpy/tests; here only the
facade's namespaces: the same public names, the very same objects, and
submodules that `import polyjax.scipy.<sub>.<name>` can find.
"""

from __future__ import annotations

import importlib
import types

import numpy as np
import pytest

import polyjax
import polyjax.scipy
import polyjax_numpy.scipy

SUBMODULES = [
    "cluster",
    "fft",
    "integrate",
    "interpolate",
    "linalg",
    "ndimage",
    "optimize",
    "signal",
    "spatial",
    "special",
    "stats",
]


def test_submodule_list_matches_the_implementation():
    assert polyjax.scipy.__all__ == polyjax_numpy.scipy.__all__ == SUBMODULES
    assert set(SUBMODULES) <= set(dir(polyjax.scipy))


@pytest.mark.parametrize("sub", SUBMODULES)
def test_submodule_reexports_every_name(sub):
    facade = importlib.import_module(f"polyjax.scipy.{sub}")
    impl = importlib.import_module(f"polyjax_numpy.scipy.{sub}")
    assert getattr(polyjax.scipy, sub) is facade
    assert facade.__all__ == impl.__all__
    assert facade.__all__, f"polyjax.scipy.{sub} exports nothing"
    _assert_same_names(facade, impl)


def _assert_same_names(facade, impl):
    """Every name of ``impl`` is the same object in ``facade``, or, for a submodule
    (``cluster.vq``), the facade's own module holding the same names."""
    for name in impl.__all__:
        ours, theirs = getattr(facade, name), getattr(impl, name)
        if isinstance(theirs, types.ModuleType) and ours is not theirs:
            assert ours.__name__ == f"{facade.__name__}.{name}"
            assert ours.__all__ == theirs.__all__
            _assert_same_names(ours, theirs)
        else:
            assert ours is theirs, f"{facade.__name__}.{name}"


def test_specific_exports():
    assert polyjax.scipy.fft.__all__ == ["dct", "dctn", "idct", "idctn"]
    assert polyjax.scipy.optimize.__all__ == ["OptimizeResults", "minimize"]
    assert polyjax.scipy.integrate.trapezoid is polyjax.numpy.trapezoid
    assert polyjax.scipy.special.logsumexp is polyjax.nn.logsumexp


def test_facade_functions_compute():
    out = polyjax.scipy.signal.correlate(np.ones(3), np.ones(2))
    np.testing.assert_allclose(out, [1.0, 2.0, 2.0, 1.0])


@pytest.mark.parametrize("dist", ["norm", "gamma", "poisson"])
def test_stats_distribution_submodules_import_by_name(dist):
    module = importlib.import_module(f"polyjax.scipy.stats.{dist}")
    assert module is getattr(polyjax_numpy.scipy.stats, dist)
    assert module is getattr(polyjax.scipy.stats, dist)


def test_import_statement_for_a_distribution():
    import polyjax.scipy.stats.norm

    assert polyjax.scipy.stats.norm.logpdf is polyjax_numpy.scipy.stats.norm.logpdf
    assert polyjax.scipy.stats.mode is polyjax_numpy.scipy.stats.mode
