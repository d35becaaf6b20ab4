"""Label-noise correction on a dask cluster with DaskLGBMClassifier.

Measurements (issue 47, item 2), written to
``benchmarks/results/dask_noise.json``:

1. **Driver memory.** ``ClassConditionalNoiseCorrector(DaskLGBMClassifier())``
   fits on ``--n`` rows x 10 features generated *on two worker processes*
   (a ``LocalCluster``), with 20 % of the labels flipped class-conditionally
   (``0 -> 1`` at ``--flip0``, ``1 -> 0`` at ``--flip1``: 30 % and 10 % by
   default, 20 % of the labels on balanced classes). The driver's resident
   set is sampled every 5 ms during the fit (transition matrix estimated from
   3-fold out-of-fold probabilities, forward-corrected fit); its peak
   increase is compared with the size of ``X``.
2. **Accuracy on clean labels** of a held-out in-memory test set
   (``--n-test`` rows): the dask corrector and a plain ``DaskLGBMClassifier``
   at ``--n`` rows; and at ``--n-sub`` rows (a size the driver can hold) the
   dask corrector, the plain dask model, and the in-memory
   ``ClassConditionalNoiseCorrector(LGBMClassifier())`` on the same rows.

3. **The instance corrector** (``--corrector instance`` or ``both``, under
   the key ``"instance"``): ``InstanceNoiseCorrector(DaskLGBMClassifier())``
   (``rho="margin"``, the corrected objective on the workers, ``noise_rate_``
   from 3-fold out-of-fold probabilities) on ``--instance-n`` rows of the
   same generator: the driver's peak against the size of ``X``, accuracy on
   the clean test labels against the plain ``DaskLGBMClassifier``, and at
   ``--instance-n-sub`` rows against the in-memory
   ``InstanceNoiseCorrector(LGBMClassifier())``.

Run (defaults: 10^6 rows, 200,000 for the comparison; 500,000 and 100,000
for the instance corrector; a few minutes here)::

    OMP_NUM_THREADS=1 python benchmarks/dask_noise.py
    OMP_NUM_THREADS=1 python benchmarks/dask_noise.py --n 4000000 --chunk 500000
    OMP_NUM_THREADS=1 python benchmarks/dask_noise.py --corrector instance

``--corrector`` runs one part only and keeps the other part's results
already in ``--out``.

"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dask_calibration import (  # the same features, the same probe
    COEF,
    N_FEATURES,
    PeakRSS,
)


def _block(block_id, chunk, flips, seed=7):
    """Features, clean labels and noisy labels of one block."""
    rng = np.random.default_rng([seed, block_id])
    X = rng.standard_normal((chunk, N_FEATURES))
    score = X @ COEF + np.sin(2 * X[:, 0]) + 0.3 * rng.standard_normal(chunk)
    clean = (score > 0).astype(np.int64)
    flip = rng.uniform(size=chunk) < np.where(clean == 0, flips[0], flips[1])
    return X, clean, np.where(flip, 1 - clean, clean)


def dask_rows(n, chunk, flips):
    """``X`` and the noisy ``y`` as dask arrays whose blocks are made on the workers."""
    import dask.array as da

    if n % chunk:
        raise ValueError(f"--n ({n}) must be a multiple of --chunk ({chunk}).")
    n_blocks = n // chunk

    def X_block(block_info=None):
        return _block(block_info[None]["chunk-location"][0], chunk, flips)[0]

    def y_block(block_info=None):
        return _block(block_info[None]["chunk-location"][0], chunk, flips)[2]

    X = da.map_blocks(
        X_block, chunks=((chunk,) * n_blocks, (N_FEATURES,)), dtype=np.float64
    )
    y = da.map_blocks(y_block, chunks=((chunk,) * n_blocks,), dtype=np.int64)
    return X, y


def memory_rows(n, chunk, flips, seed=7):
    parts = [_block(b, chunk, flips, seed) for b in range(n // chunk)]
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--chunk", type=int, default=250_000)
    parser.add_argument("--n-sub", type=int, default=200_000)
    parser.add_argument("--n-test", type=int, default=50_000)
    parser.add_argument("--n-estimators", type=int, default=50)
    parser.add_argument("--flip0", type=float, default=0.3)
    parser.add_argument("--flip1", type=float, default=0.1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--corrector",
        choices=["both", "class_conditional", "instance"],
        default="both",
    )
    parser.add_argument("--instance-n", type=int, default=500_000)
    parser.add_argument("--instance-chunk", type=int, default=125_000)
    parser.add_argument("--instance-n-sub", type=int, default=100_000)
    parser.add_argument("--instance-n-estimators", type=int, default=100)
    parser.add_argument(
        "--out", default=str(Path(__file__).parent / "results/dask_noise.json")
    )
    args = parser.parse_args()

    import lightgbm
    from distributed import Client, LocalCluster

    from sklearn_iclr26.label_noise import (
        ClassConditionalNoiseCorrector,
        InstanceNoiseCorrector,
    )

    warnings.filterwarnings("ignore", message="Parameter n_jobs will be ignored")
    flips = (args.flip0, args.flip1)
    params = {"n_estimators": args.n_estimators, "verbose": -1, "random_state": 0}
    X_test, clean_test, _ = memory_rows(args.n_test, args.n_test, flips, seed=99)
    result = {}
    if args.corrector != "both" and Path(args.out).exists():
        result = json.loads(Path(args.out).read_text())
    result.update({"lightgbm": lightgbm.__version__})
    result["args" if args.corrector != "instance" else "instance_args"] = vars(args)

    def corrector(estimator, **kw):
        return ClassConditionalNoiseCorrector(estimator, random_state=0, **kw)

    def accuracy(model):
        return float(np.mean(model.predict(X_test) == clean_test))

    cluster = LocalCluster(
        n_workers=args.workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
    )
    client = Client(cluster)
    try:
        # warm-up: the workers import the package and LightGBM once
        X_small, y_small = dask_rows(4000, 1000, flips)
        corrector(lightgbm.DaskLGBMClassifier(n_estimators=2, verbose=-1)).fit(
            X_small, y_small
        )

        if args.corrector != "class_conditional":
            result["instance"] = run_instance(
                args, flips, accuracy, InstanceNoiseCorrector
            )
        if args.corrector == "instance":
            return

        # 1. driver memory and accuracy at --n rows
        X, y = dask_rows(args.n, args.chunk, flips)
        start = time.perf_counter()
        with PeakRSS() as rss:
            est = corrector(lightgbm.DaskLGBMClassifier(**params), verbose=1).fit(X, y)
        seconds = time.perf_counter() - start
        start = time.perf_counter()
        plain = lightgbm.DaskLGBMClassifier(**params).fit(X, y).to_local()
        plain_seconds = time.perf_counter() - start
        result["full"] = {
            "n_rows": args.n,
            "n_blocks": args.n // args.chunk,
            "X_MiB": args.n * N_FEATURES * 8 / 2**20,
            "driver_peak_increase_MiB": rss.increase / 2**20,
            "fit_seconds": seconds,
            "plain_fit_seconds": plain_seconds,
            "transition_matrix": est.transition_matrix_.tolist(),
            "true_transition_matrix": [
                [1 - flips[0], flips[0]],
                [flips[1], 1 - flips[1]],
            ],
            "oof_disagreement": est.oof_disagreement_,
            "flagged_fraction": float(est.label_issues_.mean().compute()),
            "accuracy_dask_corrector": accuracy(est),
            "accuracy_plain_dask": accuracy(plain),
        }
        print(json.dumps(result["full"], indent=1), flush=True)
        del est, plain

        # 2. at --n-sub rows: the dask path against the in-memory corrector
        sub_chunk = args.n_sub // 4
        X_d, y_d = dask_rows(args.n_sub, sub_chunk, flips)
        X_m, _, y_m = memory_rows(args.n_sub, sub_chunk, flips)
        blockwise = corrector(lightgbm.DaskLGBMClassifier(**params)).fit(X_d, y_d)
        plain = lightgbm.DaskLGBMClassifier(**params).fit(X_d, y_d).to_local()
        start = time.perf_counter()
        memory = corrector(lightgbm.LGBMClassifier(n_jobs=1, **params)).fit(X_m, y_m)
        memory_seconds = time.perf_counter() - start
        memory_plain = lightgbm.LGBMClassifier(n_jobs=1, **params).fit(X_m, y_m)
        result["subsample"] = {
            "n_rows": args.n_sub,
            "transition_matrix_dask": blockwise.transition_matrix_.tolist(),
            "transition_matrix_memory": memory.transition_matrix_.tolist(),
            "accuracy_dask_corrector": accuracy(blockwise),
            "accuracy_plain_dask": accuracy(plain),
            "accuracy_memory_corrector": accuracy(memory),
            "accuracy_memory_plain": accuracy(memory_plain),
            "memory_corrector_seconds": memory_seconds,
        }
        print(json.dumps(result["subsample"], indent=1), flush=True)
    finally:
        client.close()
        cluster.close()
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
        print(f"written to {args.out}")


def run_instance(args, flips, accuracy, InstanceNoiseCorrector):
    """Part 3: the instance corrector on the cluster and in memory."""
    import lightgbm

    params = {
        "n_estimators": args.instance_n_estimators,
        "verbose": -1,
        "random_state": 0,
    }

    def corrector(estimator, **kw):
        return InstanceNoiseCorrector(estimator, cv=3, random_state=0, **kw)

    X, y = dask_rows(args.instance_n, args.instance_chunk, flips)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with PeakRSS() as rss:
            est = corrector(lightgbm.DaskLGBMClassifier(**params), verbose=1).fit(X, y)
            flagged = float(est.label_issues_.mean().compute())
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    plain = lightgbm.DaskLGBMClassifier(**params).fit(X, y).to_local()
    plain_seconds = time.perf_counter() - start
    out = {
        "n_rows": args.instance_n,
        "n_blocks": args.instance_n // args.instance_chunk,
        "X_MiB": args.instance_n * N_FEATURES * 8 / 2**20,
        "driver_peak_increase_MiB": rss.increase / 2**20,
        "fit_and_flags_seconds": seconds,
        "plain_fit_seconds": plain_seconds,
        "noise_rate": est.noise_rate_,
        "true_noise_rate": 0.5 * (flips[0] + flips[1]),
        "oof_disagreement": est.oof_disagreement_,
        "train_disagreement": est.train_disagreement_,
        "flagged_fraction": flagged,
        "warnings": [
            str(w.message)[:120]
            for w in caught
            if not str(w.message).startswith("Parameter n_jobs")
        ],
        "accuracy_dask_corrector": accuracy(est),
        "accuracy_plain_dask": accuracy(plain),
    }
    print(json.dumps(out, indent=1), flush=True)
    del est, plain

    n_sub = args.instance_n_sub
    X_d, y_d = dask_rows(n_sub, n_sub // 4, flips)
    X_m, _, y_m = memory_rows(n_sub, n_sub // 4, flips)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        blockwise = corrector(lightgbm.DaskLGBMClassifier(**params)).fit(X_d, y_d)
        plain = lightgbm.DaskLGBMClassifier(**params).fit(X_d, y_d).to_local()
        start = time.perf_counter()
        memory = corrector(lightgbm.LGBMClassifier(n_jobs=1, **params)).fit(X_m, y_m)
        memory_seconds = time.perf_counter() - start
        memory_plain = lightgbm.LGBMClassifier(n_jobs=1, **params).fit(X_m, y_m)
    out["subsample"] = {
        "n_rows": n_sub,
        "noise_rate_dask": blockwise.noise_rate_,
        "noise_rate_memory": memory.noise_rate_,
        "accuracy_dask_corrector": accuracy(blockwise),
        "accuracy_plain_dask": accuracy(plain),
        "accuracy_memory_corrector": accuracy(memory),
        "accuracy_memory_plain": accuracy(memory_plain),
        "memory_corrector_seconds": memory_seconds,
    }
    print(json.dumps(out["subsample"], indent=1), flush=True)
    return out


if __name__ == "__main__":
    main()
