"""Peak memory of ``predict_set`` (dense and sparse) at K = 1000 classes.

Each measurement runs in a fresh subprocess. The model is a frozen
classifier whose ``predict_proba`` builds peaked probability rows on the fly
from a two-column ``X`` (top class, top mass), so the probability matrix
exists one ``working_memory`` batch at a time, as it would with a real model
scoring a stream. After loading ``X`` and fitting (calibrating)
``SOCOPClassifier(FrozenEstimator(model), lam=0.1)`` the subprocess resets the
kernel's peak-RSS counter (``/proc/self/clear_refs``), runs
``predict_set``, and reports the peak resident-set increase over that
baseline (``VmHWM - VmRSS`` before the call) together with the output's own
size and ``tracemalloc``'s peak of numpy allocations.

Target (issue 11): dense <= output + 2 x working_memory; sparse sets over many
rows with an increase far below the dense output, at most 1.5 x the time of
``np.argsort`` over the same rows (generated the same way, batch by batch).

Run: ``python benchmarks/bench_memory.py [--ns 100000 1000000]
[--outputs dense sparse] [--stream 10000000] [--k 1000]``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import subprocess
import sys
import time
import tracemalloc
import warnings

import numpy as np
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.frozen import FrozenEstimator

from sklearn_iclr26.conformal import SOCOPClassifier
from sklearn_iclr26.metrics import coverage_score, mean_set_size
from sklearn_iclr26.utils._batching import batch_slices


class PeakedModel(ClassifierMixin, BaseEstimator):
    """Rows: ``X[:, 1]`` on class ``X[:, 0]``, 70% of the rest on the next
    class, the remaining 30% spread over the others by one fixed random
    profile (no ties)."""

    def __init__(self, n_classes=1000):
        self.n_classes = n_classes

    def fit(self, X, y=None):
        self.classes_ = np.arange(self.n_classes)
        return self

    def predict_proba(self, X):
        X = np.asarray(X)
        n, K = X.shape[0], self.n_classes
        top = X[:, 0].astype(np.intp)
        mass = X[:, 1]
        rest = 1.0 - mass
        second = (top + 1) % K
        profile = np.random.default_rng(0).dirichlet(np.ones(K))
        scale = 0.3 * rest / (1.0 - profile[top] - profile[second])
        proba = np.multiply(profile[None, :], scale[:, None])
        rows = np.arange(n)
        proba[rows, second] = 0.7 * rest
        proba[rows, top] = mass
        return proba

    def predict(self, X):
        return np.asarray(X)[:, 0].astype(np.intp)


def make_data(n, K, seed):
    rng = np.random.default_rng(seed)
    top = rng.integers(0, K, size=n)
    mass = 1.0 - 0.6 * rng.beta(1.0, 2.0, size=n)
    X = np.c_[top.astype(float), mass]
    u = rng.uniform(size=n)
    y = np.where(
        u < mass,
        top,
        np.where(u < mass + 0.7 * (1 - mass), (top + 1) % K, rng.integers(0, K, n)),
    )
    return X, y


def _status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return -1


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def worker(n, K, output, stream):
    warnings.simplefilter("ignore")
    X_cal, y_cal = make_data(10_000, K, seed=1)
    X, y = make_data(n, K, seed=2)
    model = FrozenEstimator(PeakedModel(K).fit(X_cal))
    clf = SOCOPClassifier(model, lam=0.1, confidence_level=0.9).fit(X_cal, y_cal)
    result = {"n": n, "K": K, "output": output}
    if stream:  # time only, then argsort of the same rows batch by batch
        start = time.perf_counter()
        sets = clf.predict_set(X, output="sparse")
        result["seconds_sets"] = time.perf_counter() - start
        row_bytes = clf._row_bytes()
        start = time.perf_counter()
        for rows in batch_slices(n, row_bytes):
            model.predict_proba(X[rows])
        result["seconds_generate"] = time.perf_counter() - start
        start = time.perf_counter()
        for rows in batch_slices(n, row_bytes):
            np.argsort(model.predict_proba(X[rows]), axis=1)
        result["seconds_argsort"] = time.perf_counter() - start
    else:
        reset = _reset_peak()
        rss_before = _status("VmRSS")
        tracemalloc.start()
        start = time.perf_counter()
        sets = clf.predict_set(X, output=output)
        result["seconds_sets"] = time.perf_counter() - start
        result["tracemalloc_peak"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        result["rss_peak_increase"] = (
            _status("VmHWM") - rss_before if reset else float("nan")
        )
    if output == "sparse":
        result["output_bytes"] = int(
            sets.data.nbytes + sets.indices.nbytes + sets.indptr.nbytes
        )
    else:
        result["output_bytes"] = int(sets.nbytes)
    result["mean_set_size"] = mean_set_size(sets)
    result["coverage"] = coverage_score(y, sets, classes=clf.classes_)
    result["working_memory_MiB"] = sklearn.get_config()["working_memory"]
    print(json.dumps(result))


def run(args_list):
    out = subprocess.run(
        [sys.executable, __file__, "--worker", *args_list],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ns", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--stream", type=int, nargs="*", default=[10_000_000])
    parser.add_argument("--k", type=int, default=1000)
    parser.add_argument("--outputs", nargs="+", default=["dense", "sparse"])
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--n", type=int)
    parser.add_argument("--output", default="dense")
    parser.add_argument("--streamed", action="store_true")
    args = parser.parse_args()
    if args.worker:
        worker(args.n, args.k, args.output, args.streamed)
        return
    mib = 2**20
    print(
        f"K = {args.k}, working_memory = {sklearn.get_config()['working_memory']} MiB"
    )
    print(
        f"{'n':>9} {'output':>7} {'seconds':>8} {'out MiB':>9} {'RSS incr MiB':>13} "
        f"{'tracemalloc MiB':>16} {'incr - out':>11} {'size':>6} {'coverage':>9}"
    )
    for n in args.ns:
        for output in args.outputs:
            r = run(["--n", str(n), "--k", str(args.k), "--output", output])
            print(
                f"{n:>9} {output:>7} {r['seconds_sets']:>8.1f} "
                f"{r['output_bytes'] / mib:>9.1f} "
                f"{r['rss_peak_increase'] / mib:>13.1f} "
                f"{r['tracemalloc_peak'] / mib:>16.1f} "
                f"{(r['rss_peak_increase'] - r['output_bytes']) / mib:>11.1f} "
                f"{r['mean_set_size']:>6.3f} {r['coverage']:>9.3f}",
                flush=True,
            )
    for n in args.stream:
        r = run(["--n", str(n), "--k", str(args.k), "--output", "sparse", "--streamed"])
        sets_only = r["seconds_sets"] - r["seconds_generate"]
        sort_only = r["seconds_argsort"] - r["seconds_generate"]
        print(
            f"streamed sparse sets, n = {n}: {r['seconds_sets']:.1f} s "
            f"(argsort of the same rows {r['seconds_argsort']:.1f} s, generating "
            f"the rows {r['seconds_generate']:.1f} s; ratio "
            f"{r['seconds_sets'] / r['seconds_argsort']:.2f}, without generation "
            f"{sets_only / sort_only:.2f}); output "
            f"{r['output_bytes'] / mib:.1f} MiB, mean size "
            f"{r['mean_set_size']:.3f}, coverage {r['coverage']:.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
