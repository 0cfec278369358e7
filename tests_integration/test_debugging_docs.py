"""docs/debugging.md's examples run and print what the page shows (as doctests)."""

import doctest
import pathlib

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "debugging.md"


def test_debugging_doc_examples(capfd):
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.IGNORE_EXCEPTION_DETAIL
    failures, tried = doctest.testfile(
        str(DOC), module_relative=False, verbose=False, optionflags=flags
    )
    assert tried >= 30 and failures == 0, capfd.readouterr().out
