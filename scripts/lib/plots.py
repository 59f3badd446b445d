"""Figures and tables the experiment scripts share."""
import math


def print_quartile_table(first, xs, labels, quartiles):
    """A Markdown table on stdout: a row per x, headed `first`, and a column
    per label with quartiles[(x, label)] = [25%, median, 75%] as
    "median [25%, 75%]" (n/a where the median is NaN: a method that could not
    run). Used by scripts/gmm_synthetic_experiment.py and
    scripts/gmm_mechanisms_experiment.py."""
    print(f"| {first} | " + " | ".join(labels) + " |")
    print("|---:|" + "---|" * len(labels))
    for x in xs:
        cells = []
        for label in labels:
            q = quartiles[(x, label)]
            cells.append(f"{q[1]:.3f} [{q[0]:.3f}, {q[2]:.3f}]" if not math.isnan(q[1]) else "n/a")
        print(f"| {x} | " + " | ".join(cells) + " |")


def plot_log_likelihood_quartiles(xs, curves, xlabel, title, title_size, path):
    """Test log-likelihood per point against xs (log scale): per curve
    (label, colour, rows [25%, median, 75%], one per x) the median as a line
    and the interquartile range as a band; written to `path` (PNG, 110 dpi).
    Used by scripts/gmm_synthetic_experiment.py and
    scripts/gmm_mechanisms_experiment.py."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for label, color, q in curves:
        ax.plot(xs, q[:, 1], "o-", color=color, label=label, ms=4)
        ax.fill_between(xs, q[:, 0], q[:, 2], color=color, alpha=0.2)
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("test log-likelihood per point")
    ax.set_title(title, fontsize=title_size)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
