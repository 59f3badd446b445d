"""The data the estimators take: NumPy arrays of any float dtype and order,
lists, pandas DataFrames (names kept) and memory-mapped .npy files, with no
copy of a C-contiguous float64 array; the GIL is released while fitting."""

import json
import math
import re
import threading

import numpy as np
import pandas as pd
import pytest

import dpem
from dpem._base import as_rows


def _plain(**params):
    return dpem.GaussianMixture(3, epsilon=math.inf, data_norm=None, random_state=1, **params)


def test_c_contiguous_float64_is_never_copied(blobs, tmp_path):
    assert as_rows(blobs) is blobs
    np.save(tmp_path / "x.npy", blobs)
    mapped = np.load(tmp_path / "x.npy", mmap_mode="r")
    rows = as_rows(mapped)
    assert np.shares_memory(rows, mapped) and not rows.flags.writeable


@pytest.mark.parametrize(
    "convert",
    [
        lambda x: np.asfortranarray(x),
        lambda x: x.astype(np.float32).astype(np.float64),
        lambda x: x.tolist(),
        lambda x: pd.DataFrame(x, columns=["a", "b", "c"]),
    ],
    ids=["fortran", "float32-values", "list", "dataframe"],
)
def test_other_layouts_fit_the_same_values_the_same(convert, blobs):
    values = np.asarray(convert(blobs), dtype=np.float64)
    expected = _plain().fit(values)
    got = _plain().fit(convert(blobs))
    # A DataFrame's file has its column names too (test_dataframe_column_names_are_kept).
    assert _without_feature_names(got._model_json) == expected._model_json


def _without_feature_names(text):
    """A model file's text without its "feature_names" lines."""
    return re.sub(r'  "feature_names": \[\n(    ".*",?\n)*  \],\n', "", text)


def test_float32_and_integer_arrays_are_converted(blobs):
    for dtype in (np.float32, np.int64):
        x = (blobs * 10).astype(dtype)
        assert _plain().fit(x)._model_json == _plain().fit(x.astype(np.float64))._model_json


def test_a_memory_mapped_file_fits_as_the_array(blobs, tmp_path):
    np.save(tmp_path / "x.npy", blobs)
    mapped = np.load(tmp_path / "x.npy", mmap_mode="r")
    assert _plain().fit(mapped)._model_json == _plain().fit(blobs)._model_json


def test_dataframe_column_names_are_kept(blobs):
    frame = pd.DataFrame(blobs, columns=["lat", "lon", "alt"])
    estimator = _plain().fit(frame)
    assert list(estimator.feature_names_in_) == ["lat", "lon", "alt"]
    with pytest.warns(UserWarning, match="feature names"):
        estimator.predict(blobs[:5])
    with pytest.raises(ValueError, match="feature names"):
        estimator.predict(pd.DataFrame(blobs, columns=["x", "y", "z"]))


def test_column_names_go_into_the_model_file_and_nothing_else_changes(blobs, tmp_path):
    frame = pd.DataFrame(blobs, columns=["lat", "lon", "höhe"])
    named = _plain().fit(frame)
    plain = _plain().fit(blobs)
    document = json.loads(named._model_json)
    assert document.pop("feature_names") == ["lat", "lon", "höhe"]
    assert document == json.loads(plain._model_json)
    assert "feature_names" not in plain._model_json
    # The same text with the key added: the rest byte for byte.
    assert _without_feature_names(named._model_json) == plain._model_json
    named.to_json(tmp_path / "named.json")
    loaded = dpem.load(tmp_path / "named.json")
    assert list(loaded.feature_names_in_) == ["lat", "lon", "höhe"]
    assert loaded.score(frame) == plain.score(blobs)
    with pytest.raises(ValueError, match="feature names"):
        loaded.score(pd.DataFrame(blobs, columns=["x", "y", "z"]))


def test_the_cli_reads_a_model_file_with_column_names(blobs, cli, tmp_path):
    frame = pd.DataFrame(blobs, columns=["a", "b", "c"])
    estimator = dpem.GaussianMixture(3, epsilon=1.0, delta=1e-5, data_norm=5.0).fit(frame)
    estimator.to_json(tmp_path / "model.json")
    np.save(tmp_path / "x.npy", blobs)
    scores = json.loads(cli("score", "--model", tmp_path / "model.json",
                            "--input", tmp_path / "x.npy", "--json"))
    assert scores["mean_log_likelihood"] == estimator.score(frame)


def test_shapes_and_types_are_checked(blobs):
    with pytest.raises(ValueError, match="2D array"):
        _plain().fit(blobs[:, 0])
    with pytest.raises(ValueError, match="0 sample"):
        _plain().fit(blobs[:0])
    with pytest.raises(TypeError, match="sparse"):
        from scipy import sparse

        _plain().fit(sparse.csr_matrix(blobs))
    estimator = _plain().fit(blobs)
    with pytest.raises(ValueError, match="3 features"):
        estimator.predict(blobs[:, :2])


def test_the_gil_is_released_during_a_fit():
    x = np.random.RandomState(0).randn(200_000, 4)
    from dpem import _core

    estimator = dpem.GaussianMixture(4, epsilon=math.inf, data_norm=None, max_iter=40)
    shared, model = estimator._shared_fit_args(), estimator._model_args()
    started, done = threading.Event(), threading.Event()

    def fit():
        started.set()
        _core.fit_gmm(x, shared, model)
        done.set()

    worker = threading.Thread(target=fit)
    worker.start()
    started.wait()
    spins = 0
    while not done.is_set():
        spins += 1
    worker.join()
    # While the GIL is held by a fit, this loop cannot run at all (it gets
    # the GIL back only when the fit returns, and then stops); released, it
    # spins millions of times a second for the tens of milliseconds the fit
    # takes. No wall-clock bound: how long the fit takes is the machine's.
    assert spins > 1000
