"""The examples of docs/debugging-checkify.md run and print what the guide shows."""

import doctest
import pathlib

DOC = pathlib.Path(__file__).parents[1] / "docs" / "debugging-checkify.md"


def test_debugging_checkify_guide_examples():
    result = doctest.testfile(
        str(DOC),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        raise_on_error=False,
        verbose=False,
    )
    assert result.attempted > 20
    assert result.failed == 0
