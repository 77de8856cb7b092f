"""``python -m training.benchmark``: the command line of ``training.benchmark.cli``."""

from training.benchmark.cli import main

main()
