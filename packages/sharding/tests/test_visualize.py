"""visualize_sharding on one device (the 8-device drawings are in multidevice/md_visualize.py)."""

import numpy as np
import pytest

from polyjax_core import make_jaxpr
from polyjax_interpreters import array, backends
from polyjax_sharding import (
    make_single_device_sharding,
    visualize_array_sharding,
    visualize_sharding,
)


def test_single_device_rank_1_and_2(capsys):
    s = make_single_device_sharding(backends.devices()[0])
    visualize_sharding((5,), s, use_color=False)
    assert capsys.readouterr().out == (
        "┌───────────────────────┐\n│         CPU 0         │\n└───────────────────────┘\n"
    )
    visualize_sharding((2, 3), s, use_color=False)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 11 and lines[5].strip("│ ") == "CPU 0"


def test_array_sharding(capsys):
    x = array.device_put(np.zeros((4, 4), np.float32))
    visualize_array_sharding(x, use_color=False)
    assert "CPU 0" in capsys.readouterr().out


@pytest.mark.parametrize("shape", [(), (2, 2, 2)])
def test_rank_must_be_1_or_2(shape):
    s = make_single_device_sharding(backends.devices()[0])
    with pytest.raises(ValueError, match="only works for shapes with 1 and 2 dimensions"):
        visualize_sharding(shape, s)


def test_tracers_and_host_arrays_are_refused():
    with pytest.raises(TypeError, match="needs a concrete array, but got a tracer"):
        make_jaxpr(visualize_array_sharding)(np.zeros(3, np.float32))
    with pytest.raises(TypeError, match=r"placed on devices .* got ndarray"):
        visualize_array_sharding(np.zeros(3))
