"""Artifacts that JAX 0.10.2 wrote (`golden/`, a copy of the shared export_golden set).

Each `NAME.bin` is `Exported.serialize()` output; `manifest.json` says what a
reader must recover and which calls were made; `arrays.npz` holds their inputs
and JAX's outputs (`NAME__call{i}_arg{j}`, `NAME__call{i}_out{k}`).
"""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest
from _golden import DIR as _DIR
from _golden import aval_str as _aval_str
from _golden import load as _load

from polyjax_core.tree_util import tree_leaves

_MANIFEST = json.loads((_DIR / "manifest.json").read_text())
_CASES = _MANIFEST["cases"]
_ARRAYS = np.load(_DIR / "arrays.npz")
# The sharded case runs on a 2x2 mesh: its call is in multidevice/md_sharded.py
# (4 of 8 host devices); here its metadata, and the error on one device.
_SINGLE_DEVICE = sorted(n for n, c in _CASES.items() if c["nr_devices"] == 1)


def _array(key: str) -> np.ndarray:
    a = _ARRAYS[key]
    # npz stores bfloat16 as raw 2-byte voids.
    return a.view(ml_dtypes.bfloat16) if a.dtype.kind == "V" else a


def test_manifest_is_jax_0_10_2_and_complete():
    assert _MANIFEST["jax_version"] == "0.10.2"
    assert {p.stem for p in _DIR.glob("*.bin")} == set(_CASES)


@pytest.mark.parametrize("name", sorted(_CASES))
def test_metadata(name):
    case = _CASES[name]
    exp = _load(name)
    assert [_aval_str(a) for a in exp.in_avals] == case["in_avals"]
    assert [_aval_str(a) for a in exp.out_avals] == case["out_avals"]
    assert list(exp.platforms) == case["platforms"]
    assert exp.nr_devices == case["nr_devices"]
    assert exp.calling_convention_version == case["calling_convention_version"]
    assert [str(s) for s in exp.in_shardings_hlo] == case["in_shardings_hlo"]
    assert [str(s) for s in exp.out_shardings_hlo] == case["out_shardings_hlo"]
    for key in ("fun_name", "uses_global_constants"):
        if key in case:
            assert getattr(exp, key) == case[key]
    if "in_tree" in case:
        assert str(exp.in_tree) == case["in_tree"]
        assert str(exp.out_tree) == case["out_tree"]
        assert list(exp.module_kept_var_idx) == case["module_kept_var_idx"]
        assert list(exp.ordered_effects) == case["ordered_effects"]
    assert exp.has_vjp() == (case.get("vjp_order", 0) > 0)
    if "vjp" in case:
        vjp = exp.vjp()
        assert [_aval_str(a) for a in vjp.in_avals] == case["vjp"]["in_avals"]
        assert [_aval_str(a) for a in vjp.out_avals] == case["vjp"]["out_avals"]


def _call_cases():
    for name in _SINGLE_DEVICE:
        for i, call in enumerate(_CASES[name]["calls"]):
            yield pytest.param(name, i, call, id=f"{name}-call{i}")


@pytest.mark.parametrize("name, i, call", list(_call_cases()))
def test_calls_as_jax(name, i, call):
    exp = _load(name)
    args = [_array(f"{name}__call{i}_arg{j}") for j in range(call["nargs"])]
    args, kwargs = exp.in_tree.unflatten(args)
    if "error" in call:
        assert call["error"] == "ValueError"
        with pytest.raises(ValueError) as info:
            exp.call(*args, **kwargs)
        # Our messages are JAX's for the checks made before running the module;
        # a failure inside shape refinement keeps its first sentence.
        expected = call["error_message"]
        if "refining" in expected:
            assert str(info.value).startswith("Error refining shapes")
        else:
            assert str(info.value) == expected
        return
    outs = tree_leaves(exp.call(*args, **kwargs))
    assert len(outs) == call["nouts"]
    for k, out in enumerate(outs):
        want = _array(f"{name}__call{i}_out{k}")
        assert out.shape == want.shape and out.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6, atol=1e-6)


def test_with_vjp_artifact_runs_its_vjp():
    exp = _load("with_vjp").vjp()
    args = [_array(f"with_vjp__vjp_arg{j}") for j in range(3)]
    outs = exp.call(*args)
    for k, out in enumerate(outs):
        np.testing.assert_allclose(np.asarray(out), _array(f"with_vjp__vjp_out{k}"), rtol=1e-6)


def test_sharded_metadata_and_single_device_call_error():
    exp = _load("sharded")
    (s_in,), (s_out,) = exp._in_named_shardings, exp._out_named_shardings
    assert s_in.axis_names == ("x", "y") and s_in.axis_sizes == (2, 2)
    assert s_in.spec_str() == "P('x', 'y')"
    assert s_out.spec_str() == "P('x', None)"
    assert s_in.platform == "cpu" and s_in.memory_kind == "device"
    with pytest.raises(ValueError, match="exported for 4 devices"):
        exp.call(_array("sharded__call0_arg0"))
