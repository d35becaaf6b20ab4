"""Fit and predict time of iFusion against "concat" and LightGBM on MovieLens.

The inputs are the ones ``benchmarks/ifusion_reproduction.py`` builds
(``load_movielens_interactions``, ``InteractionSequenceEncoder`` defaults; the
LightGBM model gets that script's flattened history features). Encoding and
feature flattening are done once, before timing, and are not timed: the
timings are of ``fit`` and ``predict_proba`` of the models themselves.

Methods: ``DiffusionInterestFusionClassifier`` with fusion "diffusion"
(one-step inference, ``n_sampling_steps=1``, the default) and "concat" (same
settings otherwise), and ``LGBMClassifier`` (300 trees, as in the
reproduction). Fits use the first ``--n-train`` training rows (by time within
the log) and ``--epochs`` epochs; predictions are on the full test set.

Rounds are interleaved: each round fits and then predicts every method once,
in an order rotated from round to round, so that drift in the machine's load
affects all methods alike; a round's predict time is the fastest of
``--predict-repeats`` calls on the fitted model. Reported: median seconds per
method, and the median over rounds of the per-round ratios to "concat" and to LightGBM.
Target of the issue: diffusion predict time within 2x of "concat".

Run (default about 2 minutes on 2 shared cores)::

    OMP_NUM_THREADS=1 python benchmarks/bench_ctr.py

Output: ``benchmarks/results/bench_ctr.txt`` (``--out``). The reproduction's
training setting (all 80,001 rows, 3 epochs) is
``--n-train 100000 --epochs 3 --rounds 3 --out bench_ctr_full.txt``
(about 3 minutes).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from ifusion_reproduction import _flat_features

from sklearn_iclr26.datasets import load_movielens_interactions
from sklearn_iclr26.neural_network import (
    DiffusionInterestFusionClassifier,
    InteractionSequenceEncoder,
)

RESULTS = Path(__file__).parent / "results"


def _genres_of(data, enc):
    """Genre indicator rows per item code, as in the reproduction's LightGBM."""
    genre_names = sorted(
        {g for gs in data.train["genres"].astype(str) for g in gs.split("|")}
    )
    genres_of = np.zeros((enc.n_items_, len(genre_names)))
    item_genres = (
        data.train.drop_duplicates("item").set_index("item")["genres"].astype(str)
    )
    for code, item in enumerate(enc.items_, start=2):
        for g in item_genres.get(item, "").split("|"):
            if g in genre_names:
                genres_of[code, genre_names.index(g)] = 1.0
    return genres_of


def _methods(epochs, seed):
    from lightgbm import LGBMClassifier

    params = {
        "max_iter": epochs,
        "batch_size": 512,
        "learning_rate_init": 3e-3,
        "random_state": seed,
    }
    return {
        "diffusion": lambda: DiffusionInterestFusionClassifier("diffusion", **params),
        "concat": lambda: DiffusionInterestFusionClassifier("concat", **params),
        "lightgbm": lambda: LGBMClassifier(
            n_estimators=300,
            learning_rate=0.05,
            num_leaves=31,
            n_jobs=1,
            random_state=seed,
            verbose=-1,
        ),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--predict-repeats", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--n-train", type=int, default=20000)
    parser.add_argument("--out", default="bench_ctr.txt", help="file in results/")
    args = parser.parse_args()

    lines = []

    def log(msg):
        print(msg, flush=True)
        lines.append(msg)

    start = time.perf_counter()
    data = load_movielens_interactions()
    enc = InteractionSequenceEncoder().set_output(transform="pandas")
    X_train = enc.fit_transform(data.train, data.train["click"])
    X_test = enc.transform(data.test)
    y_train = data.train["click"].to_numpy()
    genres_of = _genres_of(data, enc)
    F_train = _flat_features(data.train, X_train, genres_of)
    F_test = _flat_features(data.test, X_test, genres_of)
    n = min(args.n_train, len(y_train))
    inputs = {
        "diffusion": (X_train.iloc[:n], X_test),
        "concat": (X_train.iloc[:n], X_test),
        "lightgbm": (F_train[:n], F_test),
    }
    log(
        f"MovieLens: fit on {n} of {len(y_train)} train rows, predict on "
        f"{len(X_test)} test rows; {X_train.shape[1]} encoded columns, "
        f"{F_train.shape[1]} flattened LightGBM features; {args.epochs} epoch(s), "
        f"{args.rounds} interleaved rounds, predict = min of {args.predict_repeats} "
        f"calls; OMP_NUM_THREADS=1, "
        f"{platform.processor() or platform.machine()}"
    )
    log(f"(data loading and encoding, not timed: {time.perf_counter() - start:.1f} s)")

    names = list(inputs)
    fit_s = {m: [] for m in names}
    pred_s = {m: [] for m in names}
    for r in range(args.rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        methods = _methods(args.epochs, seed=r)
        for m in order:
            Xf, Xp = inputs[m]
            model = methods[m]()
            t0 = time.perf_counter()
            model.fit(Xf, y_train[:n])
            fit_s[m].append(time.perf_counter() - t0)
            reps = []
            for _ in range(args.predict_repeats):
                t1 = time.perf_counter()
                model.predict_proba(Xp)
                reps.append(time.perf_counter() - t1)
            pred_s[m].append(min(reps))
        log(
            f"  round {r} ({' > '.join(order)}): "
            + "; ".join(
                f"{m} fit {fit_s[m][-1]:.2f} s pred {pred_s[m][-1]:.3f} s"
                for m in names
            )
        )

    def ratio(a, b, t):
        return float(np.median(np.array(t[a]) / np.array(t[b])))

    log("\nMedian seconds over rounds, and median over rounds of per-round ratios:")
    log(
        f"{'method':10s} {'fit s':>8s} {'predict s':>10s} {'fit/concat':>11s} "
        f"{'pred/concat':>12s} {'fit/lgbm':>9s} {'pred/lgbm':>10s}"
    )
    for m in names:
        log(
            f"{m:10s} {np.median(fit_s[m]):8.2f} {np.median(pred_s[m]):10.3f} "
            f"{ratio(m, 'concat', fit_s):11.2f} {ratio(m, 'concat', pred_s):12.2f} "
            f"{ratio(m, 'lightgbm', fit_s):9.2f} {ratio(m, 'lightgbm', pred_s):10.2f}"
        )
    r_pred = ratio("diffusion", "concat", pred_s)
    per_round = np.array(pred_s["diffusion"]) / np.array(pred_s["concat"])
    verdict = "HOLDS" if r_pred <= 2.0 else "does NOT hold"
    log(
        f"\nTarget 'one-step diffusion predict within 2x of concat': median ratio "
        f"{r_pred:.2f} (per round {per_round.min():.2f}-{per_round.max():.2f}, "
        f"{int((per_round <= 2).sum())}/{len(per_round)} rounds <= 2): {verdict}."
    )
    log(f"total {time.perf_counter() - start:.0f} s")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
