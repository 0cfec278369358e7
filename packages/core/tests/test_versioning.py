"""`version_getattr`: the packages' lazy `__version__`, and the error for other names."""

import re

import pytest

import polyjax_core
from polyjax_core.versioning import version_getattr


def test_packages_give_their_installed_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", polyjax_core.__version__)
    assert version_getattr("m", "polyjax-core")("__version__") == polyjax_core.__version__


def test_other_names_raise_attribute_error_naming_the_module():
    with pytest.raises(AttributeError, match="module 'polyjax_core' has no attribute 'nope'"):
        polyjax_core.nope  # noqa: B018
