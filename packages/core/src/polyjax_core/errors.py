"""The errors polyjax raises when a traced program asks for something tracing cannot give.

They mirror the classes of JAX's `jax.errors` module, with the same names and the
same places in Python's exception hierarchy, so that code catching
`jax.errors.ConcretizationTypeError` (or plain `TypeError`) keeps working:

    JAXTypeError(TypeError)
      ConcretizationTypeError          a concrete value was needed, a tracer was given
        TracerBoolConversionError      ... by `bool(x)`, `if x:`, `x and y`
      TracerArrayConversionError       ... by `numpy.asarray(x)`
      UnexpectedTracerError            a tracer outlived the transformation that made it
      KeyReuseError                    a PRNG key was used twice (JAX's optional checker)
    JAXIndexError(IndexError)
      TracerIntegerConversionError     ... by `int(x)`, `range(x)`, `lst[x]`
      NonConcreteBooleanIndexError     a traced boolean mask indexes an array
    JaxprTypeError(TypeError)          `check_jaxpr` found an ill-typed jaxpr

Every message says what was asked for, which function was being traced (and for
which transformation), and the user's source line, because the Python traceback
of a traced program is mostly frames of the tracing machinery.
"""

from __future__ import annotations

from typing import Protocol

from polyjax_core import source_info as si


class _TracerLike(Protocol):
    """What these errors need of a tracer (`polyjax_core.tracing.Tracer`): it describes
    itself, so this module depends on nothing of tracing."""

    def _short_repr(self) -> str: ...
    def _traced_where(self) -> str | None: ...
    def _created_at(self) -> str | None: ...
    def _origin_message(self) -> str: ...


__all__ = [
    "ConcretizationTypeError",
    "JAXIndexError",
    "JAXTypeError",
    "JaxprTypeError",
    "KeyReuseError",
    "NonConcreteBooleanIndexError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
]


class JAXTypeError(TypeError):
    """A `TypeError` raised by polyjax's tracing machinery."""


class JAXIndexError(IndexError):
    """An `IndexError` raised by polyjax's tracing machinery."""


class JaxprTypeError(TypeError):
    """A jaxpr is not well typed (raised by `check_jaxpr`)."""


class KeyReuseError(JAXTypeError):
    """A PRNG key was consumed more than once.

    JAX raises it from its optional key-reuse checker (``jax_debug_key_reuse``).
    polyjax has no such checker, so nothing raises it yet; the class is here so
    that code catching it keeps working.
    """


def _user_line() -> str:
    here = si.current()
    return f" (at {si.summarize(here)})" if here.frame is not None else ""


def _message(tracer: _TracerLike, head: str, *paragraphs: str) -> str:
    """`head`, naming the tracer and the user's line; then the paragraphs and the origin."""
    parts = [f"{head} {tracer._short_repr()}{_user_line()}.", *paragraphs, tracer._origin_message()]
    return "\n".join(p for p in parts if p)


_STATIC_HINT = (
    "Hint: if the value is a function argument that never changes between calls, mark it "
    "static (static_argnums / static_argnames)"
)


class ConcretizationTypeError(JAXTypeError):
    """A tracer was used where Python needs a concrete value.

    Tracing replaces array values by abstract tracers that know only a shape and
    a dtype. Python control flow, `float(x)`, array shapes computed from values
    and similar need the actual number, which does not exist yet.

    Fixes: mark the argument static (`jit(f, static_argnums=...)`), or express
    the computation with traced operations (`lax.cond`, `lax.while_loop`,
    `jnp.where`).
    """

    def __init__(self, tracer: _TracerLike, context: str = ""):
        self.tracer = tracer
        super().__init__(
            _message(
                tracer,
                "Abstract tracer value encountered where concrete value is expected:",
                context,
                _STATIC_HINT + "; otherwise use traced control flow such as lax.cond, "
                "lax.while_loop or jnp.where.",
            )
        )


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool()` of a tracer, explicit or implied by `if`, `while`, `and`, `or`, `not`."""

    def __init__(self, tracer: _TracerLike):
        super().__init__(
            tracer,
            "Attempted boolean conversion of a traced array. The problem arose with "
            "the `bool` function (an `if`, `while`, `and`, `or` or `not` calls it): "
            "use lax.cond or jnp.where instead of Python control flow on traced values.",
        )


class TracerArrayConversionError(JAXTypeError):
    """A tracer was converted to a NumPy array (`np.asarray(x)`, `np.sin(x)`)."""

    def __init__(self, tracer: _TracerLike):
        self.tracer = tracer
        super().__init__(
            _message(
                tracer,
                "The numpy.ndarray conversion method __array__() was called on a",
                "A traced value has no data yet. Use polyjax.numpy instead of numpy on traced "
                "values, or compute the NumPy value outside the transformed function.",
            )
        )


class TracerIntegerConversionError(JAXIndexError):
    """`int()`/`__index__` of a tracer (`range(x)`, `lst[x]`, `int(x)`)."""

    def __init__(self, tracer: _TracerLike, method: str = "__index__"):
        self.tracer = tracer
        super().__init__(
            _message(
                tracer,
                f"The {method}() method was called on a",
                "A traced value cannot become a Python int. "
                + _STATIC_HINT
                + ", or index with traced operations (lax.dynamic_slice, jnp.take).",
            )
        )


class NonConcreteBooleanIndexError(JAXIndexError):
    """A traced boolean array was used as an index (`x[mask]` under `jit`).

    Indexing with a boolean mask keeps the elements where it is True, so the
    result's shape depends on the mask's values, which tracing does not know.

    Fixes: keep the shape static, e.g. `jnp.where(mask, x, 0)` instead of
    `x[mask]`, or `jnp.nonzero(mask, size=n)` for at most `n` indices.
    """

    def __init__(self, tracer: _TracerLike):
        self.tracer = tracer
        super().__init__(
            _message(
                tracer,
                "Array boolean indices must be concrete; got",
                "The shape of x[mask] depends on how many entries of the mask are True, and "
                "a traced mask has no values yet. Use jnp.where(mask, x, fill) to keep the "
                "shape, or jnp.nonzero(mask, size=...) for a bounded number of indices.",
            )
        )


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transformation that created it.

    This happens when a traced function stores an intermediate value outside
    itself (a global, an attribute, a list defined outside) and the value is
    used after the transformation returned, or from another thread.
    """

    def __init__(self, tracer: _TracerLike, detail: str = ""):
        self.tracer = tracer
        where = tracer._traced_where() or "a transformed function"
        msg = (
            f"Encountered an unexpected tracer {tracer._short_repr()}{_user_line()}.\n"
            f"It was created while tracing {where}, and it escaped that transformation "
            "(it was stored by a side effect, such as assigning to a global or appending to "
            "an outer list, and used after the transformation returned or from another "
            "thread)."
        )
        created = tracer._created_at()
        if created is not None:
            msg += f"\nThe escaped value was created at {created}."
        if detail:
            msg += "\n" + detail
        msg += (
            "\nReturn the value from the transformed function instead of leaking it through "
            "a side effect."
        )
        super().__init__(msg)
