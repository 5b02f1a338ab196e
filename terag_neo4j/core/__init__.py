"""The ground floor: shared types and small utilities."""
