import re

import polyjax_numpy


def test_version_is_a_release_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+", polyjax_numpy.__version__)
    assert polyjax_numpy.__all__ == ["__version__", "lax", "numpy"]
