"""polyjax.extend.source_info_util: source locations and name stacks.

As ``jax.extend.source_info_util``: `current()` is the user's frame that
equations bound now are attributed to, `user_context` overrides it, and
`register_exclusion(dir)` marks a library's files as internal, so that
errors and printed jaxprs point at its callers instead.

Example:
  >>> from polyjax.extend import source_info_util
  >>> isinstance(source_info_util.current(), source_info_util.SourceInfo)
  True
"""

from polyjax_core.source_info import (
    SourceInfo,
    current,
    current_name_stack,
    extend_name_stack,
    register_exclusion,
    summarize,
    user_context,
)

__all__ = [
    "SourceInfo",
    "current",
    "current_name_stack",
    "extend_name_stack",
    "register_exclusion",
    "summarize",
    "user_context",
]
