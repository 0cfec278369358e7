import re

import polyjax_interpreters


def test_version_is_a_release_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+", polyjax_interpreters.__version__)
    assert polyjax_interpreters.__all__ == ["__version__"]
