"""``python -m polyjax.export show FILE [--module]``: prints an artifact's signature."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m polyjax.export", description="Inspect serialized Exported artifacts."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the signature of a serialized Exported")
    show.add_argument("file", help="a file written by Exported.serialize()")
    show.add_argument("--module", action="store_true", help="also print the StableHLO module")
    args = parser.parse_args(argv)

    from polyjax_export import deserialize
    from polyjax_export._show import describe

    try:
        with open(args.file, "rb") as f:
            exp = deserialize(f.read())
    except (OSError, ValueError, NotImplementedError) as e:
        print(f"error: {args.file}: {e}", file=sys.stderr)
        return 1
    print(describe(exp, module=args.module))
    return 0


if __name__ == "__main__":
    sys.exit(main())
