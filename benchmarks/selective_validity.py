"""Validity and efficiency of SelectiveClassifier over random splits.

For two real binary sets (scikit-learn's ``breast_cancer``, 569 rows; keel
``spambase``, 4,597 rows) and each of ``--splits`` random splits (default
200; 40 % train, 30 % calibration, 30 % test, stratified), a scaled
``LogisticRegression`` is fitted on the training part and frozen; then, on
the same calibration and test rows, at ``target_risk`` ``ALPHA`` and
``confidence_level`` 0.9:

- ``ltt``: ``SelectiveClassifier`` (risk ``"error"``, fixed-sequence LTT
  from the most confident threshold, the default grid of 100 thresholds);
- ``ltt_bonferroni``: the same with ``fwer="bonferroni"`` over the grid;
- ``plugin``: the lowest threshold of the same grid whose calibration error
  among accepted rows is at most the target, without any correction;
- ``precision_ltt``: ``risk="precision"`` (positive class 1), and
  ``precision_mapie``: MAPIE 1.6's ``BinaryClassificationController`` with
  ``risk="precision"`` at ``target_level = 1 - PRECISION_ALPHA``, its default grid
  and family-wise procedure (Bonferroni-Holm), and ``precision_mapie_fs``,
  the same with ``fwer_method="fixed_sequence"`` on its grid tested from
  the top (our procedure; MAPIE computes ``1 - precision`` in floating
  point, which can round one error up): the rows predicted positive
  are its accepted rows;
- ``fnr_crc`` and ``fnr_ltt``: ``risk="fnr"`` for class 0 (the share of
  class-0 rows auto-answered as class 1), conformal risk control (in
  expectation) and LTT.

Per method: the share of splits whose **test** risk exceeds the target (for
LTT it should be at most 0.1, within the 99 % binomial band
``binom.ppf(0.99, n, 0.1) / n``; the test risk is an estimate on the test
rows, so near the target its noise adds exceedances), the mean test risk
(CRC: at most the target), the mean test acceptance (efficiency) and the
share of splits where a threshold was certified.

One JSON line per (set, split) is appended to ``--out`` (default
``benchmarks/results/selective_validity.jsonl``) as it goes; a rerun skips
what is there (resumable). The summary goes to stdout and to the same name
with ``.md``. ``--quick``: 10 splits per set. The default run takes about
2 CPU-minutes here.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import os
import warnings

import numpy as np
from scipy.stats import binom
from sklearn.datasets import load_breast_cancer
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import load_keel
from sklearn_iclr26.risk_control import SelectiveClassifier

ALPHA = {"breast_cancer": 0.03, "spambase": 0.03}
FNR_ALPHA = 0.05
PRECISION_ALPHA = 0.05
LEVEL = 0.9
METHODS = [
    "ltt",
    "ltt_bonferroni",
    "plugin",
    "precision_ltt",
    "precision_mapie",
    "precision_mapie_fs",
    "fnr_crc",
    "fnr_ltt",
]


def _load(name):
    if name == "breast_cancer":
        return load_breast_cancer(return_X_y=True)
    return load_keel(name, return_X_y=True)


def _fit(model, X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return SelectiveClassifier(
            FrozenEstimator(model), confidence_level=LEVEL, **params
        ).fit(X, y)


def _entry(clf, X, y, certified=None):
    risk, acceptance = clf.selective_risk(X, y)
    cert = clf.certified_ if certified is None else certified
    return {"risk": risk, "acceptance": acceptance, "certified": bool(cert)}


def _one_split(name, X, y, split):
    alpha = ALPHA[name]
    X_train, X_rest, y_train, y_rest = train_test_split(
        X, y, train_size=0.4, stratify=y, random_state=split
    )
    X_cal, X_test, y_cal, y_test = train_test_split(
        X_rest, y_rest, train_size=0.5, stratify=y_rest, random_state=split
    )
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    model.fit(X_train, y_train)
    out = {"set": name, "split": split, "alpha": alpha}
    ltt = _fit(model, X_cal, y_cal, target_risk=alpha)
    out["ltt"] = _entry(ltt, X_test, y_test)
    out["ltt_bonferroni"] = _entry(
        _fit(model, X_cal, y_cal, target_risk=alpha, fwer="bonferroni"),
        X_test,
        y_test,
    )
    # plug-in: the most accepting threshold of the grid with calibration
    # risk <= alpha, no correction (ltt's curve holds the same grid)
    curve = ltt.risk_curve_
    ok = np.flatnonzero(np.nan_to_num(curve["risk"], nan=1.0) <= alpha)
    best = ok[np.argmax(curve["cost"][ok])]
    plug = _fit(model, X_cal, y_cal, target_risk=alpha)
    plug.threshold_ = float(curve["parameter"][best])
    out["plugin"] = _entry(plug, X_test, y_test, certified=best > 0)
    prec = _fit(model, X_cal, y_cal, target_risk=PRECISION_ALPHA, risk="precision")
    out["precision_ltt"] = _entry(prec, X_test, y_test)
    try:
        from mapie.risk_control import BinaryClassificationController
    except ImportError:
        out["precision_mapie"] = None
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            controller = BinaryClassificationController(
                model.predict_proba,
                "precision",
                1 - PRECISION_ALPHA,
                confidence_level=LEVEL,
            ).calibrate(X_cal, y_cal)
        if controller.best_predict_param is None:
            entry = {"risk": 0.0, "acceptance": 0.0, "certified": False}
        else:
            positive = controller.predict(X_test) == 1
            entry = {
                "risk": float(np.mean(y_test[positive] != 1)) if positive.any() else 0,
                "acceptance": float(positive.mean()),
                "certified": True,
            }
        out["precision_mapie"] = entry
        # the same controller with fixed-sequence testing from the top of its
        # grid: our procedure, with MAPIE's 1 - precision float rounding
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            controller = BinaryClassificationController(
                model.predict_proba,
                "precision",
                1 - PRECISION_ALPHA,
                confidence_level=LEVEL,
                list_predict_params=np.linspace(0.99, 0.0, 100),
                fwer_method="fixed_sequence",
            ).calibrate(X_cal, y_cal)
        if controller.best_predict_param is None:
            entry = {"risk": 0.0, "acceptance": 0.0, "certified": False}
        else:
            positive = controller.predict(X_test) == 1
            entry = {
                "risk": float(np.mean(y_test[positive] != 1)) if positive.any() else 0,
                "acceptance": float(positive.mean()),
                "certified": True,
            }
        out["precision_mapie_fs"] = entry
    for method in ["crc", "ltt"]:
        clf = _fit(
            model,
            X_cal,
            y_cal,
            target_risk=FNR_ALPHA,
            risk="fnr",
            target_class=0,
            method=method,
        )
        out[f"fnr_{method}"] = _entry(clf, X_test, y_test)
    return out


def _summary(rows):
    header = (
        "| set | method | target | splits | exceed share | 99% band | "
        "mean test risk | mean acceptance | certified share |"
    )
    lines = [
        header,
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in ALPHA:
        mine = [r for r in rows if r["set"] == name]
        if not mine:
            continue
        for method in METHODS:
            entries = [r[method] for r in mine if r.get(method) is not None]
            if not entries:
                continue
            n = len(entries)
            target = mine[0]["alpha"]
            if method.startswith("fnr"):
                target = FNR_ALPHA
            elif method.startswith("precision"):
                target = PRECISION_ALPHA
            risk = np.array([e["risk"] for e in entries])
            acc = np.array([e["acceptance"] for e in entries])
            cert = np.array([e["certified"] for e in entries])
            band = binom.ppf(0.99, n, 1 - LEVEL) / n
            lines.append(
                f"| {name} | {method} | {target:g} | {n} | "
                f"{np.mean(risk > target):.3f} | {band:.3f} | {risk.mean():.4f} | "
                f"{acc.mean():.3f} | {cert.mean():.2f} |"
            )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--out",
        default=os.path.join(
            os.path.dirname(__file__), "results", "selective_validity.jsonl"
        ),
    )
    args = parser.parse_args()
    n_splits = 10 if args.quick else args.splits
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    done = set()
    rows = []
    if os.path.exists(args.out):
        with open(args.out) as f:
            for line in f:
                row = json.loads(line)
                rows.append(row)
                done.add((row["set"], row["split"]))
    for name in ALPHA:
        X, y = _load(name)
        for split in range(n_splits):
            if (name, split) in done:
                continue
            row = _one_split(name, X, y, split)
            rows.append(row)
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")
    rows = [r for r in rows if r["split"] < n_splits]
    summary = _summary(rows)
    print(summary)
    with open(os.path.splitext(args.out)[0] + ".md", "w") as f:
        f.write(summary + "\n")


if __name__ == "__main__":
    main()
