"""Write path: build and extend T-Mem memories from conversations (paper §3.2, Algorithms 3-5)."""
