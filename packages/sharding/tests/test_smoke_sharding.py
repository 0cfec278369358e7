import re

import polyjax_sharding


def test_version_is_a_release_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+", polyjax_sharding.__version__)
    assert polyjax_sharding.__all__ == ["__version__"]
