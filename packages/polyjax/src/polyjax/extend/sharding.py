"""polyjax.extend.sharding: XLA's sharding protos, as in ``jax.extend.sharding``.

`GSPMDSharding` is the runtime's sharding given by an XLA ``HloSharding``; the
three functions convert between ``HloSharding``, ``OpSharding`` and the
serialized ``OpSharding`` proto (what custom-call partitioners and HLO
modules carry). `xla_client` is jaxlib's XLA client module.

Example:
  >>> from polyjax.extend import sharding
  >>> hlo = sharding.xla_client.HloSharding.replicate()
  >>> data = sharding.get_serialized_proto_from_hlo_sharding(hlo)
  >>> sharding.get_hlo_sharding_from_serialized_proto(data) == hlo
  True
"""

from jaxlib import xla_client

from polyjax_interpreters.sharding import GSPMDSharding

__all__ = [
    "GSPMDSharding",
    "get_hlo_sharding_from_serialized_proto",
    "get_op_sharding_from_serialized_proto",
    "get_serialized_proto_from_hlo_sharding",
    "xla_client",
]


def get_op_sharding_from_serialized_proto(sharding: bytes) -> xla_client.OpSharding:
    """The ``OpSharding`` that the serialized proto `sharding` holds."""
    proto = xla_client.OpSharding()
    proto.ParseFromString(sharding)
    return proto


def get_hlo_sharding_from_serialized_proto(sharding: bytes) -> xla_client.HloSharding:
    """The ``HloSharding`` that the serialized ``OpSharding`` proto `sharding` holds."""
    return xla_client.HloSharding.from_proto(get_op_sharding_from_serialized_proto(sharding))


def get_serialized_proto_from_hlo_sharding(sharding: xla_client.HloSharding) -> bytes:
    """`sharding` as a serialized ``OpSharding`` proto."""
    return sharding.to_proto().SerializeToString()
