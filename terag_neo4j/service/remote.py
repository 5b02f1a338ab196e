"""The old home of `TeragRemote`, kept so existing imports work: import it from `terag_neo4j`
(or `terag_neo4j.service.remote_client`)."""

from __future__ import annotations

import warnings

from terag_neo4j.service.remote_client import *  # noqa: F403
from terag_neo4j.service.remote_client import __all__ as __all__

warnings.warn(
    "terag_neo4j.service.remote is deprecated: import TeragRemote from terag_neo4j",
    DeprecationWarning,
    stacklevel=2,
)
