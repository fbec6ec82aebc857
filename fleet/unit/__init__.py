"""The life of one work unit: leases in rank order -> workspace -> agent (commands in the sandbox)
-> gates -> ledger. Used by the ``candidate_patches`` asset and by ``fleet fix`` alike."""
