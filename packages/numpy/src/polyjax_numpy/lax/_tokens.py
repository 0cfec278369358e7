"""Tokens, and the point-to-point transfers that they order: `create_token`,
`after_all`, `psend`, `precv`.

A token (type `Tok`, `polyjax_core.abstract_values.AbstractToken`) is a value
without data whose only use is to order side-effecting operations in a compiled
program:

    create_token                  -> Tok        (a fresh token)
    after_all      Tok, ..., Tok  -> Tok        (after every operand)
    psend          f32[n]         -> Tok        (send to the peers of `perm`)
    precv          Tok            -> f32[n]     (receive, after the token)

Outside tracing, `create_token` and `after_all` return a `Token` (no
computation is needed). Under `jit` they lower to `stablehlo.create_token` and
`stablehlo.after_all`; a jitted function takes and returns tokens through
`bool[0]` placeholders (`polyjax_interpreters.mlir`, docs/lax.md).

Tokens are not differentiable (their tangents stay symbolic zeros) and never
batched (`vmap` leaves them unmapped). They have no sharding rule: a token has
no dimensions to shard.

`psend`/`precv` are single-sided collectives over the manual axes of a
`shard_map` body: `perm` pairs `(source, destination)` positions along
`axis_name`. As in JAX 0.10.2, they compile on GPU only (CPU lowering raises
`NotImplementedError`); the GPU lowering (`stablehlo.send`/`recv` with the
pairs, as JAX emits them) is checked as text only, never run: the tests have
no GPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core.abstract_values import (
    AbstractToken,
    ShapedArray,
    Token,
    abstract_token,
    shaped_abstractify,
)
from polyjax_core.primitive import Primitive
from polyjax_core.tracing import Tracer
from polyjax_interpreters import mlir
from polyjax_interpreters.axis_context import manual_axis_context
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.lax._parallel import _names, _size

__all__ = [
    "after_all",
    "after_all_p",
    "create_token",
    "create_token_p",
    "precv",
    "precv_p",
    "psend",
    "psend_p",
]

create_token_p = Primitive("create_token")
after_all_p = Primitive("after_all")
psend_p = Primitive("psend")
precv_p = Primitive("precv")


def create_token(_: Any = None) -> Any:
    """A fresh token, which orders side-effecting operations after it.

    Args:
      _: ignored (accepted for compatibility: older code passed a value).

    Returns:
      A token (`Token` outside tracing; a value of type `Tok` inside).

    Example:
      >>> from polyjax_core.make_jaxpr import make_jaxpr
      >>> print(make_jaxpr(lambda: after_all(create_token(), create_token()))())
      { lambda ; . let
          a:Tok = create_token
          b:Tok = create_token
          c:Tok = after_all a b
        in (c,) }
    """
    return create_token_p.bind()


def after_all(*operands: Any) -> Any:
    """A token that comes after all the given tokens.

    Args:
      *operands: tokens.

    Returns:
      A token.

    Raises:
      TypeError: an operand is not a token.

    Example:
      >>> t = after_all(create_token(), create_token())
      >>> type(t).__name__
      'Token'
    """
    return after_all_p.bind(*operands)


def _is_token(x: Any) -> bool:
    if isinstance(x, Tracer):
        return type(x.aval) is AbstractToken
    return type(x) is Token


def _after_all_abstract_eval(*avals: Any) -> AbstractToken:
    if any(type(a) is not AbstractToken for a in avals):
        raise TypeError("Arguments to after_all must be tokens")
    return abstract_token


def _after_all_impl(*operands: Any) -> Token:
    if not all(map(_is_token, operands)):
        raise TypeError("Arguments to after_all must be tokens")
    return Token()


def _token_batch(prim: Primitive, args: list, dims: list) -> tuple:
    # Tokens are never mapped: the batched token is the token itself.
    return prim.bind(*args), None


define_rules(
    create_token_p,
    lambda: abstract_token,
    lambda ctx: [hlo.create_token()],
    impl=lambda: Token(),
    jvp="zero",
    batching=lambda args, dims: _token_batch(create_token_p, args, dims),
)
define_rules(
    after_all_p,
    _after_all_abstract_eval,
    lambda ctx, *tokens: [hlo.after_all(list(tokens))],
    impl=_after_all_impl,
    jvp="zero",
    batching=lambda args, dims: _token_batch(after_all_p, args, dims),
)


# --- psend / precv


def _perm(perm: Any) -> tuple[tuple[int, int], ...]:
    return tuple((int(s), int(d)) for s, d in perm)


def psend(x: Any, axis_name: Any, perm: Any) -> Any:
    """Sends `x` from each source position of `perm` to its destination.

    The single-sided half of a `ppermute`, for use in a `shard_map` body
    together with `precv`, which receives after the returned token. JAX 0.10.2
    (and polyjax) compile it on GPU only.

    Args:
      x: the array to send.
      axis_name: the manual axis (or tuple of axes) the positions index.
      perm: pairs `(source, destination)` of positions along `axis_name`.

    Returns:
      A token ordering the send.

    Raises:
      NameError: `axis_name` is not bound (outside `shard_map`).
      NotImplementedError: when compiled for CPU.

    Example:
      >>> import numpy as np
      >>> from polyjax_core import axis_env
      >>> from polyjax_core.make_jaxpr import make_jaxpr
      >>> with axis_env.extend_axis_env([("i", 1)]):
      ...     print(make_jaxpr(lambda x: psend(x, "i", [(0, 0)]))(np.ones(1, np.float32)))
      { lambda ; a:f32[1]. let b:Tok = psend[axis_name=('i',) perm=((0, 0),)] a in (b,) }
    """
    return psend_p.bind(x, axis_name=_names(axis_name), perm=_perm(perm))


def precv(token: Any, out_shape: Any, axis_name: Any, perm: Any) -> Any:
    """Receives an array of type `out_shape` sent by `psend`, after `token`.

    Args:
      token: the token the receive comes after (usually `psend`'s).
      out_shape: the type of the received array (a `ShapeDtypeStruct`, an
        array or anything with `.shape` and `.dtype`).
      axis_name: the manual axis (or tuple of axes) the positions index.
      perm: pairs `(source, destination)` of positions along `axis_name`.

    Returns:
      The received array.

    Raises:
      NameError: `axis_name` is not bound (outside `shard_map`).
      NotImplementedError: when compiled for CPU.

    Example:
      >>> import numpy as np
      >>> from polyjax_core import axis_env
      >>> from polyjax_core.make_jaxpr import make_jaxpr
      >>> f = lambda t: precv(t, np.ones(2, np.float32), "i", [(0, 0)])
      >>> with axis_env.extend_axis_env([("i", 1)]):
      ...     print(make_jaxpr(f)(create_token()))
      { lambda ; a:Tok. let
          b:f32[2] = precv[axis_name=('i',) out_shape=float32[2] perm=((0, 0),)] a
        in (b,) }
    """
    aval = shaped_abstractify(out_shape) if not isinstance(out_shape, Tracer) else out_shape.aval
    out = ShapedArray(aval.shape, aval.dtype)
    return precv_p.bind(token, out_shape=out, axis_name=_names(axis_name), perm=_perm(perm))


def _psend_abstract_eval(x: ShapedArray, *, axis_name: tuple, perm: tuple) -> AbstractToken:
    _size(axis_name)  # a NameError for an unbound axis
    return abstract_token


def _precv_abstract_eval(token: Any, *, out_shape: ShapedArray, axis_name: tuple, perm: tuple):
    if type(token) is not AbstractToken:
        raise TypeError(f"precv: token must be a token, got {token.str_short()}")
    _size(axis_name)
    return out_shape


def _gpu_only(name: str):
    """The lowering for platforms other than cuda/rocm: JAX 0.10.2's error."""

    def rule(ctx: Any, *args: Any, **params: Any) -> list:
        raise NotImplementedError(f"{name} is currently only implemented on GPU")

    return rule


def _eager(name: str):
    """Outside any map the axis is unbound (NameError); inside one, a CPU compile fails."""

    def impl(*args: Any, axis_name: tuple, **params: Any) -> Any:
        _size(axis_name)
        return _gpu_only(name)(None)

    return impl


def _pairs_attr(ctx: Any, name: str, axis_name: tuple, perm: tuple) -> ir.Attribute:
    pairs = manual_axis_context(ctx, axis_name, name).permute_pairs(axis_name, perm)
    return ir.DenseIntElementsAttr.get(np.ascontiguousarray(pairs, np.int64))


def _channel() -> ir.Attribute:
    return hlo.ChannelHandle.get(handle=1, type=1)  # DEVICE_TO_DEVICE


def _psend_gpu(ctx: Any, x: ir.Value, *, axis_name: tuple, perm: tuple) -> list:
    pairs = _pairs_attr(ctx, "psend", axis_name, perm)
    op = hlo.SendOp([x], hlo.create_token(), _channel(), source_target_pairs=pairs)
    return [op.result]


def _precv_gpu(ctx: Any, token: ir.Value, *, out_shape: ShapedArray, axis_name, perm) -> list:
    pairs = _pairs_attr(ctx, "precv", axis_name, perm)
    types = [mlir.aval_to_ir_type(out_shape), mlir.token_type()]
    op = hlo.RecvOp(types, token, _channel(), source_target_pairs=pairs)
    return [op.results[0]]


def _unmapped_batch(prim: Primitive, args: list, dims: list, **params: Any) -> tuple:
    if any(d is not None for d in dims):
        raise NotImplementedError(f"{prim.name} of a batched value: vmap has no rule for it")
    return prim.bind(*args, **params), None


for _prim, _eval, _gpu in (
    (psend_p, _psend_abstract_eval, _psend_gpu),
    (precv_p, _precv_abstract_eval, _precv_gpu),
):
    define_rules(
        _prim,
        _eval,
        _gpu_only(_prim.name),
        impl=_eager(_prim.name),
        batching=lambda args, dims, _p=_prim, **p: _unmapped_batch(_p, args, dims, **p),
    )
    mlir.register_lowering(_prim, _gpu, platform="cuda")
    mlir.register_lowering(_prim, _gpu, platform="rocm")
