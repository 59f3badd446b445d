#!/usr/bin/env python3
"""Regenerates the accounting tables of docs/accounting.md from the dpem CLI.

Usage: scripts/accounting_table.py [path/to/dpem]   (default: build/dpem)

Prints Markdown: for K = 3, J = 10, delta = 1e-4 and scenario GGG (park2017
Fig. 3's setting), the per-release budget epsilon_i and the noise multiplier
z = sigma / sensitivity that each accountant allows at each total epsilon.
Standard library only.
"""
import json
import subprocess
import sys

DPEM = sys.argv[1] if len(sys.argv) > 1 else "build/dpem"
EPSILONS = [0.1, 0.5, 1, 2, 4]
ACCOUNTANTS = ["linear", "advanced", "kov", "mcdp", "zcdp", "zcdp-tight", "ma", "rdp"]


def calibrate(epsilon, scenario):
    out = subprocess.run(
        [DPEM, "calibrate", "--epsilon", str(epsilon), "--delta", "1e-4",
         "--iterations", "10", "--components", "3", "--scenario", scenario,
         "--accountant", "all", "--json"],
        check=True, capture_output=True, text=True).stdout
    return {c["accountant"]: c for c in json.loads(out)["calibrations"]}


def table(scenario, field, fmt):
    results = {e: calibrate(e, scenario) for e in EPSILONS}
    print("| accountant | " + " | ".join(f"eps = {e}" for e in EPSILONS) + " |")
    print("|---|" + "---:|" * len(EPSILONS))
    for a in ACCOUNTANTS:
        cells = [fmt(field(results[e][a])) for e in EPSILONS]
        print(f"| {a} | " + " | ".join(cells) + " |")
    print()


def main():
    print("Per-release budget epsilon_i (larger is better), GGG:\n")
    table("GGG", lambda c: c["per_release_epsilon"], lambda v: f"{v:.4g}")
    print("Noise multiplier z of every release (smaller is better), GGG:\n")
    table("GGG", lambda c: c["releases"][0]["noise_multiplier"], lambda v: f"{v:.4g}")
    print("Noise multiplier z of the Laplace releases (weights, means), LLG:\n")
    table("LLG", lambda c: c["releases"][0]["noise_multiplier"], lambda v: f"{v:.4g}")


if __name__ == "__main__":
    main()
