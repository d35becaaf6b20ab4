"""Reproduction of Meta-PCN's depth claims on real tabular sets.

For each dataset, depth (number of hidden layers, width 64), seed and variant,
a network is trained on a stratified split (at most 5,000 training rows,
features standardised on the training rows; 800 in the default run) and its
test accuracy recorded,
together with the final per-layer energies (the middle-to-boundary energy
ratio: mean energy of the middle hidden layers over the mean of the first
hidden layer and the output layer). Variants:

* ``pcn``: vanilla PCN (``meta_pe=False, weight_norm=False``);
* ``pcn+wn``: PCN with weight normalisation;
* ``pcn+meta``: PCN with the meta-prediction-error loss;
* ``meta-pcn``: both (the estimator's default);
* ``bp``: the same network trained by backpropagation
  (:class:`~sklearn_iclr26.neural_network.TorchMLPClassifier`, Adam, same
  learning rate, batch size and epochs).

Paired differences (same split and seed) with 95 % t-intervals over
datasets x seeds are printed per depth: meta-pcn - pcn, meta-pcn - bp,
pcn+wn - pcn and pcn+wn - bp.

Results are appended, one JSON line per fit, to
``benchmarks/results/meta_pcn_reproduction.jsonl``; a rerun skips the fits
already there (resumable). Run::

    OMP_NUM_THREADS=1 python benchmarks/meta_pcn_reproduction.py          # ~10 min
    OMP_NUM_THREADS=1 python benchmarks/meta_pcn_reproduction.py --full   # ~60 min

The default run: digits and breast_cancer (at most 800 training rows),
depths 2 and 8, 3 seeds, 10 epochs. ``--full``: at most 5,000 training rows,
keel's phoneme added, depths 2, 4, 8 and 16, 20 epochs.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.neural_network import MetaPCNClassifier, TorchMLPClassifier

RESULTS = Path(__file__).parent / "results" / "meta_pcn_reproduction.jsonl"
VARIANTS = {
    "pcn": {"meta_pe": False, "weight_norm": False},
    "pcn+wn": {"meta_pe": False, "weight_norm": True},
    "pcn+meta": {"meta_pe": True, "weight_norm": False},
    "meta-pcn": {"meta_pe": True, "weight_norm": True},
}


def load(name):
    if name == "digits":
        return load_digits(return_X_y=True)
    if name == "breast_cancer":
        return load_breast_cancer(return_X_y=True)
    from sklearn_iclr26.datasets import load_keel

    X, y = load_keel(name, return_X_y=True)
    return np.asarray(X, dtype=float), np.asarray(y)


def split(X, y, seed, max_train):
    n_train = min(max_train, int(0.7 * len(y)))
    Xtr, Xte, ytr, yte = train_test_split(
        X, y, train_size=n_train, stratify=y, random_state=seed
    )
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), scaler.transform(Xte), ytr, yte


def energy_ratio(energies):
    hidden = energies[:-1]
    if len(hidden) < 3:
        return float("nan")
    middle = hidden[1:].mean()
    boundary = 0.5 * (hidden[0] + energies[-1])
    return float(middle / boundary) if boundary > 0 else float("nan")


def run_one(name, X, y, depth, seed, variant, epochs, max_train):
    Xtr, Xte, ytr, yte = split(X, y, seed, max_train)
    common = {
        "hidden_layer_sizes": (64,) * depth,
        "batch_size": 64,
        "learning_rate_init": 1e-3,
        "max_iter": epochs,
        "random_state": seed,
    }
    start = time.perf_counter()
    if variant == "bp":
        est = TorchMLPClassifier(activation="gelu", **common).fit(Xtr, ytr)
        energies, diverged = None, 0
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            est = MetaPCNClassifier(**common, **VARIANTS[variant]).fit(Xtr, ytr)
        energies = est.layer_energy_history_[-1].tolist()
        diverged = est.n_diverged_batches_
    return {
        "dataset": name,
        "depth": depth,
        "seed": seed,
        "variant": variant,
        "epochs": epochs,
        "accuracy": float(est.score(Xte, yte)),
        "energies": energies,
        "energy_ratio": None if energies is None else energy_ratio(np.array(energies)),
        "diverged_batches": diverged,
        "seconds": time.perf_counter() - start,
    }


def paired_ci(a, b):
    d = np.asarray(a) - np.asarray(b)
    if len(d) < 2:
        return float(d.mean()), float("nan"), float("nan")
    half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    return float(d.mean()), float(d.mean() - half), float(d.mean() + half)


def summarise(rows, epochs):
    import pandas as pd

    df = pd.DataFrame([r for r in rows if r["epochs"] == epochs])
    if df.empty:
        return
    table = df.pivot_table(
        index=["dataset", "depth"],
        columns="variant",
        values="accuracy",
        aggfunc=lambda s: f"{s.mean():.3f} +- {s.std(ddof=1):.3f}",
    )
    print(table.to_string())
    ratio = df[df.variant != "bp"].pivot_table(
        index=["dataset", "depth"], columns="variant", values="energy_ratio"
    )
    print("\nmiddle-to-boundary energy ratio (mean over seeds)")
    print(ratio.round(4).to_string())
    print("\npaired accuracy differences, 95% t-interval over datasets x seeds")
    wide = df.pivot_table(
        index=["dataset", "depth", "seed"], columns="variant", values="accuracy"
    )
    for depth, block in wide.groupby(level="depth"):
        for method in ("meta-pcn", "pcn+wn"):
            for other in ("pcn", "bp"):
                if {method, other} <= set(block.columns):
                    ok = block[[method, other]].dropna()
                    m, lo, hi = paired_ci(ok[method], ok[other])
                    print(
                        f"depth {depth:2d}: {method} - {other:3s} = {m:+.3f} "
                        f"[{lo:+.3f}, {hi:+.3f}] (n={len(ok)})"
                    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--epochs", type=int, default=None)
    args = parser.parse_args()
    if args.epochs is None:
        args.epochs = 20 if args.full else 10
    max_train = 5000 if args.full else 800
    datasets = ["digits", "breast_cancer"] + (["phoneme"] if args.full else [])
    depths = [2, 4, 8, 16] if args.full else [2, 8]
    seeds = [0, 1, 2]
    RESULTS.parent.mkdir(exist_ok=True)
    rows = []
    if RESULTS.exists():
        rows = [json.loads(line) for line in RESULTS.read_text().splitlines() if line]
    done = {
        (r["dataset"], r["depth"], r["seed"], r["variant"], r["epochs"]) for r in rows
    }
    for name in datasets:
        X, y = load(name)
        for depth in depths:
            for seed in seeds:
                for variant in [*VARIANTS, "bp"]:
                    key = (name, depth, seed, variant, args.epochs)
                    if key in done:
                        continue
                    row = run_one(
                        name, X, y, depth, seed, variant, args.epochs, max_train
                    )
                    rows.append(row)
                    with RESULTS.open("a") as f:
                        f.write(json.dumps(row) + "\n")
                    print(
                        f"{name} depth={depth} seed={seed} {variant}: "
                        f"acc {row['accuracy']:.3f} ({row['seconds']:.1f} s)",
                        flush=True,
                    )
    summarise(rows, args.epochs)


if __name__ == "__main__":
    main()
