// Waits until an index is online (a new one is populated in the background).
CALL db.awaitIndex($name, $seconds)
