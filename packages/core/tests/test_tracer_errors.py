"""Errors for escaped tracers and for tracers used where Python needs a value."""

import operator

import numpy as np
import pytest

from polyjax_core import config, tracing
from polyjax_core.errors import (
    ConcretizationTypeError,
    JAXIndexError,
    JAXTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_core.tracing import concrete_or_error

f32 = np.float32
HERE = "test_tracer_errors.py"


def _line_of(fn, offset):
    return fn.__code__.co_firstlineno + offset


def test_error_hierarchy_matches_jax():
    assert issubclass(ConcretizationTypeError, JAXTypeError)
    assert issubclass(JAXTypeError, TypeError)
    assert issubclass(TracerBoolConversionError, ConcretizationTypeError)
    assert issubclass(TracerIntegerConversionError, JAXIndexError)
    assert issubclass(JAXIndexError, IndexError)
    assert issubclass(TracerArrayConversionError, JAXTypeError)
    assert issubclass(UnexpectedTracerError, JAXTypeError)


def test_escaped_tracer_names_function_and_line(toy):
    leaked = []

    def leaky(x):
        leaked.append(toy.sin.bind(x))
        return x

    make_jaxpr(leaky)(f32(1.0))
    with pytest.raises(UnexpectedTracerError) as info:
        toy.cos.bind(leaked[0])  # used after make_jaxpr returned
    msg = str(info.value)
    assert f"leaky at {__file__}:{leaky.__code__.co_firstlineno}" in msg
    assert "make_jaxpr" in msg
    assert f"{HERE}:{_line_of(leaky, 1)} (leaky)" in msg  # where the value was created


def test_escaped_tracer_used_in_another_trace(toy):
    leaked = []

    def leaky(x):
        leaked.append(x * 2.0)
        return x

    make_jaxpr(leaky)(f32(1.0))
    with pytest.raises(UnexpectedTracerError, match="escaped"):
        make_jaxpr(lambda y: y * leaked[0])(f32(1.0))


def test_bool_conversion_points_at_the_users_line(toy):
    def f(x):
        if x:  # the offending line
            return x
        return x

    with pytest.raises(TracerBoolConversionError) as info:
        make_jaxpr(f)(f32(1.0))
    msg = str(info.value)
    assert f"{HERE}:{_line_of(f, 1)} (f)" in msg
    assert "traced array with shape float32[]" in msg
    assert "lax.cond" in msg and "static_argnums" in msg
    assert f"tracing the function f at {__file__}" in msg


@pytest.mark.parametrize(
    "convert, error, fragment",
    [
        (operator.index, TracerIntegerConversionError, "__index__"),
        (int, TracerIntegerConversionError, "__int__"),
        (float, ConcretizationTypeError, "`float` function"),
        (complex, ConcretizationTypeError, "`complex` function"),
        (np.asarray, TracerArrayConversionError, "__array__"),
        (lambda x: range(x), TracerIntegerConversionError, "__index__"),
    ],
)
def test_conversions_needing_a_concrete_value(convert, error, fragment):
    def f(x):
        convert(x)
        return x

    with pytest.raises(error) as info:
        make_jaxpr(f)(f32(1.0))
    assert fragment in str(info.value)
    assert f"{HERE}:" in str(info.value)


def test_concrete_or_error():
    assert concrete_or_error(int, 3.0) == 3
    assert concrete_or_error(None, "x") == "x"

    def f(x):
        return concrete_or_error(int, x, "The size argument of zeros must be static.")

    with pytest.raises(ConcretizationTypeError, match="size argument of zeros must be static"):
        make_jaxpr(f)(f32(1.0))


def test_tracers_are_unhashable_and_sized():
    def f(x):
        with pytest.raises(TypeError, match="unhashable"):
            hash(x)
        assert len(x) == 3 and x.shape == (3,) and x.ndim == 1 and x.size == 3
        assert repr(x) == "JitTracer(float32[3])"  # JAX's form
        return x

    make_jaxpr(f)(np.ones(3, f32))

    def g(x):
        with pytest.raises(TypeError, match="len"):
            len(x)
        with pytest.raises(TypeError, match="0-d"):
            iter(x)
        return x

    make_jaxpr(g)(f32(1.0))


def test_unregistered_operators_fail_clearly(monkeypatch):
    # Another package (polyjax-numpy) may have filled the registries in this process.
    monkeypatch.setattr(tracing, "_tracer_methods", {})
    monkeypatch.setattr(tracing, "_tracer_attributes", {})

    def f(x):
        with pytest.raises(TypeError, match="unsupported operand"):
            x @ x  # noqa: B018
        with pytest.raises(TypeError, match="no array library registered it"):
            -x  # noqa: B018
        with pytest.raises(AttributeError, match="no attribute 'sum'"):
            x.sum  # noqa: B018
        return x

    make_jaxpr(f)(np.ones(3, f32))


def _internal_frames(tb):
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    return [f for f in frames if "polyjax_core" in f]


def test_tracebacks_are_filtered_of_polyjax_frames():
    def f(x):
        if x:
            return x
        return x

    with pytest.raises(TracerBoolConversionError) as info:
        make_jaxpr(f)(f32(1.0))
    assert _internal_frames(info.value.__traceback__) == []
    with config.traceback_filtering("off"), pytest.raises(TracerBoolConversionError) as info:
        make_jaxpr(f)(f32(1.0))
    assert _internal_frames(info.value.__traceback__) != []
