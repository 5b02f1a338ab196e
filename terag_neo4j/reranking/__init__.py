"""Rerankers (off by default): a cross-encoder or a rerank endpoint that scores (question,
passage) pairs together; `rerankers` loads the kinds TERAG_RERANKER may name. The stage that
applies one to a ranking is a retrieval stage (`retrieval.reranked`)."""

from terag_neo4j.reranking.rerankers import Reranker, RerankError, make_reranker

__all__ = ["RerankError", "Reranker", "make_reranker"]
