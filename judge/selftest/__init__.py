"""`judge selftest`: checks any judge without labels, on cases derived from the specs."""
