// Which of these passages are core passages still waiting for their LLM concepts, with their hash.
UNWIND $uids AS uid
MATCH (p:Passage {uid: uid})
WHERE p.core_selected AND NOT coalesce(p.core_merged, false)
RETURN p.id AS id, p.hash AS hash
