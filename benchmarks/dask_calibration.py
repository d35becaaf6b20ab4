"""Conformal calibration over a dask array that never reaches the driver.

Three measurements (issue 47), written to
``benchmarks/results/dask_calibration.json``:

1. **Driver memory.** ``SplitConformalClassifier(FrozenEstimator(model))``
   calibrates on ``--n`` rows x 10 features generated *on two worker
   processes* (a ``LocalCluster``); the driver's resident set is sampled
   every 5 ms during the calibration, and its peak increase is compared
   with the size of ``X`` and of the scores (8 bytes a row).
2. **Equality.** On the first ``--n-check`` rows, the block-wise threshold,
   sorted scores and sets equal those of the in-memory fit on the same rows.
3. **Time.** At ``--n-time`` rows (a size both can do): the in-memory fit
   (``X`` already on the driver) against the block-wise fit on the cluster.

Run (defaults: 10^6 rows, about a minute here)::

    OMP_NUM_THREADS=1 python benchmarks/dask_calibration.py
    OMP_NUM_THREADS=1 python benchmarks/dask_calibration.py --n 10000000

"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import os
import threading
import time
from pathlib import Path

import numpy as np

N_FEATURES = 10
COEF = np.linspace(-1.0, 1.0, N_FEATURES)


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class PeakRSS:
    """The driver's peak resident set above its value at entry."""

    def __enter__(self):
        self.base = self.peak = _rss()
        self._stop = threading.Event()

        def sample():
            while not self._stop.is_set():
                self.peak = max(self.peak, _rss())
                time.sleep(0.005)

        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss())
        self.increase = self.peak - self.base


def _labels(X, seed):
    """Three classes from a known logistic model of the rows."""
    logits = np.column_stack([X @ COEF, -(X @ COEF), X[:, 0]])
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    u = np.random.default_rng(seed).uniform(size=(X.shape[0], 1))
    return (u > np.cumsum(p, axis=1)).sum(axis=1)


def _block(block_id, chunk):
    rng = np.random.default_rng([7, block_id])
    X = rng.standard_normal((chunk, N_FEATURES))
    return X, _labels(X, [8, block_id])


def dask_rows(n, chunk):
    """``X`` and ``y`` as dask arrays whose blocks are made on the workers."""
    import dask.array as da

    n_blocks = n // chunk

    def X_block(block_info=None):
        return _block(block_info[None]["chunk-location"][0], chunk)[0]

    def y_block(block_info=None):
        return _block(block_info[None]["chunk-location"][0], chunk)[1]

    X = da.map_blocks(
        X_block, chunks=((chunk,) * n_blocks, (N_FEATURES,)), dtype=np.float64
    )
    y = da.map_blocks(y_block, chunks=((chunk,) * n_blocks,), dtype=np.int64)
    return X, y


def memory_rows(n, chunk):
    parts = [_block(b, chunk) for b in range(n // chunk)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def model():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = rng.standard_normal((5000, N_FEATURES))
    return LogisticRegression(max_iter=1000).fit(X, _labels(X, 1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--chunk", type=int, default=250_000)
    parser.add_argument("--n-check", type=int, default=500_000)
    parser.add_argument("--n-time", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--out", default=str(Path(__file__).parent / "results/dask_calibration.json")
    )
    args = parser.parse_args()

    import sklearn
    from distributed import Client, LocalCluster, wait
    from sklearn.frozen import FrozenEstimator

    from sklearn_iclr26.conformal import SplitConformalClassifier

    result = {"args": vars(args), "sklearn": sklearn.__version__}
    fitted = model()

    def conformal(**kw):
        return SplitConformalClassifier(FrozenEstimator(fitted), random_state=0, **kw)

    cluster = LocalCluster(
        n_workers=args.workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
    )
    client = Client(cluster)
    try:
        # warm-up: the workers import the package once
        X_small, y_small = dask_rows(2 * args.chunk // 10, args.chunk // 10)
        conformal().fit(X_small, y_small)

        # 1. driver memory at --n rows
        X, y = dask_rows(args.n, args.chunk)
        start = time.perf_counter()
        with PeakRSS() as rss:
            est = conformal(verbose=1).fit(X, y)
        result["calibration"] = {
            "n_rows": args.n,
            "n_blocks": args.n // args.chunk,
            "seconds": time.perf_counter() - start,
            "driver_peak_increase_MiB": rss.increase / 2**20,
            "X_MiB": args.n * N_FEATURES * 8 / 2**20,
            "scores_MiB": args.n * 8 / 2**20,
            "threshold": float(est.threshold_),
        }
        print(json.dumps(result["calibration"], indent=1), flush=True)
        del est

        # 2. equality with the in-memory fit on the first --n-check rows
        checks = {}
        for kw in ({}, {"conditional": "class"}, {"conformity_score": "aps"}):
            X_d, y_d = dask_rows(args.n_check, args.chunk)
            X_m, y_m = memory_rows(args.n_check, args.chunk)
            blockwise = conformal(**kw).fit(X_d, y_d)
            memory = conformal(**kw).fit(X_m, y_m)
            sets_equal = bool(
                np.array_equal(
                    blockwise.predict_set(X_d).compute(), memory.predict_set(X_m)
                )
            )
            checks[json.dumps(kw)] = {
                "threshold_blockwise": np.asarray(blockwise.threshold_).tolist(),
                "threshold_memory": np.asarray(memory.threshold_).tolist(),
                "scores_equal": bool(
                    np.array_equal(
                        blockwise.calibration_scores_, memory.calibration_scores_
                    )
                ),
                "sets_equal": sets_equal,
            }
        result["equality"] = {"n_rows": args.n_check, "by_option": checks}
        print(json.dumps(result["equality"], indent=1), flush=True)

        # 3. time at --n-time rows: in memory (X on the driver) against blocks
        X_m, y_m = memory_rows(args.n_time, args.chunk)
        start = time.perf_counter()
        conformal().fit(X_m, y_m)
        memory_seconds = time.perf_counter() - start
        del X_m, y_m
        # the rows persisted on the workers first: calibration time only
        X_d, y_d = client.persist(dask_rows(args.n_time, args.chunk))
        wait([X_d, y_d])
        start = time.perf_counter()
        conformal().fit(X_d, y_d)
        blockwise_seconds = time.perf_counter() - start
        result["time"] = {
            "n_rows": args.n_time,
            "in_memory_seconds": memory_seconds,
            "blockwise_seconds": blockwise_seconds,
            "workers": args.workers,
        }
        print(json.dumps(result["time"], indent=1), flush=True)
    finally:
        client.close()
        cluster.close()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
