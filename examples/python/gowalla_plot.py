"""The example of docs/python.md: a private Gaussian mixture of the Gowalla
check-ins at epsilon = 1, next to 2,000 synthetic records sampled from it and
plain EM's fit, drawn into docs/figures/python_gowalla.png.

Run from the repository root: /usr/bin/python3 examples/python/gowalla_plot.py
"""
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.patches import Ellipse  # noqa: E402

import dpem  # noqa: E402

checkins = pd.read_csv("data/gowalla_nyc_checkins.csv")
domain = {"data_norm": 0.36, "data_center": [40.70, -73.98]}  # Public: NYC's box.
private = dpem.GaussianMixture(5, epsilon=1.0, delta=1e-5, **domain).fit(checkins)
plain = dpem.GaussianMixture(5, epsilon=math.inf, **domain).fit(checkins)
synthetic, _ = private.sample(2000)


def draw_components(ax, model):
    """Each component's 2-standard-deviation ellipse, its width the weight."""
    for weight, mean, cov in zip(model.weights_, model.means_, model.covariances_):
        # Plotted as (longitude, latitude): the features in reverse order.
        values, vectors = np.linalg.eigh(cov[::-1, ::-1])
        angle = np.degrees(np.arctan2(vectors[1, 1], vectors[0, 1]))
        ax.add_patch(Ellipse(mean[::-1], 4 * np.sqrt(values[1]), 4 * np.sqrt(values[0]),
                             angle=angle, fill=False, lw=0.5 + 6 * weight, color="C3"))


fig, axes = plt.subplots(1, 3, figsize=(13, 4.6), sharex=True, sharey=True)
panels = [
    (checkins.to_numpy(), plain, "the data and plain EM (epsilon = inf),\n"
     f"mean log-likelihood {plain.score(checkins):.2f}"),
    (checkins.to_numpy(), private, "the data and the private fit (epsilon = 1),\n"
     f"mean log-likelihood {private.score(checkins):.2f}"),
    (synthetic, private, "2,000 synthetic records sampled\nfrom the private fit"),
]
for ax, (points, model, title) in zip(axes, panels):
    ax.scatter(points[:, 1], points[:, 0], s=1, alpha=0.25, color="0.3")
    draw_components(ax, model)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("longitude")
axes[0].set_ylabel("latitude")
axes[0].set_xlim(-74.35, -73.65)
axes[0].set_ylim(40.45, 40.95)
fig.tight_layout()
out = sys.argv[1] if len(sys.argv) > 1 else "docs/figures/python_gowalla.png"
fig.savefig(out, dpi=110)
print(f"{out}: private {private.score(checkins):.3f}, plain {plain.score(checkins):.3f}, "
      f"certified epsilon {private.privacy_['epsilon']:.4f}")
