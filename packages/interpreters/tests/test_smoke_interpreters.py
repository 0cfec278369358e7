import re

import polyjax_interpreters


def test_version_is_a_release_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+", polyjax_interpreters.__version__)
    for name in polyjax_interpreters.__all__:
        assert getattr(polyjax_interpreters, name) is not None


def test_jaxlib_is_the_tested_version():
    import jaxlib

    major, minor, patch = (int(p) for p in jaxlib.__version__.split(".")[:3])
    # pyproject.toml pins jaxlib>=0.10.2,<0.11: the range the lowering is tested on.
    assert (0, 10, 2) <= (major, minor, patch) < (0, 11, 0)
