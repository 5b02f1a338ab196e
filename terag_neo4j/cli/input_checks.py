"""What a command's arguments must be, checked before it connects to anything: a user who typed
an empty question is told so, not that Neo4j (or the service) cannot be reached."""

from __future__ import annotations

import argparse

from terag_neo4j.cli.exits import UsageError
from terag_neo4j.core.namespace_names import check_namespace

ASKING = ("retrieve", "ask", "demo")


def check_arguments(args: argparse.Namespace) -> None:
    """Raise `UsageError` (exit 2) for arguments no server could accept."""
    command = getattr(args, "command", None)
    question = getattr(args, "question", None)
    if command in ASKING and isinstance(question, str) and not question.strip():
        raise UsageError(
            f"terag {command}: the question is empty: ask one, e.g. "
            f"terag {command} 'Who designed the Volkswagen Beetle?'"
        )
    top_k = getattr(args, "top_k", None)
    if command in ASKING and top_k is not None and top_k < 1:
        raise UsageError(f"terag {command}: --top-k must be at least 1, got {top_k}")
    if command == "delete" and not args.all and not args.document:
        raise UsageError("terag delete: give a DOCUMENT id, or --all to drop the whole namespace")
    namespace = getattr(args, "namespace", None)
    if namespace is not None:
        check_namespace(namespace)
