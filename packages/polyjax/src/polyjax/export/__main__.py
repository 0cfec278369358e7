"""``python -m polyjax.export show FILE [--module]``: prints an artifact's signature."""

import sys

from polyjax_export.show import main

if __name__ == "__main__":
    sys.exit(main())
