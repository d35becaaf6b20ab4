"""Reproduction of Meta-PCN's depth claims on real tabular sets.

For each dataset, depth (number of hidden layers, width 64), seed and variant,
a network is trained on a stratified split (features standardised on the
training rows) and its test accuracy recorded, together with the final
per-layer energies (the middle-to-boundary energy ratio: mean energy of the
middle hidden layers over the mean of the first hidden layer and the output
layer). Every fit: batch 64, Adam 1e-3, the same epochs. Variants (settings
in ``VARIANTS``; ``T`` = ``n_inference_steps``, ``gamma`` =
``inference_learning_rate``, ``m`` = ``inference_momentum``):

* ``meta-pcn``: the paper's meta-PE (``meta_pe=True``) with weight
  normalisation, ``gamma=1, m=0, T=depth`` (the estimator's defaults, with
  ``T`` set to the number of hidden layers);
* ``meta-pcn-nown``: the same without weight normalisation (the paper's
  "w/o WN" ablation);
* ``pcn+wn``: PCN inference instead of the meta-PE, with weight
  normalisation, at PCN's own setting ``gamma=0.1, m=0.3, T=7`` (the paper's
  "w/o meta-PE" ablation; at ``gamma=1`` PCN collapses, see ``pcn+wn-g1``);
* ``pcn``: vanilla PCN (no meta-PE, no normalisation), ``gamma=0.1, m=0.3,
  T=7``;
* ``gn+wn`` and ``gn``: the package's earlier meta-PE reconstruction
  (``meta_pe="gauss_newton"``, ``meta_pe_weight=0.1``) with and without
  normalisation, ``gamma=0.1, m=0.3, T=7``;
* ``bp+wn``: the same network trained by backpropagation
  (:class:`~sklearn_iclr26.neural_network.TorchMLPClassifier`, GELU) with the
  same weight normalisation after every step and at initialisation (the
  comparison the issue asks for);
* ``bp``: backpropagation without normalisation;
* behind ``--variants`` only: ``meta-pcn-spectral`` (the paper's
  ``(sqrt(m)+sqrt(n)) sigma`` normalisation target), ``pcn+wn-g1`` (PCN + WN
  at ``gamma=1, m=0, T=depth``) and ``meta-pcn-t7`` (the paper's meta-PE at
  PCN's ``gamma=0.1, m=0.3, T=7``).

Paired differences (same split, seed and initial weights) with 95 %
t-intervals over datasets x seeds are printed per depth, first of all
meta-pcn - bp+wn.

Results are appended, one JSON line per fit, as each fit ends; a rerun skips
the fits already there (resumable: rerun the same command). Run::

    OMP_NUM_THREADS=1 python benchmarks/meta_pcn_reproduction.py          # 108 fits
    OMP_NUM_THREADS=1 python benchmarks/meta_pcn_reproduction.py --quick  # 36 fits

The default run's 108 new fits took 115 wall-minutes (summed over fits) on a
shared 2-core machine at load average 7-20; CPU time was not measured alone
(about 40 CPU-minutes, estimated). Several processes with disjoint
``--seeds`` / ``--variants`` can share the results file (one line per write).

The default run (the issue's protocol): keel's penbased, spambase and
phoneme (at most 2,000 training rows each, the rest up to 2,000 rows as test
set), depths 2, 4, 8 and 16, 3 seeds, 15 epochs, the default variants
``meta-pcn meta-pcn-nown bp+wn`` plus the rows of the earlier run already in
the results file (``pcn pcn+wn gn gn+wn bp``, same protocol; rerun them with
``--variants``). Loops run seed-major, so an interrupted run leaves whole
seeds. Results in ``benchmarks/results/meta_pcn_reproduction.{jsonl,txt}``.
``--quick``: digits and breast_cancer (at most 800 training rows), depths 2
and 8, 10 epochs, results in ``meta_pcn_reproduction_quick.{jsonl,txt}``.
``--summary`` prints the tables of the rows already written without
fitting.
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
from skorch.callbacks import Callback

from sklearn_iclr26.neural_network import MetaPCNClassifier, TorchMLPClassifier
from sklearn_iclr26.neural_network._pcn_modules import normalise_weight_

RESULTS_DIR = Path(__file__).parent / "results"
# "T": None means n_inference_steps = depth (exact for the paper's meta-PE)
PCN = {"inference_learning_rate": 0.1, "inference_momentum": 0.3, "T": 7}
PAPER = {"inference_learning_rate": 1.0, "inference_momentum": 0.0, "T": None}
GN = {"meta_pe": "gauss_newton", "meta_pe_weight": 0.1, **PCN}
VARIANTS = {
    "meta-pcn": {"meta_pe": True, "weight_norm": True, **PAPER},
    "meta-pcn-nown": {"meta_pe": True, "weight_norm": False, **PAPER},
    "bp+wn": {"weight_norm": True},
    "pcn": {"meta_pe": False, "weight_norm": False, **PCN},
    "pcn+wn": {"meta_pe": False, "weight_norm": True, **PCN},
    "gn": {**GN, "weight_norm": False},
    "gn+wn": {**GN, "weight_norm": True},
    "bp": {"weight_norm": False},
    "meta-pcn-spectral": {
        "meta_pe": True,
        "weight_norm": True,
        "norm_target": "spectral",
        **PAPER,
    },
    "pcn+wn-g1": {"meta_pe": False, "weight_norm": True, **PAPER},
    "meta-pcn-t7": {"meta_pe": True, "weight_norm": True, **PCN},
}
DEFAULT_VARIANTS = ["meta-pcn", "meta-pcn-nown", "bp+wn"]


class WeightNormalisation(Callback):
    """Backprop with Meta-PCN's weight normalisation: every ``nn.Linear``
    weight rescaled at the start of training and after every training step
    (``normalise_weight_``, the estimator's own rule)."""

    def __init__(self, gain=1.0, target="fan_in"):
        self.gain = gain
        self.target = target

    def _normalise(self, net):
        import torch

        with torch.no_grad():
            for layer in net.module_.modules():
                if isinstance(layer, torch.nn.Linear):
                    normalise_weight_(layer.weight, self.gain, self.target)

    def on_train_begin(self, net, **kwargs):
        self._normalise(net)

    def on_batch_end(self, net, training=False, **kwargs):
        if training:
            self._normalise(net)


def load(name):
    if name == "digits":
        return load_digits(return_X_y=True)
    if name == "breast_cancer":
        return load_breast_cancer(return_X_y=True)
    from sklearn_iclr26.datasets import load_keel

    X, y = load_keel(name, return_X_y=True)
    return np.asarray(X, dtype=float), np.asarray(y)


def split(X, y, seed, max_train, max_test=None):
    n_train = min(max_train, int(0.7 * len(y)))
    n_test = len(y) - n_train if max_test is None else min(max_test, len(y) - n_train)
    Xtr, Xte, ytr, yte = train_test_split(
        X, y, train_size=n_train, test_size=n_test, stratify=y, random_state=seed
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


def run_one(name, X, y, depth, seed, variant, epochs, max_train, max_test=None):
    Xtr, Xte, ytr, yte = split(X, y, seed, max_train, max_test)
    settings = dict(VARIANTS[variant])
    common = {
        "hidden_layer_sizes": (64,) * depth,
        "batch_size": 64,
        "learning_rate_init": 1e-3,
        "max_iter": epochs,
        "random_state": seed,
    }
    start = time.perf_counter()
    steps = None
    if variant.startswith("bp"):
        callbacks = [WeightNormalisation()] if settings["weight_norm"] else None
        est = TorchMLPClassifier(activation="gelu", callbacks=callbacks, **common)
        est.fit(Xtr, ytr)
        energies, diverged = None, 0
    else:
        steps = settings.pop("T") or depth
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.filterwarnings("ignore", message=".*n_inference_steps")
            est = MetaPCNClassifier(**common, **settings, n_inference_steps=steps)
            est.fit(Xtr, ytr)
        energies = est.layer_energy_history_[-1].tolist()
        diverged = est.n_diverged_batches_
    return {
        "dataset": name,
        "depth": depth,
        "seed": seed,
        "variant": variant,
        "epochs": epochs,
        "n_inference_steps": steps,
        "settings": {k: v for k, v in VARIANTS[variant].items() if k != "T"},
        "max_train": max_train,
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
        aggfunc=lambda s: f"{s.mean():.3f} +- {s.std(ddof=1):.3f} ({len(s)})",
    )
    print("test accuracy, mean +- sd over seeds (number of seeds)")
    print(table.to_string())
    ratio = df[~df.variant.str.startswith("bp")].pivot_table(
        index=["dataset", "depth"], columns="variant", values="energy_ratio"
    )
    print("\nmiddle-to-boundary energy ratio (mean over seeds)")
    print(ratio.round(4).to_string())
    print("\npaired accuracy differences, 95% t-interval over datasets x seeds")
    wide = df.pivot_table(
        index=["dataset", "depth", "seed"], columns="variant", values="accuracy"
    )
    pairs = [
        ("meta-pcn", "bp+wn"),
        ("meta-pcn", "bp"),
        ("meta-pcn", "pcn+wn"),
        ("meta-pcn", "meta-pcn-nown"),
        ("meta-pcn", "pcn"),
        ("meta-pcn", "gn+wn"),
        ("meta-pcn-spectral", "meta-pcn"),
        ("bp+wn", "bp"),
        ("pcn+wn", "pcn"),
        ("pcn+wn", "bp+wn"),
    ]
    for depth, block in wide.groupby(level="depth"):
        for method, other in pairs:
            if {method, other} <= set(block.columns):
                ok = block[[method, other]].dropna()
                m, lo, hi = paired_ci(ok[method], ok[other])
                print(
                    f"depth {depth:2d}: {method:13s} - {other:13s} = {m:+.3f} "
                    f"[{lo:+.3f}, {hi:+.3f}] (n={len(ok)})"
                )
    print("\ndepth effect: accuracy(depth) - accuracy(depth 2), paired over seeds")
    for variant in sorted(df.variant.unique()):
        block = df[df.variant == variant].pivot_table(
            index=["dataset", "seed"], columns="depth", values="accuracy"
        )
        for depth in [d for d in block.columns if d != 2 and 2 in block.columns]:
            ok = block[[2, depth]].dropna()
            m, lo, hi = paired_ci(ok[depth], ok[2])
            print(
                f"{variant:8s} depth {depth:2d} - 2 = {m:+.3f} [{lo:+.3f}, {hi:+.3f}]"
                f" (n={len(ok)})"
            )
    ratios = df[~df.variant.str.startswith("bp")].pivot_table(
        index=["dataset", "depth", "seed"], columns="variant", values="energy_ratio"
    )
    print("\npaired energy-ratio differences (depth >= 4), 95% t-interval")
    for depth, block in ratios.groupby(level="depth"):
        for method, other in [("meta-pcn", "pcn"), ("pcn+wn", "pcn")]:
            if {method, other} <= set(block.columns):
                ok = block[[method, other]].dropna()
                if len(ok):
                    m, lo, hi = paired_ci(ok[method], ok[other])
                    print(
                        f"depth {depth:2d}: {method:8s} - {other} = {m:+.4f} "
                        f"[{lo:+.4f}, {hi:+.4f}] (n={len(ok)})"
                    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--depths", type=int, nargs="+", default=None)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument(
        "--variants", nargs="+", default=DEFAULT_VARIANTS, choices=list(VARIANTS)
    )
    args = parser.parse_args()
    if args.quick:
        epochs, max_train, max_test = 10, 800, None
        datasets, depths, stem = ["digits", "breast_cancer"], [2, 8], "_quick"
    else:
        epochs, max_train, max_test = 15, 2000, 2000
        datasets = ["penbased", "spambase", "phoneme"]
        depths, stem = [2, 4, 8, 16], ""
    if args.epochs is not None:
        epochs = args.epochs
    if args.depths is not None:
        depths = args.depths
    results = RESULTS_DIR / f"meta_pcn_reproduction{stem}.jsonl"
    seeds = args.seeds
    RESULTS_DIR.mkdir(exist_ok=True)
    rows = []
    if results.exists():
        rows = [json.loads(line) for line in results.read_text().splitlines() if line]
    done = {
        (r["dataset"], r["depth"], r["seed"], r["variant"], r["epochs"]) for r in rows
    }
    data = {}
    for seed in [] if args.summary else seeds:
        for name in datasets:
            if name not in data:
                data[name] = load(name)
            X, y = data[name]
            for depth in depths:
                for variant in args.variants:
                    key = (name, depth, seed, variant, epochs)
                    if key in done:
                        continue
                    row = run_one(
                        name,
                        X,
                        y,
                        depth,
                        seed,
                        variant,
                        epochs,
                        max_train,
                        max_test,
                    )
                    rows.append(row)
                    with results.open("a") as f:
                        f.write(json.dumps(row) + "\n")
                    print(
                        f"{name} depth={depth} seed={seed} {variant}: "
                        f"acc {row['accuracy']:.3f} ({row['seconds']:.1f} s)",
                        flush=True,
                    )
    summarise(rows, epochs)


if __name__ == "__main__":
    main()
