"""polyjax's pytree registry as jaxlib's C++ code sees it, for the layers above core.

jaxlib's C++ jit flattens arguments with a C++ ``PyTreeRegistry``. `cpp_registry_mirror`
gives a new one holding every node type polyjax's registry has, kept in step with it
as types are registered later; the caller may register more node types on the mirror
(jit registers ``Array`` as a node around its buffer), which stay private to it.
"""

from __future__ import annotations

from typing import Any

from polyjax_core import _pytree, _pytree_cpp

__all__ = ["cpp_registry_mirror"]


def cpp_registry_mirror() -> Any:
    """A new jaxlib ``PyTreeRegistry`` mirroring polyjax's default registry (needs jaxlib)."""
    return _pytree_cpp.create_mirror(_pytree.default_registry)
