"""Debugging from inside traced code: `debug_print`, `debug_log`, `breakpoint` and
`inspect_array_sharding`.

The first three are `debug_callback`s: they run on the host with the values the program
computes, eagerly and under every transformation.

`breakpoint()` opens a small pdb-like prompt on those values. It needs a
terminal: where standard input is not one (a test runner, a batch job) it is
skipped with a `UserWarning`, unless ``backend="cli"`` asks for the prompt on
whatever standard input is.
"""

from __future__ import annotations

import cmd
import linecache
import logging
import os
import pprint
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from polyjax_core.primitive import Primitive
from polyjax_core.tracing import Tracer
from polyjax_core.tree_util import tree_leaves
from polyjax_interpreters.sharding import SingleDeviceSharding
from polyjax_numpy.callback import debug_callback
from polyjax_numpy.lax._declare import define_rules

__all__ = ["breakpoint", "debug_log", "debug_print", "inspect_array_sharding", "inspect_sharding_p"]

#: The logger `debug_log` writes to (at INFO level).
logger = logging.getLogger("polyjax.debug")


class _Placeholder:
    """Stands for an argument while the format string is checked at trace time."""

    def __format__(self, spec: str) -> str:
        return ""

    def __getattr__(self, name: str) -> _Placeholder:
        return self

    def __getitem__(self, key: Any) -> _Placeholder:
        return self


def _check_format(fmt: str, n_args: int, kwarg_names: Sequence[str]) -> None:
    # The values are only known on the host; a bad format string must fail now,
    # where the user can see it, not inside the compiled program.
    placeholder = _Placeholder()
    fmt.format(*[placeholder] * n_args, **dict.fromkeys(kwarg_names, placeholder))


def debug_print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:
    """Prints values computed inside traced code, formatted with `str.format`.

    Args:
      fmt: a `str.format` string, e.g. ``"x={x}, y={}"``.
      *args: positional values (pytrees of arrays).
      ordered: print in program order (also across loop iterations and calls).
      **kwargs: keyword values (pytrees of arrays).

    Raises:
      IndexError, KeyError: when ``fmt`` names an argument that is not given.

    Example:
      >>> import numpy as np
      >>> import polyjax
      >>> polyjax.jit(lambda x: polyjax.debug.print("x={x}, 2x={}", 2 * x, x=x))(np.float32(1.5))
      x=1.5, 2x=3.0
    """

    def show(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    _emit(show, fmt, args, kwargs, ordered)


def debug_log(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:
    """Like `debug_print`, but writes to the ``polyjax.debug`` logger at INFO level.

    Args:
      fmt: a `str.format` string, e.g. ``"x={x}, y={}"``.
      *args: positional values (pytrees of arrays).
      ordered: log in program order (also across loop iterations and calls).
      **kwargs: keyword values (pytrees of arrays).

    Raises:
      IndexError, KeyError: when ``fmt`` names an argument that is not given.

    Example:
      >>> import logging, sys
      >>> import numpy as np
      >>> import polyjax
      >>> handler = logging.StreamHandler(sys.stdout)
      >>> logger.addHandler(handler); logger.setLevel(logging.INFO)
      >>> polyjax.jit(lambda x: polyjax.debug.log("x={}", x))(np.float32(1.5))
      x=1.5
      >>> logger.removeHandler(handler)
    """
    _emit(lambda text: logger.info("%s", text), fmt, args, kwargs, ordered)


def _emit(write: Any, fmt: str, args: tuple, kwargs: dict, ordered: bool) -> None:
    """Formats the values with `fmt` on the host and hands the text to `write`."""
    _check_format(fmt, len(args), list(kwargs))
    debug_callback(lambda *a, **k: write(fmt.format(*a, **k)), *args, ordered=ordered, **kwargs)


# ---------------------------------------------------------------------------
# breakpoint


def _is_value(x: Any) -> bool:
    return isinstance(x, Tracer) or hasattr(x, "__array__") and hasattr(x, "dtype")


class _Frame:
    """What the prompt shows of one Python frame: its place and its variables."""

    def __init__(self, filename: str, lineno: int, name: str, variables: dict[str, Any]):
        self.filename = filename
        self.lineno = lineno
        self.name = name
        self.variables = variables


class _DebuggerPrompt(cmd.Cmd):
    """A pdb-like prompt over the frames captured at `breakpoint()`, innermost first."""

    prompt = "(pjdb) "

    def __init__(self, frames: list[_Frame], stdin: Any, stdout: Any):
        super().__init__(stdin=stdin, stdout=stdout)
        self.use_rawinput = False
        self.frames = frames
        self.index = 0
        self.intro = "Entering polyjax.debug.breakpoint(). Commands: p, pp, l, u, d, w, c, q, help."

    @property
    def frame(self) -> _Frame:
        return self.frames[self.index]

    def _say(self, text: str) -> None:
        self.stdout.write(text + "\n")

    def _eval(self, expr: str) -> Any:
        return eval(expr, {}, dict(self.frame.variables))  # noqa: S307  (the user's own debugger input)

    def default(self, line: str) -> bool:
        try:
            self._say(repr(self._eval(line)))
        except Exception as e:
            self._say(f"*** {type(e).__name__}: {e}")
        return False

    def emptyline(self) -> bool:
        return False

    def do_p(self, arg: str) -> bool:
        """p expression: print the value of the expression."""
        return self.default(arg)

    def do_pp(self, arg: str) -> bool:
        """pp expression: pretty-print the value of the expression."""
        try:
            self._say(pprint.pformat(self._eval(arg)))
        except Exception as e:
            self._say(f"*** {type(e).__name__}: {e}")
        return False

    def do_list(self, arg: str) -> bool:
        """l(ist): show the source around the current line."""
        f = self.frame
        for n in range(max(1, f.lineno - 5), f.lineno + 6):
            text = linecache.getline(f.filename, n).rstrip("\n")
            if text or n <= f.lineno:
                self._say(f"{n:4d} {'->' if n == f.lineno else '  '} {text}")
        return False

    do_l = do_list

    def do_where(self, arg: str) -> bool:
        """w(here): the captured frames, innermost last; '>' marks the current one."""
        for i in reversed(range(len(self.frames))):
            f = self.frames[i]
            self._say(f"{'>' if i == self.index else ' '} {f.filename}({f.lineno}){f.name}()")
        return False

    do_w = do_bt = do_where

    def do_up(self, arg: str) -> bool:
        """u(p): move to the calling frame."""
        if self.index + 1 < len(self.frames):
            self.index += 1
        self._say(f"> {self.frame.filename}({self.frame.lineno}){self.frame.name}()")
        return False

    do_u = do_up

    def do_down(self, arg: str) -> bool:
        """d(own): move back towards the breakpoint's frame."""
        self.index = max(0, self.index - 1)
        self._say(f"> {self.frame.filename}({self.frame.lineno}){self.frame.name}()")
        return False

    do_d = do_down

    def do_continue(self, arg: str) -> bool:
        """c(ontinue): leave the prompt and let the program go on."""
        return True

    do_c = do_cont = do_continue

    def do_quit(self, arg: str) -> bool:
        """q(uit): leave the prompt (the program goes on)."""
        return True

    do_q = do_exit = do_quit

    def do_EOF(self, arg: str) -> bool:  # noqa: N802  (cmd's name for end of input)
        """End of input: leave the prompt."""
        self._say("")
        return True


def _is_internal(filename: str) -> bool:
    return any(f"{os.sep}{pkg}{os.sep}" in filename for pkg in _INTERNAL_PACKAGES)


_INTERNAL_PACKAGES = (
    "polyjax",
    "polyjax_core",
    "polyjax_interpreters",
    "polyjax_numpy",
    "polyjax_sharding",
)


def _capture_frames(
    num_frames: int | None, filter_frames: bool
) -> tuple[list[tuple[str, int, str]], list[tuple[list[str], dict]], list[list]]:
    """The frames above `breakpoint()`'s caller's call, innermost first: their places,
    and their locals split into arrays (passed to the callback) and other objects."""
    frame = sys._getframe(2)  # (0: here, 1: breakpoint, 2: the user's function)
    places: list[tuple[str, int, str]] = []
    names: list[tuple[list[str], dict]] = []
    values: list[list] = []
    while frame is not None and len(places) < (num_frames or 1):
        code = frame.f_code
        if not (filter_frames and places and _is_internal(code.co_filename)):
            places.append((code.co_filename, frame.f_lineno, code.co_name))
            arrays, others = {}, {}
            for k, v in frame.f_locals.items():
                (arrays if _is_value(v) else others)[k] = v
            names.append((list(arrays), others))
            values.append(list(arrays.values()))
        frame = frame.f_back
    return places, names, values


def breakpoint(  # noqa: A001  (JAX's name)
    *,
    backend: str | None = None,
    filter_frames: bool = True,
    num_frames: int | None = None,
    ordered: bool = False,
    token: Any = None,
) -> Any:
    """Stops the program where it is called and opens a pdb-like prompt on its values.

    The prompt sees the local variables of the calling function (and of its
    callers, with ``num_frames``), with the host values they have when the
    compiled program reaches this point. Commands: ``p expr``, ``pp expr``,
    ``l`` (source), ``w`` (frames), ``u``/``d`` (move between frames), ``c``
    (continue), ``q`` (quit), ``help``; any other line is evaluated.

    Without a terminal on standard input the breakpoint is skipped with a
    `UserWarning`; ``backend="cli"`` prompts on standard input anyway.

    Args:
      backend: None (prompt only on a terminal) or ``"cli"`` (always prompt).
      filter_frames: leave polyjax's own frames out of those captured.
      num_frames: how many frames to capture (default: the calling one).
      ordered: keep the program order with other ordered effects.
      token: accepted for JAX compatibility; returned as given.

    Returns:
      ``token``.

    Raises:
      ValueError: for a backend other than None or ``"cli"``.
    """
    if backend not in (None, "cli"):
        raise ValueError(f"debug.breakpoint: unknown backend {backend!r}; polyjax has 'cli'.")
    places, names, values = _capture_frames(num_frames, filter_frames)

    def stop(*frame_values: list) -> None:
        stdin = sys.stdin
        if backend is None and not (stdin is not None and stdin.isatty()):
            warnings.warn(
                "polyjax.debug.breakpoint() skipped: standard input is not a terminal "
                '(pass backend="cli" to prompt on it anyway).',
                UserWarning,
                stacklevel=2,
            )
            return
        frames = []
        for (filename, lineno, name), (array_names, others), vals in zip(
            places, names, frame_values
        ):
            variables = {**others, **dict(zip(array_names, vals))}
            frames.append(_Frame(filename, lineno, name, variables))
        _DebuggerPrompt(frames, stdin, sys.stdout).cmdloop()

    debug_callback(stop, *values, ordered=ordered)
    return token


# ---------------------------------------------------------------------------
# inspect_array_sharding

inspect_sharding_p = Primitive("inspect_sharding")
inspect_sharding_p.multiple_results = True


def _inspect_impl(x: Any, *, callback: Any) -> list:
    callback(x.sharding)
    return []


def _inspect_lowering(ctx: Any, x: Any, *, callback: Any) -> list:
    # Called once per compilation, with the sharding the value has in the program.
    (aval,) = ctx.avals_in
    mctx = ctx.module_context
    sharding = getattr(aval, "sharding", None)  # explicit sharding: the type says
    if sharding is not None and not getattr(sharding.mesh, "explicit_axes", ()):
        sharding = None  # a type without a mesh's explicit axes says nothing
    if sharding is None and mctx.num_devices == 1:
        device = mctx.device if mctx.device is not None else (mctx.device_assignment or [None])[0]
        if device is not None:
            sharding = SingleDeviceSharding(device)
    if sharding is None:
        raise NotImplementedError(
            "inspect_array_sharding: under jit on several devices polyjax knows a value's "
            "sharding only when its type carries one (explicit sharding, AxisType.Explicit); "
            f"this {aval.str_short()} is laid out by the partitioner. Inspect the jitted "
            "function's outputs instead."
        )
    callback(sharding)
    return []


def _inspect_jvp(primals: list, tangents: list, *, callback: Any) -> tuple[list, list]:
    inspect_sharding_p.bind(*primals, callback=callback)
    return [], []


def _inspect_batching(args: Sequence[Any], dims: Sequence[Any], *, callback: Any) -> tuple:
    # The batched value is what the program holds: its sharding is the one to show.
    inspect_sharding_p.bind(*args, callback=callback)
    return [], []


define_rules(
    inspect_sharding_p,
    lambda aval, *, callback: [],
    _inspect_lowering,
    impl=_inspect_impl,
    jvp=_inspect_jvp,
    transpose=lambda cts, x, *, callback: [None],
    batching=_inspect_batching,
    # It computes nothing the program uses, but its callback is the point.
    dce=lambda used_outputs, eqn: ([True] * len(eqn.invars), eqn),
)


def inspect_array_sharding(value: Any, *, callback: Any) -> None:
    """Calls `callback` with the sharding of each array of `value`, eagerly or under jit.

    As early as the sharding is known: at once for a concrete array; under `jit`,
    when the function is compiled (once per compilation, not per call), with the
    sharding the value has in the program. On one device that is the device's
    `SingleDeviceSharding`; on several, the sharding its type carries (explicit
    sharding mode).

    Args:
      value: an array or tracer, or a pytree of them.
      callback: called with one `Sharding` per array.

    Raises:
      NotImplementedError: under `jit` on several devices, for a value whose type
        carries no sharding (the partitioner decides its layout).

    Example:
      >>> import numpy as np
      >>> import polyjax
      >>> f = polyjax.jit(lambda x: inspect_array_sharding(x * 2, callback=print))
      >>> f(np.ones(2, np.float32))
      SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)
    """
    for leaf in tree_leaves(value):
        inspect_sharding_p.bind(leaf, callback=callback)
