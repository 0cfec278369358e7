"""Reading dimension expressions back from the strings that serialization stores.

One parser serves the shape specifications of `symbolic_shape` and the
dimensions of serialized avals: `_shape_spec.parse_dim`.
"""

from polyjax_export._shape_spec import parse_dim

__all__ = ["parse_dim"]
