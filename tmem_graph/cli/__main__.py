"""`python -m tmem_graph.cli`: the same as `tmem`."""

from .main import main

main()
