"""Loading the golden artifacts in tests (shared by the test modules of this package)."""

from __future__ import annotations

import pathlib

from polyjax_export import Exported, deserialize

DIR = pathlib.Path(__file__).resolve().parent / "golden"


def blob(name: str) -> bytes:
    """The bytes of golden artifact `name`."""
    return (DIR / f"{name}.bin").read_bytes()


def load(name: str) -> Exported:
    """Golden artifact `name`, deserialized."""
    return deserialize(blob(name))


def aval_str(a) -> str:
    """JAX's str of an aval, e.g. "float32[b,16]"."""
    return f"{a.dtype}[{','.join(str(d) for d in a.shape)}]"
