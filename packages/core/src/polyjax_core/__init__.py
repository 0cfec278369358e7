"""polyjax-core: the tracing machinery of polyjax, in pure Python.

Everything the other polyjax packages build on, and all a library author needs
to declare primitives and trace Python functions into jaxprs:

- pytrees (`tree_util`, and `jax_tree_util`, JAX's view of them, in which
  array-like nodes such as typed PRNG keys are leaves), dtypes and type
  promotion (`dtypes`), configuration (`config`), symbolic dimensions
  (`symbolic_dims`);
- abstract values (`ShapedArray`, `ShapeDtypeStruct`, `get_aval`), and the
  type of tokens (`AbstractToken`) with their concrete `Token`;
- `Primitive` and `bind`; `Trace` / `Tracer` and the current-trace context;
- the jaxpr IR (`Var`, `Literal`, `JaxprEqn`, `Jaxpr`, `ClosedJaxpr`), its
  printer, `check_jaxpr`, `eval_jaxpr`, `jaxpr_as_fun`, `dce_jaxpr`, and
  `make_jaxpr`;
- wrapped functions and caches, effects, the named-axis environment, source
  information and the errors tracing raises;
- the device-free half of sharding: `AbstractMesh`, `AxisType`,
  `PartitionSpec`, and the mesh in context (`mesh_context`).
- the abstract array type (`basearray.Array`, which tracers belong to) and the
  `typing` annotations;
- the packages' `__version__`, read on first use (`versioning`);
- mutable array references: their type `AbstractRef`, their effect and the
  concrete `Ref` box (`state`).

Example:
  >>> import numpy as np
  >>> import polyjax_core as core
  >>> sin_p = core.Primitive("sin")
  >>> impl = sin_p.def_impl(np.sin)
  >>> rule = sin_p.def_abstract_eval(lambda x: x)
  >>> print(core.make_jaxpr(sin_p.bind)(np.ones(3, np.float32)))
  { lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }

The stable API of this package is what this module exports; modules whose
names start with `_` are private.
"""

from polyjax_core import (
    basearray,
    caching,
    config,
    deprecations,
    dtypes,
    effects,
    jax_tree_util,
    mesh_context,
    source_info,
    state,
    symbolic_dims,
    tree_util,
    typing,
    vma,
)
from polyjax_core.abstract_values import (
    AbstractToken,
    AbstractValue,
    ShapedArray,
    ShapeDtypeStruct,
    Token,
    get_aval,
    register_aval_handler,
    shaped_abstractify,
)
from polyjax_core.axis_env import axis_frame, axis_size, bound_axis_names, extend_axis_env
from polyjax_core.dce import dce_jaxpr, dce_rules
from polyjax_core.effects import Effect, no_effects
from polyjax_core.errors import (
    ConcretizationTypeError,
    JAXIndexError,
    JaxprTypeError,
    JAXTypeError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from polyjax_core.jaxpr import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    Var,
    jaxprs_in_params,
    map_jaxprs_in_params,
    new_jaxpr_eqn,
    subjaxprs,
)
from polyjax_core.jaxpr_check import check_jaxpr, typematch
from polyjax_core.jaxpr_eval import eval_jaxpr, jaxpr_as_fun
from polyjax_core.jaxpr_tracing import JaxprTrace, JaxprTracer, trace_to_jaxpr
from polyjax_core.lists import merge_lists, partition_list, split_list
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_core.mesh import AbstractDevice, AbstractMesh, AxisType
from polyjax_core.mesh_context import (
    get_abstract_mesh,
    get_concrete_mesh,
    register_spec_to_sharding,
    spec_to_sharding,
    use_abstract_mesh,
)
from polyjax_core.partition_spec import PartitionSpec
from polyjax_core.primitive import Primitive
from polyjax_core.rules import RuleTable
from polyjax_core.state import AbstractRef, Ref
from polyjax_core.symbolic_dims import (
    DimExpr,
    InconclusiveDimensionOperation,
    SymbolicScope,
    is_constant_dim,
    is_symbolic_dim,
    symbolic_dim,
)
from polyjax_core.tracing import (
    EvalTrace,
    Trace,
    Tracer,
    concrete_or_error,
    current_trace,
    register_tracer_attribute,
    register_tracer_method,
    set_current_trace,
)
from polyjax_core.versioning import version_getattr as _version_getattr
from polyjax_core.wrapped_fun import DebugInfo, WrappedFun, debug_info, wrap_init

__all__ = [
    "AbstractDevice",
    "AbstractRef",
    "AbstractMesh",
    "AbstractToken",
    "AbstractValue",
    "AxisType",
    "ClosedJaxpr",
    "ConcretizationTypeError",
    "DebugInfo",
    "DimExpr",
    "DropVar",
    "Effect",
    "EvalTrace",
    "InconclusiveDimensionOperation",
    "JAXIndexError",
    "JAXTypeError",
    "Jaxpr",
    "JaxprEqn",
    "JaxprTrace",
    "JaxprTracer",
    "JaxprTypeError",
    "Literal",
    "NonConcreteBooleanIndexError",
    "PartitionSpec",
    "Primitive",
    "Ref",
    "RuleTable",
    "ShapeDtypeStruct",
    "ShapedArray",
    "Token",
    "SymbolicScope",
    "Trace",
    "Tracer",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
    "Var",
    "WrappedFun",
    "__version__",
    "axis_frame",
    "axis_size",
    "basearray",
    "bound_axis_names",
    "caching",
    "check_jaxpr",
    "concrete_or_error",
    "config",
    "current_trace",
    "dce_jaxpr",
    "dce_rules",
    "debug_info",
    "deprecations",
    "dtypes",
    "effects",
    "eval_jaxpr",
    "extend_axis_env",
    "get_abstract_mesh",
    "get_aval",
    "get_concrete_mesh",
    "is_constant_dim",
    "is_symbolic_dim",
    "jax_tree_util",
    "jaxpr_as_fun",
    "jaxprs_in_params",
    "make_jaxpr",
    "map_jaxprs_in_params",
    "merge_lists",
    "mesh_context",
    "new_jaxpr_eqn",
    "partition_list",
    "no_effects",
    "register_aval_handler",
    "register_spec_to_sharding",
    "register_tracer_attribute",
    "register_tracer_method",
    "set_current_trace",
    "shaped_abstractify",
    "source_info",
    "state",
    "spec_to_sharding",
    "split_list",
    "subjaxprs",
    "symbolic_dim",
    "symbolic_dims",
    "trace_to_jaxpr",
    "tree_util",
    "typematch",
    "use_abstract_mesh",
    "typing",
    "versioning",
    "vma",
    "wrap_init",
]


__getattr__ = _version_getattr(__name__, "polyjax-core")
