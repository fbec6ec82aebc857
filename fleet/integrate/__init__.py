"""Integration: verified patches -> structural merge onto the latest base in lock order -> fencing
check -> re-verify the combination -> bisect out a patch that breaks it."""
