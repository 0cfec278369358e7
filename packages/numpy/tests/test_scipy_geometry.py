"""`scipy.interpolate.RegularGridInterpolator`, `scipy.spatial.transform` and
`scipy.cluster.vq` against SciPy's."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.cluster.vq as svq
import scipy.interpolate as sint
from scipy.spatial.transform import Rotation as SR
from scipy.spatial.transform import Slerp as SS

from polyjax_core import config
from polyjax_interpreters.ad import grad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.cluster.vq import vq
from polyjax_numpy.scipy.interpolate import RegularGridInterpolator
from polyjax_numpy.scipy.spatial.transform import Rotation, Slerp

RNG = np.random.default_rng(0)


def _np(x):
    return np.asarray(x)


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_regular_grid_interpolator(method):
    grid = (np.array([0.0, 1.0, 2.5]), np.array([-1.0, 0.0, 2.0, 3.0]))
    values = RNG.normal(size=(3, 4, 2))
    xi = np.stack([RNG.uniform(-0.5, 3.0, 7), RNG.uniform(-1.5, 3.5, 7)], axis=-1)
    ref = sint.RegularGridInterpolator(grid, values, method=method, bounds_error=False)
    with config.enable_x64(True):
        ours = RegularGridInterpolator(grid, values, method=method)
        np.testing.assert_allclose(_np(ours(xi)), ref(xi), atol=1e-12)
        extrap = RegularGridInterpolator(grid, values, method=method, fill_value=None)
        ref_ex = sint.RegularGridInterpolator(
            grid, values, method=method, bounds_error=False, fill_value=None
        )
        np.testing.assert_allclose(_np(jit(lambda f, x: f(x))(extrap, xi)), ref_ex(xi), atol=1e-12)
    with pytest.raises(NotImplementedError):
        RegularGridInterpolator(grid, values, bounds_error=True)
    with pytest.raises(ValueError, match="method"):
        ours(xi, method="cubic")


def test_interpolator_grad():
    grid = (np.array([0.0, 1.0, 2.0]),)
    with config.enable_x64(True):
        f = lambda v, x: RegularGridInterpolator(grid, v)(x)  # noqa: E731
        # Linear in the values (the weights), piecewise linear in the point (the slope).
        gv = grad(lambda v: jnp.sum(f(v, np.array([0.3, 1.75]))))(np.array([1.0, 3.0, 2.0]))
        np.testing.assert_allclose(_np(gv), [0.7, 0.55, 0.75], atol=1e-12)
        gx = grad(lambda x: f(np.array([1.0, 3.0, 2.0]), jnp.reshape(x, (1,)))[0])(np.array(0.5))
        assert float(gx) == pytest.approx(2.0)


def test_vq():
    obs, book = RNG.normal(size=(6, 3)), RNG.normal(size=(4, 3))
    with config.enable_x64(True):
        code, dist = vq(obs, book)
        want_code, want_dist = svq.vq(obs, book)
        np.testing.assert_array_equal(_np(code), want_code)
        np.testing.assert_allclose(_np(dist), want_dist, atol=1e-12)
    assert vq(obs.astype(np.float32), book.astype(np.float32))[0].dtype == np.int32
    with pytest.raises(ValueError, match="dimension"):
        vq(obs, book[:, :2])


Q = RNG.normal(size=(5, 4))
V = RNG.normal(size=(5, 3))
SEQS = ("xyz", "ZYX", "zxz", "XYX")
TIMES = np.array([0.0, 1.0, 3.0, 4.0, 6.0])
TT = np.array([0.2, 1.5, 3.9, 5.9])


@jit
def _everything(q, m, rv, mrp, euler):
    """All conversions and operations in one compiled program (one compilation)."""
    r = Rotation.from_quat(q)
    out = {name: getattr(r, name)() for name in ("as_matrix", "as_rotvec", "as_mrp", "magnitude")}
    out["canonical"] = r.as_quat(canonical=True)
    out["euler"] = [r.as_euler(seq) for seq in SEQS]
    out["from_euler"] = [Rotation.from_euler(seq, a).as_matrix() for seq, a in zip(SEQS, euler)]
    out["from_matrix"] = Rotation.from_matrix(m).as_matrix()
    out["from_rotvec"] = Rotation.from_rotvec(rv).as_matrix()
    out["from_mrp"] = Rotation.from_mrp(mrp).as_matrix()
    out["apply"] = r.apply(V)
    out["apply_inv"] = r.apply(V, inverse=True)
    out["compose"] = (r[1] * r[2]).as_matrix()
    out["inv"] = r.inv().as_matrix()
    out["mean"] = r.mean().as_matrix()
    out["slerp"] = Slerp.init(TIMES, r)(TT).as_matrix()
    return out


def test_rotation_against_scipy():
    sr = SR.from_quat(Q)
    want = {name: getattr(sr, name)() for name in ("as_matrix", "as_rotvec", "as_mrp", "magnitude")}
    want["canonical"] = sr.as_quat(canonical=True)
    euler = [sr.as_euler(seq) for seq in SEQS]
    want["euler"] = euler
    want["from_euler"] = [sr.as_matrix()] * len(SEQS)
    for name in ("from_matrix", "from_rotvec", "from_mrp"):
        want[name] = sr.as_matrix()
    want["apply"], want["apply_inv"] = sr.apply(V), sr.apply(V, inverse=True)
    want["compose"] = (sr[1] * sr[2]).as_matrix()
    want["inv"], want["mean"] = sr.inv().as_matrix(), sr.mean().as_matrix()
    want["slerp"] = SS(TIMES, sr)(TT).as_matrix()
    with config.enable_x64(True):
        got = _everything(Q, sr.as_matrix(), sr.as_rotvec(), sr.as_mrp(), euler)
    for name, value in want.items():
        np.testing.assert_allclose(
            np.asarray(got[name]), np.asarray(value), atol=1e-12, err_msg=name
        )


def test_rotation_api():
    np.testing.assert_allclose(
        _np(Rotation.from_euler("x", 30.0, degrees=True).as_matrix()),
        SR.from_euler("x", 30.0, degrees=True).as_matrix(),
        atol=1e-6,
    )
    with pytest.raises(ValueError, match="consecutive"):
        Rotation.from_euler("xxy", np.zeros(3))
    r = Rotation.from_quat(Q.astype(np.float32))
    both = Rotation.concatenate([r[0], r[1:3]])
    assert len(both) == 3 and not both.single and r[0].single
    with pytest.raises(TypeError, match="len"):
        len(Rotation.identity())
    rand = Rotation.random(__import__("polyjax_numpy").random.key(0), 3)
    np.testing.assert_allclose(np.linalg.norm(_np(rand.quat), axis=-1), 1.0, rtol=1e-6)
    # Pytrees: through vmap; differentiable.
    mats = vmap(lambda q: Rotation.from_quat(q).as_matrix())(Q.astype(np.float32))
    np.testing.assert_allclose(_np(mats), SR.from_quat(Q).as_matrix(), atol=1e-5)
    g = grad(lambda a: Rotation.from_rotvec(a).magnitude())(np.float32([0.3, 0.4, 0.0]))
    np.testing.assert_allclose(_np(g), [0.6, 0.8, 0.0], rtol=1e-5)
