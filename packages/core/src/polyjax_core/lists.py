"""Splitting and merging lists by counts or by boolean masks.

The rules of higher-order primitives handle their operands in groups: consts,
carry and scanned inputs (`split_list`), or known and unknown ones, used and
unused ones (`partition_list`, and `merge_lists` to put them back in order).

Example:
  >>> consts, carry, xs = split_list([1, 2, 3, 4, 5], [1, 2])
  >>> consts, carry, xs
  ([1], [2, 3], [4, 5])
  >>> known, unknown = partition_list([False, True, False], ["a", "b", "c"])
  >>> known, unknown
  (['a', 'c'], ['b'])
  >>> merge_lists([False, True, False], known, unknown)
  ['a', 'b', 'c']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

__all__ = ["merge_lists", "partition_list", "split_list"]

T = TypeVar("T")


def split_list(xs: Sequence[T], sizes: Sequence[int]) -> list[list[T]]:
    """`xs` cut into consecutive pieces of the given `sizes`, then the rest.

    Args:
      xs: the list to cut.
      sizes: the lengths of the leading pieces.

    Returns:
      ``len(sizes) + 1`` lists; the last holds what the sizes leave over.

    Raises:
      ValueError: the sizes add up to more than ``len(xs)``.

    Example:
      >>> split_list("abcde", [2, 0])
      [['a', 'b'], [], ['c', 'd', 'e']]
    """
    if sum(sizes) > len(xs):
        raise ValueError(f"split_list: sizes {list(sizes)} exceed the list's length {len(xs)}")
    pieces, start = [], 0
    for n in sizes:
        pieces.append(list(xs[start : start + n]))
        start += n
    pieces.append(list(xs[start:]))
    return pieces


def partition_list(flags: Sequence[bool], xs: Sequence[T]) -> tuple[list[T], list[T]]:
    """The elements of `xs` whose flag is False, and those whose flag is True.

    Args:
      flags: one bool per element of `xs`.
      xs: the list to partition.

    Returns:
      ``(falses, trues)``, each in the order of `xs`.

    Raises:
      ValueError: `flags` and `xs` differ in length.

    Example:
      >>> partition_list([True, False], [1, 2])
      ([2], [1])
    """
    if len(flags) != len(xs):
        raise ValueError(f"partition_list: {len(flags)} flags for {len(xs)} elements")
    falses = [x for f, x in zip(flags, xs) if not f]
    trues = [x for f, x in zip(flags, xs) if f]
    return falses, trues


def merge_lists(flags: Sequence[bool], falses: Sequence[T], trues: Sequence[T]) -> list[T]:
    """The inverse of `partition_list`: one list, taking from `trues` where a flag is set.

    Args:
      flags: where each element comes from.
      falses: the elements for the False flags, in order.
      trues: the elements for the True flags, in order.

    Returns:
      A list of ``len(flags)`` elements.

    Raises:
      ValueError: the counts of flags do not match the lengths of the lists.

    Example:
      >>> merge_lists([True, False, True], ["x"], [1, 2])
      [1, 'x', 2]
    """
    n_true = sum(map(bool, flags))
    if n_true != len(trues) or len(flags) - n_true != len(falses):
        raise ValueError(
            f"merge_lists: {len(flags) - n_true} False and {n_true} True flags for "
            f"{len(falses)} and {len(trues)} elements"
        )
    it_false, it_true = iter(falses), iter(trues)
    return [next(it_true) if f else next(it_false) for f in flags]
