"""The symbolic shape language: parsing, scopes, constraints, errors."""

import numpy as np
import pytest

from polyjax_core import ShapeDtypeStruct
from polyjax_core.symbolic_dims import InconclusiveDimensionOperation, symbolic_dim
from polyjax_export._shape_spec import (
    SymbolicScope,
    is_symbolic_dim,
    symbolic_args_specs,
    symbolic_shape,
)


@pytest.mark.parametrize(
    "spec, like, expected",
    [
        ("b, 2*a, ...", (3, 4, 5, 6), "(b, 2*a, 5, 6)"),
        ("b, _, c", (3, 4, 5), "(b, 4, c)"),
        ("(b, c)", None, "(b, c)"),
        ("b,", None, "(b,)"),
        ("", None, "()"),
        (None, (2, 3), "(2, 3)"),
        ("-b + 2*a", None, "(- b + 2*a,)"),
        ("max(a, b), min(a, 3), mod(a, 3), floordiv(a, 2)", None, None),
        ("a // 2, a % 3, a*b - 1, a^2, 3", None, None),
        ("(a + 1)*b, (2)", None, "(a*b + b, 2)"),
    ],
)
def test_parse(spec, like, expected):
    shape = symbolic_shape(spec, like=like)
    if expected is not None:
        assert str(shape) == expected
    # Every dimension evaluates as its Python formula would.
    env = {"a": 7, "b": 4, "c": 2}
    if spec and "..." not in spec and "_" not in spec:
        text = spec.replace("^", "**").replace("floordiv", "fd").replace("mod", "md")
        ops = {"fd": lambda x, y: x // y, "md": lambda x, y: x % y, "max": max, "min": min}
        want = tuple(np.atleast_1d(eval(f"[{text}]", {**ops, **env})).ravel().tolist())
        got = tuple(d.evaluate(env) if is_symbolic_dim(d) else d for d in shape)
        assert got == want


@pytest.mark.parametrize(
    "spec, kw, match",
    [
        ("b, _, c", {}, r"dimension 1: spec contains _ but no 'like'"),
        ("b, ...", {}, r"dimension 1: spec contains \.\.\. but no 'like'"),
        ("b + ", {}, r"syntax error in symbolic shape 'b \+ ' in dimension 0"),
        ("1.5", {}, "expecting integer, found 1.5"),
        ("b, 3", {"like": (3, 4)}, "different size 3 for known dimension"),
        ("mod(a)", {}, "expected ','"),
        ("a ? b", {}, "unexpected character '\\?'"),
        ("..., a", {"like": (1, 2)}, "'...' may only be the last"),
        ("a, b", {"constraints": ["a > b"]}, "must contain one of '==' or '>=' or '<='"),
    ],
)
def test_parse_errors(spec, kw, match):
    with pytest.raises(ValueError, match=match):
        symbolic_shape(spec, **kw)


def test_spec_must_be_string():
    with pytest.raises(ValueError, match="should be None or a string. Found 3"):
        symbolic_shape(3)


def test_scope_and_constraints_exclusive():
    with pytest.raises(ValueError, match="both a `scope` and `constraints`"):
        symbolic_shape("a", constraints=["a >= 2"], scope=SymbolicScope())


def test_constraints_decide_comparisons():
    a, b = symbolic_shape("a, b", constraints=["a >= b + 2", "b <= 10"])
    assert a >= b and a > b and a - b >= 2
    assert b < 11 and not (b > 10)
    with pytest.raises(InconclusiveDimensionOperation) as e:
        bool(a >= 2 * b)
    msg = str(e.value)
    assert "'a' >= '2*b'" in msg and "a >= b + 2" in msg and "docs/export.md" in msg


def test_no_constraints_inconclusive():
    (b,) = symbolic_shape("b")
    assert b >= 1
    with pytest.raises(InconclusiveDimensionOperation, match="(?s)'b' >= '2'.*docs/export.md"):
        bool(b >= 2)


def test_shared_scope():
    scope = SymbolicScope(["a <= 4"])
    (a,) = symbolic_shape("a", scope=scope)
    (a2, c) = symbolic_shape("a, c", scope=scope)
    assert a == a2 and a + c >= 2 and a <= 4
    assert scope.constraints == ("a <= 4",)


def test_mixing_scopes_raises():
    (a,) = symbolic_shape("a")
    (a2,) = symbolic_shape("a")
    assert a != a2
    with pytest.raises(ValueError, match="(?s)different SymbolicScope.*docs/export.md"):
        a + a2
    with pytest.raises(ValueError, match="different SymbolicScope"):
        a + symbolic_dim("a")


def test_scope_rejects_bad_constraints():
    with pytest.raises(ValueError, match="sequence of strings"):
        SymbolicScope("a >= 1")
    with pytest.raises(ValueError, match="is false"):
        SymbolicScope(["3 >= 4"])


def test_symbolic_args_specs():
    x, y = np.ones((3, 4), np.float32), np.ones(2, np.int32)
    got = symbolic_args_specs((x, y), "b, ...")
    assert [type(s) for s in got] == [ShapeDtypeStruct] * 2
    assert str(got[0].shape) == "(b, 4)" and got[1].dtype == np.int32
    assert symbolic_args_specs(np.ones(2), "b").dtype == np.float32  # canonical, as JAX
    assert got[0].shape[0] == got[1].shape[0]  # one scope for all arguments
    got = symbolic_args_specs([x, {"k": y}], ["a, _", {"k": "a"}])
    assert str(got[0].shape) == "(a, 4)" and str(got[1]["k"].shape) == "(a,)"
    assert symbolic_args_specs((x,), None)[0].shape == (3, 4)
    (s,) = symbolic_args_specs((x,), "a, b", constraints=["a >= b"])
    assert s.shape[0] >= s.shape[1]
    with pytest.raises(ValueError, match="pytree prefix"):
        symbolic_args_specs((x, y), ("a", "b", "c"))


def test_is_symbolic_dim():
    (b,) = symbolic_shape("b")
    assert is_symbolic_dim(b) and is_symbolic_dim(2 * b)
    assert not is_symbolic_dim(3) and not is_symbolic_dim(np.int32(3))
