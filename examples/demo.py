"""polyjax demo (grows with the project)."""

import polyjax_core

print("polyjax-core", polyjax_core.__version__)
