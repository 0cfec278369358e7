"""The debugging guides' examples run and print what the pages show (as doctests)."""

import doctest
import pathlib

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


@pytest.mark.parametrize(
    "page, least_examples",
    [("debugging.md", 30), ("debugging-checkify.md", 20)],
)
def test_debugging_guide_examples(capfd, page, least_examples):
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.IGNORE_EXCEPTION_DETAIL
    failures, tried = doctest.testfile(
        str(DOCS / page), module_relative=False, verbose=False, optionflags=flags
    )
    assert tried >= least_examples and failures == 0, capfd.readouterr().out
