// The concept a viewer asks for by name: its normalised name or its name, case folded; the most
// frequent when several match.
MATCH (c:Concept {namespace: $namespace})
WHERE c.norm = toLower(trim($concept)) OR toLower(c.name) = toLower(trim($concept))
RETURN elementId(c) AS id, c.name AS name, c.type AS type, c.frequency AS frequency
ORDER BY c.frequency DESC LIMIT 1
