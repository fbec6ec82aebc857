"""Verification gates (applies, parses, lease scope, impacted tests, test-first, type check,
security lens, reviewer): each a function returning a :class:`fleet.types.Verdict` with evidence."""
