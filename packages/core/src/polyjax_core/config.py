"""Configuration options: global values, thread-local overrides, and the trace context.

Every option is a :class:`State`. A state has a *global* value, set by
``config.update(name, value)`` (or by its environment variable at import time), and
any number of nested *thread-local* overrides, set by using the state as a context
manager::

    with enable_x64(True):
        ...  # in this thread only, enable_x64.value is True

Library code reads ``enable_x64.value``. That read happens on every primitive bind,
so it is kept to a single thread-local attribute lookup that falls back to the
global value.

Some options change what a traced or compiled program means (for example
``jax_enable_x64`` changes the dtypes that Python scalars get). Those are flagged
``include_in_trace_context``, and :func:`trace_context` returns a hashable snapshot
of their effective values, which every trace and compile cache puts in its key.
A thread-local override therefore makes the caches miss exactly when it should.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar, cast

import numpy as np

__all__ = [
    "Config",
    "State",
    "config",
    "define_bool_state",
    "define_enum_state",
    "define_float_state",
    "define_int_state",
    "define_optional_enum_state",
    "define_optional_int_state",
    "define_optional_string_state",
    "define_string_state",
    "trace_context",
    "trace_context_names",
    # The options, by their short names.
    "check_tracer_leaks",
    "checking_leaks",
    "compilation_cache_dir",
    "enable_compilation_cache",
    "persistent_cache_min_compile_time_secs",
    "persistent_cache_min_entry_size_bytes",
    "debug_infs",
    "debug_key_reuse",
    "debug_nans",
    "default_device",
    "default_matmul_precision",
    "default_prng_impl",
    "disable_jit",
    "dynamic_shapes",
    "enable_checks",
    "enable_x64",
    "export_calling_convention_version",
    "explain_cache_misses",
    "log_compiles",
    "num_cpu_devices",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "platform_name",
    "platforms",
    "softmax_custom_jvp",
    "threefry_partitionable",
    "traceback_filtering",
    "transfer_guard",
    "transfer_guard_device_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_host_to_device",
    "use_shardy_partitioner",
    "allow_f16_reductions",
    "array_garbage_collection_guard",
    "legacy_prng_key",
    "no_execution",
    "no_tracing",
    "thread_guard",
]

T = TypeVar("T")


class _Unset:
    """Marker for "this thread has no override"; distinct from every legal value."""

    def __repr__(self) -> str:
        return "<unset>"


_UNSET: Any = _Unset()


# --------------------------------------------------------------------------------------
# The trace-context cache.
#
# trace_context() is called on every jit call, so its tuple is cached per thread.
# The cache is invalidated two ways: a global change (config.update, or defining a
# new option) bumps `_global_generation`, which every thread compares against; a
# thread-local override clears only the current thread's cached tuple.
# --------------------------------------------------------------------------------------


class _TraceContextCache(threading.local):
    value: tuple | None = None
    generation: int = -1


_tc_cache = _TraceContextCache()
_global_generation = 0
_trace_context_states: list[State] = []
# Called (with no arguments) whenever an option of the trace context changes, globally
# or in the calling thread: jit mirrors `global_snapshot()` and `local_overrides()`
# into jaxlib's C++ cache key.
trace_context_listeners: list[Callable[[], None]] = []


def _invalidate_all_threads() -> None:
    global _global_generation
    _global_generation += 1
    _notify()


def trace_context() -> tuple:
    """Returns a hashable snapshot of the options that affect tracing and compilation.

    The snapshot holds the effective values (thread-local override or global value)
    of every option defined with ``include_in_trace_context=True``, ordered by option
    name (see :func:`trace_context_names`). Trace and compile caches include it in
    their keys.

    Returns:
      A tuple of option values.

    Example:
      >>> before = trace_context()
      >>> with enable_x64(not enable_x64.value):
      ...     trace_context() != before
      True
    """
    cache = _tc_cache
    generation = _global_generation
    if cache.value is not None and cache.generation == generation:
        return cache.value
    # `generation` was read before the values: if another thread updates an option
    # meanwhile, the stored generation is already stale and the next call recomputes.
    value = tuple(s.value for s in _trace_context_states)
    cache.value = value
    cache.generation = generation
    return value


def global_snapshot() -> tuple:
    """The global values of the trace-context options (thread-local overrides ignored)."""
    return tuple(s.global_value for s in _trace_context_states)


def local_overrides() -> tuple:
    """This thread's overrides of trace-context options, as ``(name, value)`` pairs.

    Together with `global_snapshot` it decides `trace_context`.
    """
    return tuple(
        (s.name, s._local.value) for s in _trace_context_states if "value" in s._local.__dict__
    )


def _notify() -> None:
    for listener in trace_context_listeners:
        listener()


def trace_context_names() -> tuple[str, ...]:
    """Returns the option names whose values :func:`trace_context` lists, in order."""
    return tuple(s.name for s in _trace_context_states)


# --------------------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------------------


class _Override(contextlib.ContextDecorator):
    """A thread-local override of one State, active for the extent of a ``with``.

    On entry it remembers what this thread saw before (another override, or none) and
    restores exactly that on exit, so overrides nest and unwind correctly even when
    the body raises. Used as a decorator, each call gets a fresh copy (via
    ``_recreate_cm``), so one decorated function may run in many threads at once.
    """

    __slots__ = ("_state", "_new", "_prev")

    def __init__(self, state: State, new_value: Any):
        self._state = state
        self._new = new_value
        self._prev = _UNSET

    def _recreate_cm(self) -> _Override:
        return _Override(self._state, self._new)

    def __enter__(self) -> None:
        state = self._state
        self._prev = state._local.__dict__.get("value", _UNSET)
        state._set_local(self._new)

    def __exit__(self, *exc_info: object) -> None:
        self._state._set_local(self._prev)


class State(Generic[T]):
    """One configuration option.

    Attributes:
      name: the option's name, e.g. ``"jax_enable_x64"``.
      help: a one-paragraph description.
      include_in_trace_context: whether :func:`trace_context` lists this option.

    Read :attr:`value` for the effective value. Call the state with a new value to get
    a context manager that overrides it in the current thread only. ``config.update``
    changes the global value.

    Example:
      >>> with enable_checks(True):
      ...     enable_checks.value
      True
    """

    def __init__(
        self,
        name: str,
        default: T,
        help: str,
        validate: Callable[[State, Any], T],
        *,
        include_in_trace_context: bool = False,
        update_hook: Callable[[T], None] | None = None,
        update_thread_local_hook: Callable[[T | None], None] | None = None,
    ):
        self.name = name
        self.help = help
        self.include_in_trace_context = include_in_trace_context
        self._validate = validate
        self._update_hook = update_hook
        self._update_thread_local_hook = update_thread_local_hook
        self._local = threading.local()
        self._global_value: T = validate(self, default)
        if update_hook is not None:
            update_hook(self._global_value)

    @property
    def value(self) -> T:
        """The effective value: this thread's innermost override, else the global value."""
        return self._local.__dict__.get("value", self._global_value)

    @property
    def global_value(self) -> T:
        """The global value, ignoring any thread-local override."""
        return self._global_value

    def __call__(self, new_val: Any = _UNSET) -> _Override:
        """Returns a context manager overriding this option in the current thread.

        Args:
          new_val: the value to use inside the ``with`` block; validated now. A
            boolean option may be called with no argument, meaning True (JAX's
            ``with jax.log_compiles():``); other options require it.

        Returns:
          A context manager (also usable as a function decorator).

        Raises:
          TypeError, ValueError: if ``new_val`` is not a legal value for the option,
            or is missing for an option that is not boolean.
        """
        if new_val is _UNSET:
            if self._validate is not _validate_bool:
                raise TypeError(
                    f"Context manager for {self.name.removeprefix('jax_')} config option "
                    "requires an argument representing the new value for the config option."
                )
            new_val = True
        return _Override(self, self._validate(self, new_val))

    def set_hooks(
        self,
        update_hook: Callable[[T], None] | None = None,
        update_thread_local_hook: Callable[[T | None], None] | None = None,
    ) -> None:
        """Installs the hooks a higher layer runs when the option changes.

        For options that core defines but a runtime honours (e.g. the transfer
        guards, which jaxlib enforces): the runtime mirrors the value into its own
        state. ``update_hook`` is called at once with the current global value.

        Args:
          update_hook: called with the new global value on every global update.
          update_thread_local_hook: called with the new thread-local value on entering
            and leaving an override (``None`` when no override remains).
        """
        self._update_hook = update_hook
        self._update_thread_local_hook = update_thread_local_hook
        if update_hook is not None:
            update_hook(self._global_value)

    def _set_global(self, new_value: Any) -> None:
        self._global_value = self._validate(self, new_value)
        if self.include_in_trace_context:
            _invalidate_all_threads()
        if self._update_hook is not None:
            self._update_hook(self._global_value)

    def _set_local(self, new_value: Any) -> None:
        # `new_value` is already validated (or is _UNSET, meaning "remove override").
        if new_value is _UNSET:
            self._local.__dict__.pop("value", None)
        else:
            self._local.value = new_value
        if self.include_in_trace_context:
            _tc_cache.value = None
            _notify()
        if self._update_thread_local_hook is not None:
            self._update_thread_local_hook(None if new_value is _UNSET else new_value)

    def __bool__(self) -> bool:
        raise TypeError(
            f"bool() of a config State is ambiguous; did you mean `{self.name}.value`? "
            "Read the option's effective value with `.value`."
        )

    def __repr__(self) -> str:
        return f"State(name={self.name!r}, value={self.value!r})"


# --------------------------------------------------------------------------------------
# The config object
# --------------------------------------------------------------------------------------


class Config:
    """The registry of all options, and the user-facing way to read and set them.

    Example:
      >>> config.update("jax_enable_checks", True)
      >>> config.jax_enable_checks
      True
      >>> config.update("jax_enable_checks", False)
    """

    def __init__(self) -> None:
        self._states: dict[str, State] = {}

    def _register(self, state: State) -> None:
        if state.name in self._states:
            raise ValueError(f"Config option {state.name} already defined")
        self._states[state.name] = state

    def _state(self, name: str) -> State:
        try:
            return self._states[name]
        except KeyError:
            raise AttributeError(f"Unrecognized config option: {name}") from None

    def update(self, name: str, value: Any) -> None:
        """Sets the global value of an option.

        Args:
          name: the option's name, e.g. ``"jax_enable_x64"``.
          value: the new value.

        Raises:
          AttributeError: if there is no option called ``name``.
          TypeError, ValueError: if ``value`` is not legal for the option.
        """
        self._state(name)._set_global(value)

    def read(self, name: str) -> Any:
        """Returns the effective value of the option ``name``.

        Raises:
          AttributeError: if there is no option called ``name``.
        """
        return self._state(name).value

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails, i.e. for option names.
        if name.startswith("_"):
            raise AttributeError(name)
        return self._state(name).value

    @property
    def values(self) -> dict[str, Any]:
        """A dict of every option's effective value, by name."""
        return {name: s.value for name, s in self._states.items()}

    @property
    def states(self) -> Mapping[str, State]:
        """A read-only view of the :class:`State` of every option, by name."""
        return dict(self._states)

    def __dir__(self) -> Iterable[str]:
        return [*super().__dir__(), *self._states]


config = Config()


# --------------------------------------------------------------------------------------
# Parsing and validation
# --------------------------------------------------------------------------------------

_TRUE_STRINGS = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE_STRINGS = frozenset({"0", "false", "f", "no", "n", "off"})


def _env_var(name: str) -> str:
    return name.upper()


def _parse_bool(text: str, env_var: str) -> bool:
    lowered = text.strip().lower()
    if lowered in _TRUE_STRINGS:
        return True
    if lowered in _FALSE_STRINGS:
        return False
    raise ValueError(
        f"Invalid value {text!r} for environment variable {env_var}: expected a boolean "
        f"(one of {sorted(_TRUE_STRINGS)} or {sorted(_FALSE_STRINGS)}, any case)."
    )


def _parse_int(text: str, env_var: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ValueError(
            f"Invalid value {text!r} for environment variable {env_var}: expected an integer."
        ) from None


def _default_from_env(name: str, default: Any, parse: Callable[[str, str], Any]) -> Any:
    """The default, unless the option's environment variable is set."""
    env_var = _env_var(name)
    text = os.environ.get(env_var)
    if text is None:
        return default
    return parse(text, env_var)


def _type_error(state: State, expected: str, value: Any) -> TypeError:
    return TypeError(
        f"Config option {state.name} expects {expected}, got {value!r} "
        f"of type {type(value).__name__}."
    )


def _validate_bool(state: State, value: Any) -> bool:
    # Ints are refused (config.update("jax_enable_x64", 1) is more likely a mistake
    # than a shorthand); NumPy booleans are accepted and stored as Python bools.
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise _type_error(state, "a bool", value)


def _int_validator(optional: bool) -> Callable[[State, Any], int | None]:
    def validate(state: State, value: Any) -> int | None:
        if value is None and optional:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return int(value)
        raise _type_error(state, "an int" + (" or None" if optional else ""), value)

    return validate


def _parse_float(text: str, env_var: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        raise ValueError(
            f"Invalid value {text!r} for environment variable {env_var}: expected a number."
        ) from None


def _validate_float(state: State, value: Any) -> float:
    # As JAX: an int is accepted as it is (JAX stores `0` as given).
    if isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool):
        return value.item() if isinstance(value, np.generic) else value
    raise _type_error(state, "a float", value)


def _string_validator(optional: bool) -> Callable[[State, Any], str | None]:
    def validate(state: State, value: Any) -> str | None:
        if value is None and optional:
            return None
        if isinstance(value, str):
            return value
        raise _type_error(state, "a string" + (" or None" if optional else ""), value)

    return validate


def _enum_validator(
    enum_values: tuple[str, ...], optional: bool
) -> Callable[[State, Any], str | None]:
    def validate(state: State, value: Any) -> str | None:
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise _type_error(state, "a string" + (" or None" if optional else ""), value)
        if value not in enum_values:
            allowed = ", ".join(repr(v) for v in enum_values)
            raise ValueError(
                f"Invalid value {value!r} for config option {state.name}: "
                f"must be one of {allowed}" + (" or None." if optional else ".")
            )
        return value

    return validate


def _checked_env_default(
    name: str,
    default: Any,
    parse: Callable[[str, str], Any],
    validate: Callable[[State, Any], Any],
) -> Any:
    """The env-var default, validated so that a bad value names the variable."""
    value = _default_from_env(name, default, parse)
    if value is default:
        return value
    try:
        # The validators read only the state's `name`, which the stand-in has.
        return validate(cast(State, _NamedOnly(name)), value)
    except (TypeError, ValueError) as e:
        raise ValueError(f"Invalid value in environment variable {_env_var(name)}: {e}") from None


class _NamedOnly:
    """Stands in for a State in validator error messages before the State exists."""

    def __init__(self, name: str):
        self.name = name


def _define(
    name: str,
    default: Any,
    help: str,
    parse: Callable[[str, str], Any],
    validate: Callable[[State, Any], Any],
    include_in_trace_context: bool,
    update_hook: Callable[[Any], None] | None,
    update_thread_local_hook: Callable[[Any], None] | None,
) -> State:
    default = _checked_env_default(name, default, parse, validate)
    state = State(
        name,
        default,
        help,
        validate,
        include_in_trace_context=include_in_trace_context,
        update_hook=update_hook,
        update_thread_local_hook=update_thread_local_hook,
    )
    config._register(state)
    if include_in_trace_context:
        _trace_context_states.append(state)
        _trace_context_states.sort(key=lambda s: s.name)
        _invalidate_all_threads()
    return state


def _keep_text(text: str, env_var: str) -> str:
    return text


def _optional_text(text: str, env_var: str) -> str | None:
    # An empty variable means "not set" for options whose default is None.
    return text or None


# --------------------------------------------------------------------------------------
# Public factories
# --------------------------------------------------------------------------------------


def define_bool_state(
    name: str,
    default: bool,
    help: str,
    *,
    include_in_trace_context: bool = False,
    update_hook: Callable[[bool], None] | None = None,
    update_thread_local_hook: Callable[[bool | None], None] | None = None,
) -> State[bool]:
    """Defines a boolean option.

    The environment variable ``name.upper()``, if set, overrides ``default``. It is
    read as true for ``1, true, t, yes, y, on`` and false for ``0, false, f, no, n,
    off`` (any case).

    Args:
      name: the option's name, conventionally ``jax_...``.
      default: the value used when the environment variable is not set.
      help: a description of the option.
      include_in_trace_context: whether the option changes traces/compilations and so
        belongs in :func:`trace_context`.
      update_hook: called with the new global value on every global update (and once
        with the initial value).
      update_thread_local_hook: called with the new thread-local value on entering and
        leaving an override (``None`` when no override remains).

    Returns:
      The new :class:`State`.

    Raises:
      ValueError: if the option exists already, or its environment variable does not
        parse as a boolean.

    Example:
      >>> my_flag = define_bool_state("polyjax_doc_example_flag", False, "An example.")
      >>> with my_flag(True):
      ...     my_flag.value
      True
    """
    return _define(
        name,
        default,
        help,
        _parse_bool,
        _validate_bool,
        include_in_trace_context,
        update_hook,
        update_thread_local_hook,
    )


def define_int_state(
    name: str,
    default: int,
    help: str,
    *,
    include_in_trace_context: bool = False,
    update_hook: Callable[[int], None] | None = None,
    update_thread_local_hook: Callable[[int | None], None] | None = None,
) -> State[int]:
    """Defines an integer option; see :func:`define_bool_state` for the arguments.

    Raises:
      ValueError: if the option exists already or its environment variable is not an
        integer.
    """
    return _define(
        name,
        default,
        help,
        _parse_int,
        _int_validator(optional=False),
        include_in_trace_context,
        update_hook,
        update_thread_local_hook,
    )


def define_float_state(
    name: str,
    default: float,
    help: str,
    *,
    include_in_trace_context: bool = False,
    update_hook: Callable[[float], None] | None = None,
    update_thread_local_hook: Callable[[float | None], None] | None = None,
) -> State[float]:
    """Defines a floating-point option; see :func:`define_bool_state` for the arguments.

    Raises:
      ValueError: if the option exists already or its environment variable is not a
        number.
    """
    return _define(
        name,
        default,
        help,
        _parse_float,
        _validate_float,
        include_in_trace_context,
        update_hook,
        update_thread_local_hook,
    )


def define_optional_int_state(
    name: str,
    default: int | None,
    help: str,
    *,
    include_in_trace_context: bool = False,
    update_hook: Callable[[int | None], None] | None = None,
    update_thread_local_hook: Callable[[int | None], None] | None = None,
) -> State[int | None]:
    """Defines an option holding an integer or ``None``; see :func:`define_bool_state`."""

    def parse(text: str, env_var: str) -> int | None:
        return _parse_int(text, env_var) if text.strip() else None

    return _define(
        name,
        default,
        help,
        parse,
        _int_validator(optional=True),
        include_in_trace_context,
        update_hook,
        update_thread_local_hook,
    )


def define_string_state(
    name: str,
    default: str,
    help: str,
    *,
    include_in_trace_context: bool = False,
    update_hook: Callable[[str], None] | None = None,
    update_thread_local_hook: Callable[[str | None], None] | None = None,
) -> State[str]:
    """Defines a string option; see :func:`define_bool_state` for the arguments."""
    return _define(
        name,
        default,
        help,
        _keep_text,
        _string_validator(optional=False),
        include_in_trace_context,
        update_hook,
        update_thread_local_hook,
    )


def define_optional_string_state(
    name: str,
    default: str | None,
    help: str,
    *,
    include_in_trace_context: bool = False,
    update_hook: Callable[[str | None], None] | None = None,
    update_thread_local_hook: Callable[[str | None], None] | None = None,
) -> State[str | None]:
    """Defines an option holding a string or ``None``; see :func:`define_bool_state`.

    An empty environment variable means ``None``.
    """
    return _define(
        name,
        default,
        help,
        _optional_text,
        _string_validator(optional=True),
        include_in_trace_context,
        update_hook,
        update_thread_local_hook,
    )


def define_enum_state(
    name: str,
    enum_values: Iterable[str],
    default: str,
    help: str,
    *,
    include_in_trace_context: bool = False,
    update_hook: Callable[[str], None] | None = None,
    update_thread_local_hook: Callable[[str | None], None] | None = None,
) -> State[str]:
    """Defines an option whose value is one of a fixed set of strings.

    Args:
      name: the option's name.
      enum_values: the allowed values.
      default: the value used when the environment variable is not set.
      help: a description of the option.
      include_in_trace_context: see :func:`define_bool_state`.
      update_hook: see :func:`define_bool_state`.
      update_thread_local_hook: see :func:`define_bool_state`.

    Returns:
      The new :class:`State`.

    Raises:
      ValueError: if a value (the default, the environment variable, or a later
        update) is not one of ``enum_values``; the message lists them.
      TypeError: if a value is not a string.
    """
    return _define(
        name,
        default,
        help,
        _keep_text,
        _enum_validator(tuple(enum_values), optional=False),
        include_in_trace_context,
        update_hook,
        update_thread_local_hook,
    )


def define_optional_enum_state(
    name: str,
    enum_values: Iterable[str],
    default: str | None,
    help: str,
    *,
    include_in_trace_context: bool = False,
    update_hook: Callable[[str | None], None] | None = None,
    update_thread_local_hook: Callable[[str | None], None] | None = None,
) -> State[str | None]:
    """Like :func:`define_enum_state`, but ``None`` is also allowed.

    An empty environment variable means ``None``.
    """
    return _define(
        name,
        default,
        help,
        _optional_text,
        _enum_validator(tuple(enum_values), optional=True),
        include_in_trace_context,
        update_hook,
        update_thread_local_hook,
    )


def _define_object_state(
    name: str,
    default: Any,
    help: str,
    *,
    include_in_trace_context: bool = False,
) -> State[Any]:
    """An option holding any hashable object (e.g. a device); its env var is text."""

    def validate(state: State, value: Any) -> Any:
        try:
            hash(value)
        except TypeError:
            raise _type_error(state, "a hashable value", value) from None
        return value

    return _define(
        name, default, help, _optional_text, validate, include_in_trace_context, None, None
    )


# --------------------------------------------------------------------------------------
# The options JAX users know. Names, types and defaults follow JAX's documentation.
# --------------------------------------------------------------------------------------

enable_x64 = define_bool_state(
    "jax_enable_x64",
    False,
    "Enable 64-bit types. When off, 64-bit dtypes are canonicalized to 32 bits and "
    "Python scalars become 32-bit values.",
    include_in_trace_context=True,
)

num_cpu_devices = define_int_state(
    "jax_num_cpu_devices",
    -1,
    "Number of CPU devices to create; -1 means the backend's default. Only takes "
    "effect before the CPU backend is initialized.",
)

platforms = define_optional_string_state(
    "jax_platforms",
    None,
    "Comma-separated list of platform names (e.g. 'cpu', 'cuda', 'tpu') to initialize, "
    "in priority order. None means every available platform.",
)

platform_name = define_string_state(
    "jax_platform_name",
    "",
    "Deprecated; use jax_platforms. Name of the platform to use by default.",
)

default_device = _define_object_state(
    "jax_default_device",
    None,
    "Device (or platform name) used for computations whose inputs are not committed "
    "to a device. None means the first device of the default backend.",
    include_in_trace_context=True,
)

_DOT_ALGORITHM_PRESETS = (
    "ANY_F8_ANY_F8_F32",
    "ANY_F8_ANY_F8_F32_FAST_ACCUM",
    "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM",
    "F16_F16_F16",
    "F16_F16_F32",
    "BF16_BF16_BF16",
    "BF16_BF16_F32",
    "BF16_BF16_F32_X3",
    "BF16_BF16_F32_X6",
    "BF16_BF16_F32_X9",
    "TF32_TF32_F32",
    "TF32_TF32_F32_X3",
    "F32_F32_F32",
    "F64_F64_F64",
)

default_matmul_precision = define_optional_enum_state(
    "jax_default_matmul_precision",
    (
        "default",
        "fastest",
        "high",
        "highest",
        "bfloat16",
        "tensorfloat32",
        "float32",
        "bfloat16_3x",
        "tensorfloat32_3x",
        *_DOT_ALGORITHM_PRESETS,
    ),
    None,
    "Default precision (or dot algorithm preset name) for matmuls and convolutions on "
    "32-bit inputs. None means the platform default.",
    include_in_trace_context=True,
)

disable_jit = define_bool_state(
    "jax_disable_jit",
    False,
    "Run jit-decorated functions op by op instead of compiling them (for debugging).",
    include_in_trace_context=True,
)

debug_nans = define_bool_state(
    "jax_debug_nans",
    False,
    "Check every computation's outputs for NaNs and raise FloatingPointError at the "
    "first operation that produces one.",
    include_in_trace_context=True,
)

auto_pcast = define_bool_state(
    "jax_auto_pcast",
    True,
    "Inside shard_map, cast operands that vary over fewer manual axes than the others "
    "with pvary, so that simple operations accept them (as JAX). When off, such "
    "operations raise instead.",
    include_in_trace_context=True,
)

debug_key_reuse = define_bool_state(
    "jax_debug_key_reuse",
    False,
    "Raise KeyReuseError when a consumed PRNG key is used again (see polyjax.random).",
    include_in_trace_context=True,
)

debug_infs = define_bool_state(
    "jax_debug_infs",
    False,
    "Like jax_debug_nans, for infinities.",
    include_in_trace_context=True,
)

enable_checks = define_bool_state(
    "jax_enable_checks",
    False,
    "Turn on internal consistency checks (e.g. type-check every jaxpr). Slow.",
)

numpy_rank_promotion = define_enum_state(
    "jax_numpy_rank_promotion",
    ("allow", "warn", "raise"),
    "allow",
    "What to do when a NumPy-style operation broadcasts arrays of different ranks.",
    include_in_trace_context=True,
)

numpy_dtype_promotion = define_enum_state(
    "jax_numpy_dtype_promotion",
    ("standard", "strict"),
    "standard",
    "'standard' uses the type-promotion lattice; 'strict' allows implicit promotion "
    "only of weakly-typed values (Python scalars) within their kind.",
    include_in_trace_context=True,
)

traceback_filtering = define_enum_state(
    "jax_traceback_filtering",
    ("off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto"),
    "auto",
    "How to hide polyjax-internal frames in tracebacks of errors raised in user code.",
)

default_prng_impl = define_enum_state(
    "jax_default_prng_impl",
    ("threefry2x32", "rbg", "unsafe_rbg"),
    "threefry2x32",
    "The pseudo-random number generator used by default for new keys.",
    include_in_trace_context=True,
)

threefry_partitionable = define_bool_state(
    "jax_threefry_partitionable",
    True,
    "Generate random bits with a threefry scheme that shards without communication. "
    "Changes the bits produced for a given key.",
    include_in_trace_context=True,
)

log_compiles = define_bool_state(
    "jax_log_compiles",
    False,
    "Log (at WARNING level) every time a function is traced and compiled.",
)

explain_cache_misses = define_bool_state(
    "jax_explain_cache_misses",
    False,
    "On a tracing-cache miss, log why the cached entries did not match.",
)

check_tracer_leaks = define_bool_state(
    "jax_check_tracer_leaks",
    False,
    "After each transformation, check that no tracer escaped it. Slow.",
)

#: ``with checking_leaks():`` turns tracer-leak checking on (JAX's shorthand).
checking_leaks = functools.partial(check_tracer_leaks, True)

use_shardy_partitioner = define_bool_state(
    "jax_use_shardy_partitioner",
    True,
    "Use the Shardy partitioner (instead of GSPMD) for sharding propagation.",
    include_in_trace_context=True,
)

dynamic_shapes = define_bool_state(
    "jax_dynamic_shapes",
    False,
    "Experimental: allow array shapes that depend on traced values.",
    include_in_trace_context=True,
)

compilation_cache_dir = define_optional_string_state(
    "jax_compilation_cache_dir",
    None,
    "Directory for the persistent compilation cache; None disables it.",
)

enable_compilation_cache = define_bool_state(
    "jax_enable_compilation_cache",
    True,
    "If False, the persistent compilation cache is off even when a directory is set.",
)

persistent_cache_min_compile_time_secs = define_float_state(
    "jax_persistent_cache_min_compile_time_secs",
    1.0,
    "The minimum compile time (in seconds) of a computation for it to be written to the "
    "persistent compilation cache; 0 caches every computation.",
)

persistent_cache_min_entry_size_bytes = define_int_state(
    "jax_persistent_cache_min_entry_size_bytes",
    0,
    "The minimum size (in bytes) of an entry written to the persistent compilation cache; "
    "0 or -1: no minimum.",
)

softmax_custom_jvp = define_bool_state(
    "jax_softmax_custom_jvp",
    False,
    "Use a custom JVP rule for softmax (more stable, different numerics).",
    include_in_trace_context=True,
)

transfer_guard = define_optional_enum_state(
    "jax_transfer_guard",
    ("allow", "log", "disallow", "log_explicit", "disallow_explicit"),
    None,
    "What to do on host-device transfers; None means 'allow'.",
)

_TRANSFER_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")


def _transfer_guard(direction: str) -> State[str | None]:
    return define_optional_enum_state(
        f"jax_transfer_guard_{direction.replace('-', '_')}",
        _TRANSFER_GUARD_LEVELS,
        None,
        f"What to do on {direction} transfers: 'allow' (None), 'log' or 'disallow' "
        "implicit ones, or '*_explicit' for explicit ones (device_put, device_get) too.",
    )


transfer_guard_host_to_device = _transfer_guard("host-to-device")
transfer_guard_device_to_host = _transfer_guard("device-to-host")
transfer_guard_device_to_device = _transfer_guard("device-to-device")

allow_f16_reductions = define_bool_state(
    "jax_allow_f16_reductions",
    True,
    "If False, reduce_sum of float16 or bfloat16 operands raises ValueError (it "
    "accumulates in the narrow type).",
    include_in_trace_context=True,
)

array_garbage_collection_guard = define_optional_enum_state(
    "jax_array_garbage_collection_guard",
    ("allow", "log", "fatal"),
    None,
    "What happens when Python's cycle collector (rather than reference counting) frees "
    "an Array: 'allow' (None), 'log' an error with the traceback, or 'fatal'.",
)

legacy_prng_key = define_enum_state(
    "jax_legacy_prng_key",
    ("allow", "warn", "error"),
    "allow",
    "What to do when raw uint32 key data (from random.PRNGKey) is passed as a key to a "
    "polyjax.random function: 'allow', 'warn' (UserWarning) or 'error' (ValueError).",
)

no_tracing = define_bool_state(
    "jax_no_tracing",
    False,
    "Raise RuntimeError when a jitted function (or an eager operation) would be traced "
    "again; calls that hit a cache run.",
)

no_execution = define_bool_state(
    "jax_no_execution",
    False,
    "Raise RuntimeError when a computation (jitted or eager) is about to run.",
    include_in_trace_context=True,
)

thread_guard = define_bool_state(
    "jax_thread_guard",
    False,
    "If True, jaxlib raises when a multi-process computation is launched from a thread "
    "other than the one that set the guard.",
)

export_calling_convention_version = define_int_state(
    "jax_export_calling_convention_version",
    10,
    "The calling-convention version that polyjax.export writes (9 or 10, the range it "
    "supports). The modules are the same; version 10 tells readers that the Shardy "
    "partitioner setting is propagated, and 9 is for readers that know only 9.",
)
