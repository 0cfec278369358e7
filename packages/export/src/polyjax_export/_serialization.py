"""Reading and writing `Exported` in JAX 0.10.2's flatbuffer format.

The bytes are a flatbuffer whose root table is ``Exported`` (no file
identifier). We read and write the tables by hand with the PyPI `flatbuffers`
runtime; the slot numbers below are the schema's field order. Tables used:

* ``Exported``: 0 serialization_version (u16), 1 function_name, 2 in_tree,
  3 in_avals (legacy), 4 out_tree, 5 out_avals (legacy), 6 nr_devices_short,
  7 in_shardings (legacy), 8 out_shardings (legacy), 9 platforms,
  10 ordered_effects, 11 unordered_effects, 12 disabled_checks,
  13 mlir_module_serialized, 14 calling_convention_version (u16),
  15 module_kept_var_idx ([u16]), 16 uses_global_constants, 17 vjp (Exported),
  18 nr_devices (u32), 19 unique_avals, 20 unique_abstract_meshes,
  21 unique_named_shardings, 22/23 in/out_avals_idxs ([u32], 0-based),
  24/25 in/out_shardings_idxs ([u32], 1-based, 0 = unspecified).
* ``PyTreeDef``: 0 kind, 1 children, 2 children_names, 3 custom_name,
  4 custom_auxdata.
* ``AbstractValue``: 0 kind, 1 shape ([string]), 2 dtype, 3 memory_space.
* ``Sharding``: 0 kind, 1 hlo_sharding_proto, 2 named_sharding;
  ``NamedSharding``: 0 mesh, 1 spec, 2 memory_kind, 3 abstract_mesh_idx;
  ``AbstractMesh``: 0 axis_sizes, 1 axis_names, 2 axis_types,
  3 abstract_device; ``AbstractDevice``: 0 device_kind, 1 num_cores,
  2 platform; ``PartitionSpec``: 0 partitions, 1 reduced, 2 unreduced;
  ``PartitionSpecOneAxis``: 0 axes.
* ``Effect``: 0 type_name; ``DisabledSafetyCheck``: 0 kind, 1 target.

Like JAX we write both the de-duplicated layout (slots 19-25) and the legacy
per-argument one (3, 5, 7, 8), and store 3 as serialization_version for old
readers. polyjax adds two fields JAX does not know, far past JAX's slots so
that a later JAX field does not clash: `_SLOT_CONSTRAINTS` holds the
symbolic-shape constraints as strings, and `_SLOT_MODULE_CRC` the CRC-32 of
`mlir_module_serialized`. Flatbuffer readers skip fields they do not know, so
JAX reads our bytes unchanged (rebuilding an empty scope, as for its own).

The checksum is there because jaxlib's MLIR bytecode reader is not safe on
corrupted input: some corrupted modules abort the process instead of raising.
Bytes polyjax wrote are checked against their CRC before the module is
parsed, so corruption raises `ValueError`; bytes JAX wrote have no checksum,
and their module is parsed as is (as JAX itself does).

The bytes are untrusted: every malformed input raises `ValueError` (the
flatbuffers runtime itself raises assorted errors on bad offsets; we turn them
into one clear message). The embedded module is checked against the avals
when it is first used (`_module.check_module_signature`, before a call is
lowered), not here: parsing it costs ten times more than the rest of
`deserialize`, and JAX does not parse it on loading either.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import flatbuffers
import numpy as np
from flatbuffers import encode, packer, table
from flatbuffers import number_types as N

from polyjax_core import dtypes as pdt
from polyjax_core import symbolic_dims as sd
from polyjax_core import tree_util
from polyjax_core.abstract_values import ShapedArray
from polyjax_export._exported import (
    _IMPLS,
    DisabledSafetyCheck,
    Exported,
    NamedShardingSpec,
    typed_aval,
)
from polyjax_export._shape_spec import SymbolicScope, parse_dim

__all__ = [
    "deserialize",
    "register_namedtuple_serialization",
    "register_pytree_node_serialization",
    "serialize",
]

# What we store in serialization_version (as JAX does, for old readers) and
# the range of values we accept there.
_WRITTEN_VERSION = 3
_ACCEPTED_VERSIONS = range(1, 12)
_SLOT_CONSTRAINTS = 48
_SLOT_MODULE_CRC = 49

_DTYPES: tuple[Any, ...] = (
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
    pdt.bfloat16,
    pdt.int4,
    pdt.uint4,
    pdt.float8_e4m3b11fnuz,
    pdt.float8_e4m3fn,
    pdt.float8_e4m3fnuz,
    pdt.float8_e5m2,
    pdt.float8_e5m2fnuz,
    pdt.float0,
    pdt.float8_e4m3,
    pdt.float8_e3m4,
    pdt.float8_e8m0fnu,
    pdt.float4_e2m1fn,
)
_DTYPE_CODE = {np.dtype(d): i for i, d in enumerate(_DTYPES)}
_KEY_DTYPE_NAMES = {27: "key<fry>", 28: "key<rbg>", 29: "key<unsafe_rbg>"}

_LEAF, _NONE, _TUPLE, _LIST, _DICT, _CUSTOM = range(6)
_CHECK_KINDS = ("platform", "custom_call", "shape_assertions")


# ----------------------------------------------------------------------------- custom nodes

# serialized name -> (nodetype, deserialize_auxdata, from_children); nodetype -> (name, ser)
_CUSTOM_BY_NAME: dict[str, tuple[type, Callable[[bytes], Any], Callable[..., Any] | None]] = {}
_CUSTOM_BY_TYPE: dict[type, tuple[str, Callable[[Any], bytes]]] = {}


def register_pytree_node_serialization(
    nodetype: type,
    *,
    serialized_name: str,
    serialize_auxdata: Callable[[Any], bytes],
    deserialize_auxdata: Callable[[bytes], Any],
    from_children: Callable[[Any, Sequence[Any]], Any] | None = None,
) -> type:
    """Lets `Exported` objects with this pytree node type in their signature be serialized.

    Args:
      nodetype: a type registered as a pytree node.
      serialized_name: the name stored in the bytes; the same on the reading side.
      serialize_auxdata: aux data -> bytes.
      deserialize_auxdata: bytes -> aux data.
      from_children: `(aux_data, children) -> node`; by default the node's
        registered unflatten function.

    Returns:
      `nodetype`, so this can be used as a decorator factory's result.

    Raises:
      ValueError: if the name or the type is already registered.
    """
    if serialized_name in _CUSTOM_BY_NAME:
        raise ValueError(
            f"Duplicate serialization registration for serialized_name={serialized_name!r}"
        )
    if nodetype in _CUSTOM_BY_TYPE:
        raise ValueError(f"Duplicate serialization registration for type {nodetype}")
    _CUSTOM_BY_NAME[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    _CUSTOM_BY_TYPE[nodetype] = (serialized_name, serialize_auxdata)
    return nodetype


def register_namedtuple_serialization(nodetype: type, *, serialized_name: str) -> type:
    """Lets a namedtuple type appear in the signature of serialized `Exported`s.

    Args:
      nodetype: a `collections.namedtuple` (or `typing.NamedTuple`) class.
      serialized_name: the name stored in the bytes.

    Returns:
      `nodetype`.
    """
    if not (issubclass(nodetype, tuple) and hasattr(nodetype, "_fields")):
        raise ValueError(f"Cannot register {nodetype} as a namedtuple: it is not a namedtuple")

    # The field names are the aux data; check them when reading.
    def ser(aux: Any) -> bytes:
        return b";".join(f.encode() for f in nodetype._fields)

    def deser(data: bytes) -> Any:
        fields = tuple(f.decode() for f in data.split(b";")) if data else ()
        if fields != tuple(nodetype._fields):
            raise ValueError(
                f"The namedtuple {serialized_name!r} was serialized with fields {fields}, "
                f"but the registered type has fields {nodetype._fields}"
            )
        return None

    return register_pytree_node_serialization(
        nodetype,
        serialized_name=serialized_name,
        serialize_auxdata=ser,
        deserialize_auxdata=deser,
        from_children=lambda _aux, children: nodetype(*children),
    )


# ----------------------------------------------------------------------------- writing


class _Writer:
    """Builds the flatbuffer bottom-up (children before the tables that refer to them)."""

    def __init__(self) -> None:
        self.b = flatbuffers.Builder(1024)

    def string(self, s: str) -> int:
        return self.b.CreateString(s)

    def offsets(self, offs: Sequence[int]) -> int:
        b = self.b
        b.StartVector(4, len(offs), 4)
        for o in reversed(offs):
            b.PrependUOffsetTRelative(o)
        return b.EndVector()

    def strings(self, items: Sequence[str]) -> int:
        return self.offsets([self.string(s) for s in items])

    def numbers(self, items: Sequence[int], dtype: Any) -> int:
        return self.b.CreateNumpyVector(np.asarray(items, dtype=dtype))

    def table(self, nslots: int, fields: Sequence[tuple[str, int, Any]]) -> int:
        """A table from (kind, slot, value); kind is 'off', 'u8', 'i8', 'u16', 'u32' or 'bool'."""
        b = self.b
        b.StartObject(nslots)
        for kind, slot, value in fields:
            if value is None:
                continue
            if kind == "off":
                b.PrependUOffsetTRelativeSlot(slot, value, 0)
            elif kind == "i8":
                b.PrependInt8Slot(slot, value, 0)
            elif kind == "u16":
                b.PrependUint16Slot(slot, value, 0)
            elif kind == "u32":
                b.PrependUint32Slot(slot, value, 0)
            else:
                b.PrependBoolSlot(slot, value, False)
        return b.EndObject()

    # -- pieces

    def treedef(self, t: tree_util.PyTreeDef) -> int:
        data = t.node_data()
        children = t.children()
        names = custom_name = auxdata = None
        if data is None:
            kind = _LEAF
        elif data[0] is type(None):
            kind = _NONE
        elif data[0] is tuple:
            kind = _TUPLE
        elif data[0] is list:
            kind = _LIST
        elif data[0] is dict:
            kind = _DICT
            names = self.strings([_dict_key(k) for k in data[1]])
        else:
            kind = _CUSTOM
            entry = _CUSTOM_BY_TYPE.get(data[0])
            if entry is None:
                raise ValueError(
                    f"Cannot serialize PyTreeDef containing an unregistered type "
                    f"{data[0]}. Use `export.register_pytree_node_serialization` or "
                    "`export.register_namedtuple_serialization`."
                )
            custom_name = self.string(entry[0])
            auxdata = self.b.CreateByteVector(bytes(entry[1](data[1])))
        kids = self.offsets([self.treedef(c) for c in children]) if kind != _LEAF else None
        return self.table(
            5,
            [
                ("i8", 0, kind),
                ("off", 1, kids),
                ("off", 2, names),
                ("off", 3, custom_name),
                ("off", 4, auxdata),
            ],
        )

    def aval(self, a: ShapedArray) -> int:
        code = _DTYPE_CODE.get(np.dtype(a.dtype)) if isinstance(a.dtype, np.dtype) else None
        if code is None:
            raise NotImplementedError(f"Serializing arrays of dtype {a.dtype} is not supported")
        shape = self.strings([str(d) for d in a.shape])
        # memory_space 1 = device, what JAX writes for ordinary arrays.
        return self.table(4, [("off", 1, shape), ("i8", 2, code), ("i8", 3, 1)])

    def mesh(self, s: NamedShardingSpec) -> int:
        kind = self.string(s.device_kind) if s.device_kind is not None else None
        plat = self.string(s.platform) if s.platform is not None else None
        device = self.table(3, [("off", 0, kind), ("u32", 1, s.num_cores), ("off", 2, plat)])
        sizes = self.numbers(s.axis_sizes, np.uint32)
        names = self.strings(s.axis_names)
        types = self.numbers(s.axis_types, np.int8)
        return self.table(
            4, [("off", 0, sizes), ("off", 1, names), ("off", 2, types), ("off", 3, device)]
        )

    def named_sharding(self, s: NamedSharding, mesh_idx: int) -> int:
        parts = self.offsets(
            [self.table(1, [("off", 0, self.strings(axes))]) for axes in s.partitions]
        )
        reduced = self.strings(s.reduced)
        unreduced = self.strings(s.unreduced)
        spec = self.table(3, [("off", 0, parts), ("off", 1, reduced), ("off", 2, unreduced)])
        mem = self.string(s.memory_kind) if s.memory_kind is not None else None
        return self.table(
            4,
            [
                ("off", 0, self.mesh(s)),
                ("off", 1, spec),
                ("off", 2, mem),
                ("u32", 3, mesh_idx),
            ],
        )


NamedSharding = NamedShardingSpec  # the stored form of a named sharding


def _dict_key(k: Any) -> str:
    if not isinstance(k, str):
        raise ValueError(f"Cannot serialize a dict pytree node with non-string key {k!r}")
    return k


def _write_exported(w: _Writer, exp: Exported, vjp_order: int) -> int:
    vjp = None
    if vjp_order > 0:
        if not exp.has_vjp():
            raise ValueError(
                f"serialize(vjp_order={vjp_order}) needs the VJP of '{exp.fun_name}', "
                "which is not available"
            )
        vjp = _write_exported(w, exp.vjp(), vjp_order - 1)

    fun_name = w.string(exp.fun_name)
    in_tree = w.treedef(exp.in_tree)
    out_tree = w.treedef(exp.out_tree)

    # De-duplicated avals and their indices; the legacy lists repeat them.
    unique: dict[Any, int] = {}
    aval_offsets: list[int] = []

    def aval_index(a: ShapedArray) -> int:
        key = (tuple(str(d) for d in a.shape), np.dtype(a.dtype))
        if key not in unique:
            unique[key] = len(aval_offsets)
            aval_offsets.append(w.aval(a))
        return unique[key]

    in_idxs = [aval_index(a) for a in exp.in_avals]
    out_idxs = [aval_index(a) for a in exp.out_avals]

    # Shardings: 1-based indices into the unique named shardings, 0 for none.
    meshes: dict[Any, int] = {}
    shardings: dict[NamedShardingSpec, int] = {}
    sharding_offsets: list[int] = []

    def sharding_index(s: NamedShardingSpec | None) -> int:
        if s is None:
            return 0
        if s not in shardings:
            mkey = (s.axis_names, s.axis_sizes, s.axis_types, s.device_kind, s.platform)
            mesh_idx = meshes.setdefault(mkey, len(meshes))
            shardings[s] = len(sharding_offsets) + 1
            sharding_offsets.append(w.named_sharding(s, mesh_idx))
        return shardings[s]

    in_named = exp._in_named_shardings or (None,) * len(exp.in_avals)
    out_named = exp._out_named_shardings or (None,) * len(exp.out_avals)
    in_sh = [sharding_index(s) for s in in_named]
    out_sh = [sharding_index(s) for s in out_named]
    first_spec_of_mesh: dict[int, NamedShardingSpec] = {}
    for s in shardings:
        mkey = (s.axis_names, s.axis_sizes, s.axis_types, s.device_kind, s.platform)
        first_spec_of_mesh.setdefault(meshes[mkey], s)
    mesh_offsets = [w.mesh(first_spec_of_mesh[i]) for i in range(len(meshes))]

    def legacy_shardings(idxs: list[int]) -> int:
        return w.offsets(
            [w.table(3, [("off", 2, sharding_offsets[i - 1] if i else None)]) for i in idxs]
        )

    platforms = w.strings(exp.platforms)
    ordered = w.offsets(
        [w.table(1, [("off", 0, w.string(_effect_name(e)))]) for e in exp.ordered_effects]
    )
    unordered = w.offsets(
        [w.table(1, [("off", 0, w.string(_effect_name(e)))]) for e in exp.unordered_effects]
    )
    checks = w.offsets([_write_check(w, c) for c in exp.disabled_safety_checks])
    module = w.b.CreateByteVector(bytes(exp.mlir_module_serialized))
    kept = w.numbers(exp.module_kept_var_idx, np.uint16)
    constraints = w.strings(exp._constraints) if exp._constraints else None
    fields = [
        ("u16", 0, _WRITTEN_VERSION),
        ("off", 1, fun_name),
        ("off", 2, in_tree),
        ("off", 3, w.offsets([aval_offsets[i] for i in in_idxs])),
        ("off", 4, out_tree),
        ("off", 5, w.offsets([aval_offsets[i] for i in out_idxs])),
        ("off", 7, legacy_shardings(in_sh)),
        ("off", 8, legacy_shardings(out_sh)),
        ("off", 9, platforms),
        ("off", 10, ordered),
        ("off", 11, unordered),
        ("off", 12, checks),
        ("off", 13, module),
        ("u16", 14, exp.calling_convention_version),
        ("off", 15, kept),
        ("bool", 16, bool(exp.uses_global_constants)),
        ("off", 17, vjp),
        ("u32", 18, exp.nr_devices),
        ("off", 19, w.offsets(aval_offsets)),
        ("off", 20, w.offsets(mesh_offsets)),
        ("off", 21, w.offsets(sharding_offsets)),
        ("off", 22, w.numbers(in_idxs, np.uint32)),
        ("off", 23, w.numbers(out_idxs, np.uint32)),
        ("off", 24, w.numbers(in_sh, np.uint32)),
        ("off", 25, w.numbers(out_sh, np.uint32)),
        ("off", _SLOT_CONSTRAINTS, constraints),
        ("u32", _SLOT_MODULE_CRC, zlib.crc32(bytes(exp.mlir_module_serialized))),
    ]
    return w.table(_SLOT_MODULE_CRC + 1, fields)


def _write_check(w: _Writer, c: DisabledSafetyCheck) -> int:
    target = c.is_custom_call()
    if target is not None:
        return w.table(2, [("i8", 0, 1), ("off", 1, w.string(target))])
    return w.table(2, [("i8", 0, _CHECK_KINDS.index(c._impl))])


def _effect_name(e: Any) -> str:
    return str(type(e)) if not isinstance(e, type) else str(e)


def serialize(exp: Exported, vjp_order: int = 0) -> bytearray:
    """The bytes of `exp` in JAX's flatbuffer format (`Exported.serialize`)."""
    if vjp_order < 0:
        raise ValueError(f"vjp_order must be >= 0, got {vjp_order}")
    w = _Writer()
    root = _write_exported(w, exp, vjp_order)
    w.b.Finish(root)
    return w.b.Output()


_IMPLS["serialize"] = serialize


# ----------------------------------------------------------------------------- reading


class _Table:
    """A flatbuffer table with typed accessors by slot number."""

    __slots__ = ("t",)

    def __init__(self, buf: bytearray, pos: int):
        if not 0 <= pos < len(buf):
            raise ValueError(f"table offset {pos} out of range")
        self.t = table.Table(buf, pos)

    def _off(self, slot: int) -> int:
        return self.t.Offset(4 + 2 * slot)

    def has(self, slot: int) -> bool:
        return self._off(slot) != 0

    def scalar(self, slot: int, flags: Any, default: Any = 0) -> Any:
        o = self._off(slot)
        return self.t.Get(flags, self.t.Pos + o) if o else default

    def string(self, slot: int) -> str | None:
        o = self._off(slot)
        return self.t.String(self.t.Pos + o).decode() if o else None

    def sub(self, slot: int) -> _Table | None:
        o = self._off(slot)
        return _Table(self.t.Bytes, self.t.Indirect(self.t.Pos + o)) if o else None

    def _vec(self, slot: int) -> tuple[int, int]:
        o = self._off(slot)
        if not o:
            return 0, 0
        n = self.t.VectorLen(o)
        start = self.t.Vector(o)
        if n < 0 or start + n > len(self.t.Bytes):
            raise ValueError("vector out of range")
        return start, n

    def tables(self, slot: int) -> list[_Table]:
        start, n = self._vec(slot)
        return [_Table(self.t.Bytes, self.t.Indirect(start + 4 * i)) for i in range(n)]

    def strings(self, slot: int) -> list[str]:
        start, n = self._vec(slot)
        return [self.t.String(start + 4 * i).decode() for i in range(n)]

    def numbers(self, slot: int, dtype: Any) -> list[int]:
        start, n = self._vec(slot)
        size = np.dtype(dtype).itemsize
        if start + n * size > len(self.t.Bytes):
            raise ValueError("vector out of range")
        return np.frombuffer(self.t.Bytes, dtype=np.dtype(dtype).newbyteorder("<"), count=n,
                             offset=start).tolist()  # fmt: skip

    def bytes(self, slot: int) -> bytes:
        start, n = self._vec(slot)
        return bytes(self.t.Bytes[start : start + n])


_u16, _u32, _i8, _bool = N.Uint16Flags, N.Uint32Flags, N.Int8Flags, N.BoolFlags


class _Leaf:
    """Stands for a leaf while rebuilding a tree structure from its nodes."""


def _read_tree(t: _Table, depth: int = 0) -> Any:
    """A Python object with `_Leaf()` leaves whose structure the table describes."""
    if depth > 1000:
        raise ValueError("PyTreeDef nested too deeply")
    kind = t.scalar(0, _i8)
    if kind == _LEAF:
        return _Leaf()
    if kind == _NONE:
        return None
    children = [_read_tree(c, depth + 1) for c in t.tables(1)]
    if kind == _TUPLE:
        return tuple(children)
    if kind == _LIST:
        return children
    if kind == _DICT:
        names = t.strings(2)
        if len(names) != len(children):
            raise ValueError("dict node with a different number of keys and children")
        return dict(zip(names, children))
    if kind == _CUSTOM:
        name = t.string(3) or ""
        entry = _CUSTOM_BY_NAME.get(name)
        if entry is None:
            raise ValueError(
                f"Cannot deserialize a PyTreeDef containing an unregistered type {name!r}. "
                "Use `export.register_pytree_node_serialization` or "
                "`export.register_namedtuple_serialization`."
            )
        nodetype, deser, from_children = entry
        aux = deser(t.bytes(4))
        if from_children is not None:
            return from_children(aux, children)
        # Without `from_children`, the node is rebuilt by its registered unflatten.
        kind = tree_util._REGISTRY.classify(nodetype)
        if kind is None or kind.unflatten is None:
            raise ValueError(f"the type {nodetype} is not a registered pytree node")
        return kind.unflatten(aux, children)
    raise ValueError(f"unknown PyTreeDef kind {kind}")


def _treedef(t: _Table | None) -> tree_util.PyTreeDef:
    if t is None:
        raise ValueError("missing PyTreeDef")
    return tree_util.tree_structure(_read_tree(t), is_leaf=lambda x: isinstance(x, _Leaf))


def _aval(t: _Table, scope: sd.SymbolicScope) -> ShapedArray:
    if t.scalar(0, _i8) != 0:
        raise NotImplementedError("Deserializing token avals is not supported")
    code = t.scalar(2, _i8)
    if code in _KEY_DTYPE_NAMES:
        raise NotImplementedError(
            f"Deserializing arrays of dtype {_KEY_DTYPE_NAMES[code]} is not supported"
        )
    if not 0 <= code < len(_DTYPES):
        raise ValueError(f"unknown dtype code {code}")
    shape = tuple(parse_dim(s, scope) for s in t.strings(1))
    return ShapedArray(shape, _DTYPES[code])


def _named_sharding(t: _Table, meshes: list[_Table]) -> NamedShardingSpec:
    mesh = t.sub(0)
    if mesh is None:
        idx = t.scalar(3, _u32)
        if not 0 <= idx < len(meshes):
            raise ValueError(f"abstract_mesh_idx {idx} out of range")
        mesh = meshes[idx]
    device = mesh.sub(3)
    spec = t.sub(1)
    parts = tuple(tuple(p.strings(0)) for p in spec.tables(0)) if spec is not None else ()
    names = tuple(mesh.strings(1))
    sizes = tuple(mesh.numbers(0, np.uint32))
    if len(names) != len(sizes):
        raise ValueError("mesh with a different number of axis names and sizes")
    return NamedShardingSpec(
        axis_names=names,
        axis_sizes=sizes,
        axis_types=tuple(mesh.numbers(2, np.int8)),
        device_kind=device.string(0) if device is not None else None,
        platform=device.string(2) if device is not None else None,
        num_cores=(device.scalar(1, _u32, None) if device is not None else None),
        partitions=parts,
        reduced=tuple(spec.strings(1)) if spec is not None else (),
        unreduced=tuple(spec.strings(2)) if spec is not None else (),
        memory_kind=t.string(2),
    )


def _check(t: _Table) -> DisabledSafetyCheck:
    kind = t.scalar(0, _i8)
    if kind == 1:
        return DisabledSafetyCheck.custom_call(t.string(1) or "")
    if kind not in (0, 2):
        raise ValueError(f"unknown disabled safety check kind {kind}")
    return DisabledSafetyCheck(_CHECK_KINDS[kind])


# Effects known by name (`str` of the effect's class, as stored).
_EFFECTS: dict[str, Any] = {}


def _effect(t: _Table) -> Any:
    name = t.string(0) or ""
    if name not in _EFFECTS:
        raise NotImplementedError(f"Effect type {name} is not supported when deserializing")
    return _EFFECTS[name]


def _index_list(t: _Table, slot: int, n_unique: int, base: int, what: str) -> list[int]:
    idxs = t.numbers(slot, np.uint32)
    for i in idxs:
        if not 0 <= i - base < n_unique and not (base == 1 and i == 0):
            raise ValueError(f"{what} index {i} out of range")
    return idxs


def _read_exported(t: _Table, depth: int = 0) -> Exported:
    if depth > 64:
        raise ValueError("vjp nested too deeply")
    version = t.scalar(0, _u16)
    if version not in _ACCEPTED_VERSIONS:
        raise ValueError(
            f"unsupported serialization version {version} (this reader accepts "
            f"{_ACCEPTED_VERSIONS.start} to {_ACCEPTED_VERSIONS.stop - 1})"
        )
    fun_name = t.string(1)
    if fun_name is None:
        raise ValueError("missing function_name")
    constraints = tuple(t.strings(_SLOT_CONSTRAINTS))
    # Constraints go into the scope before any expression is built from it.
    scope = SymbolicScope(constraints)
    if t.has(22):
        uniques = [_aval(a, scope) for a in t.tables(19)]
        in_avals = [uniques[i] for i in _index_list(t, 22, len(uniques), 0, "in_avals")]
        out_avals = [uniques[i] for i in _index_list(t, 23, len(uniques), 0, "out_avals")]
    else:
        in_avals = [_aval(a, scope) for a in t.tables(3)]
        out_avals = [_aval(a, scope) for a in t.tables(5)]

    meshes = t.tables(20)
    unique_sh = [_named_sharding(s, meshes) for s in t.tables(21)]
    if t.has(24):
        in_idx = _index_list(t, 24, len(unique_sh), 1, "in_shardings")
        out_idx = _index_list(t, 25, len(unique_sh), 1, "out_shardings")
        in_named = [unique_sh[i - 1] if i else None for i in in_idx]
        out_named = [unique_sh[i - 1] if i else None for i in out_idx]
    else:
        in_named = [_legacy_sharding(s, meshes) for s in t.tables(7)]
        out_named = [_legacy_sharding(s, meshes) for s in t.tables(8)]
    if len(in_named) != len(in_avals) or len(out_named) != len(out_avals):
        raise ValueError("the number of shardings differs from the number of avals")
    # Explicit mode: the types come back from the shardings over Explicit axes.
    in_avals = [typed_aval(a, sh) for a, sh in zip(in_avals, in_named)]
    out_avals = [typed_aval(a, sh) for a, sh in zip(out_avals, out_named)]

    in_tree = _treedef(t.sub(2))
    out_tree = _treedef(t.sub(4))
    if in_tree.num_leaves != len(in_avals) or out_tree.num_leaves != len(out_avals):
        raise ValueError(
            f"the pytree structures ({in_tree.num_leaves} inputs, {out_tree.num_leaves} "
            f"outputs) do not match the avals ({len(in_avals)} inputs, {len(out_avals)} outputs)"
        )
    nr_devices = t.scalar(18, _u32) or t.scalar(6, N.Int16Flags)
    platforms = tuple(t.strings(9))
    if not platforms:
        raise ValueError("no platforms")
    module = t.bytes(13)
    if t.has(_SLOT_MODULE_CRC) and t.scalar(_SLOT_MODULE_CRC, _u32) != zlib.crc32(module):
        raise ValueError("the StableHLO module is corrupted (its CRC-32 does not match)")
    kept = tuple(t.numbers(15, np.uint16))
    if list(kept) != sorted(set(kept)) or any(k >= len(in_avals) for k in kept):
        raise ValueError(f"invalid module_kept_var_idx {kept}")
    vjp_table = t.sub(17)
    get_vjp = None
    if vjp_table is not None:
        vjp = _read_exported(vjp_table, depth + 1)
        get_vjp = lambda _exp: vjp  # noqa: E731
    return Exported(
        fun_name=fun_name,
        in_tree=in_tree,
        in_avals=tuple(in_avals),
        out_tree=out_tree,
        out_avals=tuple(out_avals),
        in_shardings_hlo=(None,) * len(in_avals),
        out_shardings_hlo=(None,) * len(out_avals),
        nr_devices=int(nr_devices),
        platforms=platforms,
        ordered_effects=tuple(_effect(e) for e in t.tables(10)),
        unordered_effects=tuple(_effect(e) for e in t.tables(11)),
        disabled_safety_checks=[_check(c) for c in t.tables(12)],
        mlir_module_serialized=module,
        calling_convention_version=t.scalar(14, _u16),
        module_kept_var_idx=kept,
        uses_global_constants=bool(t.scalar(16, _bool, False)),
        _get_vjp=get_vjp,
        _in_named_shardings=tuple(in_named),
        _out_named_shardings=tuple(out_named),
        _constraints=constraints,
    )


def _legacy_sharding(t: _Table, meshes: list[_Table]) -> NamedShardingSpec | None:
    ns = t.sub(2)
    return _named_sharding(ns, meshes) if ns is not None else None


_FLATBUFFER_ERRORS = (
    IndexError,
    TypeError,
    struct.error,
    UnicodeDecodeError,
    OverflowError,
    RecursionError,
    AttributeError,
    ZeroDivisionError,
    sd.InconclusiveDimensionOperation,  # a dimension string that parses but makes no sense
)


def deserialize(blob: bytes | bytearray) -> Exported:
    """Reads an `Exported` from bytes that `Exported.serialize` (of JAX or polyjax) wrote.

    Args:
      blob: the serialized bytes.

    Returns:
      The `Exported`, ready to call.

    Raises:
      ValueError: if the bytes are not a serialized `Exported` (truncated,
        corrupted, an unknown version) or its module does not match its
        signature.
      NotImplementedError: for features this reader does not support (an
        unknown effect, PRNG key dtypes).

    Example:
      >>> deserialize(b"not an artifact")
      Traceback (most recent call last):
      ...
      ValueError: Cannot deserialize an Exported: ...
    """
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise TypeError(f"deserialize expects bytes or a bytearray, got {type(blob).__name__}")
    buf = bytearray(blob)
    try:
        if len(buf) < 8:
            raise ValueError(f"{len(buf)} bytes is too short")
        root = encode.Get(packer.uoffset, buf, 0)
        exp = _read_exported(_Table(buf, root))
    except ValueError as e:
        raise ValueError(f"Cannot deserialize an Exported: {e}") from None
    except _FLATBUFFER_ERRORS as e:
        raise ValueError(
            "Cannot deserialize an Exported: the bytes are not a valid serialized Exported "
            f"(truncated or corrupted: {type(e).__name__}: {e})"
        ) from None
    return exp
