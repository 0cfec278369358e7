"""`Exported`: a function lowered to StableHLO, with everything needed to call it.

An `Exported` is what `export(f)(*specs)` returns and what `deserialize` reads
back: the signature (pytree structures and abstract values, possibly with
symbolic dimensions), the platforms and devices it was lowered for, its
effects, and the StableHLO module as a portable artifact
(`mlir_module_serialized`). It has exactly JAX's public fields, so artifacts
move between JAX and polyjax (see `_serialization`).

The module follows JAX's calling convention (version
`minimum_supported_calling_convention_version` to
`maximum_supported_calling_convention_version`): `main` takes, in order, the
platform index (only when there are several platforms), one token per ordered
effect, then the array arguments listed in `module_kept_var_idx`; it returns
the tokens then the results.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from polyjax_core.abstract_values import ShapedArray
from polyjax_core.tree_util import PyTreeDef

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "NamedShardingSpec",
    "typed_aval",
    "typed_sharding_spec",
    "default_export_platform",
    "maximum_supported_calling_convention_version",
    "minimum_supported_calling_convention_version",
]

# What the methods of `Exported` delegate to, filled by the modules that
# implement them (`_serialization`, `_module`, `_call`; the package imports
# them all), so that this module imports none of them.
_IMPLS: dict[str, Callable[..., Any]] = {}

minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10


class DisabledSafetyCheck:
    """A safety check that an export or a call may skip.

    Build one with `DisabledSafetyCheck.platform()` (allow calling on a platform
    the function was not lowered for) or `DisabledSafetyCheck.custom_call(name)`
    (allow a custom call that is not known to be stable).

    Example:
      >>> DisabledSafetyCheck.custom_call("my_target")
      custom_call:my_target
    """

    __slots__ = ("_impl",)

    def __init__(self, _impl: str):
        self._impl = _impl

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        """Allows calling the artifact on a platform it was not lowered for."""
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        """Allows the custom call `target_name` in the module."""
        return cls(f"custom_call:{target_name}")

    def is_custom_call(self) -> str | None:
        """The custom-call target this check disables, or None."""
        return self._impl[len("custom_call:") :] if self._impl.startswith("custom_call:") else None

    def __repr__(self) -> str:
        return self._impl

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DisabledSafetyCheck) and self._impl == other._impl

    def __hash__(self) -> int:
        return hash(self._impl)


def default_export_platform() -> str:
    """The platform of the default backend, as export names it ("cpu", "cuda", "rocm", "tpu").

    Example:
      >>> default_export_platform() in ("cpu", "cuda", "rocm", "tpu")
      True
    """
    from polyjax_interpreters import backends

    platform = backends.default_backend()
    return "cuda" if platform == "gpu" else platform


@dataclasses.dataclass(frozen=True)
class NamedShardingSpec:
    """A `NamedSharding` described without devices, as serialization stores it.

    Attributes:
      axis_names, axis_sizes: the mesh axes.
      axis_types: per axis 0 (missing), 1 (auto), 2 (explicit) or 3 (manual).
      device_kind, platform, num_cores: the abstract device of the mesh.
      partitions: per array dimension, the mesh axes it is split over.
      reduced, unreduced: mesh axes of the spec's reduced/unreduced sets.
      memory_kind: e.g. "device", or None.
    """

    axis_names: tuple[str, ...]
    axis_sizes: tuple[int, ...]
    axis_types: tuple[int, ...]
    device_kind: str | None
    platform: str | None
    num_cores: int | None
    partitions: tuple[tuple[str, ...], ...]
    reduced: tuple[str, ...] = ()
    unreduced: tuple[str, ...] = ()
    memory_kind: str | None = None

    def spec_str(self) -> str:
        """The partition spec printed as `P('x', None)`."""

        def one(axes: tuple[str, ...]) -> str:
            if not axes:
                return "None"
            return repr(axes[0]) if len(axes) == 1 else repr(tuple(axes))

        return "P(" + ", ".join(one(a) for a in self.partitions) + ")"

    def to_named_sharding(self, mesh: Any = None) -> Any:
        """A `polyjax.sharding.NamedSharding` on `mesh` (or on a mesh of the current devices)."""
        from polyjax_core.partition_spec import PartitionSpec
        from polyjax_sharding import NamedSharding, make_mesh

        if mesh is None:
            mesh = make_mesh(self.axis_sizes, self.axis_names)
        parts = [None if not a else a[0] if len(a) == 1 else tuple(a) for a in self.partitions]
        spec = PartitionSpec(*parts, reduced=set(self.reduced), unreduced=set(self.unreduced))
        return NamedSharding(mesh, spec, memory_kind=self.memory_kind)


_AXIS_TYPE_CODES = {"Auto": 1, "Explicit": 2, "Manual": 3}


def typed_sharding_spec(aval: Any) -> NamedShardingSpec | None:
    """The `NamedShardingSpec` of an explicitly typed aval (``float32[8@a,4]``), over its
    abstract mesh, or None for an aval without one (docs/explicit-sharding.md)."""
    typed = getattr(aval, "aval_sharding", None)
    if typed is None:
        return None
    mesh = typed.mesh
    device = mesh.abstract_device
    order = {a: i for i, a in enumerate(mesh.axis_names)}
    return NamedShardingSpec(
        axis_names=tuple(mesh.axis_names),
        axis_sizes=tuple(mesh.axis_sizes),
        axis_types=tuple(_AXIS_TYPE_CODES[t.name] for t in mesh.axis_types),
        device_kind=None if device is None else device.device_kind,
        platform=None if device is None else device.platform,
        num_cores=None if device is None else device.num_cores,
        partitions=tuple(tuple(e) for e in typed.entries),
        reduced=tuple(sorted(typed.reduced, key=order.__getitem__)),
        unreduced=tuple(sorted(typed.unreduced, key=order.__getitem__)),
    )


def typed_aval(aval: Any, spec: NamedShardingSpec | None) -> Any:
    """``aval`` typed with ``spec``'s explicit axes (its axes typed Explicit), as it was
    when exported; unchanged for a spec without explicit axes or None."""
    from polyjax_core.aval_sharding import AvalSharding
    from polyjax_core.mesh import AbstractDevice, AbstractMesh, AxisType

    if spec is None or 2 not in spec.axis_types or not hasattr(aval, "aval_sharding"):
        return aval
    codes = {v: k for k, v in _AXIS_TYPE_CODES.items()}
    device = None
    if spec.device_kind is not None and spec.platform is not None:
        device = AbstractDevice(spec.device_kind, spec.num_cores, spec.platform)
    mesh = AbstractMesh(
        spec.axis_sizes,
        spec.axis_names,
        tuple(AxisType[codes.get(t, "Auto")] for t in spec.axis_types),
        abstract_device=device,
    )
    typed = AvalSharding.make(mesh, spec.partitions, len(aval.shape), spec.unreduced, spec.reduced)
    return aval.update(sharding=typed)


@dataclasses.dataclass(frozen=True)
class Exported:
    """A function lowered for given argument types, ready to be saved or called.

    Attributes:
      fun_name: the name of the exported function.
      in_tree: the pytree structure of `(args, kwargs)`.
      in_avals: the abstract values of the flattened arguments (dimensions may
        be symbolic).
      out_tree: the pytree structure of the result.
      out_avals: the abstract values of the flattened results.
      in_shardings_hlo, out_shardings_hlo: per argument/result, an HLO sharding
        or None.
      nr_devices: the number of devices the module runs on.
      platforms: the platforms it was lowered for, e.g. `("cpu",)`.
      ordered_effects, unordered_effects: the effects of the function.
      disabled_safety_checks: the `DisabledSafetyCheck`s used at export.
      mlir_module_serialized: the StableHLO module, a portable artifact.
      calling_convention_version: the version of the module's calling convention.
      module_kept_var_idx: sorted indices of the arguments `main` takes (unused
        ones are dropped).
      uses_global_constants: whether `main` needs shape refinement before it
        compiles (symbolic shapes or a platform index).

    Example:
      >>> import numpy as np
      >>> from polyjax_core import ShapeDtypeStruct
      >>> from polyjax_export import export
      >>> from polyjax_interpreters.jit import jit
      >>> exp = export(jit(lambda x: x))(ShapeDtypeStruct((3,), np.float32))
      >>> exp.fun_name, exp.out_avals, exp.platforms, exp.nr_devices
      ('<lambda>', (ShapedArray(float32[3]),), ('cpu',), 1)
    """

    fun_name: str
    in_tree: PyTreeDef
    in_avals: tuple[ShapedArray, ...]
    out_tree: PyTreeDef
    out_avals: tuple[ShapedArray, ...]
    in_shardings_hlo: tuple[Any, ...]
    out_shardings_hlo: tuple[Any, ...]
    nr_devices: int
    platforms: tuple[str, ...]
    ordered_effects: tuple[Any, ...]
    unordered_effects: tuple[Any, ...]
    disabled_safety_checks: tuple[DisabledSafetyCheck, ...]
    mlir_module_serialized: bytes
    calling_convention_version: int
    module_kept_var_idx: tuple[int, ...]
    uses_global_constants: bool
    _get_vjp: Callable[[Exported], Exported] | None = dataclasses.field(
        default=None, repr=False, compare=False
    )
    # Named shardings per argument/result (None where unspecified), as stored.
    _in_named_shardings: tuple[NamedShardingSpec | None, ...] | None = dataclasses.field(
        default=None, repr=False, compare=False
    )
    _out_named_shardings: tuple[NamedShardingSpec | None, ...] | None = dataclasses.field(
        default=None, repr=False, compare=False
    )
    # The symbolic-shape constraints of the export's scope, e.g. ("a >= b",).
    _constraints: tuple[str, ...] = dataclasses.field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        # Tuples, as JAX's: an Exported is hashable (it is a jit argument, a cache key).
        for name in ("disabled_safety_checks", "platforms", "module_kept_var_idx"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def __str__(self) -> str:
        # The module is large: keep the printed form short, as JAX does.
        return f"Exported(fun_name={self.fun_name}, ...)"

    def __repr__(self) -> str:
        return str(self)

    def has_vjp(self) -> bool:
        """Whether the VJP is available (the function was serialized with `vjp_order > 0`)."""
        return self._get_vjp is not None

    def vjp(self) -> Exported:
        """The `Exported` of the VJP: `(*primal_args, *out_cotangents) -> in_cotangents`.

        Raises:
          ValueError: if no VJP is available.
        """
        if self._get_vjp is None:
            raise ValueError("No VJP is available")
        return self._get_vjp(self)

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """The bytes of this `Exported`, in JAX's format (see `deserialize`).

        Args:
          vjp_order: how many levels of VJPs to include, so that the loaded
            function can be differentiated that many times.

        Returns:
          A `bytearray`.
        """
        return _IMPLS["serialize"](self, vjp_order=vjp_order)

    def mlir_module(self) -> str:
        """The StableHLO module, as text."""
        return _IMPLS["module_text"](self.mlir_module_serialized)

    def in_shardings_jax(self, mesh: Any) -> tuple[Any, ...]:
        """The argument shardings as `NamedSharding`s on `mesh` (None where unspecified)."""
        return _shardings_on(self._in_named_shardings, len(self.in_avals), mesh)

    def out_shardings_jax(self, mesh: Any) -> tuple[Any, ...]:
        """The result shardings as `NamedSharding`s on `mesh` (None where unspecified)."""
        return _shardings_on(self._out_named_shardings, len(self.out_avals), mesh)

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Calls the exported function on arguments of shapes its specification allows.

        Works eagerly and under `jit`, `vmap` and `grad` (through the serialized VJP).

        Raises:
          ValueError: if the arguments' structure, ranks, dtypes or sizes do not
            match the specification.
        """
        return _IMPLS["call_exported"](self)(*args, **kwargs)


def _shardings_on(specs: Any, n: int, mesh: Any) -> tuple[Any, ...]:
    if specs is None:
        return (None,) * n
    return tuple(None if s is None else s.to_named_sharding(mesh) for s in specs)
