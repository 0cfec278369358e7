"""Tests for polyjax_core.source_info: user frames, name stacks, traceback filtering."""

import contextlib
import importlib.util
import textwrap
import threading
import traceback

import pytest

from polyjax_core import config
from polyjax_core import source_info as si

_INTERNAL_SRC = """
import contextlib
from polyjax_core import source_info as si


def bind():
    return _deeper()


def _deeper():
    return si.current()


def bind_into(out):
    out.append(si.current())


@contextlib.contextmanager
def scope():
    yield si.current()


def _call(g, x):
    return g(x)


@si.api_boundary
def public(g, x):
    return _call(g, x)


def _explode(x):
    raise ValueError(f"bad value {x}")


@si.api_boundary
def public_fail(x):
    return _explode(x)
"""


@pytest.fixture
def internal(tmp_path):
    """A fake polyjax-internal module, written to a directory marked internal."""
    path = tmp_path / "fake_internal.py"
    path.write_text(textwrap.dedent(_INTERNAL_SRC))
    si.register_exclusion(str(tmp_path))
    spec = importlib.util.spec_from_file_location("fake_internal", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    yield mod
    si._unregister_exclusion(str(tmp_path))


def _line_of(marker: str) -> int:
    """The line number in this file of the line containing ``marker``."""
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if marker in line and "_line_of" not in line:
                return i
    raise AssertionError(marker)


def _frames(exc: BaseException) -> list[traceback.FrameSummary]:
    return traceback.extract_tb(exc.__traceback__)


# ---------------------------------------------------------------------------
# current()


def test_current_names_the_callers_line():
    info = si.current()  # MARK-direct
    name = "test_current_names_the_callers_line"
    assert info.frame == si.Frame(__file__, name, _line_of("MARK-direct"))
    assert info.name_stack == ()
    assert si.user_frame(info) is info.frame


def test_current_skips_internal_frames(internal):
    info = internal.bind()  # MARK-bind
    assert info.frame.file_name == __file__
    assert info.frame.function_name == "test_current_skips_internal_frames"
    assert info.frame.line == _line_of("MARK-bind")


def test_current_skips_contextlib_frames(internal):
    with internal.scope() as info:  # MARK-scope
        pass
    assert info.frame.file_name == __file__
    assert info.frame.line == _line_of("MARK-scope")


def test_current_keeps_no_frame_objects():
    info = si.current()
    values = [info.frame.file_name, info.frame.function_name, info.frame.line]
    assert [type(v) for v in values] == [str, str, int]


def test_current_when_everything_is_internal(internal):
    # A thread whose whole stack is threading.py (skipped) and internal code.
    out = []
    t = threading.Thread(target=internal.bind_into, args=(out,))
    t.start()
    t.join()
    assert out == [si.SourceInfo(None, ())]


def test_current_same_line_different_name_stacks(monkeypatch):
    infos = []
    for names in [(), ("a",), ()]:
        with contextlib.ExitStack() as scopes:
            for n in names:
                scopes.enter_context(si.extend_name_stack(n))
            infos.append(si.current())  # one line, three calls
    assert [i.name_stack for i in infos] == [(), ("a",), ()]
    assert len({i.frame for i in infos}) == 1
    # The memo of answers stays bounded.
    monkeypatch.setattr(si, "_MEMO_LIMIT", 1)
    first = si.current()  # MARK-memo-1
    second = si.current()  # MARK-memo-2
    assert (first.frame.line, second.frame.line) == (
        _line_of("MARK-memo-1"),
        _line_of("MARK-memo-2"),
    )
    assert len(si._memo) == 1


def test_summarize():
    assert si.summarize(si.SourceInfo(si.Frame("/a/b.py", "f", 12))) == "/a/b.py:12 (f)"
    assert si.summarize(si.SourceInfo(None)) == "unknown"
    here = si.summarize(si.current())  # MARK-summary
    assert here == f"{__file__}:{_line_of('MARK-summary')} (test_summarize)"


# ---------------------------------------------------------------------------
# Name stack


def test_name_stack_nests_and_unwinds():
    assert si.current_name_stack() == ()
    with si.extend_name_stack("jit(f)") as stack:
        assert stack == ("jit(f)",)
        with si.extend_name_stack("vmap"):
            assert si.current().name_stack == ("jit(f)", "vmap")
        assert si.current_name_stack() == ("jit(f)",)
        with pytest.raises(RuntimeError):
            with si.extend_name_stack("inner"):
                raise RuntimeError
        assert si.current_name_stack() == ("jit(f)",)
    assert si.current_name_stack() == ()


def test_name_stack_is_thread_local():
    seen = []
    with si.extend_name_stack("outer"):
        t = threading.Thread(target=lambda: seen.append(si.current_name_stack()))
        t.start()
        t.join()
    assert seen == [()]


# ---------------------------------------------------------------------------
# Traceback filtering


def _user_fn(x):
    return 1 // x  # MARK-user-fn


def test_filtering_keeps_only_user_frames(internal):
    with pytest.raises(ZeroDivisionError) as info:
        internal.public(_user_fn, 0)  # MARK-call
    frames = _frames(info.value)
    assert [(f.filename, f.lineno) for f in frames] == [
        (__file__, _line_of("MARK-call")),
        (__file__, _line_of("MARK-user-fn")),
    ]
    assert any("JAX_TRACEBACK_FILTERING=off" in n for n in info.value.__notes__)


def test_internal_error_keeps_the_message(internal):
    with pytest.raises(ValueError, match="bad value 3") as info:
        internal.public_fail(3)
    assert {f.filename for f in _frames(info.value)} == {__file__}
    assert len(info.value.__notes__) == 1


def test_filtering_off_keeps_all_frames(internal):
    with config.traceback_filtering("off"):
        with pytest.raises(ZeroDivisionError) as info:
            internal.public(_user_fn, 0)
    names = [f.name for f in _frames(info.value)]
    assert "_call" in names and "public" in names and "api_boundary_wrapper" in names
    assert not getattr(info.value, "__notes__", None)


def test_quiet_remove_frames_has_no_note(internal):
    with config.traceback_filtering("quiet_remove_frames"):
        with pytest.raises(ValueError) as info:
            internal.public_fail(1)
    assert {f.filename for f in _frames(info.value)} == {__file__}
    assert not getattr(info.value, "__notes__", None)


@pytest.mark.parametrize("mode", ["auto", "remove_frames", "tracebackhide"])
def test_modes_that_remove_with_a_note(internal, mode):
    with config.traceback_filtering(mode):
        with pytest.raises(ValueError) as info:
            internal.public_fail(1)
    assert {f.filename for f in _frames(info.value)} == {__file__}
    assert len(info.value.__notes__) == 1


def test_nested_boundaries_filter_once(internal):
    def inner_user(x):
        return internal.public(_user_fn, x)  # MARK-nested

    with pytest.raises(ZeroDivisionError) as info:
        internal.public(inner_user, 0)
    frames = _frames(info.value)
    assert {f.filename for f in frames} == {__file__}
    assert [f.name for f in frames] == [
        "test_nested_boundaries_filter_once",
        "inner_user",
        "_user_fn",
    ]
    assert len(info.value.__notes__) == 1


def test_reraising_a_filtered_exception_adds_no_second_note(internal):
    with pytest.raises(ValueError) as first:
        internal.public_fail(1)

    def again(_):
        raise first.value

    with pytest.raises(ValueError) as second:
        internal.public(again, 0)
    assert second.value is first.value
    assert len(second.value.__notes__) == 1


def test_filter_traceback_directly(internal):
    try:
        internal.public_fail.__wrapped__(2)  # unwrapped: no filtering on the way out
    except ValueError as e:
        exc = e
    assert "_explode" in [f.name for f in _frames(exc)]
    filtered = si.filter_traceback(exc.__traceback__)
    entries = traceback.extract_tb(filtered)
    assert [f.name for f in entries] == ["test_filter_traceback_directly"]
    assert si.filter_traceback(None) is None


def test_api_boundary_preserves_metadata_and_results(internal):
    assert internal.public.__name__ == "public"
    assert internal.public(lambda x: x * 2, 21) == 42
