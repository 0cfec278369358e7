import importlib
import pathlib
import re

import pytest

import polyjax_numpy


def test_version_is_a_release_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+", polyjax_numpy.__version__)
    assert polyjax_numpy.__all__ == ["__version__", "lax", "numpy", "ref"]


@pytest.mark.parametrize("package", ["lax", "numpy"])
def test_module_map_lists_every_module(package):
    # The package docstring is the map a newcomer reads first; a new module joins it.
    module = importlib.import_module(f"polyjax_numpy.{package}")
    names = [p.stem for p in pathlib.Path(module.__file__).parent.glob("*.py")]
    missing = [n for n in names if n != "__init__" and f"`{n}`" not in module.__doc__]
    assert not missing, f"polyjax_numpy.{package}'s docstring does not list {missing}"
