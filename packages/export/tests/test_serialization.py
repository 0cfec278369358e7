"""`serialize`/`deserialize`: round trips, custom pytree nodes, constraints, untrusted bytes."""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pytest
from _golden import aval_str, blob, load
from hypothesis import given, settings
from hypothesis import strategies as st

from polyjax_core import tree_util
from polyjax_core.abstract_values import ShapedArray
from polyjax_export import (
    DisabledSafetyCheck,
    deserialize,
    register_namedtuple_serialization,
    register_pytree_node_serialization,
)
from polyjax_export import _serialization as ser

_NAMES = ["poly_batch", "pytree_io", "dim_arithmetic", "with_vjp", "multi_platform", "dtypes",
          "scan_symbolic", "sharded", "constraints"]  # fmt: skip


def _signature(exp):
    return (
        exp.fun_name,
        str(exp.in_tree),
        str(exp.out_tree),
        [aval_str(a) for a in exp.in_avals],
        [aval_str(a) for a in exp.out_avals],
        exp.platforms,
        exp.nr_devices,
        exp.calling_convention_version,
        exp.module_kept_var_idx,
        exp.uses_global_constants,
        exp._in_named_shardings,
        exp._out_named_shardings,
        list(exp.disabled_safety_checks),
        exp.mlir_module_serialized,
    )


@pytest.mark.parametrize("name", _NAMES)
def test_round_trip_keeps_everything(name):
    exp = load(name)
    again = deserialize(exp.serialize(vjp_order=1 if exp.has_vjp() else 0))
    assert _signature(again) == _signature(exp)
    assert again.has_vjp() == exp.has_vjp()
    if exp.has_vjp():
        assert _signature(again.vjp()) == _signature(exp.vjp())


def test_serialize_returns_a_bytearray_and_is_deterministic():
    exp = load("pytree_io")
    first = exp.serialize()
    assert isinstance(first, bytearray) and first == exp.serialize()


def test_reserialized_artifact_runs():
    exp = deserialize(load("poly_batch").serialize())
    x = np.arange(48, dtype=np.float32).reshape(3, 16) / 48
    np.testing.assert_allclose(exp.call(x), load("poly_batch").call(x), rtol=1e-6)


def test_vjp_order_beyond_what_is_available_raises():
    with pytest.raises(ValueError, match="needs the VJP of 'f1'"):
        load("poly_batch").serialize(vjp_order=1)
    with pytest.raises(ValueError, match="vjp_order must be >= 0"):
        load("poly_batch").serialize(vjp_order=-1)


def test_disabled_checks_round_trip():
    checks = [DisabledSafetyCheck.platform(), DisabledSafetyCheck.custom_call("my_target")]
    exp = dataclasses.replace(load("dtypes"), disabled_safety_checks=checks)
    assert list(deserialize(exp.serialize()).disabled_safety_checks) == checks
    assert repr(checks[1]) == "custom_call:my_target" and checks[1].is_custom_call() == "my_target"
    assert checks[0].is_custom_call() is None


# ----------------------------------------------------------------------------- custom nodes

Point = collections.namedtuple("Point", ["x", "y"])


class Box:
    def __init__(self, label, a, b):
        self.label, self.a, self.b = label, a, b


tree_util.register_pytree_node(Box, lambda b: ((b.a, b.b), b.label), lambda lab, c: Box(lab, *c))


def _with_in_tree(tree):
    exp = load("pytree_io")  # two f32[2,3] inputs
    return dataclasses.replace(exp, in_tree=tree_util.tree_structure(tree))


def test_namedtuple_and_custom_nodes_need_registration_then_round_trip():
    exp = _with_in_tree(((Point(1, 2),), {}))
    with pytest.raises(ValueError, match="unregistered type"):
        exp.serialize()
    register_namedtuple_serialization(Point, serialized_name="tests.Point")
    again = deserialize(exp.serialize())
    assert again.in_tree == exp.in_tree

    exp = _with_in_tree(((Box("lbl", 1, 2),), {}))
    register_pytree_node_serialization(
        Box,
        serialized_name="tests.Box",
        serialize_auxdata=lambda label: label.encode(),
        deserialize_auxdata=lambda data: data.decode(),
    )
    again = deserialize(exp.serialize())
    assert again.in_tree == exp.in_tree
    with pytest.raises(ValueError, match="Duplicate"):
        register_namedtuple_serialization(Point, serialized_name="tests.Point")


def test_custom_node_without_registration_on_the_reading_side():
    Other = collections.namedtuple("Other", ["p", "q"])
    register_namedtuple_serialization(Other, serialized_name="tests.Other")
    data = _with_in_tree(((Other(1, 2),), {})).serialize()
    del ser._CUSTOM_BY_NAME["tests.Other"]  # as in a process that did not register it
    with pytest.raises(ValueError, match="unregistered type 'tests.Other'"):
        deserialize(data)


# ----------------------------------------------------------------------------- constraints


def _constrained():
    return dataclasses.replace(load("constraints"), _constraints=("a >= b",))


def test_constraints_survive_bytes_and_are_checked_at_call():
    exp = deserialize(_constrained().serialize())
    assert exp._constraints == ("a >= b",)
    a, b = exp.in_avals[0].shape
    assert a >= b  # decided from the constraint of the rebuilt scope
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_allclose(exp.call(x), x[:3] * 2)
    with pytest.raises(ValueError, match=r"Constraint 'a >= b' is not satisfied: a = 3, b = 4"):
        exp.call(np.ones((3, 4), np.float32))


def test_constraints_take_room_only_when_present():
    plain = load("constraints").serialize()
    assert len(_constrained().serialize()) > len(plain)
    assert deserialize(plain)._constraints == ()


# ----------------------------------------------------------------------------- untrusted bytes


@pytest.mark.parametrize("data", [b"", b"abc", b"\x00" * 16, b"\xff" * 64])
def test_garbage_raises_value_error(data):
    with pytest.raises(ValueError, match="Cannot deserialize an Exported"):
        deserialize(data)


def test_not_bytes_raises_type_error():
    with pytest.raises(TypeError, match="bytes or a bytearray"):
        deserialize("text")


# Bytes polyjax wrote carry a CRC of the module, so any corruption is safe to feed
# in. (JAX's bytes have none: jaxlib's MLIR reader can abort the process on some
# corrupted modules, so only truncation is tried on those.)
_OURS = {n: bytes(load(n).serialize(vjp_order=int(n == "with_vjp"))) for n in _NAMES}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(_OURS)), st.data())
def test_corrupted_bytes_raise_value_error(name, data):
    raw = bytearray(_OURS[name])
    for _ in range(data.draw(st.integers(1, 4))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    try:
        deserialize(raw)  # a flipped byte in an unchecked place may still be valid
    except (ValueError, NotImplementedError):
        pass


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(_NAMES), st.data())
def test_truncated_bytes_raise_value_error(name, data):
    raw = blob(name) if data.draw(st.booleans()) else _OURS[name]
    cut = data.draw(st.integers(0, len(raw) - 1))
    try:
        deserialize(raw[:cut])
    except ValueError as e:
        assert "Cannot deserialize an Exported" in str(e)
    else:
        assert cut > len(raw) - 8  # only alignment padding was cut


def test_corrupted_module_is_caught_by_its_checksum():
    raw = bytearray(_OURS["poly_batch"])
    module = bytes(load("poly_batch").mlir_module_serialized)
    at = raw.index(module) + 117  # in the dialect section: this change aborts jaxlib's reader
    raw[at] = 28
    with pytest.raises(ValueError, match="CRC-32 does not match"):
        deserialize(raw)


def test_wrong_version_raises(monkeypatch):
    monkeypatch.setattr(ser, "_WRITTEN_VERSION", 99)
    data = load("dtypes").serialize()
    monkeypatch.undo()
    with pytest.raises(ValueError, match="unsupported serialization version 99"):
        deserialize(data)


_DTYPES_ARGS = (
    np.arange(5, dtype=np.int32),
    np.arange(5, dtype=np.float32).astype("bfloat16"),
    np.ones(5, bool),
)


# The module is checked against the signature when first used, before it runs.
def test_module_that_does_not_match_its_avals_raises():
    exp = load("dtypes")
    wrong = dataclasses.replace(exp, in_avals=(ShapedArray((6,), np.int32), *exp.in_avals[1:]))
    with pytest.raises(ValueError, match=r"takes tensor<5xi32> for argument 0, which does not"):
        deserialize(wrong.serialize()).call(np.arange(6, dtype=np.int32), *_DTYPES_ARGS[1:])
    wrong = dataclasses.replace(exp, module_kept_var_idx=(0, 1))
    with pytest.raises(ValueError, match="main with 3 arguments"):
        deserialize(wrong.serialize()).call(*_DTYPES_ARGS)


def test_module_bytes_that_are_not_stablehlo_raise():
    exp = dataclasses.replace(load("dtypes"), mlir_module_serialized=b"ML\xefR garbage")
    loaded = deserialize(exp.serialize())
    with pytest.raises(ValueError, match="Cannot deserialize the StableHLO module"):
        loaded.call(*_DTYPES_ARGS)
    with pytest.raises(ValueError, match="Cannot deserialize the StableHLO module"):
        loaded.mlir_module()


def test_exported_is_hashable_with_tuple_fields():
    exp = dataclasses.replace(
        load("dtypes"), disabled_safety_checks=[DisabledSafetyCheck.platform()]
    )
    assert isinstance(exp.disabled_safety_checks, tuple)
    assert hash(exp) == hash(dataclasses.replace(exp))
    assert str(exp) == "Exported(fun_name=f6, ...)"


# ----------------------------------------------------------------------------- calling conventions


def _poly_sin():
    from polyjax_core.abstract_values import ShapeDtypeStruct
    from polyjax_export import export, symbolic_shape
    from polyjax_interpreters.jit import jit
    from polyjax_numpy import numpy as jnp

    (b,) = symbolic_shape("b")
    spec = ShapeDtypeStruct((b, 3), np.float32)
    return export(jit(lambda x: jnp.sin(x) * 2.0), platforms=("cpu", "cuda"))(spec)


@pytest.mark.parametrize("version", [9, 10])
def test_calling_convention_version_is_chosen_by_config_and_round_trips(version):
    from polyjax_core import config

    with config.export_calling_convention_version(version):
        exp = _poly_sin()
        # The VJP is exported when serializing, with the version then in force (as JAX).
        blob = exp.serialize(vjp_order=1)
    assert exp.calling_convention_version == version
    assert exp.ordered_effects == () and exp.unordered_effects == ()
    back = deserialize(blob)
    assert back.calling_convention_version == version
    assert back.vjp().calling_convention_version == version
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_allclose(back.call(x), np.sin(x) * 2, rtol=1e-6)


def test_calling_convention_versions_share_the_module():
    # As in JAX 0.10.2: version 10 only records that the Shardy setting is propagated.
    from polyjax_core import config

    with config.export_calling_convention_version(9):
        v9 = _poly_sin()
    v10 = _poly_sin()  # the default
    assert v10.calling_convention_version == 10
    assert v9.mlir_module() == v10.mlir_module()


@pytest.mark.parametrize("version", [8, 11])
def test_unsupported_calling_convention_version_to_write_raises_as_jax(version):
    from polyjax_core import config

    with config.export_calling_convention_version(version):
        with pytest.raises(ValueError, match=rf"version {version} is outside .* \[9\.\.10\]"):
            _poly_sin()
