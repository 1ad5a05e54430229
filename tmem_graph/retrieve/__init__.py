"""Read path: the T-Mem retrieval cascade (paper §3.4, Algorithms 1-2)."""
