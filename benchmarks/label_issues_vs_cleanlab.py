"""Label issues found by the package's rules and by cleanlab, side by side.

Three real multi-class sets (digits, keel ``segment``, keel ``satimage``, all
offline), labels flipped with :func:`~sklearn_iclr26.datasets.make_label_noise`
(``symmetric`` and ``instance`` noise, rate 0.2). One set of 5-fold
out-of-fold ``pred_probs`` per (set, noise, seed, model) is shared by every
rule, so the rows compare the rules only:

- ``cleanlab default``: ``cleanlab.filter.find_label_issues`` with its
  default ``filter_by="prune_by_noise_rate"``;
- ``cleanlab confident_learning`` and ours with ``filter_by=
  "confident_learning"`` (the ClassConditionalNoiseCorrector rule; the
  ``diff`` column counts the rows where the two masks differ, expected 0);
- ours ``filter_by="posterior"`` (the InstanceNoiseCorrector rule at the
  confident-joint flip rate);
- ``NDX fitted``: ``InstanceNoiseCorrector(model).find_label_issues(X, y)``,
  its own in-sample fit (not the shared ``pred_probs``).

Precision and recall of the flagged rows against the truly flipped ones;
AUROC of the ranking score (``1 - self_confidence`` of the ``pred_probs``,
cleanlab's default ranking, for every ``pred_probs`` rule: our posterior is
monotone in it, so its AUROC is the same; ``mislabel_scores_`` for NDX fitted).

Results are appended to ``benchmarks/results/label_issues_vs_cleanlab.jsonl``
as each case finishes (``_quick.jsonl`` with ``--quick``); a rerun skips the
cases already there. Run::

    OMP_NUM_THREADS=1 python benchmarks/label_issues_vs_cleanlab.py [--quick]

``--quick``: one seed, at most 1500 rows per set, logistic regression only.
Defaults: 3 seeds, all rows, logistic regression and LightGBM (131 s in all
on one busy core; ``--quick`` about 7 s).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from cleanlab.filter import find_label_issues as cleanlab_find_label_issues
from lightgbm import LGBMClassifier
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import load_keel, make_label_noise
from sklearn_iclr26.label_noise import InstanceNoiseCorrector, find_label_issues

RESULTS = Path(__file__).parent / "results" / "label_issues_vs_cleanlab.jsonl"
SETS = ("digits", "segment", "satimage")
NOISES = ("symmetric", "instance")
RATE = 0.2


def load(name, max_rows, seed):
    if name == "digits":
        X, y = load_digits(return_X_y=True)
    else:
        X, y = load_keel(name, return_X_y=True)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if max_rows is not None and len(y) > max_rows:
        rows = np.random.RandomState(seed).permutation(len(y))[:max_rows]
        X, y = X[rows], y[rows]
    return X, y


def model(name, seed):
    if name == "logistic":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    return LGBMClassifier(n_estimators=100, n_jobs=1, verbose=-1, random_state=seed)


def scores(mask, flipped, ranking=None):
    record = {
        "n_flagged": int(mask.sum()),
        "precision": float(np.mean(flipped[mask])) if mask.any() else float("nan"),
        "recall": float(np.mean(mask[flipped])),
    }
    if ranking is not None:
        record["auroc"] = float(roc_auc_score(flipped, ranking))
    return record


def run_case(set_name, noise, seed, model_name, max_rows):
    X, y = load(set_name, max_rows, seed)
    y_noisy, flipped = make_label_noise(y, X, kind=noise, rate=RATE, random_state=seed)
    folds = StratifiedKFold(5, shuffle=True, random_state=seed)
    pred_probs = cross_val_predict(
        model(model_name, seed), X, y_noisy, cv=folds, method="predict_proba"
    )
    rows = np.arange(len(y_noisy))
    ranking = 1.0 - pred_probs[rows, y_noisy]
    out = {}
    cl_default = cleanlab_find_label_issues(y_noisy, pred_probs)
    out["cleanlab default"] = scores(cl_default, flipped, ranking)
    cl_cl = cleanlab_find_label_issues(
        y_noisy, pred_probs, filter_by="confident_learning"
    )
    out["cleanlab confident_learning"] = scores(cl_cl, flipped, ranking)
    ours_cl = find_label_issues(y_noisy, pred_probs, filter_by="confident_learning")
    out["ours confident_learning"] = {
        **scores(ours_cl, flipped, ranking),
        "diff": int(np.sum(ours_cl != cl_cl)),
    }
    ours_post = find_label_issues(y_noisy, pred_probs, filter_by="posterior")
    out["ours posterior"] = scores(ours_post, flipped, ranking)
    ndx = InstanceNoiseCorrector(model(model_name, seed), random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        mask = ndx.find_label_issues(X, y_noisy)
    out["NDX fitted"] = scores(mask, flipped, ndx.mislabel_scores_)
    return {"n_rows": len(y), "flip_rate": float(flipped.mean()), "methods": out}


def summarize(records):
    table = {}
    for r in records:
        for method, m in r["methods"].items():
            key = (r["set"], r["noise"], r["model"], method)
            table.setdefault(key, []).append(m)
    print(
        "| set | noise | model | method | flagged | precision | recall | AUROC | "
        "diff vs cleanlab |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for (s, noise, mod, method), ms in table.items():

        def mean(field, ms=ms):
            return np.nanmean([m.get(field, np.nan) for m in ms])

        diff = "" if "diff" not in ms[0] else str(sum(m["diff"] for m in ms))
        print(
            f"| {s} | {noise} | {mod} | {method} | {mean('n_flagged'):.0f} | "
            f"{mean('precision'):.3f} | {mean('recall'):.3f} | "
            f"{mean('auroc'):.3f} | {diff} |"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    output = args.output
    if args.quick:
        output = output.with_name(output.stem + "_quick.jsonl")
        seeds, max_rows, models = (0,), 1500, ("logistic",)
    else:
        seeds, max_rows, models = (0, 1, 2), None, ("logistic", "lightgbm")
    output.parent.mkdir(parents=True, exist_ok=True)
    done = []
    if output.exists():
        done = [json.loads(line) for line in output.read_text().splitlines() if line]
    seen = {(r["set"], r["noise"], r["seed"], r["model"]) for r in done}
    for set_name in SETS:
        for noise in NOISES:
            for model_name in models:
                for seed in seeds:
                    key = (set_name, noise, seed, model_name)
                    if key in seen:
                        continue
                    start = time.perf_counter()
                    record = run_case(set_name, noise, seed, model_name, max_rows)
                    record.update(
                        set=set_name,
                        noise=noise,
                        seed=seed,
                        model=model_name,
                        seconds=round(time.perf_counter() - start, 1),
                    )
                    with output.open("a") as f:
                        f.write(json.dumps(record) + "\n")
                    done.append(record)
                    print(f"{key}: {record['seconds']} s", flush=True)
    summarize([r for r in done if r["seed"] in seeds and r["model"] in models])


if __name__ == "__main__":
    main()
