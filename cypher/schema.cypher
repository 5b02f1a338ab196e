// Constraints and indexes for TERAG graphs. Idempotent: safe to run on every start.
// Every node carries `namespace`; `uid` = namespace + '|' + id keeps corpora apart in one database.
CREATE CONSTRAINT terag_passage_uid IF NOT EXISTS FOR (p:Passage) REQUIRE p.uid IS UNIQUE;
CREATE CONSTRAINT terag_concept_uid IF NOT EXISTS FOR (c:Concept) REQUIRE c.uid IS UNIQUE;
CREATE CONSTRAINT terag_namespace_name IF NOT EXISTS FOR (n:Namespace) REQUIRE n.name IS UNIQUE;
CREATE CONSTRAINT terag_ingest_run_id IF NOT EXISTS FOR (r:IngestRun) REQUIRE r.run_id IS UNIQUE;
// Namespace-wide scans (version counts, projections, exports) seek these instead of scanning
// every namespace's nodes: a bump_version on 2Wiki took 480 ms beside a 100k-passage namespace.
CREATE INDEX terag_passage_namespace IF NOT EXISTS FOR (p:Passage) ON (p.namespace);
CREATE INDEX terag_concept_namespace IF NOT EXISTS FOR (c:Concept) ON (c.namespace);
CREATE INDEX terag_passage_doc IF NOT EXISTS FOR (p:Passage) ON (p.namespace, p.doc_id);
// A document's passages are listed in order (the documents page) by namespace, document and position.
CREATE INDEX terag_passage_position IF NOT EXISTS FOR (p:Passage) ON (p.namespace, p.doc_id, p.position);
CREATE INDEX terag_concept_norm IF NOT EXISTS FOR (c:Concept) ON (c.namespace, c.norm);
CREATE INDEX terag_concept_stem IF NOT EXISTS FOR (c:Concept) ON (c.namespace, c.stem);
// One CO_OCCURRENCE edge per concept pair: its key is unique (the constraint's index replaces
// the plain index of earlier versions; `CooccurrenceBuilder.ensure_schema` resets namespaces
// that concurrent lazy builds of earlier versions left with duplicates, so it can be made).
DROP INDEX terag_cooccurrence_pair IF EXISTS;
CREATE CONSTRAINT terag_cooccurrence_pair_unique IF NOT EXISTS
  FOR ()-[r:CO_OCCURRENCE]-() REQUIRE r.pair IS UNIQUE;
CREATE INDEX terag_ingest_run_ns IF NOT EXISTS FOR (r:IngestRun) ON (r.namespace);
CREATE CONSTRAINT terag_ingest_lease_run IF NOT EXISTS FOR (l:IngestLease) REQUIRE l.run_id IS UNIQUE;
CREATE INDEX terag_ingest_lease_ns IF NOT EXISTS FOR (l:IngestLease) ON (l.namespace);
CREATE CONSTRAINT terag_projection_use IF NOT EXISTS FOR (u:ProjectionUse) REQUIRE u.namespace IS UNIQUE;
// Concepts by vector, searched within one namespace (the SEARCH clause filters inside the
// index, so other namespaces' concepts never crowd out a namespace's own neighbours); this
// replaces the unfiltered index of earlier versions.
// Not quantised, as the passage indexes (namespace_indexes.cypher): scores must not move when
// Lucene flushes or merges a segment.
DROP INDEX terag_concept_embedding IF EXISTS;
CYPHER 25 CREATE VECTOR INDEX terag_concept_vector IF NOT EXISTS FOR (c:Concept) ON c.embedding
  WITH [c.namespace]
  OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine',
                         `vector.quantization.enabled`: false}};
// Passages are searched by words and by vector in indexes of their own namespace
// (namespace_indexes.cypher, store/search.py); the database-wide ones of earlier versions go.
DROP INDEX terag_passage_embedding IF EXISTS;
DROP INDEX terag_passage_vector IF EXISTS;
DROP INDEX terag_passage_text IF EXISTS;
