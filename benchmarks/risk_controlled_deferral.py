"""Validity and efficiency of RiskControlledDeferrer, counted (issue 41, part B).

On the keel ``satimage`` table (6,435 rows, 6 classes) with 4 simulated
specialist experts (:func:`sklearn_iclr26.datasets.make_experts`,
``coverage=0.7``: each masters 70% of the classes, accuracy 0.9 there, near
random elsewhere; fees 0.02 to 0.1 per answer), the deferrers are fitted once
per training seed on 40% of the rows; the other 60% are split at random, per
repetition, into ``--n-cal`` calibration rows and test rows, and each rule is
calibrated on the calibration rows (the fitted deferrer frozen, which is the
setting of the guarantee: conditional on the training rows) and evaluated on
the test rows. Per repetition and rule: the test system error (0-1), the
test fee per query, whether it was certified.

Rules (target risk ``--target``, confidence level 0.9):

* ``topk_ltt``: RiskControlledDeferrer(TopKDeferrer), LTT fixed sequence;
* ``topk_ltt_bonferroni``: the same, Bonferroni over the grid;
* ``topk_crc``: the same, conformal risk control (in expectation);
* ``topk_plugin``: the uncorrected choice, the cheapest threshold whose
  calibration error is at most the target;
* ``confidence_ltt``: RiskControlledDeferrer(ConfidenceThresholdDeferrer),
  LTT fixed sequence (the baseline certified the same way);
* ``best_expert``: always the expert of least calibration error.

Reported: the share of repetitions whose test error exceeds the target, and
the share certified *and* above it (what the guarantee bounds; LTT: at most
1 - confidence_level within a 99% binomial band), the mean test error (CRC:
at most the target), the mean test fee, the share certified. For the
plug-in, "certified" means that some threshold met the target on the
calibration rows (no correction); ``best_expert`` is certified as the
fallback is (Hoeffding-Bentkus, Bonferroni share).

Run::

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/risk_controlled_deferral.py

Default: 2 training seeds x 100 splits (200 repetitions), about 1.5
CPU-minutes (378 s wall on 2 cores shared with other jobs).
Resumable: each repetition is a line of
``benchmarks/results/risk_controlled_deferral.jsonl`` (a rerun skips what is
there; ``--fresh`` starts over); the summary goes to
``benchmarks/results/risk_controlled_deferral.md``. ``--splits``, ``--seeds``,
``--target``, ``--n-cal``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import os
import time
import warnings

import numpy as np
from scipy.stats import binom
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import train_test_split

from sklearn_iclr26.datasets import load_keel, make_experts
from sklearn_iclr26.deferral import (
    ConfidenceThresholdDeferrer,
    RiskControlledDeferrer,
    TopKDeferrer,
)

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
LEVEL = 0.9
RULES = [
    "topk_ltt",
    "topk_ltt_bonferroni",
    "topk_crc",
    "topk_plugin",
    "confidence_ltt",
    "best_expert",
]


def _data():
    X, y = load_keel("satimage", return_X_y=True)
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y)
    E, fees = make_experts(X, y, n_experts=4, coverage=0.7, random_state=0)
    columns = list(range(X.shape[1], X.shape[1] + E.shape[1]))
    return np.hstack([X, E]), y, columns, fees


def _evaluate(est, X, y, index=None):
    y_pred, fee = est._predict_with_fees(X, index)
    return float(np.mean(y_pred != y)), float(np.mean(fee))


def run_seed(seed, splits, done, out, args):
    X, y, columns, fees = _data()
    train, pool = train_test_split(
        np.arange(len(y)), train_size=0.4, random_state=seed, stratify=y
    )
    inners = {
        "topk": TopKDeferrer(expert_columns=columns, costs=fees, random_state=seed).fit(
            X[train], y[train]
        ),
        "confidence": ConfidenceThresholdDeferrer(
            expert_columns=columns, costs=fees, random_state=seed
        ).fit(X[train], y[train]),
    }
    for split in range(splits):
        if (seed, split) in done:
            continue
        rng = np.random.RandomState(1000 * seed + split)
        order = rng.permutation(pool)
        cal, test = order[: args.n_cal], order[args.n_cal :]
        row = {"seed": seed, "split": split}

        def calibrate(inner, params, split=split, cal=cal):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                return RiskControlledDeferrer(
                    FrozenEstimator(inners[inner]),
                    target_risk=args.target,
                    confidence_level=LEVEL,
                    random_state=split,
                    **params,
                ).fit(X[cal], y[cal])

        configs = {
            "topk_ltt": ("topk", {}),
            "topk_ltt_bonferroni": ("topk", {"fwer": "bonferroni"}),
            "topk_crc": ("topk", {"method": "crc"}),
            "confidence_ltt": ("confidence", {}),
        }
        fitted = {}
        for rule, (inner, params) in configs.items():
            est = fitted[rule] = calibrate(inner, params)
            risk, fee = _evaluate(est, X[test], y[test])
            row[rule] = [risk, fee, bool(est.certified_)]
        est = fitted["topk_ltt"]
        curve = est.risk_curve_
        m = len(est.parameters_)
        ok = np.flatnonzero(curve["risk"][:m] <= args.target)
        plug = (
            int(ok[np.argmin(curve["cost"][ok])])
            if ok.size
            else int(np.argmin(curve["risk"][:m]))
        )
        row["topk_plugin"] = [*_evaluate(est, X[test], y[test], plug), bool(ok.size)]
        best = m + int(np.argmin(curve["risk"][m:]))
        row["best_expert"] = [
            *_evaluate(est, X[test], y[test], best),
            bool(curve["certified"][best]),
        ]
        out.write(json.dumps(row) + "\n")
        out.flush()


def summarise(rows, target):
    n = len(rows)
    # 99% two-sided binomial band around 1 - confidence_level
    upper = binom.ppf(0.995, n, 1 - LEVEL) / n
    lines = [
        (
            f"satimage, 4 experts (coverage 0.7), target_risk={target}, "
            f"confidence_level={LEVEL}, {n} calibration/test splits"
        ),
        "",
        (
            f"LTT validity: share of splits above the target <= {1 - LEVEL:.2f} "
            f"(99% binomial band upper edge for {n} splits: {upper:.3f})"
        ),
        "",
        (
            "| rule | share of splits with test error > target | share certified "
            "and above the target | mean test error | mean test fee | share "
            "certified |"
        ),
        "|---|---|---|---|---|---|",
    ]
    summary = {"n_splits": n, "target": target, "band_upper": upper, "rules": {}}
    for rule in RULES:
        values = np.array([r[rule] for r in rows], dtype=np.float64)
        exceed = float(np.mean(values[:, 0] > target))
        false_claim = float(np.mean((values[:, 0] > target) & (values[:, 2] > 0)))
        stats = {
            "share_above_target": exceed,
            "share_certified_and_above_target": false_claim,
            "mean_test_error": float(values[:, 0].mean()),
            "mean_test_fee": float(values[:, 1].mean()),
            "share_certified": float(values[:, 2].mean()),
        }
        summary["rules"][rule] = stats
        lines.append(
            f"| {rule} | {exceed:.3f} | {false_claim:.3f} | "
            f"{stats['mean_test_error']:.4f} | "
            f"{stats['mean_test_fee']:.4f} | {stats['share_certified']:.2f} |"
        )
    return "\n".join(lines), summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--splits", type=int, default=100)
    parser.add_argument("--target", type=float, default=0.1)
    parser.add_argument("--n-cal", type=int, default=1000)
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--tag", default="risk_controlled_deferral")
    args = parser.parse_args()
    os.makedirs(RESULTS, exist_ok=True)
    path = os.path.join(RESULTS, f"{args.tag}.jsonl")
    if args.fresh and os.path.exists(path):
        os.remove(path)
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    done = {(r["seed"], r["split"]) for r in rows}
    start = time.perf_counter()
    with open(path, "a") as out:
        for seed in range(args.seeds):
            run_seed(seed, args.splits, done, out, args)
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    rows = [r for r in rows if r["seed"] < args.seeds and r["split"] < args.splits]
    text, summary = summarise(rows, args.target)
    text += f"\n\nwall time of this run: {time.perf_counter() - start:.0f} s\n"
    print(text)
    with open(os.path.join(RESULTS, f"{args.tag}.md"), "w") as f:
        f.write(text)
    with open(os.path.join(RESULTS, f"{args.tag}.json"), "w") as f:
        json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()
