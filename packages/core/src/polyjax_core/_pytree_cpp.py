"""The jaxlib bridge: a private C++ ``PyTreeRegistry`` mirroring polyjax's registry.

jaxlib ships a C++ pytree implementation (``jaxlib._jax.pytree``) that flattens
and rebuilds trees several times faster than Python can. polyjax uses it only
through a registry instance of its own, never jaxlib's default registry, so
that JAX and polyjax can live in one process without seeing each other's node
types.

This module imports jaxlib only when `create` is called. `create` builds the
C++ registry (tuples, lists, dicts, None and namedtuples are built into it) and
replays every custom registration made so far on polyjax's registry; from then
on `_Registry.register` forwards new registrations here, so the two registries
always agree about which types are nodes and how to take them apart.

`to_node` converts a C++ tree definition into polyjax's `_Node` form. The
wrapper in ``tree_util`` uses it for the operations that must behave exactly
like the Python engine (repr, error messages, mixing definitions made by
different backends); it is never on a hot path.
"""

from __future__ import annotations

from typing import Any

from polyjax_core import _pytree
from polyjax_core._pytree import _CUSTOM, _DATACLASS, _Node, _NodeKind, _Registry


def _register(cpp: Any, kind: _NodeKind) -> None:
    """Registers one polyjax node kind on the C++ registry."""
    if kind.tag == _DATACLASS:
        cpp.register_dataclass_node(kind.type, list(kind.data_fields), list(kind.meta_fields))
    elif kind.tag == _CUSTOM:
        if kind.flatten_with_keys is None:
            cpp.register_node(kind.type, kind.flatten, kind.unflatten)
        else:
            cpp.register_node(kind.type, kind.flatten, kind.unflatten, kind.flatten_with_keys)


def create(registry: _Registry) -> Any:
    """The C++ registry paired with ``registry``, created (and filled) on first call.

    Raises:
      ImportError: if jaxlib (or its pytree module) is not installed.
    """
    if registry.cpp is None:
        from jaxlib._jax import pytree as cpp_pytree  # the only jaxlib import of core

        cpp = cpp_pytree.PyTreeRegistry()
        for kind in registry.custom:
            _register(cpp, kind)
        registry.cpp_register = _register
        registry.cpp = cpp
    return registry.cpp


def create_mirror(registry: _Registry) -> Any:
    """A new C++ registry with ``registry``'s nodes, kept in step with it from now on.

    The caller may register more node types on it (jit registers ``Array`` as a
    node around its jaxlib buffer); those stay private to the mirror.
    """
    from jaxlib._jax import pytree as cpp_pytree

    cpp = cpp_pytree.PyTreeRegistry()
    for kind in registry.custom:
        _register(cpp, kind)
    registry.cpp_register = _register
    registry.cpp_mirrors.append(cpp)
    return cpp


def treedef_tuple(registry: _Registry, defs: list) -> Any:
    """A C++ tuple tree definition whose children are the given C++ definitions."""
    from jaxlib._jax import pytree as cpp_pytree

    return cpp_pytree.treedef_tuple(registry.cpp, defs)


def to_node(cpp_def: Any, registry: _Registry = _pytree.default_registry) -> _Node:
    """Converts a C++ tree definition into the equivalent `_Node` tree."""
    data = cpp_def.node_data()
    if data is None:
        return _pytree._LEAF
    typ, aux = data
    kind = registry.classify(typ)
    assert kind is not None, f"{typ} is a node for jaxlib but not for polyjax"
    children = [to_node(c, registry) for c in cpp_def.children()]
    return _pytree.make_node(kind, aux, children)
