"""Structural three-way merge (``merge3`` -> ``Clean | Conflicted``): line merge first, structural
only where lines conflict, line fallback on any parse failure; also the git merge driver."""
