"""Implicit differentiation: `custom_linear_solve` and `custom_root`.

Solvers are often iterative (`while_loop`s that stop on a tolerance), and
differentiating through their iterations is slow, memory hungry, inaccurate,
or impossible (a `while_loop` has no reverse mode). But the derivative of a
solution does not depend on how it was found:

- for ``x = A^{-1} b`` with a linear ``matvec = A``, the tangent is
  ``x' = A^{-1} (b' - A' x)``, which is another solve with the same solver,
  and the transpose (for reverse mode) is a solve with ``A^T``;
- for a root ``f(x, p) = 0``, the implicit function theorem gives
  ``x' = -(df/dx)^{-1} (df/dp) p'``: a linear solve with ``df/dx`` at the root.

`custom_linear_solve` is an initial-style primitive (`custom_linear_solve`):
``matvec``, ``solve`` and, when reverse mode is possible, the transposed map
``vecmat`` and ``transpose_solve`` are traced to `ClosedJaxpr`s at bind time
(with their closed-over values hoisted into leading operands, as in
`_loop_helpers`). Its rules:

- evaluation and lowering run (inline) the ``solve`` jaxpr only;
- jvp: the tangent is the same primitive applied to ``b' - matvec'(x)``,
  where ``matvec'`` differentiates ``matvec`` in its closed-over values; the
  solvers' own closed-over values get no derivative (the result does not
  depend on how the solve is done);
- transpose (linear in ``b`` only): the primitive with the roles of
  ``matvec``/``vecmat`` and ``solve``/``transpose_solve`` swapped, so that the
  transposed solve is differentiable and transposable in turn;
- batching: all four jaxprs batched with one set of batched components of
  ``b`` and ``x`` (a fixed point, since a batched ``matvec`` constant batches
  the solution);
- partial evaluation: none of its own: it is a single equation whose outputs
  are all unknown when any input is (the tangent solve of a linearization has
  known constants and an unknown right-hand side, which is what we want); DCE
  drops the equation when unused and the auxiliary outputs nobody reads.

`custom_root` needs no primitive: it is a `custom_jvp` function of the root
function's closed-over values whose rule solves the tangent system with
`custom_linear_solve` (``tangent_solve`` solving both the linearized function
and its transpose), so its reverse mode never transposes ``tangent_solve``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from polyjax_core import dtypes
from polyjax_core.abstract_values import get_aval
from polyjax_core.caching import weakref_lru_cache
from polyjax_core.jaxpr import ClosedJaxpr
from polyjax_core.lists import partition_list
from polyjax_core.primitive import Primitive
from polyjax_core.tree_util import tree_flatten, tree_leaves, tree_structure, tree_unflatten
from polyjax_interpreters import ad, batching, mlir
from polyjax_interpreters import partial_eval as pe
from polyjax_interpreters.custom_derivatives import SymbolicZero, custom_jvp
from polyjax_numpy.lax import _elementwise as _ew
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.lax._loop_helpers import _closed_call, _trace_fun, _with_zero_outputs

__all__ = ["custom_linear_solve", "custom_linear_solve_p", "custom_root"]


class _LinearSolveTuple(tuple):
    """``(matvec, vecmat, solve, transpose_solve)``: one entry per function of a solve.

    The primitive's params hold two: the jaxprs (None where absent) and the
    number of closed-over values (leading operands) of each.
    """

    __slots__ = ()
    _fields = ("matvec", "vecmat", "solve", "transpose_solve")

    def __new__(cls, items: Any) -> _LinearSolveTuple:
        items = tuple(items)
        if len(items) != 4:
            raise ValueError(f"_LinearSolveTuple takes 4 items, got {len(items)}")
        return super().__new__(cls, items)

    matvec = property(lambda self: self[0])
    vecmat = property(lambda self: self[1])
    solve = property(lambda self: self[2])
    transpose_solve = property(lambda self: self[3])

    def transpose(self) -> _LinearSolveTuple:
        """The entries of the transposed problem (``A^T`` solved by ``transpose_solve``)."""
        return _LinearSolveTuple((self[1], self[0], self[3], self[2]))

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={v}" for k, v in zip(self._fields, self))
        return f"_LinearSolveTuple({items})"

    __str__ = __repr__


def _split_operands(
    xs: Sequence[Any], const_lengths: _LinearSolveTuple
) -> tuple[list[list[Any]], list[Any]]:
    """``[matvec, vecmat, solve, transpose_solve]`` constants, and the right-hand side."""
    groups, i = [], 0
    for n in const_lengths:
        groups.append(list(xs[i : i + n]))
        i += n
    return groups, list(xs[i:])


def _types_str(avals: Sequence[Any]) -> str:
    return "[" + ", ".join(a.str_short() for a in avals) + "]"


# ---------------------------------------------------------------------------
# Tracing the user's functions


def _like(what: str, ref: str, out: Any, tree: Any, avals: Sequence[Any]) -> list[Any]:
    """The leaves of ``out``, which must have the structure and types of ``ref``.

    Leaves are converted to ``ref``'s weak types, so that the solution has the
    exact type of the right-hand side.
    """
    leaves, out_tree = tree_flatten(out)
    if out_tree != tree:
        raise TypeError(
            f"{what} must have the same pytree structure as {ref}: expected {tree}, got {out_tree}."
        )
    got = [get_aval(x) for x in leaves]
    if any(g.shape != a.shape or g.dtype != a.dtype for g, a in zip(got, avals)):
        raise TypeError(
            f"{what} must have the same shapes and dtypes as {ref}: expected "
            f"{_types_str(avals)}, got {_types_str(got)}."
        )
    return [
        x if g.weak_type == a.weak_type else _ew._convert_element_type(x, a.dtype, a.weak_type)
        for x, g, a in zip(leaves, got, avals)
    ]


def _check_callable(name: str, fun: Any) -> None:
    if not callable(fun):
        raise TypeError(f"{name} must be callable, got {fun!r} of type {type(fun).__name__}.")


def _one_arg(tree: Any) -> Any:
    """The structure of the arguments ``(x,)`` of a function of one pytree ``x``."""
    return tree_structure((tree.unflatten([0] * tree.num_leaves),))


class _Like(NamedTuple):
    """Wraps a function of ``x`` so that its output must be like ``ref`` (`_like`).

    A hashable value, so that the eager trace cache keyed on the user's function
    hits when a solve is called again with the same functions and types."""

    what: str
    ref: str
    tree: Any
    avals: tuple[Any, ...]

    def __call__(self, fun: Callable[[Any], Any], x: Any) -> list[Any]:
        return _like(self.what, self.ref, fun(x), self.tree, self.avals)


class _Solver(NamedTuple):
    """Wraps ``solver`` as ``x -> (solution leaves, aux)`` (see `_trace_solver`); hashable."""

    name: str
    ref: str
    linear_fun: Callable[[Any], Any]
    tree: Any
    avals: tuple[Any, ...]
    has_aux: bool

    def __call__(self, solver: Callable[..., Any], x: Any) -> tuple[list[Any], Any]:
        out = solver(self.linear_fun, x)
        aux = None
        if self.has_aux:
            if not (isinstance(out, tuple | list) and len(out) == 2):
                raise TypeError(
                    f"{self.name} with has_aux=True must return a pair (solution, aux), got "
                    f"{type(out).__name__}."
                )
            out, aux = out
        return _like(f"{self.name}() output", self.ref, out, self.tree, self.avals), aux


def _trace_map(
    what: str, ref: str, fun: Callable[[Any], Any], tree: Any, avals: Sequence[Any]
) -> tuple[ClosedJaxpr, list[Any]]:
    """Traces ``fun: x -> y`` where ``y`` has the structure and types of ``x`` (``ref``).

    Returns:
      ``(jaxpr, consts)``: the jaxpr takes the closed-over values ``consts``,
      then the leaves of ``x``, and returns the leaves of ``y``.
    """
    adapt = _Like(what, ref, tree, tuple(avals))
    jaxpr, consts, _ = _trace_fun(fun, _one_arg(tree), avals, adapt=adapt)
    return jaxpr, consts


def _trace_solver(
    name: str,
    ref: str,
    solver: Callable[[Callable[..., Any], Any], Any],
    linear_fun: Callable[[Any], Any],
    tree: Any,
    avals: Sequence[Any],
    has_aux: bool,
) -> tuple[ClosedJaxpr, list[Any], Any]:
    """Traces ``x -> solver(linear_fun, x)`` (a pair ``(solution, aux)`` with ``has_aux``).

    Returns:
      ``(jaxpr, consts, aux_tree)``: the jaxpr takes ``consts`` then the leaves
      of ``x`` and returns the leaves of the solution then those of ``aux``.
    """
    adapt = _Solver(name, ref, linear_fun, tree, tuple(avals), has_aux)
    jaxpr, consts, out_tree = _trace_fun(solver, _one_arg(tree), avals, adapt=adapt)
    return jaxpr, consts, out_tree.children()[1]


class _Vecmat:
    """``y -> vecmat(y)``, the transposed ``matvec`` run from its jaxpr.

    Equal to another when built from the same jaxpr and the same constants (the
    eager trace cache gives both back unchanged on a repeated solve), so that
    tracing ``transpose_solve(vecmat, y)`` hits the cache too.
    """

    __slots__ = ("vm", "consts", "tree", "avals")

    def __init__(self, vm: ClosedJaxpr, consts: Sequence[Any], tree: Any, avals: Sequence[Any]):
        self.vm, self.consts, self.tree, self.avals = vm, tuple(consts), tree, tuple(avals)

    def __call__(self, y: Any) -> Any:
        leaves = _like("vecmat() argument", "b", y, self.tree, self.avals)
        return tree_unflatten(self.tree, _closed_call(self.vm, *self.consts, *leaves))

    def _key(self) -> tuple:
        return (self.vm, tuple(map(id, self.consts)), self.tree, self.avals)

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: object) -> bool:
        return type(other) is _Vecmat and self._key() == other._key()


# ---------------------------------------------------------------------------
# custom_linear_solve


custom_linear_solve_p = Primitive("custom_linear_solve")
custom_linear_solve_p.multiple_results = True


def custom_linear_solve(
    matvec: Callable[[Any], Any],
    b: Any,
    solve: Callable[[Callable[[Any], Any], Any], Any],
    transpose_solve: Callable[[Callable[[Any], Any], Any], Any] | None = None,
    symmetric: bool = False,
    has_aux: bool = False,
) -> Any:
    """Solves ``matvec(x) == b`` with ``solve``, differentiated implicitly.

    The result is ``solve(matvec, b)``, but its derivatives are those of the
    exact solution ``x = A^{-1} b`` of the linear map ``A = matvec``, computed
    with further solves rather than by differentiating ``solve``: the tangent
    is ``solve(matvec, b' - matvec'(x))`` (``matvec'``: the derivative of
    ``matvec`` in the values it closes over), and reverse mode solves the
    transposed system with ``transpose_solve``. ``solve`` thus need not be
    differentiable (it may be a ``while_loop``). Values that ``solve`` and
    ``transpose_solve`` close over get no derivative.

    Args:
      matvec: the linear function ``A`` (differentiable), from pytrees like
        ``b`` to pytrees like ``b``.
      b: the right-hand side, a pytree of arrays.
      solve: ``solve(matvec, y)`` returns ``x`` with ``matvec(x) == y``, for any
        ``y`` like ``b`` (not checked).
      transpose_solve: ``transpose_solve(vecmat, y)`` solves the transposed
        system, where ``vecmat`` is the transpose of ``matvec`` (derived
        automatically). Needed for reverse mode, unless ``symmetric``.
      symmetric: ``matvec`` is self-adjoint: ``vecmat`` is ``matvec``, and
        ``transpose_solve`` defaults to ``solve``.
      has_aux: ``solve`` (and ``transpose_solve``) return ``(x, aux)``, where
        ``aux`` (e.g. solver diagnostics) is returned alongside the solution
        and has zero derivative.

    Returns:
      ``solve(matvec, b)``, with the structure of ``b`` (and ``aux``: a pair
      with ``has_aux``).

    Raises:
      TypeError: a function is not callable, or ``matvec``/``solve`` return
        values not of ``b``'s structure and types; in reverse mode, when there
        is no ``transpose_solve`` (and ``symmetric`` is False).

    Example:
      >>> from polyjax_numpy import lax
      >>> a = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)
      >>> def solve(matvec, y):  # Richardson iterations: any solver of `matvec` will do
      ...     return lax.fori_loop(0, 100, lambda i, x: x + 0.3 * (y - matvec(x)), y * 0)
      >>> b = np.ones(2, np.float32)
      >>> custom_linear_solve(lambda x: lax.dot(a, x), b, solve, symmetric=True)
      Array([0.39999998, 0.20000002], dtype=float32)
    """
    _check_callable("matvec", matvec)
    _check_callable("solve", solve)
    if transpose_solve is not None:
        _check_callable("transpose_solve", transpose_solve)
    elif symmetric:
        transpose_solve = solve
    b_flat, tree = tree_flatten(b)
    avals = [get_aval(x) for x in b_flat]
    mv, mv_consts = _trace_map("matvec() output", "b", matvec, tree, avals)
    sv, sv_consts, aux_tree = _trace_solver("solve", "b", solve, matvec, tree, avals, has_aux)
    vm, vm_consts, ts, ts_consts = None, [], None, []
    if transpose_solve is not None:
        if symmetric:
            vm, vm_consts, vecmat = mv, mv_consts, matvec
        else:
            vm, vm_consts = _transpose_matvec(mv, len(mv_consts), tuple(avals)), mv_consts
            vecmat = _Vecmat(vm, mv_consts, tree, avals)

        if symmetric and transpose_solve is solve:
            ts, ts_consts = sv, sv_consts
        else:
            ts, ts_consts, _ = _trace_solver(
                "transpose_solve", "b", transpose_solve, vecmat, tree, avals, has_aux
            )
    outs = custom_linear_solve_p.bind(
        *mv_consts,
        *vm_consts,
        *sv_consts,
        *ts_consts,
        *b_flat,
        const_lengths=_LinearSolveTuple(map(len, (mv_consts, vm_consts, sv_consts, ts_consts))),
        jaxprs=_LinearSolveTuple((mv, vm, sv, ts)),
    )
    x = tree_unflatten(tree, outs[: len(b_flat)])
    if has_aux:
        return x, tree_unflatten(aux_tree, outs[len(b_flat) :])
    return x


@weakref_lru_cache(maxsize=4096)
def _transpose_matvec(mv: ClosedJaxpr, n_consts: int, avals: tuple[Any, ...]) -> ClosedJaxpr:
    """The jaxpr of ``vecmat``, the transpose of ``matvec`` (same leading constants)."""
    n = len(avals)
    vm, nonzero = ad.transpose_jaxpr(mv, [False] * n_consts + [True] * n, [True] * n)
    if all(nonzero):
        return vm
    return _with_zero_outputs(vm, nonzero, [ad.tangent_aval(a) for a in avals])


def _linear_solve_abstract_eval(*avals: Any, const_lengths: Any, jaxprs: Any):
    _, b_avals = _split_operands(avals, const_lengths)
    want = jaxprs.solve.in_avals[const_lengths.solve :]
    if len(b_avals) != len(want) or any(
        a.shape != w.shape or a.dtype != w.dtype for a, w in zip(b_avals, want)
    ):
        raise TypeError(
            f"custom_linear_solve: right-hand side of types {_types_str(b_avals)} for a solve "
            f"of {_types_str(want)}"
        )
    return list(jaxprs.solve.out_avals), jaxprs.solve.effects


def _linear_solve_lowering(ctx: Any, *args: Any, const_lengths: Any, jaxprs: Any) -> list:
    (_, _, sv_consts, _), b = _split_operands(args, const_lengths)
    solve = jaxprs.solve
    return mlir.jaxpr_subcomp(
        ctx.module_context, solve.jaxpr, solve.consts, [*sv_consts, *b], ctx.dim_var_values
    )


def _is_inexact(aval: Any) -> bool:
    return dtypes.issubdtype(aval.dtype, np.inexact)


def _linear_solve_jvp(
    primals: list, tangents: list, *, const_lengths: Any, jaxprs: Any
) -> tuple[list, list]:
    params = dict(const_lengths=const_lengths, jaxprs=jaxprs)
    outs = custom_linear_solve_p.bind(*primals, **params)
    (mv_consts, *_), b = _split_operands(primals, const_lengths)
    (mv_dots, *_), b_dots = _split_operands(tangents, const_lengths)
    nb = len(b)
    x = outs[:nb]
    rhs = list(b_dots)
    mv_nz = [type(t) is not ad.Zero for t in mv_dots]
    if any(mv_nz):
        # matvec'(x): the derivative of matvec in its constants, applied to x.
        jj, _ = ad.jvp_jaxpr(jaxprs.matvec, mv_nz + [False] * nb, instantiate=True)
        nz_dots = [t for t in mv_dots if type(t) is not ad.Zero]
        mv_dot_x = _closed_call(jj, *mv_consts, *x, *nz_dots)[nb:]
        rhs = [_ew.neg(m) if type(t) is ad.Zero else _ew.sub(t, m) for t, m in zip(rhs, mv_dot_x)]
    b_avals = [get_aval(v) for v in b]
    differentiable = [_is_inexact(a) for a in b_avals]
    if not any(type(t) is not ad.Zero and d for t, d in zip(rhs, differentiable)):
        x_dot = [ad.Zero(ad.tangent_aval(get_aval(o))) for o in outs]
        return outs, x_dot
    rhs = [
        ad.instantiate_zeros(t) if d else ad.zeros_like_aval(a)
        for t, d, a in zip(rhs, differentiable, b_avals)
    ]
    consts = primals[: len(primals) - nb]
    solved = custom_linear_solve_p.bind(*consts, *rhs, **params)[:nb]
    x_dot = [
        s if d else ad.Zero(ad.tangent_aval(a)) for s, d, a in zip(solved, differentiable, b_avals)
    ]
    # Auxiliary outputs (diagnostics) are not differentiated.
    aux_dot = [ad.Zero(ad.tangent_aval(get_aval(o))) for o in outs[nb:]]
    return outs, [*x_dot, *aux_dot]


_NO_TRANSPOSE_SOLVE = (
    "transpose_solve required for backwards mode automatic differentiation of "
    "custom_linear_solve: pass transpose_solve, or symmetric=True when matvec is self-adjoint."
)


def _linear_solve_transpose(cts: list, *args: Any, const_lengths: Any, jaxprs: Any) -> list:
    if jaxprs.transpose_solve is None:
        raise TypeError(_NO_TRANSPOSE_SOLVE)
    groups, b = _split_operands(args, const_lengths)
    n_consts = len(args) - len(b)
    if any(ad.is_undefined_primal(c) for g in groups for c in g):
        raise ValueError(
            "custom_linear_solve transpose: the solve is linear in b only; the values that "
            "matvec and the solvers close over cannot be linear inputs."
        )
    nb = len(b)
    cts_x = cts[:nb]
    b_avals = [x.aval if ad.is_undefined_primal(x) else get_aval(x) for x in b]
    if all(type(ct) is ad.Zero for ct in cts_x):
        return [None] * n_consts + [ad.Zero(ad.tangent_aval(a)) for a in b_avals]
    cts_x = [ad.instantiate_zeros(ct) for ct in cts_x]
    mv_c, vm_c, sv_c, ts_c = groups
    cts_b = custom_linear_solve_p.bind(
        *vm_c,
        *mv_c,
        *ts_c,
        *sv_c,
        *cts_x,
        const_lengths=const_lengths.transpose(),
        jaxprs=jaxprs.transpose(),
    )[:nb]
    cts_b = [ct if ad.is_undefined_primal(x) else None for x, ct in zip(b, cts_b)]
    return [None] * n_consts + cts_b


def _linear_solve_batching(
    axis_data: Any, args: Sequence[Any], dims: Sequence[Any], *, const_lengths: Any, jaxprs: Any
) -> tuple[list, list]:
    groups, b = _split_operands(args, const_lengths)
    group_dims, b_dims = _split_operands(dims, const_lengths)
    nb = len(b)
    const_in = [[None if d is None else 0 for d in ds] for ds in group_dims]

    def in_dims(k: int, batched: Sequence[bool]) -> list[Any]:
        return const_in[k] + [0 if u else None for u in batched]

    # The components of b and x batched together: those of b, those every
    # function's output gets from its batched inputs, to a fixed point.
    batched = [d is not None for d in b_dims]
    for _ in range(nb + 1):
        new = list(batched)
        for k, j in enumerate(jaxprs):
            if j is not None:
                _, od = batching.batch_jaxpr(j, axis_data, in_dims(k, batched), False)
                new = [u or d is not None for u, d in zip(new, od[:nb])]
        if new == batched:
            break
        batched = new
    new_jaxprs, out_dims = [], None
    for k, j in enumerate(jaxprs):
        if j is None:
            new_jaxprs.append(None)
            continue
        n_aux = len(j.out_avals) - nb
        bj, od = batching.batch_jaxpr(j, axis_data, in_dims(k, batched), batched + [False] * n_aux)
        new_jaxprs.append(bj)
        if k == 2:
            out_dims = od
    size = axis_data.size
    consts = [
        x if d is None else batching.moveaxis(x, d, 0)
        for g, ds in zip(groups, group_dims)
        for x, d in zip(g, ds)
    ]
    b = [batching.bdim_at_front(x, d, size) if u else x for x, d, u in zip(b, b_dims, batched)]
    outs = custom_linear_solve_p.bind(
        *consts, *b, const_lengths=const_lengths, jaxprs=_LinearSolveTuple(new_jaxprs)
    )
    return outs, out_dims


def _linear_solve_dce(used_outputs: list[bool], eqn: Any) -> tuple[list[bool], Any]:
    """Drops the equation when unused, else the auxiliary outputs nobody reads.

    The solution's components stay together: jvp and transposition reuse the
    same jaxprs, whose inputs and outputs are all of ``b``'s components.
    """
    n_in = len(eqn.invars)
    if not any(used_outputs) and not eqn.effects:
        return [False] * n_in, None
    jaxprs = eqn.params["jaxprs"]
    nb = n_in - sum(eqn.params["const_lengths"])
    used = [True] * nb + list(used_outputs[nb:])
    solve, _ = pe.dce_closed_jaxpr(jaxprs.solve, used, instantiate=True)
    new_jaxprs = [
        solve if k == 2 else None if j is None else pe.dce_closed_jaxpr(j, True, True)[0]
        for k, j in enumerate(jaxprs)
    ]
    if all(a is b for a, b in zip(new_jaxprs, jaxprs)):
        return [True] * n_in, eqn
    new_eqn = eqn.replace(
        outvars=partition_list(used, eqn.outvars)[1],
        params=dict(eqn.params, jaxprs=_LinearSolveTuple(new_jaxprs)),
    )
    return [True] * n_in, new_eqn


define_rules(
    custom_linear_solve_p,
    _linear_solve_abstract_eval,
    _linear_solve_lowering,
    effectful=True,
    jvp=_linear_solve_jvp,
    transpose=_linear_solve_transpose,
    axis_batching=_linear_solve_batching,
    dce=_linear_solve_dce,
)


# ---------------------------------------------------------------------------
# custom_root


def custom_root(
    f: Callable[[Any], Any],
    initial_guess: Any,
    solve: Callable[[Callable[[Any], Any], Any], Any],
    tangent_solve: Callable[[Callable[[Any], Any], Any], Any],
    has_aux: bool = False,
) -> Any:
    """Finds a root of ``f`` with ``solve``, differentiated by the implicit function theorem.

    The result is ``solve(f, initial_guess)``; its derivatives with respect to
    the values ``f`` closes over come from ``f(x, p) == 0`` at the root:
    ``x' = -(df/dx)^{-1} (df/dp) p'``, computed with ``tangent_solve`` rather
    than by differentiating the iterations of ``solve``. The result does not
    depend on ``initial_guess`` (zero derivative), nor on values that only
    ``solve`` closes over.

    Args:
      f: the function whose root is sought: a pytree to a pytree of the same
        structure and types.
      initial_guess: the starting point (a pytree of arrays).
      solve: ``solve(f, initial_guess)`` returns ``x`` with ``f(x) == 0`` (not
        checked), of ``initial_guess``'s structure and types.
      tangent_solve: ``tangent_solve(g, y)`` returns ``x`` with ``g(x) == y``
        for a linear function ``g`` (``f`` linearized at the root, or its
        transpose in reverse mode), e.g. ``lambda g, y: y / g(1.0)`` for a
        scalar.
      has_aux: ``solve`` returns ``(x, aux)``; ``aux`` is returned too and has
        zero derivative.

    Returns:
      ``solve(f, initial_guess)`` (a pair with ``aux`` with ``has_aux``).

    Raises:
      TypeError: a function is not callable, or ``f``/``solve`` return values
        not of ``initial_guess``'s structure and types.

    Example:
      >>> from polyjax_interpreters.ad import grad
      >>> from polyjax_numpy import lax
      >>> def sqrt(a):  # Newton's method on x**2 - a
      ...     f = lambda x: x * x - a
      ...     newton = lambda f, x0: lax.fori_loop(0, 20, lambda i, x: 0.5 * (x + a / x), x0)
      ...     return custom_root(f, 1.0, newton, lambda g, y: y / g(1.0))
      >>> grad(sqrt)(4.0)  # 1 / (2 sqrt(4))
      Array(0.25, dtype=float32, weak_type=True)
    """
    _check_callable("f", f)
    _check_callable("solve", solve)
    _check_callable("tangent_solve", tangent_solve)
    guess, tree = tree_flatten(initial_guess)
    avals = [get_aval(x) for x in guess]
    ref = "initial_guess"
    fj, f_consts = _trace_map("f() output", ref, f, tree, avals)
    sj, s_consts, aux_tree = _trace_solver("solve", ref, solve, f, tree, avals, has_aux)
    n = len(guess)

    def f_at(f_consts: Sequence[Any]) -> Callable[[Any], Any]:
        return lambda x: tree_unflatten(tree, _closed_call(fj, *f_consts, *tree_leaves(x)))

    @custom_jvp
    def root(f_consts: list, s_consts: list, guess: list) -> list:
        del f_consts  # `solve` reads them through its own constants
        return _closed_call(sj, *s_consts, *guess)

    def root_jvp(primals: tuple, tangents: tuple) -> tuple[list, list]:
        f_c, s_c, guess = primals
        outs = root(f_c, s_c, guess)
        zeros = [SymbolicZero(ad.tangent_aval(get_aval(o))) for o in outs]
        nz = [
            not isinstance(t, SymbolicZero) and _is_inexact(get_aval(c))
            for c, t in zip(f_c, tangents[0])
        ]
        if not any(nz):
            return outs, zeros
        sol = outs[:n]
        # df/dp p' at the root, then x' solves (df/dx) x' = -(df/dp) p'.
        jj, _ = ad.jvp_jaxpr(fj, nz + [False] * n, instantiate=True)
        nz_dots = partition_list(nz, tangents[0])[1]
        rhs = _closed_call(jj, *f_c, *sol, *nz_dots)[n:]
        _, df_dx = ad.linearize(f_at(f_c), tree_unflatten(tree, sol))
        neg_rhs = tree_unflatten(tree, [_ew.neg(r) for r in rhs])
        sol_dot = custom_linear_solve(df_dx, neg_rhs, tangent_solve, tangent_solve)
        return outs, [*tree_leaves(sol_dot), *zeros[n:]]

    root.defjvp(root_jvp, symbolic_zeros=True)
    outs = root(f_consts, s_consts, guess)
    x = tree_unflatten(tree, outs[:n])
    if has_aux:
        return x, tree_unflatten(aux_tree, outs[n:])
    return x
