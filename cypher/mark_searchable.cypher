// Records that every passage of the namespace is in its own search indexes (`search` is the
// layout's version; retrieval migrates a namespace whose value is older).
MATCH (n:Namespace {name: $namespace})
SET n.search = $search
