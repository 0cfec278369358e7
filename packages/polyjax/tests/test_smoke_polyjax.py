import re

import polyjax


def test_version_is_a_release_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+", polyjax.__version__)
    assert polyjax.__all__ == ["__version__"]
