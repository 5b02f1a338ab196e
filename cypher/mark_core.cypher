// Budget mode: mark passages as core (chosen for the LLM extractor), and as merged once their
// LLM concepts are in the graph. A changed passage is written anew, without these marks.
UNWIND $uids AS uid
MATCH (p:Passage {uid: uid})
SET p.core_selected = true, p.core_merged = $merged
