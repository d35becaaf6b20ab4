"""Reproduction of MoMa's adaptive module composition (AMC) on real data.

Hub: one module per target of a multi-output regression set (Mulan, in
``../shared/data/multioutput``: scm20d, rf1, osales, wq), all trained from ONE
shared initialisation (``ModuleHub.add_task``: ``TorchMLPRegressor((64,),
max_iter=200)``, same seed) on a fixed half of the rows (at most 2,000; the
"source" rows), once per set (cached with ``ModuleHub.save`` under
``$TMPDIR/sklearn_iclr26_moma_hubs``). Downstream task, per seed: a held-out
target (cycling through the targets over the seeds; its own module leaves the
hub), learned from a *small* set of ``--n-down`` rows drawn from the other
rows and scored on the remaining ones (at most 2,000). Every network (AMC
fine-tunes, baselines, scratch) trains for 30 epochs: with 200 epochs all of
them overfit the small downstream sets (checked on wq and scm20d).

Methods, each in both merge modes (``weights``: merge the hidden layers and
fine-tune with a new head; ``predictions``: a ridge head per module, blended):

* ``amc``: the simplex weights from the kNN proxy (the method);
* ``best``: the single best module by the proxy (``max_modules=1``);
* ``uniform``: uniform weights on AMC's selected modules;
* ``soup``: uniform weights on every module;
* ``random``: uniform weights on a random subset of AMC's size;
* plus ``scratch``: the same MLP trained on the downstream rows alone.

Error: test MAE divided by the MAE of the downstream-train mean (normalised
MAE; < 1 is better than the mean). Also recorded: the Spearman correlation,
across modules, between each module's proxy error and the test MAE of that
module alone (one-hot weights, weights mode), and AMC (weights mode) on random
sub-hubs of 2, 4 and 8 modules (the hub-size ablation).

One row per (dataset, seed) is appended to
``benchmarks/results/moma_reproduction.csv`` as soon as it finishes (a killed
run resumes where it stopped); the summary (mean +- sd per method, paired
differences to AMC with 95 % t-intervals over seeds) goes to
``benchmarks/results/moma_reproduction.txt``.

Usage: ``python benchmarks/moma_reproduction.py [--seeds 10] [--n-down 200]
[--data-home PATH]``; ``SKLEARN_ICLR26_QUICK=1`` runs 2 seeds on 2 sets.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import csv
import json
import os
import time
from pathlib import Path

import numpy as np
from scipy import stats
from sklearn.impute import SimpleImputer
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import load_multioutput
from sklearn_iclr26.ensemble import AdaptiveCompositionRegressor, ModuleHub
from sklearn_iclr26.neural_network import TorchMLPRegressor

RESULTS = Path(__file__).parent / "results"
CSV = RESULTS / "moma_reproduction.csv"
SUMMARY = RESULTS / "moma_reproduction.txt"
DATASETS = ["scm20d", "rf1", "osales", "wq"]
WEIGHTINGS = ["amc", "best", "uniform", "soup", "random"]
MERGES = ["weights", "predictions"]
HUB_SIZES = [2, 4, 8]
MLP = {"hidden_layer_sizes": (64,), "max_iter": 200, "learning_rate_init": 1e-2}


FINETUNE = 30  # fine-tune epochs of every method (and of scratch)
HUB_SEED = 12345
HUB_CACHE = Path(os.environ.get("TMPDIR", "/tmp")) / "sklearn_iclr26_moma_hubs"


def _nmae(y_true, y_pred, y_train):
    base = np.mean(np.abs(y_true - y_train.mean()))
    return float(np.mean(np.abs(y_true - y_pred)) / base)


def _prepared(name, data_home):
    """Features (imputed, scaled on the source rows), targets, source rows, hub."""
    bunch = load_multioutput(name, data_home=data_home)
    X, Y = bunch.data.astype(float), bunch.target.astype(float)
    rng = np.random.RandomState(HUB_SEED)
    perm = rng.permutation(len(X))
    n_src = min(len(X) // 2, 2000)
    src, rest = perm[:n_src], np.sort(perm[n_src:])
    imputer = SimpleImputer(strategy="median").fit(X[src])
    scaler = StandardScaler().fit(imputer.transform(X[src]))
    X = scaler.transform(imputer.transform(X))
    HUB_CACHE.mkdir(parents=True, exist_ok=True)
    path = HUB_CACHE / f"{name}.pkl"
    if path.exists():
        hub = ModuleHub.load(path)
    else:
        # one module per target, all from one shared initialisation
        hub = ModuleHub(TorchMLPRegressor(**MLP), random_state=HUB_SEED)
        for j in range(Y.shape[1]):
            hub.add_task(f"t{j}", X[src], Y[src, j])
        hub.save(path)
    return X, Y, rest, hub


def run_case(name, seed, n_down, data_home):
    X, Y, rest, full_hub = _prepared(name, data_home)
    rng = np.random.RandomState(seed)
    # the downstream target cycles through the targets over the seeds; its own
    # module leaves the hub
    target = int(
        np.random.RandomState(HUB_SEED).permutation(Y.shape[1])[seed % Y.shape[1]]
    )
    hub = ModuleHub()
    for j in range(Y.shape[1]):
        if j != target:
            hub.add_module(f"t{j}", full_hub[f"t{j}"])
    perm = rng.permutation(rest)
    n_down = min(n_down, int(0.4 * len(rest)))
    down, test = perm[:n_down], perm[n_down : n_down + 2000]
    Xd, yd, Xt, yt = X[down], Y[down, target], X[test], Y[test, target]
    row = {"dataset": name, "seed": seed, "target": target, "n_modules": len(hub)}

    def score(est):
        return _nmae(yt, est.fit(Xd, yd).predict(Xt), yd)

    amc = {}
    for merge in MERGES:
        est = AdaptiveCompositionRegressor(
            hub, merge=merge, max_iter=FINETUNE, random_state=seed
        )
        row[f"amc_{merge}"] = score(est)
        amc[merge] = est
    w = amc["weights"].module_weights_
    support = w > 0
    row["amc_n_selected"] = int(support.sum())
    uniform = support / support.sum()
    rand = np.zeros(len(w))
    rand[rng.choice(len(w), support.sum(), replace=False)] = 1.0
    fixed = {"best": None, "uniform": uniform, "soup": "uniform", "random": rand}
    for weighting, weights in fixed.items():
        for merge in MERGES:
            params = {"merge": merge, "max_iter": FINETUNE, "random_state": seed}
            if weighting == "best":
                params["max_modules"] = 1
            else:
                params["weights"] = weights
            row[f"{weighting}_{merge}"] = score(
                AdaptiveCompositionRegressor(hub, **params)
            )
    row["scratch"] = _nmae(
        yt,
        TorchMLPRegressor(**{**MLP, "max_iter": FINETUNE}, random_state=seed)
        .fit(Xd, yd)
        .predict(Xt),
        yd,
    )
    # proxy error vs the final error of each module alone
    finals = []
    for j in range(len(hub)):
        onehot = np.eye(len(hub))[j]
        finals.append(
            score(
                AdaptiveCompositionRegressor(
                    hub, weights=onehot, max_iter=FINETUNE, random_state=seed
                )
            )
        )
    row["proxy_final_spearman"] = float(
        stats.spearmanr(amc["weights"].proxy_errors_, finals).statistic
    )
    # hub-size ablation: AMC on random sub-hubs
    for size in HUB_SIZES:
        if size >= len(hub):
            row[f"hub{size}"] = np.nan
            continue
        names = list(rng.choice(hub.names, size, replace=False))
        sub = ModuleHub()
        for n in names:
            sub.add_module(n, hub[n])
        row[f"hub{size}"] = score(
            AdaptiveCompositionRegressor(sub, max_iter=FINETUNE, random_state=seed)
        )
    row["weights"] = json.dumps(
        {n: round(float(v), 4) for n, v in zip(hub.names, w) if v > 0}
    )
    return row


def _ci(diff):
    diff = np.asarray(diff, dtype=float)
    diff = diff[np.isfinite(diff)]
    n = len(diff)
    if n < 2:
        return np.nan, np.nan, np.nan, n
    half = stats.t.ppf(0.975, n - 1) * diff.std(ddof=1) / np.sqrt(n)
    return diff.mean(), diff.mean() - half, diff.mean() + half, n


def summarise(rows):
    methods = [f"{w}_{m}" for w in WEIGHTINGS for m in MERGES] + ["scratch"]
    lines = [
        (
            "MoMa reproduction: normalised test MAE (MAE / MAE of the train mean), "
            "mean +- sd over seeds"
        ),
        "",
    ]
    sets = sorted({r["dataset"] for r in rows})
    header = f"{'method':22s}" + "".join(f"{s:>16s}" for s in sets) + f"{'all':>16s}"
    lines.append(header)
    for m in methods:
        cells = []
        for s in [*sets, "all"]:
            v = np.array([float(r[m]) for r in rows if s == "all" or r["dataset"] == s])
            cells.append(f"{v.mean():8.3f} +-{v.std(ddof=1) if len(v) > 1 else 0:5.3f}")
        lines.append(f"{m:22s}" + "".join(f"{c:>16s}" for c in cells))
    lines += ["", "Paired differences (method - AMC, same merge), all cases:"]
    lines.append(f"{'method':22s}{'mean':>9s}{'95% CI':>22s}{'n':>5s}")
    for merge in MERGES:
        base = np.array([float(r[f"amc_{merge}"]) for r in rows])
        for w in WEIGHTINGS[1:]:
            d = np.array([float(r[f"{w}_{merge}"]) for r in rows]) - base
            mean, lo, hi, n = _ci(d)
            lines.append(
                f"{w + '_' + merge:22s}{mean:9.4f}  [{lo:8.4f}, {hi:8.4f}]{n:5d}"
            )
    d = np.array([float(r["amc_weights"]) - float(r["amc_predictions"]) for r in rows])
    mean, lo, hi, n = _ci(d)
    lines.append(
        f"{'weights - predictions':22s}{mean:9.4f}  [{lo:8.4f}, {hi:8.4f}]{n:5d}"
    )
    d = np.array([float(r["scratch"]) - float(r["amc_weights"]) for r in rows])
    mean, lo, hi, n = _ci(d)
    lines.append(
        f"{'scratch - amc_weights':22s}{mean:9.4f}  [{lo:8.4f}, {hi:8.4f}]{n:5d}"
    )
    rho = np.array([float(r["proxy_final_spearman"]) for r in rows])
    mean, lo, hi, n = _ci(rho)
    lines += [
        "",
        (
            "Spearman(proxy error, final MAE of the module alone) across modules: "
            f"mean {mean:.3f} [{lo:.3f}, {hi:.3f}] over {n} cases"
        ),
        "",
        "Hub-size ablation (AMC, weights mode; random sub-hubs): mean normalised MAE",
    ]
    for size in HUB_SIZES:
        v = np.array([float(r[f"hub{size}"]) for r in rows])
        v = v[np.isfinite(v)]
        lines.append(f"  {size:2d} modules: {v.mean():.3f} (n={len(v)})")
    full = np.array([float(r["amc_weights"]) for r in rows])
    lines.append(f"  full hub : {full.mean():.3f} (n={len(full)})")
    sel = np.array([int(r["amc_n_selected"]) for r in rows])
    nm = np.array([int(r["n_modules"]) for r in rows])
    lines.append(
        f"\nModules selected by AMC: median {np.median(sel):.0f} of median "
        f"{np.median(nm):.0f} (range {sel.min()}-{sel.max()})"
    )
    return "\n".join(lines) + "\n"


def _default_data_home():
    """``$SKLEARN_ICLR26_DATA``, else the first ``shared/data/multioutput`` above."""
    if os.environ.get("SKLEARN_ICLR26_DATA"):
        return os.environ["SKLEARN_ICLR26_DATA"]
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "data" / "multioutput"
        if candidate.is_dir():
            return str(candidate)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--n-down", type=int, default=200)
    parser.add_argument("--data-home", default=_default_data_home())
    parser.add_argument("--datasets", nargs="*", default=DATASETS)
    args = parser.parse_args()
    quick = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
    seeds = 2 if quick else args.seeds
    datasets = args.datasets[:2] if quick else args.datasets
    out_csv = CSV.with_name("moma_reproduction_quick.csv") if quick else CSV
    RESULTS.mkdir(exist_ok=True)
    rows = []
    if out_csv.exists():
        with open(out_csv) as f:
            rows = list(csv.DictReader(f))
    done = {(r["dataset"], int(r["seed"])) for r in rows}
    for name in datasets:
        for seed in range(seeds):
            if (name, seed) in done:
                continue
            t0 = time.perf_counter()
            row = run_case(name, seed, args.n_down, args.data_home)
            row["seconds"] = round(time.perf_counter() - t0, 1)
            new = not out_csv.exists()
            with open(out_csv, "a", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=list(row))
                if new:
                    writer.writeheader()
                writer.writerow(row)
            rows.append({k: str(v) for k, v in row.items()})
            print(
                f"{name} seed {seed}: amc {row['amc_weights']:.3f} soup "
                f"{row['soup_weights']:.3f} ({row['seconds']} s)",
                flush=True,
            )
    text = summarise(rows)
    if not quick:
        SUMMARY.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
