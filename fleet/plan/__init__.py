"""Planner: findings -> work units (write set, read set, stable key), lock ranks and waves of units
with disjoint write sets. An SCC of the graph is never split across units."""
