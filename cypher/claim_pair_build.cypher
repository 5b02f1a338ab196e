// A lazy CO_OCCURRENCE build's claim on its namespace, in each batch's transaction after the
// namespace lock. `continued`: the last batch was this builder's ($builder) and nothing has
// been written since (the version is the one it saw then), so the pairs it knows it made are
// all the pairs of its concepts. Otherwise another builder or a writer made pairs meanwhile,
// and every pair must be looked up before it is created.
MATCH (n:Namespace {name: $namespace})
WITH n, coalesce(n.pair_builder = $builder AND n.version = $version, false) AS continued
SET n.pair_builder = $builder
RETURN continued, n.version AS version
