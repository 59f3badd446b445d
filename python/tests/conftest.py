"""Shared fixtures of the dpem Python tests: the bundled Gowalla data, the
CLI of the same build (DPEM_CLI, set by CTest; else build/dpem), and
synthetic data."""

import os
import pathlib
import subprocess

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
GOWALLA = REPO / "data" / "gowalla_nyc_checkins.csv"
# The published NYC bounding box: a public domain, not read from the data.
GOWALLA_DOMAIN = {"data_norm": 0.36, "data_center": [40.70, -73.98]}


@pytest.fixture(scope="session")
def gowalla():
    """The 9,926 Gowalla check-ins (latitude, longitude)."""
    return np.loadtxt(GOWALLA, delimiter=",", skiprows=1)


@pytest.fixture(scope="session")
def blobs():
    """600 records in 3 dimensions from three well separated groups."""
    rng = np.random.RandomState(0)
    centres = np.array([[-2.0, 0.0, 1.0], [2.0, 1.0, -1.0], [0.0, -2.0, 0.0]])
    labels = np.arange(600) % 3
    return centres[labels] + 0.3 * rng.randn(600, 3)


@pytest.fixture(scope="session")
def cli():
    """A function running the dpem CLI of this build: cli(*args) -> stdout."""
    path = os.environ.get("DPEM_CLI") or str(REPO / "build" / "dpem")
    if not os.path.exists(path):
        pytest.skip("the dpem CLI is not built")

    def run(*args):
        done = subprocess.run(
            [path, *map(str, args)], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise AssertionError(f"dpem {' '.join(map(str, args))}: {done.stderr}")
        return done.stdout

    return run
