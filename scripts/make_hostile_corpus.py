#!/usr/bin/env python3
"""Writes the hostile-input corpus under tests/hostile/ (data/ and models/).

Files named good* or valid* are valid input (baselines; valid_* are unusual
but legal: huge values that clipping handles, a non-UTF-8 header line).

Every file is small and deterministic; the binary ones (.npy files, NUL bytes,
non-UTF-8 text) are why this is a script. The cases that use the files are in
tests/hostile/cases.txt; the fuzzers (fuzz/) take their seeds from here too.

Usage: python3 scripts/make_hostile_corpus.py   (from the repository root;
rewrites the files in place, needs only the standard library).
"""
import json
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "hostile")


def write(sub, name, data):
    os.makedirs(os.path.join(ROOT, sub), exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(ROOT, sub, name), "wb") as f:
        f.write(data)


def good_rows(n=60):
    """Three 2-D clusters inside the ball of radius 2, no randomness."""
    rows = []
    centres = [(-1.0, -1.0), (1.0, 0.0), (0.0, 1.2)]
    for i in range(n):
        cx, cy = centres[i % 3]
        rows.append((cx + 0.01 * ((i * 7) % 11 - 5), cy + 0.01 * ((i * 5) % 13 - 6)))
    return rows


def csv_text(rows):
    return "".join(",".join(repr(v) for v in r) + "\n" for r in rows)


def npy(descr, shape, payload, fortran=False, version=(1, 0), magic=b"\x93NUMPY",
        header=None, header_len=None):
    if header is None:
        header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
            descr, "True" if fortran else "False", shape)
    h = header.encode("latin-1") if isinstance(header, str) else header
    pre = 10 if version[0] == 1 else 12
    pad = (64 - (pre + len(h) + 1) % 64) % 64
    h = h + b" " * pad + b"\n"
    n = len(h) if header_len is None else header_len
    size = struct.pack("<H", n) if version[0] == 1 else struct.pack("<I", n)
    return magic + bytes(version) + size + h + payload


def f8(values):
    return struct.pack("<%dd" % len(values), *values)


def write_csv_corpus():
    good = good_rows()
    write("data", "good.csv", "x,y\n" + csv_text(good))
    write("data", "nan.csv", "1,2\nnan,3\n")
    write("data", "inf.csv", "1,2\n3,inf\n")
    write("data", "neg_inf.csv", "1,2\n-inf,3\n")
    write("data", "overflow.csv", "1,2\n1e999,3\n")
    write("data", "valid_huge.csv", "".join("%r,%r\n" % (1e308 * (-1) ** i, 1e308) for i in range(6)))
    write("data", "ragged_long.csv", "1,2\n3,4,5\n")
    write("data", "ragged_short.csv", "1,2\n3\n")
    write("data", "empty_field.csv", "1,2\n3,\n")
    write("data", "garbage_field.csv", "1,2\n1.5x,3\n")
    write("data", "hex.csv", "1,2\n0x10,3\n")
    write("data", "binary.csv", b"1,2\n3,\x00\x01\x02\xff\n")
    write("data", "non_utf8.csv", b"1,2\n\xff\xfe,3\n")
    write("data", "valid_non_utf8_header.csv", b"\xc3\x28,\xa0\xa1\n1,2\n")
    write("data", "utf16.csv", "1,2\n3,4\n".encode("utf-16"))
    write("data", "empty.csv", b"")
    write("data", "header_only.csv", "x,y\n")
    write("data", "newlines_only.csv", "\n\n\n")
    write("data", "blank_middle.csv", "1,2\n\n3,4\n")
    write("data", "quoted.csv", '"1","2"\n"3","4"\n')
    write("data", "semicolons.csv", "1;2\n3;4\n")
    write("data", "cr_only.csv", "1,2\r3,4\r")
    write("data", "long_field.csv", "1," + "9" * 20000 + "\n")
    write("data", "truncated.csv", csv_text(good)[:-7])


def write_npy_corpus():
    good = [v for r in good_rows() for v in r]
    write("data", "good.npy", npy("<f8", "(60, 2)", f8(good)))
    write("data", "nan.npy", npy("<f8", "(2, 2)", f8([1, 2, float("nan"), 3])))
    write("data", "inf.npy", npy("<f8", "(2, 2)", f8([1, 2, 3, float("inf")])))
    write("data", "empty.npy", b"")
    write("data", "magic_only.npy", b"\x93NUMPY")
    write("data", "bad_magic.npy", npy("<f8", "(2, 2)", f8([1, 2, 3, 4]), magic=b"\x93NUMPX"))
    write("data", "bad_version.npy", npy("<f8", "(2, 2)", f8([1, 2, 3, 4]), version=(9, 0)))
    full = npy("<f8", "(2, 2)", f8([1, 2, 3, 4]))
    write("data", "truncated_header.npy", full[:40])
    write("data", "header_len_huge.npy", npy("<f8", "(2, 2)", f8([1, 2, 3, 4]), header_len=65535))
    write("data", "header_len_huge_v2.npy",
          npy("<f8", "(2, 2)", f8([1, 2, 3, 4]), version=(2, 0), header_len=0xFFFFFFFF))
    write("data", "truncated_data.npy", npy("<f8", "(10, 2)", f8([1, 2, 3, 4, 5])))
    write("data", "extra_data.npy", npy("<f8", "(1, 2)", f8([1, 2, 3, 4])))
    write("data", "fortran.npy", npy("<f8", "(2, 2)", f8([1, 2, 3, 4]), fortran=True))
    write("data", "big_endian.npy", npy(">f8", "(2, 2)", struct.pack(">4d", 1, 2, 3, 4)))
    write("data", "object.npy", npy("|O", "(2, 2)", b"\x00" * 32))
    write("data", "complex.npy", npy("<c16", "(2, 1)", f8([1, 2, 3, 4])))
    write("data", "half.npy", npy("<f2", "(2, 2)", b"\x00\x3c" * 4))
    write("data", "string_dtype.npy", npy("<U3", "(2, 1)", b"a\0\0\0" * 6))
    write("data", "shape_3d.npy", npy("<f8", "(1, 2, 2)", f8([1, 2, 3, 4])))
    write("data", "shape_0d.npy", npy("<f8", "()", f8([1])))
    write("data", "shape_zero_rows.npy", npy("<f8", "(0, 2)", b""))
    write("data", "shape_zero_cols.npy", npy("<f8", "(2, 0)", b""))
    write("data", "shape_negative.npy", npy("<f8", "(-1, 2)", f8([1, 2])))
    write("data", "shape_huge.npy", npy("<f8", "(4611686018427387904, 4)", f8([1, 2, 3, 4])))
    write("data", "shape_overflow.npy",
          npy("<f8", "(18446744073709551615, 18446744073709551615)", f8([1, 2])))
    write("data", "shape_bigint.npy", npy("<f8", "(99999999999999999999999, 2)", f8([1, 2])))
    write("data", "header_not_dict.npy", npy("", "", f8([1, 2]), header="[1, 2, 3]"))
    write("data", "header_missing_key.npy",
          npy("", "", f8([1, 2]), header="{'descr': '<f8', 'shape': (1, 2), }"))
    write("data", "header_extra_key.npy", npy("", "", f8([1, 2]), header=(
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), 'x': 1, }")))
    write("data", "header_non_ascii.npy", npy("", "", f8([1, 2]), header=(
        b"{'descr': '<f8\xff', 'fortran_order': False, 'shape': (1, 2), }")))
    write("data", "header_nested.npy", npy("", "", f8([1, 2]), header=(
        "{'descr': '<f8', 'fortran_order': False, 'shape': " + "(" * 5000 + ")" * 5000 + ", }")))
    # Found by npy_fuzzer: raw control bytes (a newline) inside a header key.
    write("data", "header_key_control_bytes.npy", npy("", "", b"", header=(
        b"{'descr': '<f8', 'fortran_order\x01\x00\x7f\xde\x94a\xa0\n, 'shape': (0, 2), }")))
    write("data", "header_unterminated.npy", npy("", "", f8([1, 2]), header=(
        "{'descr': '<f8, 'fortran_order': False, 'shape': (1, 2), }")))


def good_model():
    return {
        "format": "dpem-gmm", "version": 1, "covariance_type": "full", "estimator": "mle",
        "components": 2, "dimension": 2, "n": 60, "iterations": 3,
        "parameters": {"weights": [0.5, 0.5], "means": [[0, 0], [1, 1]],
                       "covariances": [[[1, 0], [0, 1]], [[1, 0], [0, 1]]]},
        "data_transform": {"data_norm": 2.0, "from_data": False, "center": [0, 0]},
        "privacy": {"private": False, "guarantee_void": False, "void_reasons": []},
    }


def write_model_corpus():
    write("models", "good_nonprivate.json", json.dumps(good_model(), indent=1))
    write("models", "empty.json", b"")
    write("models", "not_json.json", "this is not json\n")
    write("models", "binary.json", b"\x00\x01\x02\xff\xfe")
    write("models", "array.json", "[1, 2, 3]\n")
    write("models", "truncated.json", json.dumps(good_model())[:150])
    write("models", "deep_nesting.json", "[" * 20000 + "]" * 20000)
    write("models", "non_utf8_string.json",
          json.dumps(good_model()).replace('"mle"', '"ml\\u00e9"').encode() .replace(
              b"\\u00e9", b"\xe9"))
    variants = {
        "wrong_format": lambda m: m.update(format="dpem-hmm"),
        "wrong_version": lambda m: m.update(version=99),
        "missing_weights": lambda m: m["parameters"].pop("weights"),
        "weights_string": lambda m: m["parameters"].update(weights="0.5,0.5"),
        "weights_negative": lambda m: m["parameters"].update(weights=[1.5, -0.5]),
        "weights_unnormalised": lambda m: m["parameters"].update(weights=[5, 5]),
        "weights_wrong_count": lambda m: m["parameters"].update(weights=[1.0]),
        "means_ragged": lambda m: m["parameters"].update(means=[[0, 0], [1]]),
        "cov_not_pd": lambda m: m["parameters"].update(
            covariances=[[[1, 2], [2, 1]], [[1, 0], [0, 1]]]),
        "cov_asymmetric": lambda m: m["parameters"].update(
            covariances=[[[1, 0.5], [-0.5, 1]], [[1, 0], [0, 1]]]),
        "cov_zero": lambda m: m["parameters"].update(
            covariances=[[[0, 0], [0, 0]], [[1, 0], [0, 1]]]),
        "huge_components": lambda m: m.update(components=1e9),
        "huge_dimension": lambda m: m.update(dimension=4e18),
        "fractional_components": lambda m: m.update(components=1.5),
        "negative_n": lambda m: m.update(n=-5),
        "overflow_number": lambda m: m["parameters"].update(means=[[0, 0], [1, "__HUGE__"]]),
        "valid_huge_means": lambda m: m["parameters"].update(means=[[1e308, 1e308], [-1e308, 1e308]]),
        "zero_norm": lambda m: m["data_transform"].update(data_norm=0),
        "null_norm": lambda m: m["data_transform"].update(data_norm=None),
        "huge_norm": lambda m: m["data_transform"].update(data_norm=1e200),
        "nan_number": lambda m: m["parameters"].update(means=[[0, 0], [1, "__NAN__"]]),
        "center_wrong_length": lambda m: m["data_transform"].update(center=[0, 0, 0]),
        "private_missing_fields": lambda m: m["privacy"].update({"private": True}),
    }
    for name, change in variants.items():
        m = good_model()
        change(m)
        text = json.dumps(m, indent=1).replace('"__HUGE__"', "1e999")
        text = text.replace('"__NAN__"', "NaN")
        write("models", name + ".json", text)
    # Other formats: minimal files the fa and kmeans readers must refuse.
    write("models", "fa_empty.json", '{"format": "dpem-fa"}\n')
    write("models", "kmeans_empty.json", '{"format": "dpem-kmeans"}\n')
    write("models", "fa_garbage.json",
          '{"format": "dpem-fa", "version": 1, "dimension": -3, "loadings": "x"}\n')
    write("models", "kmeans_garbage.json",
          '{"format": "dpem-kmeans", "version": 1, "components": 1e9, "centers": [[1e999]]}\n')


if __name__ == "__main__":
    write_csv_corpus()
    write_npy_corpus()
    write_model_corpus()
