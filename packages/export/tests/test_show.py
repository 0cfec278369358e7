"""`describe`: the text `python -m polyjax.export show` prints."""

import dataclasses

import pytest
from _golden import DIR, load

from polyjax_export.show import describe, main


def test_symbolic_signature_with_constraints():
    exp = dataclasses.replace(load("constraints"), _constraints=("a >= b",))
    text = describe(exp)
    assert text.splitlines()[0] == "function f9"
    assert "  symbolic dimensions: a, b" in text
    assert "  constraints: a >= b" in text
    assert "    args[0]: float32[a, b]" in text
    assert "    result: float32[b, b]" in text
    assert "stablehlo" not in text


def test_pytree_names_shardings_vjp_and_module():
    text = describe(load("pytree_io"), module=True)
    assert "    args[0]['b'][0]: float32[2, 3]" in text
    assert "    result[1]['m']: float32[]" in text
    assert "func.func public @main" in text
    text = describe(load("sharded"))
    assert "  platforms: cpu; devices: 4" in text
    assert "args[0]: float32[4, 4]  sharding P('x', 'y') on mesh {'x': 2, 'y': 2}" in text
    assert "  vjp: order 1" in describe(load("with_vjp"))
    assert "  platforms: cpu, cuda; devices: 1" in describe(load("multi_platform"))


def test_show(capsys):
    assert main(["show", str(DIR / "poly_batch.bin")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("function f1\n")
    assert "args[0]: float32[b, 16]" in out and "@main" not in out
    assert main(["show", str(DIR / "poly_batch.bin"), "--module"]) == 0
    assert "func.func public @main" in capsys.readouterr().out


def test_show_bad_file(tmp_path, capsys):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x00" * 40)
    assert main(["show", str(bad)]) == 1
    assert "Cannot deserialize an Exported" in capsys.readouterr().err
    assert main(["show", str(tmp_path / "missing.bin")]) == 1
    with pytest.raises(SystemExit):
        main(["frobnicate"])


def test_a_live_export_has_every_vjp_order_on_demand():
    # has_vjp() never turns false for a live export: describe must not count orders.
    import numpy as np

    from polyjax_core import ShapeDtypeStruct
    from polyjax_export import deserialize, export
    from polyjax_interpreters.jit import jit

    exp = export(jit(lambda x: x * x))(ShapeDtypeStruct((3,), np.float32))
    assert "vjp: every order, on demand" in describe(exp)
    assert "vjp: order 2" in describe(deserialize(exp.serialize(vjp_order=2)))
    assert "vjp: none" in describe(deserialize(exp.serialize()))
