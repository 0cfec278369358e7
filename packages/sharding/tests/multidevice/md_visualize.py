"""visualize_sharding / visualize_array_sharding on 8 host devices: who holds which block."""

import re

import pytest

from polyjax_sharding import (
    AxisType,
    NamedSharding,
    make_mesh,
    visualize_sharding,
)
from polyjax_sharding import PartitionSpec as P


def label_grid(text):
    """The device labels of a drawn table, row by row (a row's label line only)."""
    grid = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if any(re.fullmatch(r"CPU [\d,]+", c) for c in cells):
            grid.append(cells)
    return grid


def draw(capsys, shape, sharding, **kwargs):
    visualize_sharding(shape, sharding, use_color=False, **kwargs)
    return capsys.readouterr().out


MESHES = {
    "2x4": ((2, 4), ("a", "b")),
    "2x2x2": ((2, 2, 2), ("x", "y", "z")),
}


@pytest.mark.parametrize(
    "mesh, spec, shape, grid",
    [  # the blocks of JAX 0.10.2's drawings of the same layouts (rows; "|" between cells)
        (
            "2x4",
            P("a", "b"),
            (8, 8),
            ["CPU 0|CPU 1|CPU 2|CPU 3", "CPU 4|CPU 5|CPU 6|CPU 7"],
        ),
        ("2x4", P("a"), (8, 8), ["CPU 0,1,2,3", "CPU 4,5,6,7"]),
        ("2x4", P(None, "b"), (8, 8), ["CPU 0,4|CPU 1,5|CPU 2,6|CPU 3,7"]),
        ("2x4", P(), (8, 8), ["CPU 0,1,2,3,4,5,6,7"]),
        ("2x4", P("b"), (8,), ["CPU 0,4|CPU 1,5|CPU 2,6|CPU 3,7"]),
        ("2x4", P(("a", "b")), (16,), ["|".join(f"CPU {i}" for i in range(8))]),
        ("2x4", P(("b", "a")), (16,), ["|".join(f"CPU {i}" for i in (0, 4, 1, 5, 2, 6, 3, 7))]),
        (
            "2x4",
            P("b", "a"),
            (4, 2),
            ["CPU 0|CPU 4", "CPU 1|CPU 5", "CPU 2|CPU 6", "CPU 3|CPU 7"],
        ),
        ("2x2x2", P("x", "z"), (8, 8), ["CPU 0,2|CPU 1,3", "CPU 4,6|CPU 5,7"]),
        ("2x2x2", P(("x", "z")), (8, 8), ["CPU 0,2", "CPU 1,3", "CPU 4,6", "CPU 5,7"]),
    ],
)
def test_which_device_holds_which_block(capsys, mesh, spec, shape, grid):
    m = make_mesh(*MESHES[mesh], axis_types=AxisType.Auto)
    expected = [row.split("|") for row in grid]
    assert label_grid(draw(capsys, shape, NamedSharding(m, spec))) == expected


def test_drawing_of_a_2x4_layout(capsys):
    m = make_mesh((2, 4), ("a", "b"))
    assert draw(capsys, (8, 8), NamedSharding(m, P("a", "b"))) == (
        "┌───────┬───────┬───────┬───────┐\n"
        "│       │       │       │       │\n"
        "│ CPU 0 │ CPU 1 │ CPU 2 │ CPU 3 │\n"
        "│       │       │       │       │\n"
        "│       │       │       │       │\n"
        "├───────┼───────┼───────┼───────┤\n"
        "│       │       │       │       │\n"
        "│ CPU 4 │ CPU 5 │ CPU 6 │ CPU 7 │\n"
        "│       │       │       │       │\n"
        "│       │       │       │       │\n"
        "└───────┴───────┴───────┴───────┘\n"
    )


def _cell_widths(text):
    top = text.splitlines()[0]
    return [len(part) for part in top.strip("┌┐").split("┬")]


def test_size_options(capsys):
    m = make_mesh((2, 4), ("a", "b"))
    s = NamedSharding(m, P("a", "b"))
    full = draw(capsys, (8, 8), s)
    small = draw(capsys, (8, 8), s, scale=0.5)
    assert len(small.splitlines()) < len(full.splitlines())
    assert label_grid(small) == label_grid(full)
    assert _cell_widths(draw(capsys, (8, 8), s, min_width=13)) == [11] * 4
    # A wide array draws wider cells, up to max_width; labels are never cut.
    assert _cell_widths(draw(capsys, (8, 64), s)) > _cell_widths(full)
    assert _cell_widths(draw(capsys, (8, 64), s, max_width=8)) == [6] * 4
    assert _cell_widths(draw(capsys, (8, 64), s, max_width=3)) == [5] * 4


def test_colors_and_color_map(capsys, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    m = make_mesh((2, 4), ("a", "b"))
    seen = []

    def cmap(t):
        seen.append(t)
        return (t, 0.5, 1 - t, 1.0)

    visualize_sharding((8, 8), NamedSharding(m, P("a", "b")), color_map=cmap)
    out = capsys.readouterr().out
    assert "\x1b[" in out and "CPU 7" in out
    assert sorted(seen) == [k / 7 for k in range(8)]
    visualize_sharding((8, 8), NamedSharding(m, P("a", "b")), use_color=False)
    assert "\x1b[" not in capsys.readouterr().out


def test_shape_must_fit_the_sharding(capsys):
    m = make_mesh((2, 4), ("a", "b"))
    with pytest.raises(ValueError, match="partitioned 4 times"):
        visualize_sharding((8, 6), NamedSharding(m, P("a", "b")))
    with pytest.raises(ValueError, match="only works for shapes with 1 and 2 dimensions"):
        visualize_sharding((8, 8, 8), NamedSharding(m, P("a")))
