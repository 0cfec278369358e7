"""The named-axis environment: which axis names are bound, and their sizes.

Collectives such as `psum(x, "i")` refer to an axis by name. A name is bound
by the transformation that maps over it (`vmap(..., axis_name="i")`, `pmap`,
`shard_map`) or, for tracing alone, by `make_jaxpr(..., axis_env=[("i", 4)])`.
The environment is thread-local and scoped with `extend_axis_env`; asking for
an unbound name raises a `NameError` naming it and the names that are bound.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

__all__ = ["AxisFrame", "axis_frame", "axis_size", "bound_axis_names", "extend_axis_env"]


class AxisFrame(NamedTuple):
    name: Any  # a hashable axis name
    size: Any  # an int, or a symbolic dimension


class _AxisEnv(threading.local):
    frames: tuple[AxisFrame, ...] = ()


_env = _AxisEnv()


@contextmanager
def extend_axis_env(axes: Iterable[tuple[Any, Any]]) -> Iterator[None]:
    """Binds `(name, size)` pairs for the extent of the block (inner wins on shadowing)."""
    saved = _env.frames
    _env.frames = saved + tuple(AxisFrame(n, s) for n, s in axes)
    try:
        yield
    finally:
        _env.frames = saved


def bound_axis_names() -> tuple[Any, ...]:
    """The bound axis names, outermost first."""
    return tuple(f.name for f in _env.frames)


def axis_frame(name: Any) -> AxisFrame:
    """The innermost frame binding `name`.

    Raises:
      NameError: `name` is not bound.
    """
    for frame in reversed(_env.frames):
        if frame.name == name:
            return frame
    raise NameError(
        f"unbound axis name: {name}. The following axis names (e.g. defined by vmap, pmap or "
        f"shard_map) are available to collective operations: {list(bound_axis_names())}"
    )


def axis_size(name: Any) -> Any:
    """The size of a bound axis, or the product of sizes for a tuple of names."""
    if isinstance(name, tuple):
        size = 1
        for n in name:
            size = size * axis_frame(n).size
        return size
    return axis_frame(name).size
