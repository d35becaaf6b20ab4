"""Validity on real data: predictive systems, Venn-Abers, exchangeability martingales.

Three parts (issue 45, items 3, 4, 6 and the regression part of 8), each
appending one JSON line per (part, set, split) to
``benchmarks/results/conformal_predictive_validity.jsonl`` as it finishes (a
rerun skips what is there: resumable); the summary goes to stdout and to the
same name with ``.md``, the PIT histograms to ``..._pit.png``.

``cps``
    Regression sets ``diabetes`` (scikit-learn), ``enb`` (heating load) and
    ``jura`` (cadmium), first targets of the packaged sets. Each of
    ``--splits`` random splits (default 200) fits on 80 % of the rows and
    tests on 20 %: :class:`ConformalPredictiveRegressor` with an
    ``LGBMRegressor`` point model (a third of the fit rows calibrate), plain,
    normalized (``normalizer="knn"``) and Mondrian (tertiles of the first
    feature, a function of ``X`` alone). Reported: coverage of the
    equal-tailed and of the symmetric 0.9 intervals (mean over splits, its
    standard error, and per Mondrian bin), mean width, and the smoothed PIT
    (``predict_cdf(X, y, smoothed=True)``) pooled over splits: its 10-bin
    histogram, the KS distance to U(0, 1) of one split's PIT (mean over
    splits) and the KS test of each split at 0.01 (the fraction rejected
    should be about 0.01).
``va``
    Binary keel sets ``spambase``, ``phoneme``, ``pima``, ``australian`` and
    multi-class ``vehicle``, ``satimage``. Each of ``--va-splits`` stratified
    75/25 splits (default 20): ``GaussianNB`` (a badly calibrated model)
    uncalibrated, :class:`VennAbersClassifier` inductive and cross (``cv=5``),
    and ``CalibratedClassifierCV(cv=5)`` isotonic and sigmoid, all fitted on
    the same 75 %. Reported: test log-loss, Brier score and top-label ECE (15
    bins), mean over splits.
``martingale``
    Streams of 400 test rows of ``enb`` and ``diabetes`` (a
    ``ConformalPredictiveRegressor`` fitted and calibrated on the other rows):
    the online p-values of the stream's absolute residual scores with the
    calibration scores as reference feed :class:`ExchangeabilityMartingale`
    at level 0.9 (threshold 10). In random order (exchangeable: Ville bounds
    the false-alarm rate by 0.1) over ``--streams`` permutations (default
    200), and sorted by the first feature or by the target (not
    exchangeable): rejection rate and first rejection index.

Usage::

    python benchmarks/conformal_predictive_validity.py --quick   # ~1 CPU-min
    python benchmarks/conformal_predictive_validity.py           # full

The full run takes about 6 CPU-minutes here (measured: see the .md).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from lightgbm import LGBMRegressor
from scipy.stats import kstest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_diabetes
from sklearn.metrics import brier_score_loss, log_loss
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

from sklearn_iclr26.conformal import (
    ConformalPredictiveRegressor,
    ExchangeabilityMartingale,
    VennAbersClassifier,
    online_p_values,
)
from sklearn_iclr26.datasets import load_keel, load_multioutput
from sklearn_iclr26.metrics import expected_calibration_error

LEVEL = 0.9
RESULTS = Path(__file__).parent / "results" / "conformal_predictive_validity.jsonl"
REG_SETS = ["diabetes", "enb", "jura"]
CLF_SETS = ["spambase", "phoneme", "pima", "australian", "vehicle", "satimage"]
STREAM_SETS = ["enb", "diabetes"]


def load_regression(name):
    if name == "diabetes":
        return load_diabetes(return_X_y=True)
    X, Y = load_multioutput(name, return_X_y=True)
    return np.asarray(X, dtype=float), np.asarray(Y, dtype=float)[:, 0]


class FeatureTertiles:
    """Mondrian bins: tertiles of one feature (edges from the fit rows)."""

    def __init__(self, X, column=0):
        self.column = column
        self.edges = np.quantile(np.asarray(X)[:, column], [1 / 3, 2 / 3])

    def __call__(self, X):
        return np.digitize(np.asarray(X)[:, self.column], self.edges)


def point_model(n_estimators):
    return LGBMRegressor(
        n_estimators=n_estimators, min_child_samples=10, n_jobs=1, verbose=-1
    )


def done_keys(path):
    keys = set()
    if path.exists():
        for line in path.read_text().splitlines():
            row = json.loads(line)
            keys.add((row["part"], row["set"], row["split"]))
    return keys


def covered(intervals, y):
    return (intervals[:, 0] <= y) & (y <= intervals[:, 1])


def run_cps(name, split, n_estimators):
    X, y = load_regression(name)
    X_fit, X_test, y_fit, y_test = train_test_split(
        X, y, test_size=0.2, random_state=split
    )
    bins = FeatureTertiles(X_fit)
    row = {"part": "cps", "set": name, "split": split}
    for variant, params in [
        ("plain", {}),
        ("knn", {"normalizer": "knn"}),
        ("mondrian", {"mondrian": bins}),
    ]:
        est = ConformalPredictiveRegressor(
            point_model(n_estimators),
            calibration_size=1 / 3,
            confidence_level=LEVEL,
            random_state=split,
            **params,
        ).fit(X_fit, y_fit)
        tailed = est.predict_interval(X_test)
        symmetric = est.set_params(interval="symmetric").predict_interval(X_test)
        pit = est.predict_cdf(X_test, y_test, smoothed=True, random_state=split)
        cov = covered(tailed, y_test)
        row[variant] = {
            "coverage": float(cov.mean()),
            "coverage_symmetric": float(covered(symmetric, y_test).mean()),
            "width": float(np.mean(tailed[:, 1] - tailed[:, 0])),
            "width_symmetric": float(np.mean(symmetric[:, 1] - symmetric[:, 0])),
            "pit_hist": np.histogram(pit, bins=10, range=(0, 1))[0].tolist(),
            "ks": float(kstest(pit, "uniform").statistic),
            "ks_pvalue": float(kstest(pit, "uniform").pvalue),
        }
        if variant == "mondrian":
            b = bins(X_test)
            row[variant]["bin_coverage"] = [
                float(cov[b == k].mean()) if np.any(b == k) else None for k in range(3)
            ]
    return row


def run_va(name, split):
    X, y = load_keel(name, return_X_y=True)
    X = np.asarray(X, dtype=float)
    X_fit, X_test, y_fit, y_test = train_test_split(
        X, y, test_size=0.25, stratify=y, random_state=split
    )
    row = {"part": "va", "set": name, "split": split}
    models = {
        "uncalibrated": GaussianNB(),
        "venn_abers": VennAbersClassifier(GaussianNB(), random_state=split),
        "venn_abers_cv5": VennAbersClassifier(GaussianNB(), cv=5, random_state=split),
        "isotonic_cv5": CalibratedClassifierCV(GaussianNB(), method="isotonic", cv=5),
        "sigmoid_cv5": CalibratedClassifierCV(GaussianNB(), method="sigmoid", cv=5),
    }
    for method, model in models.items():
        proba = model.fit(X_fit, y_fit).predict_proba(X_test)
        proba = np.clip(proba, 1e-15, 1)
        proba = proba / proba.sum(axis=1, keepdims=True)
        classes = model.classes_
        onehot = (y_test[:, None] == classes[None, :]).astype(float)
        row[method] = {
            "log_loss": float(log_loss(y_test, proba, labels=classes)),
            "brier": float(np.mean(np.sum((proba - onehot) ** 2, axis=1)))
            if len(classes) > 2
            else float(brier_score_loss(y_test, proba[:, 1], pos_label=classes[1])),
            "ece": expected_calibration_error(y_test, proba, labels=classes),
        }
    return row


def run_stream(name, stream, n_estimators):
    X, y = load_regression(name)
    rng = np.random.RandomState(1000 + stream)
    test = rng.permutation(X.shape[0])[: min(400, X.shape[0] // 2)]
    rest = np.setdiff1d(np.arange(X.shape[0]), test)
    est = ConformalPredictiveRegressor(
        point_model(n_estimators), calibration_size=0.5, random_state=stream
    ).fit(X[rest], y[rest])
    reference = np.abs(est.calibration_scores_)
    row = {"part": "martingale", "set": name, "split": stream}
    for order, rows in [
        ("random", test),
        ("sorted", test[np.argsort(X[test, 0], kind="stable")]),
        ("sorted_y", test[np.argsort(y[test], kind="stable")]),
    ]:
        scores = np.abs(y[rows] - est.predict(X[rows]))
        p = online_p_values(scores, reference_scores=reference, random_state=stream)
        test_m = ExchangeabilityMartingale(confidence_level=LEVEL).partial_fit(p)
        row[order] = {
            "rejected": bool(test_m.rejected_),
            "index": test_m.rejection_index_,
            "max_log10": float(np.max(test_m.log_martingale_) / np.log(10)),
        }
    return row


def _tables(header, body, out_md_lines, out_rst):
    """A table as markdown lines (appended) and as an rst list-table file."""
    out_md_lines += [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in body),
        "",
    ]
    rst = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *body]:
        rst.append("   * - " + (row[0] or " "))
        rst += [f"     - {cell or ' '}" for cell in row[1:]]
    out_rst.write_text("\n".join(rst) + "\n")


def _cps_rows(cps):
    body = []
    for name in REG_SETS:
        sub = [r for r in cps if r["set"] == name]
        if not sub:
            continue
        for variant in ("plain", "knn", "mondrian"):
            c = np.array([r[variant]["coverage"] for r in sub])
            se = c.std(ddof=1) / np.sqrt(len(c)) if len(c) > 1 else np.nan
            cs = np.mean([r[variant]["coverage_symmetric"] for r in sub])
            # median over splits: a split whose smallest Mondrian bin is too
            # small for the level has infinite bounds (counted in the cell)
            widths = np.array([r[variant]["width"] for r in sub])
            w = np.median(widths)
            ws = np.median([r[variant]["width_symmetric"] for r in sub])
            n_inf = int(np.sum(~np.isfinite(widths)))
            ks = np.mean([r[variant]["ks"] for r in sub])
            rej = np.mean([r[variant]["ks_pvalue"] < 0.01 for r in sub])
            body.append(
                [
                    name,
                    variant,
                    str(len(sub)),
                    f"{c.mean():.3f} ({se:.3f})",
                    f"{cs:.3f}",
                    f"{w:.3g} / {ws:.3g}" + (f" ({n_inf} inf)" if n_inf else ""),
                    f"{ks:.3f}",
                    f"{rej:.3f}",
                ]
            )
        bc = np.array(
            [
                [np.nan if v is None else v for v in r["mondrian"]["bin_coverage"]]
                for r in sub
            ]
        )
        per_bin = ", ".join(f"{v:.3f}" for v in np.nanmean(bc, axis=0))
        body.append([name, "mondrian, per tertile", "", per_bin, "", "", "", ""])
    return body


def summarize(rows, out_md, out_png):
    stem = out_md.with_suffix("")
    lines = ["# Conformal predictive systems, Venn-Abers, martingales", ""]
    cps = [r for r in rows if r["part"] == "cps"]
    if cps:
        lines += [f"## Predictive systems: coverage at {LEVEL} and PIT", ""]
        header = [
            "set",
            "variant",
            "splits",
            "coverage (se)",
            "symmetric coverage",
            "median width / symmetric",
            "mean KS",
            "KS rejects at 0.01",
        ]
        _tables(header, _cps_rows(cps), lines, Path(f"{stem}_cps.rst"))
        _plot_pit(cps, out_png)
    va = [r for r in rows if r["part"] == "va"]
    if va:
        methods = [k for k in va[0] if k not in ("part", "set", "split")]
        lines += [
            "## Venn-Abers against CalibratedClassifierCV (GaussianNB)",
            "",
            "Mean over splits of the test log-loss / Brier / top-label ECE.",
            "",
        ]
        body = []
        for name in CLF_SETS:
            sub = [r for r in va if r["set"] == name]
            if not sub:
                continue
            cells = []
            for m in methods:
                vals = [
                    np.mean([r[m][k] for r in sub])
                    for k in ("log_loss", "brier", "ece")
                ]
                cells.append(" / ".join(f"{v:.3f}" for v in vals))
            body.append([name, str(len(sub)), *cells])
        _tables(["set", "splits", *methods], body, lines, Path(f"{stem}_va.rst"))
    mart = [r for r in rows if r["part"] == "martingale"]
    if mart:
        lines += [f"## Exchangeability martingale at level {LEVEL} (threshold 10)", ""]
        body = []
        for name in STREAM_SETS:
            sub = [r for r in mart if r["set"] == name]
            if not sub:
                continue
            cells = [f"{np.mean([r['random']['rejected'] for r in sub]):.3f}"]
            for order in ("sorted", "sorted_y"):
                rate = np.mean([r[order]["rejected"] for r in sub])
                idx = [r[order]["index"] for r in sub if r[order]["index"] is not None]
                med = f"{np.median(idx):.0f}" if idx else "-"
                cells.append(f"{rate:.3f} ({med})")
            body.append([name, str(len(sub)), *cells])
        header = [
            "set",
            "streams",
            "random order: rejected",
            "sorted by x0: rejected (median first index)",
            "sorted by y: rejected (median first index)",
        ]
        _tables(header, body, lines, Path(f"{stem}_martingale.rst"))
    text = "\n".join(lines)
    out_md.write_text(text + "\n")
    print(text)


def _plot_pit(cps, out_png):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    variants = ("plain", "knn", "mondrian")
    fig, axes = plt.subplots(
        len(REG_SETS), 3, figsize=(9, 2.2 * len(REG_SETS)), sharex=True
    )
    axes = np.atleast_2d(axes)
    for i, name in enumerate(REG_SETS):
        sub = [r for r in cps if r["set"] == name]
        for j, variant in enumerate(variants):
            ax = axes[i, j]
            if not sub:
                ax.axis("off")
                continue
            counts = np.sum([r[variant]["pit_hist"] for r in sub], axis=0)
            density = counts / counts.sum() * 10
            ax.bar(np.arange(10) / 10 + 0.05, density, width=0.095, color="C0")
            ax.axhline(1.0, color="k", lw=1, ls="--")
            ax.set_ylim(0, 1.6)
            ax.set_title(f"{name}, {variant} ({len(sub)} splits)", fontsize=9)
    for ax in axes[-1]:
        ax.set_xlabel("smoothed PIT")
    fig.tight_layout()
    fig.savefig(out_png, dpi=80)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--va-splits", type=int, default=20)
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--summary-only", action="store_true", help="summarize what --out holds"
    )
    args = parser.parse_args()
    if args.quick:
        args.splits, args.va_splits, args.streams = 10, 2, 20
        args.out = args.out.with_name(args.out.stem + "_quick.jsonl")
    n_estimators = 50 if args.quick else 100
    args.out.parent.mkdir(parents=True, exist_ok=True)
    done = done_keys(args.out)
    jobs = (
        [("cps", s, k) for k in range(args.splits) for s in REG_SETS]
        + [("va", s, k) for k in range(args.va_splits) for s in CLF_SETS]
        + [("martingale", s, k) for k in range(args.streams) for s in STREAM_SETS]
    )
    start = time.process_time()
    if args.summary_only:
        jobs = []
    with args.out.open("a") as out:
        for part, name, k in jobs:
            if (part, name, k) in done:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if part == "cps":
                    row = run_cps(name, k, n_estimators)
                elif part == "va":
                    row = run_va(name, k)
                else:
                    row = run_stream(name, k, n_estimators)
            out.write(json.dumps(row) + "\n")
            out.flush()
    print(f"CPU time of this run: {time.process_time() - start:.0f} s")
    rows = [json.loads(line) for line in args.out.read_text().splitlines()]
    summarize(
        rows,
        args.out.with_suffix(".md"),
        args.out.with_name(args.out.stem + "_pit.png"),
    )


if __name__ == "__main__":
    main()
