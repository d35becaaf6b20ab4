"""Training-time overhead of the memorization diagnostics, and CSG vs cleanlab.

On real tabular sets with 20 % symmetric label noise
(``make_label_noise``), each round times every method once, in an order
rotated from round to round (interleaved rounds: load from other processes on
a shared machine hits every method alike). Reported: median seconds, median
per-round ratios, and mislabel-detection AUROC (deterministic: every round
uses the same seeds).

Methods:

* ``plain MLP``: the CSG network (``MLPNet`` (64,), SGD momentum, lr 0.05,
  weight decay 5e-4, full batch, 100 epochs) trained by ``train_module``
  without any callback.
* ``CSG full``: ``SampleGradientMemorization(final_model="full")``, the same
  network and 100 epochs with the ``CumulativeSampleGradient`` callback:
  ``CSG full / plain MLP`` is the callback's overhead.
* ``CSG stopped``: ``SampleGradientMemorization()`` (default
  ``final_model="stopped"``): stops at the weight-norm peak. This is the
  route the paper prices at 0.1-0.3x of one training run.
* ``cleanlab 5-fold``: 5-fold stratified out-of-fold ``pred_probs`` of the
  same plain network (100 epochs per fold), then
  ``cleanlab.filter.find_label_issues`` (mask) and
  ``cleanlab.rank.get_label_quality_scores`` (ranking for the AUROC).
  Target from the issue: ``CSG stopped <= 0.5x cleanlab 5-fold`` at equal or
  better AUROC ("yes": point AUROC >= cleanlab's; "non-inferior only": lower,
  but the 95 % bootstrap interval over rows of the AUROC difference reaches 0).
* ``plain RLP net``: ``MLPNet`` (64, 64), Adam lr 1e-2, 50 epochs (the
  ``RLPHeadClassifier`` defaults) without heads; ``RLP lambda=0`` and
  ``RLP lambda=1``: ``RLPHeadClassifier`` with its default head on the last
  layer (passive probe / regularizer on), which also records the heads'
  random-label accuracy on all rows after every epoch.

Needs cleanlab (``pip install sklearn-iclr26[benchmarks]``). Default run: 3
sets of <= 800 rows, 15 rounds, about 2 minutes on one core.

``--overhead``: the CSG callback's **per-epoch** overhead (a different
quantity from the paper's 0.1-0.3x, which is a whole-run ratio: see part
``csg`` of ``memorization_reproduction.py``). Digits (800 rows), the CSG
network at (64,) full batch and (512, 512) batch 128, SGD momentum, the same
epochs for every variant: plain training; the callback with the peak
weights kept as before this change (``copy.deepcopy(state_dict)`` at every
new maximum of the weight norm, i.e. every still-rising epoch); the callback
now (``copy_`` into a buffer allocated once); the callback without peak
detection (no snapshots). Interleaved rounds, minimum over rounds. Written to
``results/bench_memorization_overhead.txt``.

    OMP_NUM_THREADS=1 python benchmarks/bench_memorization.py [--rounds 3]
    OMP_NUM_THREADS=1 python benchmarks/bench_memorization.py --overhead
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import copy
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import load_keel, make_label_noise
from sklearn_iclr26.memorization import (
    CumulativeSampleGradient,
    RLPHeadClassifier,
    SampleGradientMemorization,
)
from sklearn_iclr26.memorization._modules import (
    MLPNet,
    PerSampleCrossEntropy,
    SGDMomentum,
)
from sklearn_iclr26.utils._torch import forward_module, train_module

RESULTS = Path(__file__).parent / "results"
SEED = 0


def _datasets(max_rows):
    sets = {
        "breast_cancer": load_breast_cancer(return_X_y=True),
        "pima": load_keel("pima", return_X_y=True),
        "digits": load_digits(return_X_y=True),
    }
    out = {}
    for name, (X, y) in sets.items():
        X, y = np.asarray(X, dtype=float), np.asarray(y)
        if X.shape[0] > max_rows:
            idx = np.random.RandomState(0).choice(X.shape[0], max_rows, replace=False)
            X, y = X[idx], y[idx]
        X = StandardScaler().fit_transform(X)
        y = np.unique(y, return_inverse=True)[1]
        y_obs, flipped = make_label_noise(
            y, X, kind="symmetric", rate=0.2, random_state=SEED
        )
        out[name] = (X, y_obs, flipped)
    return out


def _plain_csg_net(X, y):
    return train_module(
        MLPNet,
        X,
        y,
        criterion=PerSampleCrossEntropy,
        module_params={
            "n_features": X.shape[1],
            "n_outputs": int(y.max()) + 1,
            "hidden_layer_sizes": (64,),
        },
        max_epochs=100,
        learning_rate=0.05,
        optimizer=SGDMomentum,
        weight_decay=5e-4,
        random_state=SEED,
    )


def plain_mlp(X, y):
    _plain_csg_net(X, y)


def csg(final_model):
    def run(X, y):
        est = SampleGradientMemorization(final_model=final_model, random_state=SEED)
        est.fit(X, y)
        return est.csg_scores_, est.label_issues_

    return run


def cleanlab_5fold(X, y):
    from cleanlab.filter import find_label_issues
    from cleanlab.rank import get_label_quality_scores

    pred_probs = np.zeros((len(y), int(y.max()) + 1))
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=SEED).split(X, y):
        net = _plain_csg_net(X[tr], y[tr])
        pred_probs[te] = torch.softmax(
            torch.as_tensor(forward_module(net, X[te])), dim=1
        ).numpy()
    mask = find_label_issues(y, pred_probs)
    return 1.0 - get_label_quality_scores(y, pred_probs), mask


def plain_rlp_net(X, y):
    train_module(
        MLPNet,
        X,
        y,
        criterion=PerSampleCrossEntropy,
        module_params={
            "n_features": X.shape[1],
            "n_outputs": int(y.max()) + 1,
            "hidden_layer_sizes": (64, 64),
        },
        max_epochs=50,
        learning_rate=1e-2,
        random_state=SEED,
    )


def rlp(memorization_weight):
    def run(X, y):
        RLPHeadClassifier(
            memorization_weight=memorization_weight, random_state=SEED
        ).fit(X, y)

    return run


METHODS = {
    "plain MLP": plain_mlp,
    "CSG full": csg("full"),
    "CSG stopped": csg("stopped"),
    "cleanlab 5-fold": cleanlab_5fold,
    "plain RLP net": plain_rlp_net,
    "RLP lambda=0": rlp(0.0),
    "RLP lambda=1": rlp(1.0),
}
RATIOS = [
    ("CSG full", "plain MLP", "callback overhead, same 100 epochs"),
    ("CSG stopped", "plain MLP", "CSG scores vs one training run"),
    ("CSG stopped", "cleanlab 5-fold", "target <= 0.5"),
    ("RLP lambda=0", "plain RLP net", "heads as passive probes"),
    ("RLP lambda=1", "plain RLP net", "heads + regularizer"),
]


def _bootstrap_auroc_diff(flipped, a, b, n_boot=1000):
    """95 % percentile bootstrap interval (over rows) of AUROC(a) - AUROC(b)."""
    rng = np.random.RandomState(SEED)
    diffs = []
    for _ in range(n_boot):
        idx = rng.randint(len(flipped), size=len(flipped))
        if flipped[idx].all() or not flipped[idx].any():
            continue
        diffs.append(
            roc_auc_score(flipped[idx], a[idx]) - roc_auc_score(flipped[idx], b[idx])
        )
    return np.percentile(diffs, [2.5, 97.5])


class _DeepcopySnapshot(CumulativeSampleGradient):
    """The peak snapshot as before: fresh copies at every new maximum."""

    def _snapshot(self, module):
        self._peak_snapshot = (self.csg_.copy(), self.csl_.copy())
        self._state_buffer = copy.deepcopy(module.state_dict())


def _overhead_run(X, y, hidden, batch_size, epochs, callback):
    callbacks = [] if callback is None else [("csg", callback)]
    t0 = time.perf_counter()
    train_module(
        MLPNet,
        X,
        y,
        criterion=PerSampleCrossEntropy,
        module_params={
            "n_features": X.shape[1],
            "n_outputs": int(y.max()) + 1,
            "hidden_layer_sizes": hidden,
        },
        aux={"sample_id": np.arange(len(y))},
        max_epochs=epochs,
        batch_size=batch_size,
        learning_rate=0.05,
        optimizer=SGDMomentum,
        weight_decay=5e-4,
        random_state=SEED,
        callbacks=callbacks,
    )
    return time.perf_counter() - t0


def overhead(rounds, epochs):
    X, y = load_digits(return_X_y=True)
    X, y = StandardScaler().fit_transform(X[:800]), y[:800]
    variants = {
        "plain": lambda: None,
        "callback, deepcopy snapshots (before)": lambda: _DeepcopySnapshot(
            stop_at_peak=False
        ),
        "callback, in-place buffer (now)": lambda: CumulativeSampleGradient(
            stop_at_peak=False
        ),
        "callback, no peak detection": lambda: CumulativeSampleGradient(patience=None),
    }
    settings = [((64,), None), ((512, 512), 128)]
    lines = [
        (
            f"CSG callback per-epoch overhead: digits 800 rows, {epochs} epochs, "
            f"min over {rounds} interleaved rounds, torch threads = 1"
        ),
        "",
        "| network, batch | " + " | ".join(variants) + " |",
        "|---|" + "---|" * len(variants),
    ]
    for hidden, batch in settings:
        times = {v: [] for v in variants}
        _overhead_run(X[:100], y[:100], hidden, batch, 2, None)  # warm-up
        for r in range(rounds):
            names = list(variants)
            for v in names[r % len(names) :] + names[: r % len(names)]:
                times[v].append(
                    _overhead_run(X, y, hidden, batch, epochs, variants[v]())
                )
        base = min(times["plain"])
        cells = [f"{base:.2f} s"] + [
            f"{min(times[v]) / base:.2f}x" for v in list(variants)[1:]
        ]
        label = f"{hidden}, {'full batch' if batch is None else f'batch {batch}'}"
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_memorization_overhead.txt").write_text(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--max-rows", type=int, default=800)
    parser.add_argument("--overhead", action="store_true")
    parser.add_argument("--epochs", type=int, default=40)
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    if args.overhead:
        overhead(args.rounds if args.rounds != 15 else 5, args.epochs)
        return
    data = _datasets(args.max_rows)
    names = list(METHODS)
    times = {(d, m): [] for d in data for m in names}
    outputs = {}
    X0, y0, _ = next(iter(data.values()))
    for m in names:  # untimed warm-up (imports, torch kernels)
        METHODS[m](X0[:60], y0[:60])
    for r in range(args.rounds):
        for dname, (X, y, flipped) in data.items():
            order = names[r % len(names) :] + names[: r % len(names)]
            for m in order:
                t0 = time.perf_counter()
                out = METHODS[m](X, y)
                times[dname, m].append(time.perf_counter() - t0)
                outputs[dname, m] = out
            print(f"round {r + 1}/{args.rounds} {dname} done", flush=True)

    lines = [
        (
            f"bench_memorization: 20 % symmetric noise, {args.rounds} interleaved "
            "rounds (rotated order), median over rounds, torch threads = 1"
        ),
        "",
        "Median seconds per fit",
        "| set | n | " + " | ".join(names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for dname, (X, _, _) in data.items():
        lines.append(
            f"| {dname} | {len(X)} | "
            + " | ".join(f"{np.median(times[dname, m]):.2f}" for m in names)
            + " |"
        )
    lines += [
        "",
        "Median per-round time ratios",
        "| ratio | " + " | ".join(data) + " | note |",
        "|---|" + "---|" * len(data) + "---|",
    ]
    ratio_table = {}
    for a, b, note in RATIOS:
        vals = []
        for dname in data:
            ratio = np.median(np.asarray(times[dname, a]) / np.asarray(times[dname, b]))
            ratio_table[dname, a, b] = ratio
            vals.append(f"{ratio:.2f}x")
        lines.append(f"| {a} / {b} | " + " | ".join(vals) + f" | {note} |")
    lines += [
        "",
        "Mislabel detection (20 % symmetric noise)",
        (
            "| set | CSG AUROC | cleanlab AUROC | CSG flagged (precision) "
            "| cleanlab flagged (precision) | AUROC diff [95 % CI] "
            "| CSG / cleanlab time | target met |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
    for dname, (_, _, flipped) in data.items():
        s_csg, m_csg = outputs[dname, "CSG stopped"]
        s_cl, m_cl = outputs[dname, "cleanlab 5-fold"]
        auc_csg = roc_auc_score(flipped, s_csg)
        auc_cl = roc_auc_score(flipped, s_cl)
        ratio = ratio_table[dname, "CSG stopped", "cleanlab 5-fold"]
        lo, hi = _bootstrap_auroc_diff(flipped, s_csg, s_cl)
        met = "yes" if ratio <= 0.5 and auc_csg >= auc_cl else "no"
        if met == "no" and ratio <= 0.5 and hi >= 0:
            met = "non-inferior only"
        prec = [
            f"{m.sum()} ({flipped[m].mean() if m.any() else float('nan'):.2f})"
            for m in (m_csg, m_cl)
        ]
        lines.append(
            f"| {dname} | {auc_csg:.3f} | {auc_cl:.3f} | {prec[0]} | {prec[1]} "
            f"| {auc_csg - auc_cl:+.4f} [{lo:+.4f}, {hi:+.4f}] | {ratio:.2f}x | {met} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_memorization.txt").write_text(text)


if __name__ == "__main__":
    main()
