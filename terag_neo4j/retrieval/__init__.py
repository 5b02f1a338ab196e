"""Retrieval: question -> concepts and seeds -> restart vector -> walk -> passages."""
