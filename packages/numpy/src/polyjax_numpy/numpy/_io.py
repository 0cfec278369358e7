"""Files and printing: `save`, `savez`, `load`, `array_repr`, `array_str`, and NumPy's
print options (`printoptions`, `get_printoptions`, `set_printoptions`).

Arrays are saved through NumPy's `.npy`/`.npz` writers (their host values are
copied out). NumPy has no `bfloat16` in its file format, which stores such
arrays as 2-byte raw records (`V2`); `load` turns those back into `bfloat16`
and returns `.npy` contents as polyjax arrays, as JAX does. Printing uses
NumPy's formatter, so NumPy's print options apply to polyjax arrays too.
These are host operations: they need concrete arrays, not tracers.
"""

from __future__ import annotations

import os
from typing import IO, Any

import ml_dtypes
import numpy as np

from polyjax_core.tracing import concrete_or_error
from polyjax_numpy.numpy._creation import asarray

# NumPy's print options, which also format polyjax arrays.
printoptions = np.printoptions
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions

_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
_FileLike = str | os.PathLike | IO[bytes]


def _host(x: Any, name: str) -> np.ndarray:
    return concrete_or_error(
        np.asarray, x, f"jnp.{name} needs concrete arrays: it runs on the host."
    )


def save(file: _FileLike, arr: Any, allow_pickle: bool = True) -> None:
    """Writes `arr` to a NumPy `.npy` file (bfloat16 as raw 2-byte records).

    Example:
      >>> import io, polyjax.numpy as jnp
      >>> f = io.BytesIO()
      >>> jnp.save(f, jnp.arange(3))
      >>> _ = f.seek(0)
      >>> jnp.load(f)
      Array([0, 1, 2], dtype=int32)
    """
    np.save(file, _host(arr, "save"), allow_pickle=allow_pickle)


def savez(file: _FileLike, *args: Any, **kwds: Any) -> None:
    """Writes arrays to an uncompressed `.npz` archive (positional ones as `arr_0`, ...).

    Example:
      >>> import io, polyjax.numpy as jnp
      >>> f = io.BytesIO()
      >>> jnp.savez(f, x=jnp.arange(3))
      >>> _ = f.seek(0)
      >>> jnp.load(f)["x"]
      array([0, 1, 2], dtype=int32)
    """
    np.savez(
        file,
        *(_host(a, "savez") for a in args),
        **{k: _host(v, "savez") for k, v in kwds.items()},
    )


def load(file: _FileLike, *args: Any, **kwargs: Any) -> Any:
    """Reads a `.npy` file as a polyjax array (bfloat16 restored), or a `.npz` archive.

    Args:
      file: a path or a binary file object.
      *args, **kwargs: passed on to `numpy.load`.

    Returns:
      An Array for a `.npy` file of numbers; otherwise what `numpy.load` returns (an
      `.npz` archive gives NumPy arrays).

    Example:
      >>> import io, polyjax.numpy as jnp
      >>> f = io.BytesIO()
      >>> jnp.save(f, jnp.array([1.5, 2.0], dtype=jnp.bfloat16))
      >>> _ = f.seek(0)
      >>> jnp.load(f)
      Array([1.5, 2], dtype=bfloat16)
    """
    out = np.load(file, *args, **kwargs)
    if not isinstance(out, np.ndarray):
        return out
    if out.dtype == np.dtype("V2"):
        out = out.view(_BFLOAT16)
    if out.dtype.kind in "biufc" or out.dtype == _BFLOAT16:
        return asarray(out)
    return out


def array_repr(
    arr: Any,
    max_line_width: int | None = None,
    precision: int | None = None,
    suppress_small: bool | None = None,
) -> str:
    """The `repr` of `arr` (`Array([...], dtype=...)`) with the given print options.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.array_repr(jnp.array([1.0, 2.0]) / 3, precision=2)
      'Array([0.33, 0.67], dtype=float32)'
    """
    options = dict(linewidth=max_line_width, precision=precision, suppress=suppress_small)
    with np.printoptions(**{k: v for k, v in options.items() if v is not None}):
        return repr(asarray(arr))


def array_str(
    a: Any,
    max_line_width: int | None = None,
    precision: int | None = None,
    suppress_small: bool | None = None,
) -> str:
    """The values of `a` as text, as NumPy's `array_str` formats them.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.array_str(jnp.arange(3))
      '[0 1 2]'
    """
    return np.array_str(_host(a, "array_str"), max_line_width, precision, suppress_small)


__all__ = [
    "array_repr",
    "array_str",
    "get_printoptions",
    "load",
    "printoptions",
    "save",
    "savez",
    "set_printoptions",
]
