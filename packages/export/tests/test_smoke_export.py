import re

import polyjax_export


def test_version_is_a_release_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+", polyjax_export.__version__)
    assert "__version__" in polyjax_export.__all__
