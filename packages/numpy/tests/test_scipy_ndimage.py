"""polyjax.scipy.ndimage.map_coordinates against scipy.ndimage.map_coordinates.

JAX's "constant" and "wrap" modes are SciPy's "grid-constant" and
"grid-wrap"; the other modes share their names. Coordinates avoid exact
half-integers, where SciPy's order-0 rounding depends on its mode mapping.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.ndimage as osp

from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy.scipy import ndimage

RNG = np.random.default_rng(0)
SCIPY_MODE = {
    "constant": "grid-constant",
    "nearest": "nearest",
    "wrap": "grid-wrap",
    "mirror": "mirror",
    "reflect": "reflect",
}


def _coords(shape, n_points=(3, 5)):
    # Well outside the array on both sides, and never on a half-integer.
    c = RNG.uniform(-2.0, max(shape) + 2.0, size=(len(shape), *n_points))
    return (np.round(c * 8) / 8 + 1 / 16).astype(np.float32)


@pytest.mark.parametrize("mode", sorted(SCIPY_MODE))
@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("shape", [(7,), (4, 5), (3, 4, 2)])
def test_against_scipy(mode, order, shape):
    image = RNG.normal(size=shape).astype(np.float32)
    coords = _coords(shape)
    out = ndimage.map_coordinates(image, coords, order, mode=mode, cval=0.5)
    ref = osp.map_coordinates(
        image.astype(float), coords.astype(float), order=order, mode=SCIPY_MODE[mode], cval=0.5
    )
    assert out.shape == coords.shape[1:] and out.dtype == np.float32
    np.testing.assert_allclose(out, ref, atol=1e-5)


def test_integer_input_and_list_coordinates():
    image = np.arange(10, 60, 10).astype(np.int32)
    coords = [np.array([0.25, 1.5, 2.05, 3.9])]
    out = ndimage.map_coordinates(image, coords, 1)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, osp.map_coordinates(image, coords, order=1))
    # Coordinates of a rank-0 shape give a rank-0 result.
    out = ndimage.map_coordinates(np.eye(3, dtype=np.float32), [1.0, 1.0], 0)
    assert out.shape == () and out == 1.0
    # Size-0 coordinates.
    assert ndimage.map_coordinates(image, [np.zeros((0,))], 1).shape == (0,)


def test_errors():
    image = np.ones((3, 3), np.float32)
    with pytest.raises(ValueError, match="sequence of length input.ndim = 2, got 1"):
        ndimage.map_coordinates(image, [np.zeros(2)], 1)
    with pytest.raises(NotImplementedError, match="only order 0 and 1"):
        ndimage.map_coordinates(image, [np.zeros(2)] * 2, 3)
    with pytest.raises(ValueError, match=r"order must be in \[0, 5\]"):
        ndimage.map_coordinates(image, [np.zeros(2)] * 2, 6)
    with pytest.raises(NotImplementedError, match="'grid-wrap' is not supported"):
        ndimage.map_coordinates(image, [np.zeros(2)] * 2, 1, mode="grid-wrap")
    with pytest.raises(ValueError, match="mode must be one of"):
        ndimage.map_coordinates(image, [np.zeros(2)] * 2, 1, mode="bad")


def test_grads_jit_vmap():
    image = RNG.normal(size=(4, 5)).astype(np.float32)
    coords = _coords((4, 5), (4,))
    for mode in ("constant", "reflect"):
        check_grads(
            lambda im, c, mode=mode: ndimage.map_coordinates(im, c, 1, mode=mode),
            (image, coords),
            order=2,
            modes=("fwd", "rev"),
        )
    f = jit(lambda im, c: ndimage.map_coordinates(im, c, 1, mode="wrap"))
    # XLA may fuse (and reassociate) the interpolation under jit: float32 rounding differs.
    np.testing.assert_allclose(
        f(image, coords),
        ndimage.map_coordinates(image, coords, 1, mode="wrap"),
        rtol=1e-5,
        atol=1e-6,
    )
    batch = np.stack([image, 2 * image])
    out = vmap(lambda im: ndimage.map_coordinates(im, coords, 1))(batch)
    loop = np.stack([ndimage.map_coordinates(im, coords, 1) for im in batch])
    np.testing.assert_allclose(out, loop, rtol=1e-5, atol=1e-6)
