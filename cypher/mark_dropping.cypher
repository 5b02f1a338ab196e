// Takes the namespace's write lock (waiting for a running write) and marks it as being
// dropped: a writer that takes the lock afterwards fails instead of writing into it. With
// `$epoch`, only that incarnation: an import cleaning up after itself leaves alone the namespace
// that another import of the same job made anew after taking it over. `drop_token` names this
// drop: its deletes go on only while the node still carries it (drop_namespace.cypher).
MATCH (n:Namespace {name: $namespace})
WHERE $epoch IS NULL OR n.epoch = $epoch
SET n.lock = randomUUID(), n.dropping = true, n.drop_token = $token
RETURN n.epoch AS epoch
