// Takes the namespace's write lock (waiting for a running write) and marks it as being
// dropped: a writer that takes the lock afterwards fails instead of writing into it.
MATCH (n:Namespace {name: $namespace})
SET n.lock = randomUUID(), n.dropping = true
RETURN n.epoch AS epoch
