"""``InstanceNoiseCorrector`` fit against plain LightGBM, binary, large n.

The corrector wraps ``LGBMClassifier(n_estimators=100, n_jobs=1)`` with the
default (margin flip rate, objective strategy) settings and ``cv=None`` (the
default ``cv=5`` adds five out-of-fold fits for ``noise_rate_``, a cost of
its own: ``--cv 5`` times it); the anchor is the
same ``LGBMClassifier`` fitted on the same noisy labels the way its own
documentation does (``fit(X, y)``). Data: ``n`` rows, 20 Gaussian features, a
logistic label flipped with an instance-dependent rate (up to 40 % near the
boundary). Interleaved rounds in one process (the order alternates), one
warm-up fit each; the per-round ratio corrector / plain is reported as median
(min-max), for wall-clock and for process CPU time. ``split_work_ratio`` is
the rows LightGBM builds histograms for (the smaller child of every split),
corrector over plain: the corrected loss grows different trees, with the same
number of leaves but more balanced splits, and that is where the rest of the
corrector's time goes (the objective itself is a small part since the fused
gradient, ``label_noise/_loss_kernels.py``). Results are appended to
``benchmarks/results/bench_noise_vs_lightgbm.jsonl``.

Usage: ``python benchmarks/bench_noise_vs_lightgbm.py [--n 200000]
[--rounds 3] [--tag before|after]``; the issue's figure is ``--n 1000000``
(about a minute per fit on an idle core).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import time
from pathlib import Path

import numpy as np
from lightgbm import LGBMClassifier

from sklearn_iclr26.label_noise import InstanceNoiseCorrector


def data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 20))
    logit = X[:, 0] + 0.5 * X[:, 1] - 0.5 * X[:, 2] * X[:, 3]
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * logit))).astype(int)
    flip = rng.random(n) < 0.4 * np.exp(-np.abs(logit))
    return X, np.where(flip, 1 - y, y)


def split_work(booster):
    """Rows LightGBM builds histograms for: the smaller child of every split.

    LightGBM builds the histogram of a split's smaller child and subtracts it
    from the parent's for the larger one, so this sum (over every split of
    every tree) is what the tree building costs, up to the feature count.
    """

    def walk(node):
        if "left_child" not in node:
            return 0
        left, right = node["left_child"], node["right_child"]
        n_left = left.get("internal_count", left.get("leaf_count"))
        n_right = right.get("internal_count", right.get("leaf_count"))
        return min(n_left, n_right) + walk(left) + walk(right)

    return sum(walk(t["tree_structure"]) for t in booster.dump_model()["tree_info"])


def lgbm():
    return LGBMClassifier(n_estimators=100, n_jobs=1, verbose=-1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cv", type=int, default=None)
    parser.add_argument("--tag", default="")
    args = parser.parse_args()
    X, y = data(args.n)
    contenders = {
        "plain": lambda: lgbm().fit(X, y),
        "corrector": lambda: InstanceNoiseCorrector(lgbm(), cv=args.cv).fit(X, y),
    }
    Xs, ys = data(2000, seed=1)
    lgbm().fit(Xs, ys)
    InstanceNoiseCorrector(lgbm(), cv=args.cv).fit(Xs, ys)
    times = {k: [] for k in contenders}
    fitted = {}
    for r in range(args.rounds):
        order = list(contenders) if r % 2 == 0 else list(contenders)[::-1]
        for name in order:
            t, c = time.perf_counter(), time.process_time()
            fitted[name] = contenders[name]()
            times[name].append((time.perf_counter() - t, time.process_time() - c))
            print(name, times[name][-1], flush=True)
    row = {"n": args.n, "cv": args.cv, "rounds": args.rounds, "tag": args.tag}
    for clock, i in (("wall", 0), ("cpu", 1)):
        a = np.array([x[i] for x in times["corrector"]])
        b = np.array([x[i] for x in times["plain"]])
        ratio = a / b
        row[f"{clock}_corrector_s"] = float(np.median(a))
        row[f"{clock}_plain_s"] = float(np.median(b))
        row[f"{clock}_ratio"] = [
            float(np.median(ratio)),
            float(ratio.min()),
            float(ratio.max()),
        ]
    # why the corrector's trees cost more than plain LightGBM's (same leaves)
    work_plain = split_work(fitted["plain"].booster_)
    work_corrector = split_work(fitted["corrector"].estimator_.booster_)
    row["split_work_ratio"] = work_corrector / work_plain
    print(json.dumps(row), flush=True)
    out = Path(__file__).parent / "results" / "bench_noise_vs_lightgbm.jsonl"
    out.parent.mkdir(exist_ok=True)
    with out.open("a") as f:
        f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
