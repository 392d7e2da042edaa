"""parse: output lines -> records (progress, Python errors)."""
