// When each namespace's projection was last walked by any process (projection_used.cypher).
MATCH (u:ProjectionUse)
RETURN u.graph AS graph, u.at.epochMillis / 1000.0 AS at
