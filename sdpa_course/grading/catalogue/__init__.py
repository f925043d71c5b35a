"""Catalogues of common wrong answers, one module per topic (import from the submodule)."""
