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

Resumable: rows already in the CSV (same key) are skipped. Default run about
15 CPU-minutes on one core; ``--quick`` runs a smoke test.

    python benchmarks/memorization_reproduction.py [--quick] [--parts rlp detect fz]
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
    parser.add_argument("--parts", nargs="+", default=["detect", "rlp", "fz"])
    parser.add_argument("--out", default=None)
    parser.add_argument("--seeds", type=int, default=1)
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
    if "fz" in args.parts:
        run_fz(store, data, [0], n_models=20 if quick else 100, max_iter=100)
    summarize(out)


if __name__ == "__main__":
    main()
