// Budget mode: the namespace's passage count and its core passages (chosen, and whether merged).
CALL () {
  MATCH (p:Passage {namespace: $namespace})
  RETURN count(p) AS passages
}
CALL () {
  MATCH (p:Passage {namespace: $namespace})
  WHERE p.core_selected
  RETURN collect({id: p.id, merged: coalesce(p.core_merged, false)}) AS core
}
RETURN passages, core
