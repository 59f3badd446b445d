"""Command-line options that the experiment scripts share (scripts/lib)."""
import argparse


def dpem_parser(dpem="build/dpem", **kwargs):
    """An argparse.ArgumentParser (``kwargs`` are its own) whose first option
    is --dpem, the dpem binary the script runs (default ``dpem``)."""
    parser = argparse.ArgumentParser(**kwargs)
    parser.add_argument("--dpem", default=dpem)
    return parser


def add_iterations_and_seed(parser, iterations, seed):
    """--iterations, the J of every fit, and --seed, of the script's runs
    (whole numbers; defaults ``iterations`` and ``seed``)."""
    parser.add_argument("--iterations", type=int, default=iterations)
    parser.add_argument("--seed", type=int, default=seed)
