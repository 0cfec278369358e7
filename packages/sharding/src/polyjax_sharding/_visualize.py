"""Drawing a sharding's layout in the terminal: which devices hold which block.

The array (rank 1 or 2) is drawn as a table with one cell per block; each
cell names the devices holding that block (``CPU 0,4`` when two devices hold
copies of it). Cell heights and widths follow the blocks' sizes, within the
``scale``, ``min_width`` and ``max_width`` the caller gives. Tables are drawn
with the `rich` package, as JAX does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from polyjax_core.tracing import Tracer

__all__ = ["visualize_array_sharding", "visualize_sharding"]

# The height, in lines, of a whole array drawn at scale 1, and the width of one
# drawn with as many columns as rows (wider arrays get wider tables, up to 2x).
_BASE_HEIGHT = 9
_BASE_WIDTH = 23

# Cell colours when no `color_map` is given: (background, text).
_PALETTE = [
    ("#393b79", "white"),
    ("#637939", "white"),
    ("#8c6d31", "white"),
    ("#843c39", "white"),
    ("#7b4173", "white"),
    ("#3182bd", "white"),
    ("#e6550d", "black"),
    ("#31a354", "black"),
    ("#756bb1", "white"),
    ("#636363", "white"),
    ("#9ecae1", "black"),
    ("#fdae6b", "black"),
    ("#a1d99b", "black"),
    ("#bcbddc", "black"),
    ("#e7ba52", "black"),
    ("#d6616b", "black"),
]


def _bounds(index: slice, size: int) -> tuple[int, int]:
    start, stop, _ = index.indices(size)
    return start, stop


def _blocks(
    shape: tuple[int, int], indices: Mapping[Any, tuple[slice, ...]]
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], dict[tuple[int, int], list[Any]]]:
    """Row ranges, column ranges and the devices holding each (row, column) block."""
    holders: dict[tuple[tuple[int, int], tuple[int, int]], list[Any]] = {}
    for device, index in indices.items():
        if len(index) == 1:  # rank 1: one row
            index = (slice(None), *index)
        key = (_bounds(index[0], shape[0]), _bounds(index[1], shape[1]))
        holders.setdefault(key, []).append(device)
    rows = sorted({r for r, _ in holders})
    cols = sorted({c for _, c in holders})
    cells = {(rows.index(r), cols.index(c)): devs for (r, c), devs in holders.items()}
    return rows, cols, cells


def _label(devices: Sequence[Any]) -> str:
    platform = devices[0].platform.upper()
    return f"{platform} {','.join(str(d.id) for d in sorted(devices, key=lambda d: d.id))}"


def _spread(total: int, parts: Sequence[int], whole: int) -> list[int]:
    """``total`` character cells shared out in proportion to ``parts`` of ``whole``."""
    return [round(total * p / whole) if whole else 0 for p in parts]


def _cell_color(k: int, n: int, color_map: Callable[[float], Sequence[float]] | None) -> tuple:
    if color_map is None:
        return _PALETTE[k % len(_PALETTE)]
    r, g, b = (
        min(255, max(0, int(round(255 * c)))) for c in tuple(color_map(k / max(1, n - 1)))[:3]
    )
    text = "black" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "white"
    return f"#{r:02x}{g:02x}{b:02x}", text


def visualize_sharding(
    shape: Sequence[int],
    sharding: Any,
    *,
    use_color: bool = True,
    scale: float = 1.0,
    min_width: int = 9,
    max_width: int = 80,
    color_map: Callable[[float], Sequence[float]] | None = None,
) -> None:
    """Prints which devices hold which block of an array of ``shape`` under ``sharding``.

    Args:
      shape: the array's shape, of rank 1 or 2.
      sharding: any sharding (`NamedSharding`, `SingleDeviceSharding`, ...).
      use_color: colour each block (in a terminal that shows colours).
      scale: how large to draw the table (1.0: about 9 lines high).
      min_width: the least width of a cell, borders included.
      max_width: the most width of a cell, borders included (wider labels win).
      color_map: a function from [0, 1] to RGB(A) floats (a matplotlib colormap
        works) giving each block's colour.

    Raises:
      ValueError: ``shape`` is not of rank 1 or 2, or does not fit ``sharding``.

    Example:
      >>> from polyjax_interpreters import backends
      >>> from polyjax_sharding import make_single_device_sharding
      >>> visualize_sharding((4,), make_single_device_sharding(backends.devices()[0]))
      ┌───────────────────────┐
      │         CPU 0         │
      └───────────────────────┘
    """
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    shape = tuple(int(n) for n in shape)
    if len(shape) not in (1, 2):
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    grid = (1, shape[0]) if len(shape) == 1 else shape
    rows, cols, cells = _blocks(grid, sharding.devices_indices_map(shape))

    # Heights: rank 1 arrays are one line; otherwise the rows share the base height.
    if len(shape) == 1:
        heights = [1]
    else:
        total = max(len(rows), round(scale * _BASE_HEIGHT) - (len(rows) - 1))
        heights = [max(1, h) for h in _spread(total, [b - a for a, b in rows], grid[0])]
    aspect = min(2.0, max(0.5, grid[1] / grid[0])) if len(shape) == 2 else 1.0
    widths = _spread(round(scale * _BASE_WIDTH * aspect), [b - a for a, b in cols], grid[1])
    labels = {pos: _label(devs) for pos, devs in cells.items()}
    for j in range(len(cols)):
        longest = max(len(labels[i, j]) for i in range(len(rows)) if (i, j) in labels)
        widths[j] = max(longest, min(max(widths[j], min_width - 2), max_width - 2))

    table = Table(show_header=False, show_lines=True, box=box.SQUARE, padding=0, pad_edge=False)
    for w in widths:
        table.add_column(width=w, justify="center", no_wrap=True)
    order = sorted(cells)
    for i, h in enumerate(heights):
        row = []
        for j in range(len(cols)):
            label = labels.get((i, j), "")
            top = (h - 1) // 2
            text = Text("\n" * top + label + "\n" * (h - 1 - top))
            if use_color and (i, j) in cells:
                background, ink = _cell_color(order.index((i, j)), len(order), color_map)
                text.stylize(f"{ink} on {background}")
            row.append(text)
        table.add_row(*row)

    needed = sum(widths) + len(widths) + 1
    console = Console(file=sys.stdout, width=None if sys.stdout.isatty() else max(80, needed))
    console.print(table)


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """Prints which devices hold which block of ``arr`` (see `visualize_sharding`).

    Args:
      arr: an array of rank 1 or 2 (a concrete one: not a tracer).
      **kwargs: passed to `visualize_sharding`.

    Raises:
      TypeError: ``arr`` is a tracer (inside ``jit``, ``vmap``, ``grad``...) or
        has no sharding.
    """
    if isinstance(arr, Tracer):
        raise TypeError(
            "visualize_array_sharding needs a concrete array, but got a tracer (inside a "
            f"transformation such as jit): {arr}. Call it on the transformation's result."
        )
    sharding = getattr(arr, "sharding", None)
    if sharding is None:
        raise TypeError(
            "visualize_array_sharding needs an array placed on devices (with a `sharding`), "
            f"got {type(arr).__name__}; use polyjax.device_put first"
        )
    visualize_sharding(arr.shape, sharding, **kwargs)
