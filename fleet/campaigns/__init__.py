"""Campaigns: YAML specs, matchers over the SymbolGraph -> findings (fingerprinted, de-duplicated),
the built-in campaigns and their libcst codemods (``<Verb><Noun>Command``)."""
