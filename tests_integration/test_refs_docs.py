"""docs/refs.md's examples run and print what the page shows (as doctests)."""

import doctest
import pathlib

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


def test_refs_guide_examples(capfd):
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.IGNORE_EXCEPTION_DETAIL
    failures, tried = doctest.testfile(
        str(DOCS / "refs.md"), module_relative=False, verbose=False, optionflags=flags
    )
    assert tried >= 15 and failures == 0, capfd.readouterr().out
