"""The ``Array``: polyjax's concrete array, backed by jaxlib device buffers.

jaxlib's C++ ``ArrayImpl`` owns the device memory but has almost no Python
surface (no shape, no operators), and it cannot be subclassed. So
:class:`Array` is a small Python object that *wraps* one::

    Array
      _impl       jaxlib ArrayImpl: the buffer(s), its sharding, a host-copy cache
      aval        core ShapedArray: shape, dtype and weak type
      _committed  whether the user placed it on its device (device_put(x, dev),
                  jit(device=...)): committed arrays pin computations to their
                  device, uncommitted ones follow the others

Computations make arrays with :meth:`Array._make` (no checks: it is on every
dispatch); users make them with :func:`device_put` or :func:`from_dlpack`.

Arithmetic and array methods are not defined here: the array library
(polyjax-numpy) registers them with :func:`register_array_method` (operators,
the same names core's tracers forward) and :func:`register_array_attribute`
(``x.sum``, ``x.T``, ...). Until it does, binary operators return
``NotImplemented`` and the others raise ``TypeError``.

Example:
  >>> x = device_put(np.arange(3.0, dtype=np.float32))
  >>> x
  Array([0., 1., 2.], dtype=float32)
  >>> x.shape, x.dtype, x.weak_type, x.committed
  ((3,), dtype('float32'), False, False)
  >>> device_get({"x": x})["x"]
  array([0., 1., 2.], dtype=float32)
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from jaxlib import _jax, xla_client

from polyjax_core import basearray, config, dtypes, tracing
from polyjax_core.abstract_values import ShapedArray, Token, get_aval, register_aval_handler
from polyjax_core.aval_sharding import AvalSharding, note_concrete_mesh
from polyjax_core.mesh_context import get_concrete_mesh, spec_to_sharding
from polyjax_core.partition_spec import PartitionSpec
from polyjax_core.tree_util import prefix_subtrees, tree_flatten, tree_leaves, tree_unflatten
from polyjax_interpreters import _guards, backends
from polyjax_interpreters.sharding import GSPMDSharding, Sharding, SingleDeviceSharding

__all__ = [
    "Array",
    "Shard",
    "block_until_ready",
    "default_sharding",
    "device_get",
    "device_put",
    "from_dlpack",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "put_implicit",
    "put_value",
    "register_array_attribute",
    "register_array_method",
    "register_traced_put",
]

Device = Any

_BINARY = frozenset(tracing.BINARY_OPERATORS)
_OTHER = frozenset(tracing.OTHER_OPERATORS)

# What the array library registered.
_array_methods: dict[str, Callable[..., Any]] = {}
_array_attributes: dict[str, Callable[[Any], Any]] = {}


def _deleted_error(x: Array) -> RuntimeError:
    return RuntimeError(
        f"Array has been deleted with shape={x.aval.str_short(short_dtypes=False)}: it was "
        "deleted with .delete() or donated to a computation (donate_argnums), so its "
        "device buffer is gone."
    )


def _recommitted(impl: Any, committed: bool) -> Any:
    """``impl``'s buffers as a new ArrayImpl whose commitment is ``committed``."""
    return _jax.ArrayImpl(
        impl.aval, impl._sharding, impl._arrays, bool(committed), _skip_checks=True
    )


def _typed_aval(aval: ShapedArray, impl: Any) -> ShapedArray:
    """``aval`` with the explicit-mode sharding its placement gives its type.

    An array placed by a ``NamedSharding`` over a mesh with ``Explicit`` axes
    carries that split in its type (``float32[8@a,4]``); any other placement
    carries none (docs/explicit-sharding.md).
    """
    s = getattr(impl, "_sharding", None)
    spec = getattr(s, "spec", None)
    if s is None or spec is None or not hasattr(aval, "aval_sharding"):
        return aval
    typed = AvalSharding.make(s.mesh, spec, len(aval.shape))
    if typed is not None:
        note_concrete_mesh(s.mesh)
    return aval if typed == aval.aval_sharding else aval.update(sharding=typed)


class Array:
    """An array on a device (or spread over several): the result of every computation.

    Arrays are immutable. Their metadata (``shape``, ``dtype``, ``sharding``) is
    always available; their values are copied to the host on demand
    (``np.asarray(x)``, ``print(x)``, ``x.item()``) and that copy is kept.
    """

    __slots__ = ("_impl", "aval", "_committed", "__weakref__")
    # Make NumPy defer to our reflected operators in `ndarray + Array`.
    __array_priority__ = 100

    _impl: Any
    aval: ShapedArray
    _committed: bool

    def __init__(self, *args: Any, **kwargs: Any):
        raise TypeError(
            "Array objects are not created directly; use device_put(x), or the array "
            "functions of polyjax.numpy."
        )

    @staticmethod
    def _make(impl: Any, aval: ShapedArray, committed: bool) -> Array:
        """Wraps jaxlib ArrayImpl ``impl`` (whose type is ``aval``) without any check.

        An Array is committed exactly when its buffer is (``impl`` is re-wrapped,
        sharing its memory, when they differ): jit's C++ fast path sees only the
        buffer, so the buffer's flag is the one its cache key holds.
        """
        if impl._committed != committed:
            impl = _recommitted(impl, committed)
        self = _new(Array)
        self._impl = impl
        self.aval = _typed_aval(aval, impl)
        self._committed = committed
        return self

    # -- metadata ----------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape  # type: ignore[return-value]  # a concrete array's sizes are ints

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def itemsize(self) -> int:
        return self.aval.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.aval.size * self.aval.dtype.itemsize

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    @property
    def committed(self) -> bool:
        """Whether the array was explicitly placed on its device(s)."""
        return self._committed

    @property
    def sharding(self) -> Sharding:
        """How the array is laid out over devices."""
        return self._impl._sharding

    def devices(self) -> set[Device]:
        """The devices holding the array's data."""
        return self._impl._sharding.device_set

    @property
    def device(self) -> Device | Sharding:
        """The device of a single-device array (for a sharded array, its sharding)."""
        sharding = self._impl._sharding
        devices = sharding.device_set
        if len(devices) == 1:
            return next(iter(devices))
        return sharding

    def to_device(self, device: Device | Sharding, *, stream: Any = None) -> Array:
        """The array placed on ``device`` (the Array API's name for `device_put`)."""
        if stream is not None:
            raise NotImplementedError("to_device(stream=...) is not supported.")
        return device_put(self, device)

    @property
    def is_fully_addressable(self) -> bool:
        return self._impl._sharding.is_fully_addressable

    @property
    def is_fully_replicated(self) -> bool:
        return self._impl._sharding.is_fully_replicated

    # -- shards ----------------------------------------------------------------

    def _shard_list(self, addressable_only: bool) -> list[Shard]:
        self._check_alive()
        impl, aval = self._impl, self.aval
        sharding = impl._sharding
        indices = sharding.devices_indices_map(aval.shape)
        shard_aval = aval.update(shape=sharding.shard_shape(aval.shape), sharding=None)
        buffers = {}
        if type(sharding) is SingleDeviceSharding:
            buffers[sharding._device] = self
        else:
            for buf in impl._arrays:
                device = buf._sharding._device
                one = SingleDeviceSharding(device, memory_kind=sharding.memory_kind)
                data = buf._rewrap_with_aval_and_sharding(shard_aval, one)
                buffers[device] = Array._make(data, shard_aval, self._committed)
        return [
            Shard(device, sharding, aval.shape, buffers.get(device))
            for device in indices
            if not addressable_only or device in buffers
        ]

    @property
    def addressable_shards(self) -> list[Shard]:
        """The shards on this process's devices (device, index, replica id, data)."""
        return self._shard_list(True)

    @property
    def global_shards(self) -> list[Shard]:
        """The shards on every device; ``data`` is None for other processes' devices."""
        return self._shard_list(False)

    def addressable_data(self, index: int) -> Array:
        """The data of addressable shard ``index`` (a single-device Array)."""
        return self.addressable_shards[index].data

    # -- buffer lifetime -----------------------------------------------------

    def is_deleted(self) -> bool:
        """Whether the buffer was freed (by :meth:`delete` or donation)."""
        return self._impl.is_deleted()

    def delete(self) -> None:
        """Frees the device buffer now; any later use of the array raises."""
        self._impl.delete()

    def _check_alive(self) -> None:
        if self._impl.is_deleted():
            raise _deleted_error(self)

    def is_ready(self) -> bool:
        """Whether the computation producing the array has finished."""
        self._check_alive()
        return self._impl.is_ready()

    def block_until_ready(self) -> Array:
        """Waits until the array's value is computed; returns the array."""
        try:
            self._impl.block_until_ready()
        except _jax.JaxRuntimeError:
            self._check_alive()  # a deleted array's error says how it happened
            raise
        return self

    def copy_to_host_async(self) -> None:
        """Starts copying the value to the host, so that a later read does not wait."""
        impl = self._impl
        if impl._npy_value is not None:
            return
        self._check_alive()
        shards = impl._arrays if not impl._sharding.is_fully_replicated else [impl]
        for shard in shards:
            shard._copy_single_device_array_to_host_async()

    def on_device_size_in_bytes(self) -> int:
        """The bytes the array occupies on its device(s)."""
        self._check_alive()
        return self._impl.on_device_size_in_bytes()

    def unsafe_buffer_pointer(self) -> int:
        """The device address of a single-device array's buffer."""
        self._check_alive()
        return self._impl.unsafe_buffer_pointer()

    # -- the value on the host -------------------------------------------------

    @property
    def _value(self) -> np.ndarray:
        """The value as a read-only NumPy array (fetched once, then cached)."""
        impl = self._impl
        if impl.is_deleted():  # the cached copy outlives the buffer: check first
            raise _deleted_error(self)
        value = impl._npy_value
        return _fetch(impl, self.aval) if value is None else value

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return np.asarray(self._value, dtype=dtype, copy=copy)

    def tolist(self) -> Any:
        """The value as nested Python lists of Python scalars."""
        return self._value.tolist()

    def item(self, *args: Any) -> Any:
        """One element as a Python scalar (like ``numpy.ndarray.item``)."""
        return self._value.item(*args)

    def __repr__(self) -> str:
        return _array_repr(self)

    def __str__(self) -> str:
        return str(self._value)

    def __format__(self, format_spec: str) -> str:
        value = self._value
        return format(value[()] if value.ndim == 0 else value, format_spec)

    # -- Python protocols ---------------------------------------------------

    def __bool__(self) -> bool:
        size = self.aval.size
        if size == 0:
            raise ValueError(
                "The truth value of an empty array is ambiguous. Use `array.size > 0` to "
                "check that an array is not empty."
            )
        if size > 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. "
                "Use a.any() or a.all()"
            )
        return bool(self._value)

    def _check_scalar(self) -> None:
        if self.aval.shape:
            raise TypeError(
                "Only scalar arrays can be converted to Python scalars; "
                f"got arr.ndim={len(self.aval.shape)}"
            )

    def __int__(self) -> int:
        self._check_scalar()
        return int(self._value)

    def __float__(self) -> float:
        self._check_scalar()
        return float(self._value)

    def __complex__(self) -> complex:
        self._check_scalar()
        return complex(self._value)

    def __index__(self) -> int:
        if self.aval.shape or not np.issubdtype(self.aval.dtype, np.integer):
            raise TypeError(
                "Only integer scalar arrays can be converted to a scalar index; got an "
                f"array of type {self.aval.str_short(short_dtypes=False)}"
            )
        return operator.index(self._value[()])

    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]  # type: ignore[return-value]  # a concrete array's: an int

    def __iter__(self) -> Iterator[Any]:
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        getitem = _array_methods.get("__getitem__")
        if getitem is not None:
            return (getitem(self, i) for i in range(self.aval.shape[0]))
        # No array library: the rows of the host copy, placed where this array is.
        row_aval = self.aval.update(shape=self.aval.shape[1:])
        sharding, committed = self._impl._sharding, self._committed
        if type(sharding) is not SingleDeviceSharding:
            sharding, committed = default_sharding(), False
        return (put_value(row, row_aval, sharding, committed) for row in self._value)

    def __hash__(self) -> int:
        raise TypeError(f"unhashable type: {type(self).__name__!r}")

    def __setitem__(self, index: Any, value: Any) -> None:
        raise TypeError(tracing.IMMUTABLE_ARRAY_MESSAGE)

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: the attributes the array library adds.
        getter = _array_attributes.get(name)
        if getter is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getter(self)

    # -- copying and pickling ------------------------------------------------

    def __copy__(self) -> Array:
        return _copy_array(self)

    def __deepcopy__(self, memo: Any) -> Array:
        return _copy_array(self)

    def __reduce__(self) -> Any:
        value = self._value
        return (_reconstruct, (np.array(value), value.dtype, self.aval.weak_type))

    # -- DLPack ------------------------------------------------------------------

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """Exports the array's buffer as a DLPack capsule (zero-copy where possible)."""
        self._check_alive()
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            if copy is False:
                raise BufferError(
                    f"Array on {self.device} cannot be exported to DLPack device {dl_device} "
                    "without a copy, and copy=False was given."
                )
            if tuple(dl_device)[0] != _DL_CPU:
                raise BufferError(f"Cannot export an array on {self.device} to {dl_device}.")
            return np.array(self._value).__dlpack__()
        impl = self._impl
        if copy:
            impl = _copy_impl(impl, impl._sharding, _jax.ArrayCopySemantics.ALWAYS_COPY)
        return _jax.buffer_to_dlpack_managed_tensor(impl, stream=stream)

    def __dlpack_device__(self) -> tuple[int, int]:
        """The DLPack (device type, device id) of a single-device array."""
        device = self.device
        if isinstance(device, Sharding):
            raise BufferError("DLPack export needs an array on a single device.")
        platform = device.platform
        if platform == "cpu":
            return (_DL_CPU, 0)
        if platform in ("gpu", "cuda", "rocm"):
            is_rocm = platform == "rocm" or "rocm" in device.client.platform_version.lower()
            return (_DL_ROCM if is_rocm else _DL_CUDA, device.local_hardware_id)
        raise BufferError(f"DLPack export is not supported on platform {platform!r}.")


def _index_key(index: tuple[slice, ...]) -> tuple:
    return tuple((i.start, i.stop, i.step) for i in index)


class Shard:
    """One device's piece of an :class:`Array`.

    Args:
      device: the device holding it.
      sharding: the sharding of the whole array.
      global_shape: the shape of the whole array.
      data: the piece as a single-device Array (None if another process holds it).

    Attributes:
      device, sharding, data: as given.
      index: the slice of the global array it holds (a tuple of slices).
      replica_id: 0 for the first device (in the sharding's order) holding this
        slice, 1 for the next...

    Example:
      >>> x = device_put(np.arange(4.0, dtype=np.float32))
      >>> Shard(backends.devices()[0], x.sharding, (4,)).index
      (slice(None, None, None),)
    """

    __slots__ = ("device", "sharding", "global_shape", "data", "index", "replica_id")

    def __init__(self, device: Device, sharding: Any, global_shape: Any, data: Any = None):
        self.device = device
        self.sharding = sharding
        self.global_shape = tuple(global_shape)
        self.data = data
        indices = sharding.devices_indices_map(self.global_shape)
        self.index = indices[device]
        key = _index_key(self.index)
        self.replica_id = 0
        for other, index in indices.items():
            if other == device:
                break
            self.replica_id += _index_key(index) == key

    def __repr__(self) -> str:
        return (
            f"Shard(device={self.device!r}, index={self.index}, "
            f"replica_id={self.replica_id}, data={self.data})"
        )


_new = object.__new__
register_aval_handler(Array, lambda x: x.aval)
# The public `polyjax.Array` is core's abstract type, which tracers belong to as well.
basearray.Array.register(Array)

# DLPack device types (dlpack.h).
_DL_CPU, _DL_CUDA, _DL_ROCM = 1, 2, 10


# ---------------------------------------------------------------------------
# Operators: forwarded to what the array library registers


def _binary_placeholder(name: str) -> Callable[..., Any]:
    def method(self: Array, other: Any) -> Any:
        return NotImplemented

    method.__name__ = method.__qualname__ = name
    return method


def _other_placeholder(name: str) -> Callable[..., Any]:
    def method(self: Array, *args: Any) -> Any:
        raise TypeError(
            f"{name} of an Array is not defined: no array library registered it "
            "(import polyjax.numpy)."
        )

    method.__name__ = method.__qualname__ = name
    return method


# The operators before any registration (tests put them back to start clean).
_PLACEHOLDERS: dict[str, Callable[..., Any]] = {
    **{name: _binary_placeholder(name) for name in tracing.BINARY_OPERATORS},
    **{name: _other_placeholder(name) for name in tracing.OTHER_OPERATORS},
}
for _name, _method in _PLACEHOLDERS.items():
    setattr(Array, _name, _method)
_OWN_NAMES = frozenset(dir(Array))


def register_array_method(name: str, method: Callable[..., Any]) -> None:
    """Defines an operator of :class:`Array`, e.g. ``register_array_method("__add__", add)``.

    The function is installed on the class itself, so calling the operator costs
    no extra lookup.

    Args:
      name: one of ``polyjax_core.tracing.BINARY_OPERATORS + OTHER_OPERATORS``.
      method: called as ``method(array, *operands)``.

    Raises:
      ValueError: ``name`` is not a forwarded operator.
    """
    if name not in _BINARY and name not in _OTHER:
        raise ValueError(f"{name} is not an operator Array forwards; use register_array_attribute")
    _array_methods[name] = method
    # (Installing __eq__ after the class exists leaves __hash__ as it is: still an error.)
    setattr(Array, name, method)


def register_array_attribute(name: str, getter: Callable[[Array], Any]) -> None:
    """Defines ``array.<name>`` as ``getter(array)`` (e.g. ``sum`` -> a bound method, ``T``).

    Raises:
      ValueError: ``Array`` itself defines ``name`` (the getter would never run).
    """
    if name in _OWN_NAMES:
        raise ValueError(f"Array already defines {name!r}; it cannot be registered.")
    _array_attributes[name] = getter


# ---------------------------------------------------------------------------
# Printing


def _array_repr(x: Array) -> str:
    aval = x.aval
    prefix = "Array("
    dtype_str = f"dtype={aval.dtype.name}" + (", weak_type=True" if aval.weak_type else "") + ")"
    sharding = x._impl._sharding
    if not (sharding.is_fully_addressable or sharding.is_fully_replicated):
        return f"{prefix}shape={aval.shape}, {dtype_str}"
    value = x._value
    if value.size == 0:
        body = f"[], shape={aval.shape}"
    else:
        body = np.array2string(value, prefix=prefix, suffix=",", separator=", ")
    # As JAX prints: if the dtype does not fit on the last line, it is pushed right
    # by the prefix's width rather than wrapped.
    last_line = len(body) - body.rfind("\n") + 1
    width = np.get_printoptions()["linewidth"]
    sep = " " if last_line + len(dtype_str) + 1 <= width else " " * len(prefix)
    return f"{prefix}{body},{sep}{dtype_str}"


# ---------------------------------------------------------------------------
# Moving data


def _fetch(impl: Any, aval: ShapedArray) -> np.ndarray:
    """Copies ``impl``'s value to the host (read-only), caching real copies on ``impl``."""
    sharding = impl._sharding
    if aval.dtype.isbuiltin == 1 and (view := _host_view(impl)) is not None:
        value, did_copy = view, False
    elif sharding.is_fully_replicated:
        value, did_copy = impl._single_device_array_to_np_array_did_copy()
    elif not sharding.is_fully_addressable:
        raise RuntimeError(
            "Fetching value for `jax.Array` that spans non-addressable (non process local) "
            "devices is not possible. You can use "
            "`jax.experimental.multihost_utils.process_allgather` to print the global array "
            "or use `.addressable_shards` method of jax.Array to inspect the addressable "
            "(process local) shards."
        )
    else:
        value, did_copy = _assemble(impl, aval, sharding), True
    if value.flags.writeable:
        value.flags.writeable = False
    # A zero-copy view (CPU) is not cached: it would hold a reference to the device
    # buffer, which blocks donating it; fetching it again costs nothing anyway.
    if did_copy:
        impl._npy_value = value
    return value


def _host_view(impl: Any) -> np.ndarray | None:
    """A read-only view of a single-device buffer in host memory (CPU), or None.

    jaxlib's own host copy looks for JAX's modules on every call (tens of µs when
    JAX is absent); the buffer protocol gives the same zero-copy view without
    that. It describes NumPy's own dtypes only (ml_dtypes' would come back as
    objects), hence the caller's check.
    """
    try:
        return np.asarray(memoryview(impl))
    except (BufferError, TypeError, ValueError):
        return None  # on an accelerator, or several devices


def _assemble(impl: Any, aval: ShapedArray, sharding: Any) -> np.ndarray:
    out = np.empty(aval.shape, aval.dtype)
    index = sharding.devices_indices_map(aval.shape)
    for shard in impl._arrays:
        value, _ = shard._single_device_array_to_np_array_did_copy()
        out[index[shard._sharding._device]] = value
    return out


_REPLICATED = xla_client.HloSharding.replicate()
_HOST_COPY = _jax.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL
_HOST_ALIAS = _jax.HostBufferSemantics.ZERO_COPY
_batched_device_put = _jax.batched_device_put
_x64_state = config.enable_x64


def put_value(
    x: Any,
    aval: ShapedArray,
    sharding: Any,
    committed: bool,
    *,
    may_alias: bool | None = None,
) -> Array:
    """Puts a host value (or an Array) on the devices of ``sharding``, as type ``aval``.

    The internal transfer used by dispatch and jit: no pytrees, no checks beyond
    NumPy's. The value is converted to ``aval.dtype`` first.

    Args:
      x: a NumPy array or scalar, a Python scalar, or an :class:`Array`.
      aval: the result's type (its dtype canonical).
      sharding: where to put it (a polyjax sharding).
      committed: whether the result is committed to its devices.
      may_alias: if True, a NumPy input's memory may be used in place (CPU); by
        default the data is copied, so that mutating ``x`` later cannot change the
        (immutable) result.

    Returns:
      The new :class:`Array`.
    """
    if type(x) is Array:
        return _move(x, aval, sharding, committed, donate=False, may_alias=may_alias)
    if type(x) is not np.ndarray or x.dtype != aval.dtype:
        x = np.asarray(x, dtype=aval.dtype)
    semantics = _HOST_ALIAS if may_alias else _HOST_COPY
    if type(sharding) is SingleDeviceSharding:
        shards, devices = [x], [sharding._device]
    else:
        index = sharding.addressable_devices_indices_map(aval.shape)
        devices = list(index)
        # (A copy per device: jaxlib 0.10.2 fails on replicated pieces that share memory.)
        shards = [np.array(x[i]) for i in index.values()]
        _check_even(shards, sharding, aval)
    # Positional arguments: (aval, sharding, xs, devices, committed, force_copy,
    # host_buffer_semantics, enable_x64); keywords cost measurably more here.
    impl = _batched_device_put(
        aval, sharding, shards, devices, committed, False, semantics, _x64_state.value
    )
    out = _new(Array)
    out._impl = impl
    out.aval = _typed_aval(aval, impl)
    out._committed = committed
    return out


def _check_even(shards: list[np.ndarray], sharding: Any, aval: ShapedArray) -> None:
    expected = sharding.shard_shape(aval.shape)
    for shard in shards:
        if shard.shape != expected:
            raise ValueError(
                f"The sharding {sharding} splits an array of shape {aval.shape} into shards of "
                f"unequal shapes ({shard.shape} and {expected}): each sharded dimension must "
                "be divisible by the number of its shards."
            )


def _copy_impl(impl: Any, sharding: Any, semantics: Any) -> Any:
    (out,) = _jax.batched_copy_array_to_devices_with_sharding(
        [impl], [sharding._internal_device_list], [sharding], [semantics]
    )
    return out


def _copy_array(x: Array) -> Array:
    """A new buffer with the same value, on the same device(s)."""
    x._check_alive()
    impl = x._impl
    return Array._make(
        _copy_impl(impl, impl._sharding, _jax.ArrayCopySemantics.ALWAYS_COPY),
        x.aval,
        x._committed,
    )


def _move(
    x: Array,
    aval: ShapedArray,
    sharding: Any,
    committed: bool,
    donate: bool,
    may_alias: bool | None,
) -> Array:
    """``x`` placed as ``sharding`` says, sharing its buffer where allowed."""
    x._check_alive()
    impl = x._impl
    src = impl._sharding
    if aval.dtype != x.aval.dtype:  # a different type: convert on the host
        return put_value(np.asarray(x._value, aval.dtype), aval, sharding, committed)
    if src == sharding:
        if may_alias is False:
            impl = _copy_impl(impl, sharding, _jax.ArrayCopySemantics.ALWAYS_COPY)
        # Donating to the same place is aliasing: the buffer stays, shared.
        return Array._make(impl, aval, committed)
    if type(sharding) is SingleDeviceSharding and type(src) is SingleDeviceSharding:
        semantics = (
            _jax.ArrayCopySemantics.ALWAYS_COPY
            if may_alias is False
            else _jax.ArrayCopySemantics.REUSE_INPUT
        )
        # (DONATE_INPUT crashes jaxlib 0.10.2 on CPU across devices: copy, then delete.)
        out = _copy_impl(impl, sharding, semantics)
    else:
        out = _relayout(impl, aval, sharding, may_alias)
    if donate:
        x.delete()
    return Array._make(out, aval, committed)


_REUSE = _jax.ArrayCopySemantics.REUSE_INPUT
_ALWAYS_COPY = _jax.ArrayCopySemantics.ALWAYS_COPY

# Set by `dispatch` (which depends on this module): runs an SPMD program that
# lays out an array as another sharding over the same devices.
_resharder: Callable[[Any, ShapedArray, Any], Any] | None = None


def _set_resharder(fn: Callable[[Any, ShapedArray, Any], Any]) -> None:
    global _resharder
    _resharder = fn


# Set by the array library: how `device_put(tracer, sharding)` constrains the layout.
_traced_put: Callable[[Any, Any], Any] | None = None


def register_traced_put(fn: Callable[[Any, Any], Any]) -> None:
    """Sets ``fn(tracer, sharding)``, what `device_put` does to a traced value with a
    sharding target (polyjax-numpy binds a sharding constraint)."""
    global _traced_put
    _traced_put = fn


def _same_layout(src: Any, dst: Any, shape: tuple[int, ...]) -> bool:
    """Whether the i-th device of ``dst`` needs exactly the i-th shard of ``src``."""
    a, b = src._device_assignment, dst._device_assignment
    if len(a) != len(b):
        return False
    if src.is_fully_replicated and dst.is_fully_replicated:
        return True
    ia, ib = src.devices_indices_map(shape), dst.devices_indices_map(shape)
    return all(_index_key(ia[x]) == _index_key(ib[y]) for x, y in zip(a, b))


def _same_pieces(src: Any, dst: Any, shape: tuple[int, ...]) -> bool:
    """Whether each device holds the same piece under both (in any device order)."""
    if len(src._device_assignment) == 1 or len(dst._device_assignment) == 1:
        return False
    ia, ib = src.devices_indices_map(shape), dst.devices_indices_map(shape)
    return ia.keys() == ib.keys() and all(_index_key(ia[d]) == _index_key(ib[d]) for d in ia)


def _reorder(impl: Any, aval: ShapedArray, dst: Any) -> Any:
    """``impl``'s buffers, unmoved, as an array of ``dst`` (same piece on each device)."""
    by_device = {buf._sharding._device: buf for buf in impl._arrays}
    buffers = [by_device[d] for d in _ordered_devices(dst)]
    return _jax.ArrayImpl(aval, dst, buffers, impl._committed, _skip_checks=True)


def _relayout(impl: Any, aval: ShapedArray, dst: Any, may_alias: bool | None) -> Any:
    """``impl``'s value laid out as ``dst``, moving data device to device.

    Shards that only change device are copied; a change of layout over the same
    devices runs an SPMD program; onto other devices, one full copy goes to
    each of them first (replicated), then is laid out there.
    """
    src = impl._sharding
    shape: tuple[int, ...] = aval.shape  # type: ignore[assignment]  # a concrete array's: ints
    semantics = _ALWAYS_COPY if may_alias is False else _REUSE
    if _same_layout(src, dst, shape):
        return _copy_impl(impl, dst, semantics)
    if _same_pieces(src, dst, shape):
        out = _reorder(impl, aval, dst)
        return _copy_impl(out, dst, _ALWAYS_COPY) if may_alias is False else out
    reshard = _resharder
    assert reshard is not None  # dispatch sets it; the package imports dispatch
    if set(src._device_assignment) == set(dst._device_assignment):
        return reshard(impl, aval, dst)
    if not src.is_fully_replicated:
        rep = GSPMDSharding(src._device_assignment, _REPLICATED, memory_kind=src.memory_kind)
        impl = reshard(impl, aval, rep)
    whole = impl if len(impl._sharding._device_assignment) == 1 else impl._arrays[0]
    targets = dst._device_assignment
    if len(targets) == 1:
        return _copy_impl(whole, dst, _ALWAYS_COPY)
    copies = [
        _copy_impl(whole, SingleDeviceSharding(d, memory_kind=dst.memory_kind), _ALWAYS_COPY)
        for d in targets
        if d in dst.addressable_devices
    ]
    rep = GSPMDSharding(targets, _REPLICATED, memory_kind=dst.memory_kind)
    impl = _jax.ArrayImpl(aval, rep, copies, True, _skip_checks=True)
    return _copy_impl(impl, dst, _REUSE) if dst.is_fully_replicated else reshard(impl, aval, dst)


def _as_sharding(device: Any) -> Any:
    """A polyjax sharding for a ``device_put`` target (a Device or a Sharding)."""
    if isinstance(device, Sharding):
        return device
    if isinstance(device, _jax.Device):
        return SingleDeviceSharding(device)
    if isinstance(device, _jax.SingleDeviceSharding):  # jaxlib's own class
        return SingleDeviceSharding(device._device, memory_kind=device._memory_kind)
    if isinstance(device, PartitionSpec) and get_concrete_mesh() is not None:
        return spec_to_sharding(device)  # over the mesh of `set_mesh`, as JAX
    raise TypeError(
        f"device_put: expected a Device or a Sharding as the target, got {device!r} of type "
        f"{type(device).__name__}."
    )


def _is_target(d: Any) -> bool:
    return d is None or isinstance(d, (_jax.Device, Sharding, _jax.Sharding, PartitionSpec))


def default_sharding() -> SingleDeviceSharding:
    """The sharding of an uncommitted array: the default device's.

    (`SingleDeviceSharding` already gives one object per device; this memo only
    skips its constructor, on the path of every host-to-device transfer.)
    """
    device = backends.default_device()
    cached = _default_sharding_cache.get(device)
    if cached is None:
        cached = _default_sharding_cache[device] = SingleDeviceSharding(device)
    return cached


_default_sharding_cache: dict[Device, SingleDeviceSharding] = {}


def _put_leaf(x: Any, device: Any, donate: bool, may_alias: bool | None) -> Any:
    if isinstance(x, Array):
        if device is None:
            if may_alias is False:
                return _copy_array(x)
            x._check_alive()
            return x
        return _move(x, x.aval, _as_sharding(device), True, donate, may_alias)
    if isinstance(x, tracing.Tracer):
        # Inside a traced function a sharding target is a layout constraint (the
        # array library registers how to express one); a bare device is not
        # represented, and the value passes through unchanged.
        if _traced_put is not None and device is not None and not isinstance(device, _jax.Device):
            return _traced_put(x, _as_sharding(device))
        return x
    if type(x) is Token:
        return x  # (a token has no data to place)
    aval = get_aval(x)
    assert isinstance(aval, ShapedArray)  # the type of a concrete value
    if device is None:
        return put_value(x, aval, default_sharding(), False, may_alias=may_alias)
    return put_value(x, aval, _as_sharding(device), True, may_alias=may_alias)


def device_put(
    x: Any,
    device: Any = None,
    *,
    src: Any = None,
    donate: bool = False,
    may_alias: bool | None = None,
) -> Any:
    """Transfers ``x`` (a pytree of arrays and scalars) to a device.

    Args:
      x: an array, scalar, or pytree of them.
      device: a ``Device``, a :class:`Sharding`, or a pytree of them that is a prefix
        of ``x``. If given, the results are *committed* to it; if ``None``, values
        not on a device yet go to the default device, uncommitted, and arrays
        already on a device are returned as they are.
      src: accepted for compatibility; polyjax arrays know where they are.
      donate: if True, an input Array moved to another device is deleted.
      may_alias: if False, the result never shares memory with the input; if True,
        it may (a NumPy input's memory may be used in place on CPU). The default
        shares device buffers but copies host data.

    Returns:
      ``x`` with every leaf replaced by an :class:`Array`.

    Raises:
      TypeError: a leaf is not an array or scalar, or ``device`` is not a device or
        sharding.

    Example:
      >>> y = device_put(1.0)
      >>> y
      Array(1., dtype=float32, weak_type=True)
      >>> device_put(y, backends.devices()[0]).committed
      True
    """
    del src
    with _guards.explicit_device_put():
        return _device_put(x, device, donate, may_alias)


def _device_put(x: Any, device: Any, donate: bool, may_alias: bool | None) -> Any:
    if _is_target(device):
        if type(x) is np.ndarray or type(x) is Array:  # the common call: no pytree
            return _put_leaf(x, device, donate, may_alias)
        leaves, treedef = tree_flatten(x)
        return tree_unflatten(
            treedef, [_put_leaf(leaf, device, donate, may_alias) for leaf in leaves]
        )
    targets, target_tree = tree_flatten(device, is_leaf=_is_target)
    if len(targets) == 1 and targets[0] is device:
        _as_sharding(device)  # not a device, sharding or container of them: TypeError
    subtrees = prefix_subtrees(
        target_tree,
        x,
        lambda: (
            "device_put: the device argument must be a Device, a Sharding, or a pytree "
            f"prefix of x; got {device!r} for x of structure {tree_flatten(x)[1]}"
        ),
    )
    return tree_unflatten(
        target_tree,
        [_device_put(sub, target, donate, may_alias) for sub, target in zip(subtrees, targets)],
    )


def put_implicit(x: Any) -> Any:
    """``device_put(x)`` as an *implicit* transfer: what array constructors use.

    `device_put` is an explicit transfer, which the ``"disallow"`` transfer guards
    let through; ``jnp.array(numpy_array)`` is not, as in JAX.

    Example:
      >>> put_implicit(np.float32(1.0))
      Array(1., dtype=float32)
    """
    return _device_put(x, None, False, None)


def device_get(x: Any) -> Any:
    """Copies the arrays of a pytree to the host, as (read-only) NumPy arrays.

    All transfers are started before the first is waited for. Leaves that are not
    :class:`Array`\\ s are returned unchanged.

    Example:
      >>> device_get([device_put(2)])
      [array(2, dtype=int32)]
    """
    leaves, treedef = tree_flatten(x)
    with _guards.explicit_device_get():
        for leaf in leaves:
            if isinstance(leaf, Array):
                leaf.copy_to_host_async()
        values = [leaf._value if isinstance(leaf, Array) else leaf for leaf in leaves]
    return tree_unflatten(treedef, values)


def block_until_ready(x: Any) -> Any:
    """Waits until every array in the pytree ``x`` is computed; returns ``x``.

    Raises:
      RuntimeError: an array was deleted (or donated).
    """
    if type(x) is Array:  # (the common case, without flattening)
        return x.block_until_ready()
    arrays = []
    for leaf in tree_leaves(x):
        if isinstance(leaf, Array):
            arrays.append(leaf)
        elif hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    if arrays:
        try:
            _jax.batched_block_until_ready([a._impl for a in arrays])
        except _jax.JaxRuntimeError:
            for a in arrays:
                a._check_alive()  # a deleted array's error says how it happened
            raise
    return x


# ---------------------------------------------------------------------------
# Assembling sharded arrays


def _ordered_devices(sharding: Any) -> list[Device]:
    """The sharding's addressable devices in the order jaxlib expects their buffers."""
    mine = sharding.addressable_devices
    return [d for d in sharding._device_assignment if d in mine]


def make_array_from_single_device_arrays(
    shape: tuple[int, ...], sharding: Sharding, arrays: list[Array], *, dtype: Any = None
) -> Array:
    """Assembles a global Array from one single-device Array per addressable device.

    No data moves: each array becomes the shard of the device it is on.

    Args:
      shape: the global shape.
      sharding: how the global array is laid out.
      arrays: one Array per addressable device of ``sharding`` (any order), each
        of the shard shape that ``sharding`` gives that device.
      dtype: the dtype (by default the arrays').

    Raises:
      ValueError: a device is missing or doubled, or an array has the wrong
        shape or dtype.

    Example:
      >>> d = backends.devices()[0]
      >>> s = SingleDeviceSharding(d)
      >>> make_array_from_single_device_arrays((2,), s, [device_put(np.ones(2), d)])
      Array([1., 1.], dtype=float32)
    """
    shape = tuple(shape)
    if not isinstance(sharding, Sharding):
        raise TypeError(f"sharding must be a Sharding, got {sharding!r}")
    arrays = list(arrays)
    if not arrays:
        raise ValueError("make_array_from_single_device_arrays needs at least one array.")
    dtype = np.dtype(dtype) if dtype is not None else arrays[0].dtype
    by_device: dict[Device, Array] = {}
    expected = sharding.shard_shape(shape)
    for i, a in enumerate(arrays):
        if not isinstance(a, Array) or len(a.devices()) != 1:
            raise ValueError(
                f"arrays[{i}] must be a single-device Array, got {type(a).__name__}"
                + (f" on {len(a.devices())} devices" if isinstance(a, Array) else "")
            )
        a._check_alive()
        (device,) = a.devices()
        if device in by_device:
            raise ValueError(f"arrays[{i}]: two arrays are on device {device}.")
        if a.shape != expected or a.dtype != dtype:
            raise ValueError(
                f"arrays[{i}] on {device} has type {a.aval.str_short(short_dtypes=False)}, but "
                f"the sharding {sharding} gives shards of shape {expected} of the global shape "
                f"{shape}, dtype {dtype}."
            )
        by_device[device] = a
    devices = _ordered_devices(sharding)
    missing = [d for d in devices if d not in by_device]
    extra = [d for d in by_device if d not in set(devices)]
    if missing or extra:
        raise ValueError(
            f"make_array_from_single_device_arrays: the sharding {sharding} needs one array "
            f"on each of its addressable devices; missing {missing}, not in it {extra}."
        )
    aval = ShapedArray(shape, dtype)
    impl = _jax.ArrayImpl(
        aval, sharding, [by_device[d]._impl for d in devices], True, _skip_checks=True
    )
    return Array._make(impl, aval, True)


def make_array_from_callback(
    shape: tuple[int, ...], sharding: Sharding, data_callback: Callable[[Any], Any], dtype=None
) -> Array:
    """Builds a global Array by asking ``data_callback`` for each device's shard.

    Args:
      shape: the global shape.
      sharding: how the global array is laid out.
      data_callback: called with the index (a tuple of slices) of each
        addressable device's shard; returns that shard (NumPy data or an Array).
      dtype: the dtype (by default the callback results').

    Example:
      >>> x = np.arange(4.0, dtype=np.float32)
      >>> s = SingleDeviceSharding(backends.devices()[0])
      >>> make_array_from_callback((4,), s, lambda index: x[index])
      Array([0., 1., 2., 3.], dtype=float32)
    """
    shape = tuple(shape)
    indices = sharding.addressable_devices_indices_map(shape)
    devices = _ordered_devices(sharding)
    pieces = [data_callback(indices[d]) for d in devices]
    if all(isinstance(p, Array) for p in pieces):
        placed = [
            _move(
                p,
                p.aval,
                SingleDeviceSharding(d, memory_kind=sharding.memory_kind),
                True,
                False,
                None,
            )
            for p, d in zip(pieces, devices)
        ]
        return make_array_from_single_device_arrays(shape, sharding, placed, dtype=dtype)
    host = [np.asarray(p._value if isinstance(p, Array) else p) for p in pieces]
    if dtype is None:
        dtype = host[0].dtype if host else np.float32
    dtype = dtypes.canonicalize_dtype(dtype)
    aval = ShapedArray(shape, dtype)
    expected = sharding.shard_shape(shape)
    for d, h in zip(devices, host):
        if h.shape != expected:
            raise ValueError(
                f"data_callback returned a shard of shape {h.shape} for {d}, but the sharding "
                f"{sharding} gives shards of shape {expected} of the global shape {shape}."
            )
    host = [np.array(h, dtype) for h in host]
    impl = _batched_device_put(
        aval, sharding, host, devices, True, False, _HOST_COPY, _x64_state.value
    )
    return Array._make(impl, aval, True)


def _infer_global_shape(sharding: Sharding, local_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The global shape when every process holds a block of ``local_shape``.

    Along each dimension the global size is the local one times the number of
    blocks the sharding cuts it into, over the number this process holds. A
    probe shape that every cut divides (``local * device count``) finds both.
    """
    if sharding.is_fully_addressable:
        return tuple(local_shape)
    n = len(sharding.device_set)
    probe = tuple(max(d, 1) * n for d in local_shape)
    everywhere = sharding.devices_indices_map(probe)
    mine = sharding.addressable_devices_indices_map(probe)
    shape = []
    for k, d in enumerate(local_shape):
        total = len({idx[k].indices(probe[k]) for idx in everywhere.values()})
        local = len({idx[k].indices(probe[k]) for idx in mine.values()})
        shape.append(d * total // local)
    return tuple(shape)


def make_array_from_process_local_data(
    sharding: Sharding, local_data: Any, global_shape: tuple[int, ...] | None = None
) -> Array:
    """Builds a global Array from the part of it that this process holds.

    ``local_data`` is the block of the global array spanned by this process's
    devices (in a single process: the whole array).

    Args:
      sharding: how the global array is laid out.
      local_data: this process's block (NumPy data or an Array).
      global_shape: the global shape; by default inferred, assuming every
        process holds a block of the same shape.

    Raises:
      ValueError: ``local_data`` does not match the block this process holds.

    Example:
      >>> s = SingleDeviceSharding(backends.devices()[0])
      >>> make_array_from_process_local_data(s, np.zeros(3, np.int32))
      Array([0, 0, 0], dtype=int32)
    """
    local = np.asarray(local_data._value if isinstance(local_data, Array) else local_data)
    if global_shape is None:
        global_shape = _infer_global_shape(sharding, local.shape)
    global_shape = tuple(global_shape)
    if len(global_shape) != local.ndim:
        raise ValueError(
            f"local_data has rank {local.ndim} but global_shape {global_shape} has rank "
            f"{len(global_shape)}."
        )
    indices = sharding.addressable_devices_indices_map(global_shape)
    starts = []
    for k, n in enumerate(global_shape):
        lo = min((i[k].indices(n)[0] for i in indices.values()), default=0)
        hi = max((i[k].indices(n)[1] for i in indices.values()), default=n)
        if hi - lo != local.shape[k]:
            raise ValueError(
                f"local_data has shape {local.shape}, but this process's devices hold "
                f"{hi - lo} elements along dimension {k} of the global shape {global_shape}."
            )
        starts.append(lo)

    def callback(index: tuple[slice, ...]) -> np.ndarray:
        local_index = tuple(
            slice(i.indices(n)[0] - s, i.indices(n)[1] - s)
            for i, s, n in zip(index, starts, global_shape)
        )
        return local[local_index]

    return make_array_from_callback(global_shape, sharding, callback, dtype=local.dtype)


# ---------------------------------------------------------------------------
# DLPack import and unpickling


def _dlpack_source_device(device_type: int, device_id: int) -> Device:
    if device_type == _DL_CPU:
        return backends.get_backend("cpu").local_devices()[0]
    platform = {_DL_CUDA: "cuda", _DL_ROCM: "rocm"}.get(device_type)
    if platform is None:
        raise BufferError(f"from_dlpack: unsupported DLPack device type {device_type}.")
    for d in backends.get_backend(platform).local_devices():
        if d.local_hardware_id == device_id:
            return d
    raise BufferError(f"from_dlpack: no local {platform} device with id {device_id}.")


def _dtype_of_producer(x: Any) -> np.dtype:
    try:
        return np.dtype(x.dtype)
    except TypeError:  # e.g. torch.float32: use its name
        return np.dtype(str(x.dtype).rsplit(".", 1)[-1])


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Array:
    """Makes an :class:`Array` from any object exporting DLPack (NumPy, PyTorch, ...).

    The result shares the source's memory when jaxlib can use it in place (on CPU:
    suitably aligned data), as DLPack intends; writing to the source afterwards is
    then visible in the result. Pass ``copy=True`` to always get a copy.

    Args:
      x: an object with ``__dlpack__`` and ``__dlpack_device__``.
      device: a Device or Sharding to put the result on (committed); by default the
        result stays where the data is, uncommitted.
      copy: True to always copy; otherwise memory is shared where possible.

    Raises:
      TypeError: ``x`` does not support DLPack.
      BufferError: the source's device is not one polyjax has.

    Example:
      >>> from_dlpack(np.arange(3, dtype=np.int32))
      Array([0, 1, 2], dtype=int32)
    """
    if not hasattr(x, "__dlpack__") or not hasattr(x, "__dlpack_device__"):
        raise TypeError(
            f"from_dlpack needs an object implementing __dlpack__ and __dlpack_device__, "
            f"got {type(x).__name__}."
        )
    device_type, device_id = x.__dlpack_device__()
    src_device = _dlpack_source_device(int(device_type), int(device_id))
    shape, dtype = tuple(x.shape), _dtype_of_producer(x)
    try:
        capsule = x.__dlpack__(stream=None)
    except BufferError:
        if isinstance(x, np.ndarray) and copy is not False:  # read-only: DLPack 0.x cannot say so
            return device_put(np.array(x), device)
        raise
    impl = _jax.dlpack_managed_tensor_to_buffer(capsule, src_device, None)
    here = SingleDeviceSharding(src_device)
    impl = impl._rewrap_with_aval_and_sharding(ShapedArray(shape, dtype), here)
    if copy:  # the import shares memory when it can (aligned data); copy=True must not
        impl = _copy_impl(impl, here, _jax.ArrayCopySemantics.ALWAYS_COPY)
        # The copy runs asynchronously: finish it before the caller may write to the source.
        impl.block_until_ready()
    out = Array._make(impl, ShapedArray(shape, dtype), False)
    canonical = dtypes.canonicalize_dtype(dtype)
    if canonical != dtype:  # e.g. float64 without jax_enable_x64
        sharding = here if device is None else _as_sharding(device)
        return put_value(out._value, ShapedArray(shape, canonical), sharding, device is not None)
    if device is not None:
        return _move(out, out.aval, _as_sharding(device), True, False, None)
    return out


def _reconstruct(value: np.ndarray, dtype: np.dtype, weak_type: bool) -> Array:
    """Unpickles an Array: on the default device, uncommitted."""
    canonical = dtypes.canonicalize_dtype(dtype)
    aval = ShapedArray(value.shape, canonical, weak_type)
    return put_value(value, aval, default_sharding(), False)
