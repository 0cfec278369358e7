"""The examples of docs/sharding.md, run in order on 8 host devices.

A block with `>>>` prompts is a doctest (its printed output is checked); any
other ``python`` block is run as a script. All blocks share one namespace, as a
reader's session would.
"""

import doctest
import pathlib
import re

import pytest

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "sharding.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _blocks():
    text = DOC.read_text()
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _BLOCK.finditer(text)]


_NAMESPACE: dict = {"__name__": "docs_sharding"}


@pytest.mark.parametrize("line, code", _blocks(), ids=[f"line{n}" for n, _ in _blocks()])
def test_example(line, code):
    where = f"{DOC.name}:{line}"
    if re.search(r"^>>> ", code, re.MULTILINE):
        test = doctest.DocTestParser().get_doctest(code, _NAMESPACE, where, str(DOC), line - 1)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        output = []
        runner.run(test, out=output.append, clear_globs=False)
        _NAMESPACE.update(test.globs)  # the test ran on a copy
        assert runner.failures == 0, "".join(output)
    else:
        exec(compile(code, where, "exec"), _NAMESPACE)


def test_every_block_was_found():
    assert len(_blocks()) >= 8


def test_xmap_doc_examples():
    doc = DOC.parent / "xmap.md"
    failures, tried = doctest.testfile(str(doc), module_relative=False, verbose=False)
    assert tried >= 4 and failures == 0
