"""The reranker stage (off by default): a cross-encoder or a rerank endpoint re-scores the top
passages of the final ranking (`stage`); `models` loads the kinds TERAG_RERANKER may name."""

from terag_neo4j.reranking.rerankers import Reranker, RerankError, make_reranker
from terag_neo4j.reranking.stage import NoReranker, RerankedRetriever

__all__ = ["NoReranker", "RerankError", "RerankedRetriever", "Reranker", "make_reranker"]
