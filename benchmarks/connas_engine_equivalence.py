"""The skorch bilevel engine reproduces the old hand-written DARTS loop.

Runs six small searches (ConNAS mini-batch / Gumbel + "selected" +
best-val selection / full batch + expected-cost direction / regression, the
penalty baseline, random search) with the package of a git reference (by
default ``main`` before the engine change, commit 58757a4) and with this
checkout, and compares per step the logit gradients and softmax
probabilities fed to the gradient rule, the final logits, the visited
architectures, the returned architecture and the predictions.

The current code differs from the old one at a given ``random_state`` in one
deliberate way: the split comes from ``utils._split.split_indices`` (same
rows, sorted). The torch seed of the supernet is the old loop's: the torch
base hands ``random_state`` to the engine, which draws one seed from it
(``seed_from_random_state``), the seed the old search drew for its loop.
``--mode exact`` sorts the old split and must give identical results;
``--mode as-is`` shows what a user sees::

    PYTHONPATH=. python benchmarks/connas_engine_equivalence.py --ref 58757a4
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def worker(out_path, exact):
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import StandardScaler

    from sklearn_iclr26.nas import (
        ConNASSearch,
        MLPSearchSpace,
        PenaltyNASSearch,
        RandomNASSearch,
    )

    new = "max_iter" in ConNASSearch().get_params()
    if exact and not new:
        from sklearn_iclr26.nas import _base_search as bs

        split = bs.BaseNASSearch._split

        def sorted_split(self, X, y_search, rng):
            train, val = split(self, X, y_search, rng)
            return np.sort(train), np.sort(val)

        bs.BaseNASSearch._split = sorted_split
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    space = MLPSearchSpace(n_layers=2, widths=(0, 8, 32), activations=("relu", "tanh"))
    epochs = "max_iter" if new else "search_epochs"
    cases = {
        "connas_minibatch": (ConNASSearch, {"budget": 500, "rescale_factor": 3.0}),
        "connas_gumbel_selected_bestval": (
            ConNASSearch,
            {
                "budget": 300,
                "relaxation": "gumbel",
                "direction": "selected",
                "select": "best_val_feasible",
            },
        ),
        "connas_fullbatch_expected": (
            ConNASSearch,
            {"budget": 300, "direction": "expected_cost", "batch_size": None},
        ),
        "connas_regression": (ConNASSearch, {"budget": 300, "task": "regression"}),
        "penalty": (PenaltyNASSearch, {"budget": 300, "penalty": 5.0}),
        "random": (
            RandomNASSearch,
            {
                "budget": 500,
                "n_candidates": 4,
                ("max_iter" if new else "candidate_epochs"): 10,
            },
        ),
    }
    out = {}
    for name, (cls, params) in cases.items():
        trace = []
        gradient = cls is not RandomNASSearch
        if gradient:
            modify = cls._modify_arch_gradient

            def recording(self, g, arch_idx, cost, probs, _modify=modify, _t=trace):
                _t.append(([np.array(x) for x in g], [np.array(p) for p in probs]))
                return _modify(self, g, arch_idx, cost, probs)

            cls._modify_arch_gradient = recording
            params = {**params, epochs: 8}
        regression = params.get("task") == "regression"
        Xf, yf = (X[:, 1:], X[:, 0]) if regression else (X, y)
        search = cls(
            space,
            random_state=0,
            final_estimator_params={"max_iter": 30},
            **params,
        ).fit(Xf, yf)
        if gradient:
            cls._modify_arch_gradient = modify
        out[name] = {
            "best": search.best_architecture_,
            "trace": trace,
            "logits": getattr(search, "arch_logits_", getattr(search, "alpha_", None)),
            "history": search.search_history_,
            "pred": search.predict(Xf),
        }
    with open(out_path, "wb") as f:
        pickle.dump(out, f)


def _same_blocks(a, b):
    return len(a) == len(b) and all(np.array_equal(x, z) for x, z in zip(a, b))


def compare(old, new):
    for name in new:
        a, b = old[name], new[name]
        steps = len(b["trace"])
        grads = len(a["trace"]) == steps and all(
            _same_blocks(x[0], z[0]) for x, z in zip(a["trace"], b["trace"])
        )
        probs = len(a["trace"]) == steps and all(
            _same_blocks(x[1], z[1]) for x, z in zip(a["trace"], b["trace"])
        )
        logits = a["logits"] is None or _same_blocks(a["logits"], b["logits"])

        def visited(h):
            return [
                (r["architecture"], r["cost"], r["feasible"], r["modified"]) for r in h
            ]

        loss_diff = max(
            abs(r["val_loss"] - s["val_loss"])
            for r, s in zip(a["history"], b["history"])
        )
        same_visited = visited(a["history"]) == visited(b["history"])
        same_pred = np.array_equal(a["pred"], b["pred"])
        print(
            f"{name:32s} steps={steps:3d} same: gradients={grads} probs={probs} "
            f"final_logits={logits} visited={same_visited} "
            f"best={a['best'] == b['best']} predictions={same_pred}"
            f" max|d val_loss|={loss_diff:.1e}"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--ref", default="58757a4", help="git reference of the old code"
    )
    parser.add_argument("--mode", choices=["exact", "as-is", "both"], default="both")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1] == "exact")
        return
    modes = ["exact", "as-is"] if args.mode == "both" else [args.mode]
    with tempfile.TemporaryDirectory() as tmp:
        old_root = Path(tmp) / "old"
        old_root.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.ref, "sklearn_iclr26"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old_root)], input=archive, check=True)
        for mode in modes:
            results = {}
            for label, root in (("old", old_root), ("new", ROOT)):
                path = Path(tmp) / f"{label}_{mode}.pkl"
                env = {**os.environ, "PYTHONPATH": str(root)}
                subprocess.run(
                    [sys.executable, __file__, "--worker", str(path), mode],
                    check=True,
                    env=env,
                    cwd=tmp,
                )
                with open(path, "rb") as f:
                    results[label] = pickle.load(f)
            print(f"\n== mode {mode}: {args.ref} vs this checkout")
            compare(results["old"], results["new"])


if __name__ == "__main__":
    main()
