"""`polyjax.scipy.spatial.transform`: `Rotation` and `Slerp`, as ``jax.scipy.spatial.transform``.

A `Rotation` holds unit quaternions in SciPy's scalar-last order ``(x, y, z, w)``:
one (``quat.shape == (4,)``, `single`) or a stack (``(N, 4)``). Both classes are
pytrees, so they cross `jit`, `vmap` and `grad`. Conventions follow SciPy:

- Euler sequences are three (or fewer) axis letters, lower case for extrinsic
  (fixed-frame) and upper case for intrinsic (body-frame) rotations;
  `as_euler` uses the quaternion method of Bernardes and Viollet (2022) and, in
  gimbal lock, sets the third angle to zero.
- ``r1 * r2`` applies `r2` first. `mean` is Markley's: the eigenvector of the
  largest eigenvalue of the weighted sum of ``q q^T``.
- `identity(num)` needs ``num=None`` (a single rotation), as JAX's does.
- `Slerp` interpolates between consecutive key rotations with constant angular
  velocity; times outside the keys extrapolate from the first or last interval.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.spatial.transform import Rotation
  >>> Rotation.from_rotvec(np.float32([0, 0, np.pi / 2])).apply(np.float32([1, 0, 0])).round(6)
  Array([0., 1., 0.], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes, tree_util
from polyjax_numpy import numpy as jnp
from polyjax_numpy import random
from polyjax_numpy.numpy import _util as _u

__all__ = ["Rotation", "Slerp"]


def _array(name: str, x: Any, last: int) -> Any:
    _u.check_arraylike(name, x)
    (x,) = _u.promote_dtypes_inexact(jnp.asarray(x))
    if x.ndim not in (1, 2) or x.shape[-1] != last:
        raise ValueError(f"{name}: expected shape ({last},) or (N, {last}), got {x.shape}.")
    return x


def _norm(v: Any) -> Any:
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _qmul(p: Any, q: Any) -> Any:
    pv, pw, qv, qw = p[..., :3], p[..., 3:], q[..., :3], q[..., 3:]
    w = pw * qw - jnp.sum(pv * qv, axis=-1, keepdims=True)
    v = pw * qv + qw * pv + jnp.cross(pv, qv)
    return jnp.concatenate([v, w], axis=-1)


def _elementary(axis: int, angle: Any) -> Any:
    half = angle / 2
    parts = [jnp.zeros_like(half)] * 3
    parts[axis] = jnp.sin(half)
    return jnp.stack([*parts, jnp.cos(half)], axis=-1)


def _check_seq(seq: str) -> tuple[list[int], bool]:
    if not isinstance(seq, str) or not 1 <= len(seq) <= 3:
        raise ValueError(
            f"Expected axis specification to be a string of 1 to 3 letters, got {seq!r}."
        )
    intrinsic = seq.isupper()
    if not (intrinsic or seq.islower()) or set(seq.lower()) - set("xyz"):
        raise ValueError(
            f"Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got {seq!r}."
        )
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"Expected consecutive axes to be different, got {seq!r}.")
    return ["xyz".index(c) for c in seq.lower()], intrinsic


def _canonical(q: Any) -> Any:
    return jnp.where(q[..., 3:] < 0, -q, q)


def _wrap(angle: Any) -> Any:
    return jnp.where(
        angle > np.pi, angle - 2 * np.pi, jnp.where(angle < -np.pi, angle + 2 * np.pi, angle)
    )


class Rotation:
    """Rotations in three dimensions, stored as unit quaternions ``(x, y, z, w)``."""

    def __init__(self, quat: Any) -> None:
        self.quat = quat

    def __repr__(self) -> str:
        return f"Rotation(quat={self.quat!r})"

    # -- constructors

    @classmethod
    def from_quat(cls, quat: Any) -> Rotation:
        """From quaternions ``(x, y, z, w)`` (normalized here)."""
        quat = _array("from_quat", quat, 4)
        return cls(quat / _norm(quat)[..., None])

    @classmethod
    def from_rotvec(cls, rotvec: Any, degrees: bool = False) -> Rotation:
        """From rotation vectors: the axis times the angle (radians, or degrees)."""
        rotvec = _array("from_rotvec", rotvec, 3)
        if degrees:
            rotvec = jnp.deg2rad(rotvec)
        angle = _norm(rotvec)
        small = angle < 1e-3
        safe = jnp.where(small, 1.0, angle)
        # sin(angle / 2) / angle, by its Taylor series near 0.
        scale = jnp.where(small, 0.5 - angle**2 / 48 + angle**4 / 3840, jnp.sin(safe / 2) / safe)
        return cls(jnp.concatenate([scale[..., None] * rotvec, jnp.cos(angle / 2)[..., None]], -1))

    @classmethod
    def from_mrp(cls, mrp: Any) -> Rotation:
        """From modified Rodrigues parameters ``axis * tan(angle / 4)``."""
        mrp = _array("from_mrp", mrp, 3)
        sq = jnp.sum(mrp * mrp, axis=-1, keepdims=True)
        return cls(jnp.concatenate([2 * mrp, 1 - sq], axis=-1) / (1 + sq))

    @classmethod
    def from_matrix(cls, matrix: Any) -> Rotation:
        """From rotation matrices ``[3, 3]`` or ``[N, 3, 3]``."""
        _u.check_arraylike("from_matrix", matrix)
        (m,) = _u.promote_dtypes_inexact(jnp.asarray(matrix))
        if m.ndim not in (2, 3) or m.shape[-2:] != (3, 3):
            raise ValueError(f"from_matrix: expected shape (3, 3) or (N, 3, 3), got {m.shape}.")
        diag = jnp.stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]], axis=-1)
        trace = jnp.sum(diag, axis=-1)
        # Shepperd's method: build the quaternion from its largest component.
        candidates = []
        for i in range(3):
            j, k = (i + 1) % 3, (i + 2) % 3
            q = [None] * 4
            q[i] = 1 - trace + 2 * m[..., i, i]
            q[j] = m[..., j, i] + m[..., i, j]
            q[k] = m[..., k, i] + m[..., i, k]
            q[3] = m[..., k, j] - m[..., j, k]
            candidates.append(jnp.stack(q, axis=-1))
        w_first = [
            m[..., 2, 1] - m[..., 1, 2],
            m[..., 0, 2] - m[..., 2, 0],
            m[..., 1, 0] - m[..., 0, 1],
        ]
        candidates.append(jnp.stack([*w_first, 1 + trace], axis=-1))
        choice = jnp.argmax(jnp.concatenate([diag, trace[..., None]], axis=-1), axis=-1)
        stacked = jnp.stack(candidates, axis=-2)
        q = jnp.take_along_axis(stacked, choice[..., None, None], axis=-2)[..., 0, :]
        return cls(q / _norm(q)[..., None])

    @classmethod
    def from_euler(cls, seq: str, angles: Any, degrees: bool = False) -> Rotation:
        """From Euler angles about the axes `seq` (see the module docstring)."""
        axes, intrinsic = _check_seq(seq)
        _u.check_arraylike("from_euler", angles)
        (angles,) = _u.promote_dtypes_inexact(jnp.asarray(angles))
        if len(axes) == 1 and (angles.ndim == 0 or angles.shape[-1] != 1):
            angles = angles[..., None]
        if angles.ndim not in (1, 2) or angles.shape[-1] != len(axes):
            raise ValueError(
                f"from_euler: expected angles of shape ({len(axes)},) or (N, {len(axes)}), "
                f"got {angles.shape}."
            )
        if degrees:
            angles = jnp.deg2rad(angles)
        q = _elementary(axes[0], angles[..., 0])
        for n, axis in enumerate(axes[1:], 1):
            step = _elementary(axis, angles[..., n])
            q = _qmul(q, step) if intrinsic else _qmul(step, q)
        return cls(q)

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> Rotation:
        """The identity rotation (`num` must be None, as in JAX)."""
        if num is not None:
            raise ValueError("Rotation.identity: only num=None (a single rotation) is supported.")
        return cls(jnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtypes.canonicalize_dtype(dtype)))

    @classmethod
    def random(cls, random_key: Any, num: int | None = None) -> Rotation:
        """Uniformly distributed rotations (normalized Gaussian quaternions)."""
        shape = (4,) if num is None else (num, 4)
        return cls.from_quat(random.normal(random_key, shape))

    @classmethod
    def concatenate(cls, rotations: Sequence[Rotation]) -> Rotation:
        """One stack of all the given rotations, in order."""
        return cls(jnp.concatenate([jnp.reshape(r.quat, (-1, 4)) for r in rotations]))

    # -- conversions

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Any:
        """The quaternions; `canonical` makes `w >= 0`; `scalar_first` orders ``(w, x, y, z)``."""
        q = _canonical(self.quat) if canonical else self.quat
        return jnp.roll(q, 1, axis=-1) if scalar_first else q

    def as_matrix(self) -> Any:
        """The rotation matrices ``[3, 3]`` (or ``[N, 3, 3]``)."""
        x, y, z, w = (self.quat[..., i] for i in range(4))
        rows = [
            [w * w + x * x - y * y - z * z, 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), w * w - x * x + y * y - z * z, 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), w * w - x * x - y * y + z * z],
        ]
        return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)

    def as_rotvec(self, degrees: bool = False) -> Any:
        """Rotation vectors (axis times angle in `[0, pi]`)."""
        q = _canonical(self.quat)
        v, w = q[..., :3], q[..., 3]
        angle = 2 * jnp.arctan2(_norm(v), w)
        small = angle < 1e-3
        safe = jnp.where(small, 1.0, angle)
        scale = jnp.where(small, 2 + angle**2 / 12 + 7 * angle**4 / 2880, safe / jnp.sin(safe / 2))
        rotvec = scale[..., None] * v
        return jnp.rad2deg(rotvec) if degrees else rotvec

    def as_mrp(self) -> Any:
        """Modified Rodrigues parameters (of the rotation by at most pi)."""
        q = _canonical(self.quat)
        return q[..., :3] / (1 + q[..., 3:])

    def as_euler(self, seq: str, degrees: bool = False) -> Any:
        """Euler angles about the three axes `seq` (the first and third in `[-pi, pi]`,
        the second in `[0, pi]` for proper and `[-pi/2, pi/2]` for Tait-Bryan sequences)."""
        axes, intrinsic = _check_seq(seq)
        if len(axes) != 3:
            raise ValueError(f"as_euler: expected 3 axes, got {seq!r}.")
        if intrinsic:
            axes = axes[::-1]
        i, j, k = axes
        symmetric = i == k
        if symmetric:
            k = 3 - i - j
        sign = (i - j) * (j - k) * (k - i) // 2
        q = self.quat
        w, qi, qj, qk = q[..., 3], q[..., i], q[..., j], sign * q[..., k]
        if symmetric:
            a, b, c, d = w, qi, qj, qk
        else:
            a, b, c, d = w - qj, qi + qk, qj + w, qk - qi
        second = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
        half_sum, half_diff = jnp.arctan2(b, a), jnp.arctan2(d, c)
        eps = 1e-7 if q.dtype == np.float64 else 1e-3
        lock_zero, lock_pi = jnp.abs(second) <= eps, jnp.abs(second - np.pi) <= eps
        first = jnp.where(
            lock_zero, 2 * half_sum, jnp.where(lock_pi, 2 * half_diff, half_sum - half_diff)
        )
        third = jnp.where(lock_zero | lock_pi, 0.0, half_sum + half_diff)
        if not symmetric:
            third = sign * third
            second = second - np.pi / 2
        if intrinsic:
            first, third = third, first
        angles = jnp.stack([_wrap(first), second, _wrap(third)], axis=-1)
        return jnp.rad2deg(angles) if degrees else angles

    # -- operations

    def apply(self, vectors: Any, inverse: bool = False) -> Any:
        """Rotates `vectors` (``[3]`` or ``[N, 3]``) by each rotation (or its inverse)."""
        vectors = _array("apply", vectors, 3)
        m = self.as_matrix()
        if inverse:
            m = jnp.swapaxes(m, -1, -2)
        out = jnp.einsum("...ij,...j->...i", m, vectors)
        return out

    def inv(self) -> Rotation:
        """The inverse rotations."""
        return Rotation(jnp.concatenate([-self.quat[..., :3], self.quat[..., 3:]], axis=-1))

    def magnitude(self) -> Any:
        """The rotation angles, in `[0, pi]`."""
        return 2 * jnp.arctan2(_norm(self.quat[..., :3]), jnp.abs(self.quat[..., 3]))

    def mean(self, weights: Any = None) -> Rotation:
        """The (weighted) mean rotation (Markley's method)."""
        q = jnp.reshape(self.quat, (-1, 4))
        w = jnp.ones(q.shape[0], q.dtype) if weights is None else jnp.asarray(weights, q.dtype)
        k = jnp.einsum("n,ni,nj->ij", w, q, q)
        _, vectors = jnp.linalg.eigh(k)
        return Rotation(vectors[:, -1])

    @property
    def single(self) -> bool:
        """Whether this is one rotation (not a stack)."""
        return self.quat.ndim == 1

    def __len__(self) -> int:
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __getitem__(self, index: Any) -> Rotation:
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[index])

    def __mul__(self, other: Rotation) -> Rotation:
        """The composition: `other` first, then `self`."""
        if not isinstance(other, Rotation):
            return NotImplemented
        return Rotation(_qmul(self.quat, other.quat))


tree_util.register_pytree_node(Rotation, lambda r: ((r.quat,), None), lambda _, c: Rotation(*c))


class Slerp:
    """Spherical linear interpolation of rotations between key times.

    Build it with `Slerp.init(times, rotations)`; call it with the times to evaluate.
    """

    def __init__(self, times: Any, timedelta: Any, rotations: Rotation, rotvecs: Any) -> None:
        self.times, self.timedelta, self.rotations, self.rotvecs = (
            times,
            timedelta,
            rotations,
            rotvecs,
        )

    def __repr__(self) -> str:
        return (
            f"Slerp(times={self.times!r}, timedelta={self.timedelta!r}, "
            f"rotations={self.rotations!r}, rotvecs={self.rotvecs!r})"
        )

    @classmethod
    def init(cls, times: Any, rotations: Rotation) -> Slerp:
        """An interpolator through `rotations` (at least two) at the increasing `times`."""
        if not isinstance(rotations, Rotation):
            raise TypeError("Slerp: rotations must be a Rotation.")
        if rotations.single or len(rotations) < 2:
            raise ValueError("Slerp: needs at least two rotations.")
        _u.check_arraylike("Slerp", times)
        (times,) = _u.promote_dtypes_inexact(jnp.asarray(times))
        if times.ndim != 1 or times.shape[0] != len(rotations):
            raise ValueError(
                f"Slerp: times must be 1-D with one time per rotation, got {times.shape} "
                f"for {len(rotations)} rotations."
            )
        steps = rotations[:-1].inv() * rotations[1:]
        return cls(times, jnp.diff(times), rotations[:-1], steps.as_rotvec())

    def __call__(self, times: Any) -> Rotation:
        """The interpolated rotations at `times` (a scalar gives a single rotation)."""
        _u.check_arraylike("Slerp", times)
        t = jnp.asarray(times)
        i = jnp.clip(
            jnp.searchsorted(self.times, t, side="right") - 1, 0, self.timedelta.shape[0] - 1
        )
        alpha = (t - self.times[i]) / self.timedelta[i]
        step = Rotation.from_rotvec(self.rotvecs[i] * alpha[..., None])
        return Rotation(self.rotations.quat[i]) * step


tree_util.register_pytree_node(
    Slerp,
    lambda s: ((s.times, s.timedelta, s.rotations, s.rotvecs), None),
    lambda _, c: Slerp(*c),
)
