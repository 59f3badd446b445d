#!/usr/bin/env python3
"""Draws 2-D data and the components of a dpem Gaussian-mixture model.

Usage: /usr/bin/python3 scripts/plot_gmm.py DATA.csv MODEL.json OUT.png [MODEL2.json ...]

Each model is drawn in its own panel: the data as grey points, each component
as its 1- and 2-standard-deviation ellipses labelled with its weight, and the
model's guarantee in the title. Needs numpy and matplotlib (Debian's
python3-numpy, python3-matplotlib; run with /usr/bin/python3).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.patches import Ellipse  # noqa: E402


def read_csv(path):
    with open(path) as f:
        first = f.readline()
    skip = 0
    try:
        [float(v) for v in first.split(",")]
    except ValueError:
        skip = 1
    return np.loadtxt(path, delimiter=",", skiprows=skip, ndmin=2)


def title_of(model):
    p = model["privacy"]
    if not p["private"]:
        return "non-private EM"
    t = f"(epsilon, delta) = ({p['epsilon']:.3g}, {p['delta']:.0e}), {p['accountant']}, {p['mechanisms']}"
    if p["guarantee_void"]:
        t += "\nGUARANTEE VOID"
    return t


def draw(ax, x, model):
    ax.scatter(x[:, 1], x[:, 0], s=2, c="0.6", alpha=0.5, linewidths=0)
    params = model["parameters"]
    colors = plt.cm.tab10(np.arange(len(params["weights"])) % 10)
    for w, mu, cov, color in zip(params["weights"], params["means"], params["covariances"], colors):
        cov = np.array(cov)[::-1, ::-1]  # plot (longitude, latitude)
        vals, vecs = np.linalg.eigh(cov)
        angle = np.degrees(np.arctan2(vecs[1, -1], vecs[0, -1]))
        for k in (1, 2):
            ax.add_patch(Ellipse((mu[1], mu[0]), 2 * k * np.sqrt(max(vals[-1], 0)),
                                 2 * k * np.sqrt(max(vals[0], 0)), angle=angle,
                                 fill=False, color=color, lw=1.5 if k == 1 else 0.8))
        ax.annotate(f"{w:.2f}", (mu[1], mu[0]), color=color, fontsize=8, ha="center")
    ax.set_title(title_of(model), fontsize=9)
    ax.set_xlabel("longitude")
    ax.set_ylabel("latitude")
    ax.set_xlim(x[:, 1].min() - 0.02, x[:, 1].max() + 0.02)
    ax.set_ylim(x[:, 0].min() - 0.02, x[:, 0].max() + 0.02)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    x = read_csv(sys.argv[1])
    models = [json.load(open(p)) for p in [sys.argv[2]] + sys.argv[4:]]
    fig, axes = plt.subplots(1, len(models), figsize=(5.5 * len(models), 5), squeeze=False)
    for ax, model in zip(axes[0], models):
        draw(ax, x, model)
    fig.tight_layout()
    fig.savefig(sys.argv[3], dpi=110)
    print(f"wrote {sys.argv[3]}")


if __name__ == "__main__":
    main()
