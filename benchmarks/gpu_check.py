"""GPU checks: every torch-backed estimator of the package with ``device="cuda"``.

Checks that the torch MLPs, SOCOP around a CUDA net, CVQR, the noise corrector
with a CUDA net and ConNAS (parameter and measured-latency constraints) fit and
predict on a GPU, that CUDA results are bit-identical across runs with the
same ``random_state`` and match the CPU to float64 round-off, that outputs are
float64 numpy arrays, and that the caller's CUDA RNG state is left untouched.
Run: ``DEV=cuda python benchmarks/gpu_check.py`` (``DEV=cpu`` for a dry run);
results of one H200 run in ``benchmarks/results/gpu_check_h200.json``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause
import json
import os
import time
import traceback

import numpy as np
import torch

DEV = os.environ.get("DEV", "cuda")

print("torch", torch.__version__, "cuda", torch.cuda.is_available())
import sklearn
import skorch

print("sklearn", sklearn.__version__, "skorch", skorch.__version__)
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

results = {}


def check(name, fn):
    t = time.perf_counter()
    try:
        out = fn()
        results[name] = {
            "ok": True,
            "seconds": round(time.perf_counter() - t, 2),
            **(out or {}),
        }
    except Exception as exc:  # noqa: BLE001 (report every failure, go on)
        traceback.print_exc()
        results[name] = {"ok": False, "error": repr(exc)[:300]}
    print(name, results[name], flush=True)


X, y = load_digits(return_X_y=True)
X = StandardScaler().fit_transform(X)
Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0, stratify=y)


def mlp():
    from sklearn_iclr26.neural_network import TorchMLPClassifier, TorchMLPRegressor

    cuda_state = torch.cuda.get_rng_state() if DEV == "cuda" else None
    a = TorchMLPClassifier((64,), max_iter=100, device=DEV, random_state=0).fit(
        Xtr, ytr
    )
    b = TorchMLPClassifier((64,), max_iter=100, device=DEV, random_state=0).fit(
        Xtr, ytr
    )
    c = TorchMLPClassifier((64,), max_iter=100, device="cpu", random_state=0).fit(
        Xtr, ytr
    )
    pa, pb, pc = a.predict_proba(Xte), b.predict_proba(Xte), c.predict_proba(Xte)
    reg = TorchMLPRegressor((32,), max_iter=50, device=DEV, random_state=0).fit(
        Xtr, ytr.astype(float)
    )
    return {
        "acc_cuda": float(a.score(Xte, yte)),
        "acc_cpu": float(c.score(Xte, yte)),
        "cuda_repeat_max_diff": float(np.abs(pa - pb).max()),
        "cuda_vs_cpu_max_diff": float(np.abs(pa - pc).max()),
        "proba_dtype": str(pa.dtype),
        "proba_type": type(pa).__name__,
        "cuda_rng_untouched": None
        if cuda_state is None
        else bool(torch.equal(cuda_state, torch.cuda.get_rng_state())),
        "reg_r2": float(reg.score(Xte, yte.astype(float))),
        "module_device": str(next(a.net_.module_.parameters()).device),
    }


def socop():
    from sklearn_iclr26.conformal import SOCOPClassifier
    from sklearn_iclr26.neural_network import TorchMLPClassifier

    clf = SOCOPClassifier(
        TorchMLPClassifier((64,), max_iter=100, device=DEV, random_state=0),
        random_state=0,
    ).fit(Xtr, ytr)
    s = clf.predict_set(Xte)
    return {
        "coverage": float(
            s[np.arange(len(yte)), np.searchsorted(clf.classes_, yte)].mean()
        ),
        "mean_size": float(s.sum(1).mean()),
    }


def cvqr():
    from sklearn_iclr26.conformal import CVQRRegressor

    rng = np.random.RandomState(0)
    n = 3000
    x = rng.uniform(-1, 1, size=(n, 1))
    t = rng.normal(size=n)
    Y = np.column_stack([t, t**2 + (0.5 + np.abs(x[:, 0])) * rng.normal(size=n)])
    res = {}
    for dev in (DEV, "cpu"):
        tt = time.perf_counter()
        reg = CVQRRegressor(max_iter=30, device=dev, random_state=0).fit(
            x[:2000], Y[:2000]
        )
        res[f"fit_s_{dev}"] = round(time.perf_counter() - tt, 2)
        res[f"coverage_{dev}"] = float(reg.contains(x[2000:], Y[2000:]).mean())
        res[f"logvol_{dev}"] = float(np.median(reg.region_volume(x[2000:2050])))
    return res


def noise():
    from sklearn_iclr26.datasets import make_label_noise
    from sklearn_iclr26.label_noise import InstanceNoiseCorrector
    from sklearn_iclr26.neural_network import TorchMLPClassifier

    Xb, yb = load_breast_cancer(return_X_y=True)
    Xb = StandardScaler().fit_transform(Xb)
    a, b, c, d = train_test_split(Xb, yb, random_state=0, stratify=yb)
    yn, _ = make_label_noise(c, a, kind="instance", rate=0.28, random_state=0)
    m = InstanceNoiseCorrector(
        TorchMLPClassifier((32,), max_iter=100, device=DEV, random_state=0),
        random_state=0,
    ).fit(a, yn)
    p = TorchMLPClassifier((32,), max_iter=100, device=DEV, random_state=0).fit(a, yn)
    return {"corrected_acc": float(m.score(b, d)), "plain_acc": float(p.score(b, d))}


def nas():
    from sklearn_iclr26.nas import ConNASSearch, MLPSearchSpace

    res = {}
    common = {
        "search_epochs": 20,
        "final_estimator_params": {"max_iter": 50},
        "device": DEV,
        "random_state": 0,
    }
    s = ConNASSearch(MLPSearchSpace(), constraint="params", budget=1500, **common).fit(
        Xtr, ytr
    )
    res.update(
        params_feasible=bool(s.budget_satisfied_),
        params_cost=float(s.best_cost_),
        params_acc=float(s.score(Xte, yte)),
    )
    free = ConNASSearch(
        MLPSearchSpace(), constraint="latency", budget=1e9, **common
    ).fit(Xtr, ytr)
    res.update(
        latency_free_cost=float(free.best_cost_),
        latency_table_size=len(free.cost_table_),
    )
    lat = ConNASSearch(
        MLPSearchSpace(),
        constraint="latency",
        budget=0.9 * float(free.best_cost_),
        **common,
    )
    try:
        lat.fit(Xtr, ytr)
        res.update(
            latency_feasible=bool(lat.budget_satisfied_),
            latency_cost=float(lat.best_cost_),
            latency_acc=float(lat.score(Xte, yte)),
        )
    except ValueError as exc:
        res["latency_error"] = str(exc)[:200]
    return res


for name, fn in [
    ("mlp", mlp),
    ("socop", socop),
    ("cvqr", cvqr),
    ("noise", noise),
    ("nas", nas),
]:
    check(name, fn)
print(json.dumps(results, indent=1))
import os

out_file = os.path.join(os.environ.get("OUT", "."), "gpu_results.json")
with open(out_file, "w") as handle:
    json.dump(results, handle, indent=1)
