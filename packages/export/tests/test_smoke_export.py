import re

import polyjax_export


def test_version_is_a_release_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+", polyjax_export.__version__)


def test_all_names_resolve():
    assert "__version__" in polyjax_export.__all__
    for name in polyjax_export.__all__:
        assert getattr(polyjax_export, name) is not None
