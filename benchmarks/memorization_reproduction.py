"""Reproduction of the memorization papers' tables on real tabular data.

* Part ``rlp`` (RLP heads, Becker et al.): per-layer random-label accuracy,
  train/test accuracy and gap for ``memorization_weight`` in {0, 0.1, 1}, next to
  dropout and weight decay, with clean labels and 20 % symmetric noise. Also
  the random-label accuracy of a *fresh* logistic probe fit on the final
  representation (``RandomLabelProbe``), which does not depend on the heads'
  game with the features.
* Part ``detect`` (CSG, Ravikumar et al.): mislabel-detection AUROC at 5/10/20/
  30 % symmetric and instance-dependent noise for CSG, SGAL, CSL, final-epoch
  loss, AUM, the RLP memorization score, cleanlab out-of-fold
  (``get_label_quality_scores`` on 5-fold ``pred_probs`` of the same MLP, if
  cleanlab is installed) and ``InstanceNoiseCorrector.mislabel_scores_``, with
  wall-clock seconds per method.
* Part ``fz``: Pearson / Spearman / cosine of the proxies with a subsampled
  Feldman-Zhang estimate (K fits of the same network on 70 % subsets).

* Part ``rlpctl`` (issue 29, RLP controls): breast cancer and digits, 20 %
  symmetric noise (``--rlpctl-rates``), ``--rlpctl-seeds`` seeds (3), for
  ``n_random_labels`` in {2, 10, 100}: the fresh ``LogisticRegression`` probe's
  training accuracy on the heads' own random labels (``probe_same``) and on
  new ones (``probe_new``) for the raw features, an **untrained** network of
  the same architecture and the trained RLP nets (global and per-class
  heads, ``memorization_weight`` 0 and 1); the per-class rows probe within
  each class. Paired differences with 95 % t-intervals over set x seed.
* Part ``csg`` (issue 29, CSG robustness and cost): breast cancer and digits,
  symmetric noise 20/10/30/5 %, ``--csg-seeds`` seeds (5), full-batch SGD
  (the default) and batch-64 Adam (the paper's optimiser): AUROC of CSG, SGAL,
  CSL, AUM, final-epoch loss (one full run; the scores up to the peak equal
  the stopped run's) and cleanlab out-of-fold; the peak epoch, and the cost
  as the paper defines it, stopped run / full run (seconds).

Parts ``rlpctl`` and ``csg`` write to the file given by ``--out``; the doc's
tables come from ``results/memorization_rlpctl.csv`` and
``results/memorization_csg.csv`` (one process per part).

Resumable: rows already in the CSV (same key) are skipped. Parts ``detect``,
``rlp`` and ``fz``: about 15 CPU-minutes on one core; ``rlpctl``: about 30;
``csg``: about 30. ``--quick`` runs a smoke test of every part.

    python benchmarks/memorization_reproduction.py [--quick] [--parts rlp detect fz]
    python benchmarks/memorization_reproduction.py --parts rlpctl \\
        --out benchmarks/results/memorization_rlpctl.csv
    python benchmarks/memorization_reproduction.py --parts csg \\
        --out benchmarks/results/memorization_csg.csv
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import csv
import os
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.stats import pearsonr, spearmanr
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import load_keel, make_label_noise
from sklearn_iclr26.label_noise import InstanceNoiseCorrector
from sklearn_iclr26.memorization import (
    RandomLabelProbe,
    RLPHeadClassifier,
    SampleGradientMemorization,
    feldman_zhang_memorization,
)
from sklearn_iclr26.memorization._modules import MLPNet, PerSampleCrossEntropy
from sklearn_iclr26.neural_network import TorchMLPClassifier
from sklearn_iclr26.utils._torch import forward_module, train_module

RESULTS = Path(__file__).parent / "results"
FIELDS = ["part", "dataset", "kind", "rate", "seed", "method", "metric", "value"]


def _datasets(max_rows=1000):
    sets = {}
    X, y = load_breast_cancer(return_X_y=True)
    sets["breast_cancer"] = (X, y)
    X, y = load_digits(return_X_y=True)
    sets["digits"] = (X, y)
    for name in ("pima", "spambase"):
        X, y = load_keel(name, return_X_y=True)
        sets[name] = (np.asarray(X, dtype=float), np.asarray(y))
    out = {}
    for name, (X, y) in sets.items():
        if X.shape[0] > max_rows:
            idx = np.random.RandomState(0).choice(X.shape[0], max_rows, replace=False)
            X, y = X[idx], y[idx]
        out[name] = (X, y)
    return out


class _Store:
    def __init__(self, path):
        self.path = path
        self.keys = set()
        if path.exists():
            with open(path) as f:
                for row in csv.DictReader(f):
                    self.keys.add(self._key(row))

    @staticmethod
    def _key(row):
        return tuple(str(row[k]) for k in FIELDS[:6])

    def done(self, **key):
        return self._key({**key}) in {k for k in self.keys}

    def has_block(self, **key):
        prefix = tuple(str(key[k]) for k in FIELDS[:5])
        return any(k[:5] == prefix for k in self.keys)

    def add(self, rows):
        new = not self.path.exists()
        with open(self.path, "a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=FIELDS)
            if new:
                writer.writeheader()
            for row in rows:
                writer.writerow(row)
                self.keys.add(self._key(row))


# --------------------------------------------------------------------------
# Part rlp
# --------------------------------------------------------------------------

RLP_CONFIGS = {
    "lambda=0": {},
    "lambda=0.1": {"memorization_weight": 0.1},
    "lambda=1": {"memorization_weight": 1.0},
    "dropout=0.3": {"dropout": 0.3},
    "weight_decay=1e-2": {"alpha": 1e-2},
}


def run_rlp(store, data, seeds, max_iter):
    for name, (X, y) in data.items():
        for rate in (0.0, 0.2):
            for seed in seeds:
                if store.has_block(
                    part="rlp", dataset=name, kind="symmetric", rate=rate, seed=seed
                ):
                    continue
                X_tr, X_te, y_tr, y_te = train_test_split(
                    X, y, test_size=0.3, random_state=seed, stratify=y
                )
                scaler = StandardScaler().fit(X_tr)
                X_tr, X_te = scaler.transform(X_tr), scaler.transform(X_te)
                y_obs = (
                    make_label_noise(
                        y_tr, kind="symmetric", rate=rate, random_state=seed
                    )[0]
                    if rate
                    else y_tr
                )
                rows = []
                for method, params in RLP_CONFIGS.items():
                    t0 = time.perf_counter()
                    clf = RLPHeadClassifier(
                        hidden_layer_sizes=(128, 128),
                        rlp_layers=(0, 1),
                        max_iter=max_iter,
                        batch_size=64,
                        learning_rate_init=1e-3,
                        random_state=seed,
                        **params,
                    ).fit(X_tr, y_obs)
                    seconds = time.perf_counter() - t0
                    train_acc = float(np.mean(clf.predict(X_tr) == y_obs))
                    test_acc = float(np.mean(clf.predict(X_te) == y_te))
                    probe = RandomLabelProbe(n_label_sets=3, random_state=seed).fit(
                        clf._representation(X_tr)
                    )
                    metrics = {
                        "rla_layer0": clf.random_label_accuracy_[0, -1],
                        "rla_layer1": clf.random_label_accuracy_[1, -1],
                        "fresh_probe_rla": probe.accuracy_,
                        "train_acc_observed": train_acc,
                        "test_acc_clean": test_acc,
                        "gap": train_acc - test_acc,
                        "seconds": seconds,
                    }
                    rows += [
                        {
                            "part": "rlp",
                            "dataset": name,
                            "kind": "symmetric",
                            "rate": rate,
                            "seed": seed,
                            "method": method,
                            "metric": k,
                            "value": float(v),
                        }
                        for k, v in metrics.items()
                    ]
                store.add(rows)
                print(f"rlp {name} rate={rate} seed={seed} done", flush=True)


# --------------------------------------------------------------------------
# Part rlpctl: controls for the fresh probe, 2/10/100 labels, per-class heads
# --------------------------------------------------------------------------

RLPCTL_CONFIGS = {
    "global lambda=0": {},
    "global lambda=1": {"memorization_weight": 1.0},
    "per_class lambda=0": {"random_label_scope": "per_class"},
    "per_class lambda=1": {
        "random_label_scope": "per_class",
        "memorization_weight": 1.0,
    },
}


def _probe_accuracy(Z, labels, groups=None):
    """Training accuracy of a fresh ``LogisticRegression`` on fixed labels.

    With ``groups``, one probe per group (the per-class reading): accuracy
    over all rows of the per-group fits (a group with one label scores 1).
    """
    from sklearn.linear_model import LogisticRegression

    if groups is None:
        groups = np.zeros(len(labels), dtype=int)
    correct = 0
    for g in np.unique(groups):
        rows = groups == g
        if np.unique(labels[rows]).size < 2:
            correct += rows.sum()
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            probe = LogisticRegression().fit(Z[rows], labels[rows])
        correct += int(np.sum(probe.predict(Z[rows]) == labels[rows]))
    return correct / len(labels)


def _untrained_representation(X, seed, hidden=(128, 128)):
    """Last hidden layer of the same MLP at initialisation (no training)."""
    import torch

    from sklearn_iclr26.memorization._modules import FeatureMLP

    gen_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    net = FeatureMLP(X.shape[1], hidden, dtype=torch.float64)
    torch.random.set_rng_state(gen_state)
    with torch.no_grad():
        return net(torch.as_tensor(X, dtype=torch.float64))[0].numpy()


def run_rlpctl(store, data, seeds, rates, n_labels, max_iter):
    """Fresh-probe controls (raw X, untrained network) next to trained RLP
    nets, global and per-class heads, lambda in {0, 1}, per label count."""
    for seed in seeds:
        for n in n_labels:
            for name, (X, y) in data.items():
                for rate in rates:
                    part = f"rlpctl-n{n}"
                    if store.has_block(
                        part=part, dataset=name, kind="symmetric", rate=rate, seed=seed
                    ):
                        continue
                    X_tr, X_te, y_tr, y_te = train_test_split(
                        X, y, test_size=0.3, random_state=seed, stratify=y
                    )
                    scaler = StandardScaler().fit(X_tr)
                    X_tr, X_te = scaler.transform(X_tr), scaler.transform(X_te)
                    y_tr = np.unique(y_tr, return_inverse=True)[1]
                    y_te = np.searchsorted(np.unique(y), y_te)
                    y_obs = (
                        make_label_noise(
                            y_tr, kind="symmetric", rate=rate, random_state=seed
                        )[0]
                        if rate
                        else y_tr
                    )
                    # the heads' labels (RLPHeadClassifier draws them so) and new ones
                    same = np.random.RandomState(seed).randint(n, size=len(y_obs))
                    new = np.random.RandomState(seed + 1000).randint(n, size=len(y_obs))
                    metrics = {}
                    reps = {
                        "raw X": X_tr,
                        "untrained": _untrained_representation(X_tr, seed),
                    }
                    for scope in ("global", "per_class"):
                        groups = y_obs if scope == "per_class" else None
                        for rep_name, Z in reps.items():
                            metrics[f"{rep_name} {scope}"] = {
                                "probe_same": _probe_accuracy(Z, same, groups),
                                "probe_new": _probe_accuracy(Z, new, groups),
                            }
                    for method, params in RLPCTL_CONFIGS.items():
                        t0 = time.perf_counter()
                        clf = RLPHeadClassifier(
                            hidden_layer_sizes=(128, 128),
                            rlp_layers=(0, 1),
                            n_random_labels=n,
                            max_iter=max_iter,
                            batch_size=64,
                            learning_rate_init=1e-3,
                            random_state=seed,
                            **params,
                        ).fit(X_tr, y_obs)
                        assert np.array_equal(clf.random_labels_[:, 0], same)
                        groups = y_obs if method.startswith("per_class") else None
                        Z = clf._representation(X_tr)
                        metrics[method] = {
                            "rla_layer0": clf.random_label_accuracy_[0, -1],
                            "rla_layer1": clf.random_label_accuracy_[1, -1],
                            "probe_same": _probe_accuracy(Z, same, groups),
                            "probe_new": _probe_accuracy(Z, new, groups),
                            "train_acc_observed": float(
                                np.mean(clf.predict(X_tr) == y_obs)
                            ),
                            "test_acc_clean": float(np.mean(clf.predict(X_te) == y_te)),
                            "seconds": time.perf_counter() - t0,
                        }
                    rows = [
                        {
                            "part": part,
                            "dataset": name,
                            "kind": "symmetric",
                            "rate": rate,
                            "seed": seed,
                            "method": method,
                            "metric": k,
                            "value": float(v),
                        }
                        for method, values in metrics.items()
                        for k, v in values.items()
                    ]
                    store.add(rows)
                    print(
                        f"{part} {name} rate={rate} seed={seed}: "
                        + ", ".join(
                            f"{m} {v['probe_same']:.3f}" for m, v in metrics.items()
                        ),
                        flush=True,
                    )


# --------------------------------------------------------------------------
# Part detect
# --------------------------------------------------------------------------


class _AUM:
    """Duck-typed skorch callback: area under the margin (Pleiss et al. 2020)."""

    def __init__(self, n):
        self.aum = np.zeros(n)
        self.epochs = 0

    def initialize(self):
        return self

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self

    def on_batch_end(self, net, batch=None, training=None, y_pred=None, **kwargs):
        if not training:
            return
        import torch

        ids = np.asarray(batch[0]["sample_id"])
        logits = y_pred.detach()
        y = torch.as_tensor(batch[1]).long()
        assigned = logits.gather(1, y[:, None]).squeeze(1)
        other = logits.clone()
        other[torch.arange(len(y)), y] = -np.inf
        margin = (assigned - other.max(dim=1).values).double().numpy()
        np.add.at(self.aum, ids, margin)

    def __getattr__(self, name):
        if name.startswith("on_"):
            return lambda *args, **kwargs: None
        raise AttributeError(name)


def _mlp_scores(X, y, seed, max_iter):
    """One plain training run (no CSG callback): AUM and final-epoch loss."""
    from sklearn_iclr26.memorization._modules import SGDMomentum

    n_classes = len(np.unique(y))
    aum = _AUM(len(y))
    t0 = time.perf_counter()
    net = train_module(
        MLPNet,
        X,
        y,
        criterion=PerSampleCrossEntropy,
        module_params={
            "n_features": X.shape[1],
            "n_outputs": n_classes,
            "hidden_layer_sizes": (64,),
        },
        aux={"sample_id": np.arange(len(y))},
        max_epochs=max_iter,
        learning_rate=0.05,
        optimizer=SGDMomentum,
        weight_decay=5e-4,
        random_state=seed,
        callbacks=[aum],
    )
    seconds = time.perf_counter() - t0
    logits = forward_module(net, X)
    logits = logits - logits.max(axis=1, keepdims=True)
    log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    loss = -log_p[np.arange(len(y)), y]
    return {"AUM": -aum.aum, "final-epoch loss": loss}, seconds


def _cleanlab_scores(X, y, seed):
    try:
        from cleanlab.rank import get_label_quality_scores
    except ImportError:
        return None, None
    t0 = time.perf_counter()
    n_classes = len(np.unique(y))
    pred = np.zeros((len(y), n_classes))
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=seed).split(X, y):
        clf = TorchMLPClassifier(
            hidden_layer_sizes=(64,),
            max_iter=100,
            learning_rate_init=1e-2,
            random_state=seed,
        ).fit(X[tr], y[tr])
        pred[te] = clf.predict_proba(X[te])
    quality = get_label_quality_scores(y, pred)
    return 1.0 - quality, time.perf_counter() - t0


def run_detect(store, data, seeds, rates, kinds, max_iter):
    for name, (X, y) in data.items():
        X = StandardScaler().fit_transform(X)
        y = np.unique(y, return_inverse=True)[1]
        for kind in kinds:
            for rate in rates:
                for seed in seeds:
                    if store.has_block(
                        part="detect", dataset=name, kind=kind, rate=rate, seed=seed
                    ):
                        continue
                    y_obs, flipped = make_label_noise(
                        y, X, kind=kind, rate=rate, random_state=seed
                    )
                    if flipped.sum() == 0 or flipped.all():
                        continue
                    scores, seconds = {}, {}
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        t0 = time.perf_counter()
                        sgm = SampleGradientMemorization(
                            final_model="stopped", max_iter=max_iter, random_state=seed
                        ).fit(X, y_obs)
                        seconds["CSG"] = seconds["SGAL"] = time.perf_counter() - t0
                        scores["CSG"], scores["SGAL"] = (
                            sgm.csg_scores_,
                            sgm.sgal_scores_,
                        )
                        t0 = time.perf_counter()
                        full = SampleGradientMemorization(
                            final_model="full", max_iter=max_iter, random_state=seed
                        ).fit(X, y_obs)
                        seconds["CSL"] = time.perf_counter() - t0
                        scores["CSL"] = full.csl_scores_
                        plain, t_plain = _mlp_scores(X, y_obs, seed, max_iter)
                        scores.update(plain)
                        seconds["AUM"] = seconds["final-epoch loss"] = t_plain
                        t0 = time.perf_counter()
                        rlp = RLPHeadClassifier(
                            hidden_layer_sizes=(64, 64),
                            n_random_labels=2,
                            n_label_sets=3,
                            max_iter=100,
                            random_state=seed,
                        ).fit(X, y_obs)
                        seconds["RLP score"] = time.perf_counter() - t0
                        scores["RLP score"] = rlp.memorization_scores_
                        cl, t_cl = _cleanlab_scores(X, y_obs, seed)
                        if cl is not None:
                            scores["cleanlab OOF"], seconds["cleanlab OOF"] = cl, t_cl
                        t0 = time.perf_counter()
                        ndx = InstanceNoiseCorrector(random_state=seed).fit(X, y_obs)
                        seconds["NDX mislabel_scores_"] = time.perf_counter() - t0
                        scores["NDX mislabel_scores_"] = ndx.mislabel_scores_
                    rows = []
                    for method, s in scores.items():
                        rows.append(
                            {
                                "part": "detect",
                                "dataset": name,
                                "kind": kind,
                                "rate": rate,
                                "seed": seed,
                                "method": method,
                                "metric": "auroc",
                                "value": float(roc_auc_score(flipped, s)),
                            }
                        )
                        rows.append(
                            {
                                "part": "detect",
                                "dataset": name,
                                "kind": kind,
                                "rate": rate,
                                "seed": seed,
                                "method": method,
                                "metric": "seconds",
                                "value": float(seconds[method]),
                            }
                        )
                    rows.append(
                        {
                            "part": "detect",
                            "dataset": name,
                            "kind": kind,
                            "rate": rate,
                            "seed": seed,
                            "method": "plain run",
                            "metric": "seconds",
                            "value": float(t_plain),
                        }
                    )
                    rows.append(
                        {
                            "part": "detect",
                            "dataset": name,
                            "kind": kind,
                            "rate": rate,
                            "seed": seed,
                            "method": "CSG",
                            "metric": "stop_epoch",
                            "value": float(sgm.peak_iter_),
                        }
                    )
                    store.add(rows)
                    print(
                        f"detect {name} {kind} {rate} seed={seed}: "
                        + ", ".join(
                            f"{r['method']}={r['value']:.3f}"
                            for r in rows
                            if r["metric"] == "auroc"
                        ),
                        flush=True,
                    )


# --------------------------------------------------------------------------
# Part csg: 5 seeds per setting, full-batch SGD and mini-batch Adam
# --------------------------------------------------------------------------

CSG_PROTOCOLS = {
    # the package default: full batch, SGD momentum 0.9, lr 0.05
    "full-batch SGD": {},
    # the paper's main optimiser, mini-batches
    "batch 64 Adam": {
        "optimizer": "adam",
        "batch_size": 64,
        "learning_rate_init": 1e-3,
    },
}


def run_csg(store, data, seeds, rates, max_iter):
    """CSG / SGAL / CSL / AUM / final loss from one full run (the scores up
    to the peak equal those of the stopped run, a tested identity), the
    stopped run for the cost ratio, and cleanlab out-of-fold."""
    for rate in rates:
        for protocol, params in CSG_PROTOCOLS.items():
            for name, (X, y) in data.items():
                X = StandardScaler().fit_transform(X)
                y = np.unique(y, return_inverse=True)[1]
                for seed in seeds:
                    part = "csg-" + protocol.replace(" ", "_")
                    if store.has_block(
                        part=part, dataset=name, kind="symmetric", rate=rate, seed=seed
                    ):
                        continue
                    y_obs, flipped = make_label_noise(
                        y, X, kind="symmetric", rate=rate, random_state=seed
                    )
                    scores, metrics = {}, {}
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        aum = _AUM(len(y))
                        t0 = time.perf_counter()
                        full = SampleGradientMemorization(
                            final_model="full",
                            max_iter=max_iter,
                            random_state=seed,
                            callbacks=[("aum", aum)],
                            **params,
                        ).fit(X, y_obs)
                        t_full = time.perf_counter() - t0
                        t0 = time.perf_counter()
                        stopped = SampleGradientMemorization(
                            max_iter=max_iter, random_state=seed, **params
                        ).fit(X, y_obs)
                        t_stopped = time.perf_counter() - t0
                        aum_cb = dict(full.net_.callbacks_)["aum"]
                        logits = forward_module(full.net_, X)
                        logits = logits - logits.max(axis=1, keepdims=True)
                        log_p = logits - np.log(
                            np.exp(logits).sum(axis=1, keepdims=True)
                        )
                        scores = {
                            "CSG": full.csg_scores_,
                            "SGAL": full.sgal_scores_,
                            "CSL": full.csl_scores_,
                            "AUM": -aum_cb.aum,
                            "final-epoch loss": -log_p[np.arange(len(y)), y_obs],
                        }
                        cl, t_cl = _cleanlab_scores(X, y_obs, seed)
                        if cl is not None:
                            scores["cleanlab OOF"] = cl
                    metrics = {
                        m: {"auroc": roc_auc_score(flipped, v)}
                        for m, v in scores.items()
                    }
                    metrics["CSG"].update(
                        {
                            "peak_epoch": stopped.peak_iter_,
                            "peak_found": float(stopped.peak_found_),
                            "epochs_stopped": stopped.n_iter_,
                            "epochs_full": full.n_iter_,
                            "seconds_stopped": t_stopped,
                            "seconds_full": t_full,
                            "cost_ratio": t_stopped / t_full,
                        }
                    )
                    if cl is not None:
                        metrics["cleanlab OOF"]["seconds"] = t_cl
                    rows = [
                        {
                            "part": part,
                            "dataset": name,
                            "kind": "symmetric",
                            "rate": rate,
                            "seed": seed,
                            "method": method,
                            "metric": k,
                            "value": float(v),
                        }
                        for method, values in metrics.items()
                        for k, v in values.items()
                    ]
                    store.add(rows)
                    print(
                        f"{part} {name} {rate} seed={seed}: "
                        f"peak={stopped.peak_iter_} "
                        + ", ".join(
                            f"{m}={v['auroc']:.3f}" for m, v in metrics.items()
                        ),
                        flush=True,
                    )


# --------------------------------------------------------------------------
# Part fz
# --------------------------------------------------------------------------


def _cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def run_fz(store, data, seeds, n_models, max_iter):
    name = "breast_cancer"
    X, y = data[name]
    X = StandardScaler().fit_transform(X)
    for seed in seeds:
        if store.has_block(
            part="fz", dataset=name, kind="symmetric", rate=0.1, seed=seed
        ):
            continue
        y_obs, _ = make_label_noise(y, kind="symmetric", rate=0.1, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            mem = feldman_zhang_memorization(
                SampleGradientMemorization(final_model="full", max_iter=max_iter),
                X,
                y_obs,
                n_models=n_models,
                random_state=seed,
                n_jobs=1,
            )
            t_fz = time.perf_counter() - t0
            sgm = SampleGradientMemorization(
                final_model="full", max_iter=max_iter, random_state=seed
            ).fit(X, y_obs)
            rlp = RLPHeadClassifier(
                hidden_layer_sizes=(64, 64),
                n_label_sets=3,
                max_iter=100,
                random_state=seed,
            ).fit(X, y_obs)
        ok = np.isfinite(mem)
        rows = []
        for method, s in {
            "CSG": sgm.csg_scores_,
            "SGAL": sgm.sgal_scores_,
            "CSL": sgm.csl_scores_,
            "RLP score": rlp.memorization_scores_,
        }.items():
            for metric, value in {
                "pearson": pearsonr(s[ok], mem[ok])[0],
                "spearman": spearmanr(s[ok], mem[ok])[0],
                "cosine": _cosine(s[ok], mem[ok]),
            }.items():
                rows.append(
                    {
                        "part": "fz",
                        "dataset": name,
                        "kind": "symmetric",
                        "rate": 0.1,
                        "seed": seed,
                        "method": method,
                        "metric": metric,
                        "value": float(value),
                    }
                )
        rows.append(
            {
                "part": "fz",
                "dataset": name,
                "kind": "symmetric",
                "rate": 0.1,
                "seed": seed,
                "method": "Feldman-Zhang",
                "metric": "seconds",
                "value": t_fz,
            }
        )
        store.add(rows)
        print(
            f"fz seed={seed}: "
            + ", ".join(f"{r['method']} {r['metric']}={r['value']:.3f}" for r in rows),
            flush=True,
        )


def _paired(df, a, b, metric):
    """Mean of the paired difference a - b over (dataset, rate, seed), its
    95 % t-interval, the number of pairs and how many are negative."""
    from scipy.stats import t as student

    sub = df[(df.metric == metric) & df.method.isin([a, b])]
    wide = sub.pivot_table(
        index=["dataset", "rate", "seed"], columns="method", values="value"
    ).dropna()
    if a not in wide or b not in wide or len(wide) < 2:
        return None
    d = (wide[a] - wide[b]).to_numpy()
    half = student.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    return (
        f"{a} - {b} [{metric}]: {d.mean():+.3f} [{d.mean() - half:+.3f}, "
        f"{d.mean() + half:+.3f}], {len(d)} pairs, {int((d < 0).sum())} negative"
    )


RLPCTL_PAIRS = [
    ("global lambda=0", "untrained global", "probe_new"),
    ("global lambda=0", "raw X global", "probe_new"),
    ("untrained global", "raw X global", "probe_new"),
    ("global lambda=1", "global lambda=0", "rla_layer1"),
    ("global lambda=1", "global lambda=0", "probe_same"),
    ("global lambda=1", "global lambda=0", "probe_new"),
    ("global lambda=1", "global lambda=0", "test_acc_clean"),
    ("per_class lambda=0", "untrained per_class", "probe_new"),
    ("per_class lambda=1", "per_class lambda=0", "rla_layer1"),
    ("per_class lambda=1", "per_class lambda=0", "probe_same"),
    ("per_class lambda=1", "per_class lambda=0", "probe_new"),
    ("per_class lambda=1", "per_class lambda=0", "test_acc_clean"),
]
CSG_PAIRS = [
    ("CSG", "SGAL"),
    ("CSG", "CSL"),
    ("CSG", "AUM"),
    ("CSG", "cleanlab OOF"),
    ("SGAL", "cleanlab OOF"),
]


def _summarize_new_parts(df):
    lines = []
    for part in sorted(p for p in df.part.unique() if p.startswith("rlpctl")):
        sub = df[df.part == part]
        seeds = sub.seed.nunique()
        lines += [
            (
                f"RLP controls, {part} ({seeds} seeds x {sub.dataset.nunique()} "
                f"sets, rates {sorted(float(r) for r in sub.rate.unique())}; "
                "mean over sets and seeds)"
            ),
            sub.pivot_table(index="method", columns="metric", values="value")
            .drop(columns=["seconds"], errors="ignore")
            .round(3)
            .to_string(),
            "Paired differences (95 % t-interval over set x seed pairs)",
        ]
        lines += [r for r in (_paired(sub, *p) for p in RLPCTL_PAIRS) if r] + [""]
    for part in sorted(p for p in df.part.unique() if p.startswith("csg-")):
        sub = df[df.part == part]
        auc = sub[sub.metric == "auroc"]
        lines += [
            f"CSG detection, {part}: AUROC (mean over seeds; n seeds per cell)",
            auc.pivot_table(index=["dataset", "rate"], columns="method", values="value")
            .round(3)
            .to_string(),
            auc.groupby(["dataset", "rate"]).seed.nunique().to_string(),
            "Paired AUROC differences over set x rate x seed",
        ]
        lines += [r for r in (_paired(sub, a, b, "auroc") for a, b in CSG_PAIRS) if r]
        csg = sub[sub.method == "CSG"].pivot_table(
            index=["dataset", "rate", "seed"], columns="metric", values="value"
        )
        found = csg[csg.peak_found == 1]
        lines += [
            (
                f"peak found in {len(found)}/{len(csg)} runs; peak epoch <= 2 in "
                f"{int((csg.peak_epoch <= 2).sum())}/{len(csg)}; peak epoch "
                f"median {csg.peak_epoch.median():.0f} "
                f"(range {csg.peak_epoch.min():.0f}-{csg.peak_epoch.max():.0f})"
            ),
            "cost (paper's definition, stopped run / full run of max_iter "
            "epochs): "
            + (
                f"{found.cost_ratio.median():.2f}x median where a peak exists "
                f"(range {found.cost_ratio.min():.2f}-{found.cost_ratio.max():.2f}; "
                f"epochs {found.epochs_stopped.median():.0f} of "
                f"{found.epochs_full.median():.0f})"
                if len(found)
                else "no peak found"
            ),
            "",
        ]
    return lines


def summarize(path):
    """Mean over seeds of every (part, dataset, kind, rate, method, metric)."""
    import pandas as pd

    df = pd.read_csv(path)
    lines = []
    det = df[(df.part == "detect") & (df.metric == "auroc")]
    if len(det):
        table = det.pivot_table(
            index=["dataset", "kind", "rate"], columns="method", values="value"
        )
        lines += [
            "Mislabel-detection AUROC (mean over seeds)",
            table.round(3).to_string(),
            "",
        ]
        sec = df[(df.part == "detect") & (df.metric == "seconds")]
        lines += [
            "Seconds per method (mean)",
            sec.groupby("method").value.mean().round(2).to_string(),
            "",
        ]
    lines += _summarize_new_parts(df)
    rlp = df[df.part == "rlp"]
    if len(rlp):
        table = rlp.pivot_table(
            index=["dataset", "rate", "method"], columns="metric", values="value"
        )
        lines += ["RLP heads (mean over seeds)", table.round(3).to_string(), ""]
    fz = df[df.part == "fz"]
    if len(fz):
        lines += [
            "Correlation with the Feldman-Zhang estimate",
            fz.pivot_table(index="method", columns="metric", values="value")
            .round(3)
            .to_string(),
        ]
    text = "\n".join(lines)
    path.with_suffix(".txt").write_text(text + "\n")
    print(text)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--parts", nargs="+", default=["detect", "rlp", "fz", "rlpctl", "csg"]
    )
    parser.add_argument("--out", default=None)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument(
        "--rlpctl-seeds", type=int, default=3, help="seeds of part rlpctl"
    )
    parser.add_argument(
        "--rlpctl-rates", type=float, nargs="+", default=[0.2], help="noise rates"
    )
    parser.add_argument("--rlpctl-labels", type=int, nargs="+", default=[2, 10, 100])
    parser.add_argument(
        "--first-seed", type=int, default=0, help="first seed of rlpctl / csg"
    )
    parser.add_argument("--csg-seeds", type=int, default=5, help="seeds of part csg")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    quick = args.quick or os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
    RESULTS.mkdir(exist_ok=True)
    out = (
        Path(args.out)
        if args.out
        else RESULTS
        / (
            "memorization_reproduction_quick.csv"
            if quick
            else "memorization_reproduction.csv"
        )
    )
    if args.summary:
        summarize(out)
        return
    store = _Store(out)
    data = _datasets(max_rows=300 if quick else 800)
    if quick:
        data = {k: data[k] for k in ("breast_cancer", "pima")}
    seeds = list(range(1 if quick else args.seeds))
    if "detect" in args.parts:
        run_detect(
            store,
            data,
            seeds,
            rates=(0.1,) if quick else (0.05, 0.1, 0.2, 0.3),
            kinds=("symmetric", "instance"),
            max_iter=100,
        )
    if "rlp" in args.parts:
        run_rlp(store, data, seeds[:1] if quick else [0], max_iter=20 if quick else 150)
    if "rlpctl" in args.parts:
        # the audit's two sets (breast cancer, digits)
        sub = {k: data[k] for k in ("breast_cancer", "digits") if k in data} or data
        run_rlpctl(
            store,
            sub if not quick else {k: data[k] for k in list(data)[:1]},
            seeds=list(
                range(
                    args.first_seed,
                    args.first_seed + (1 if quick else args.rlpctl_seeds),
                )
            ),
            rates=(0.2,) if quick else tuple(args.rlpctl_rates),
            n_labels=(2, 10) if quick else tuple(args.rlpctl_labels),
            max_iter=10 if quick else 150,
        )
    if "csg" in args.parts:
        sub = {k: data[k] for k in ("breast_cancer", "digits") if k in data} or data
        run_csg(
            store,
            sub if not quick else {k: data[k] for k in list(data)[:1]},
            seeds=list(
                range(
                    args.first_seed, args.first_seed + (1 if quick else args.csg_seeds)
                )
            ),
            rates=(0.2,) if quick else (0.2, 0.1, 0.3, 0.05),
            max_iter=30 if quick else 100,
        )
    if "fz" in args.parts:
        run_fz(store, data, [0], n_models=20 if quick else 100, max_iter=100)
    summarize(out)


if __name__ == "__main__":
    main()
