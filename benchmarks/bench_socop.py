"""Conformal sets at memory speed: each step's time over one ``np.max`` pass.

Calibration plus sets on an ``n x K`` probability matrix is bounded below by
one read of the matrix; ``np.max(P, axis=1)`` is that read. For ``n`` random
probability vectors with ``K`` classes (Dirichlet, ``--alpha``), time in one
process, on the same test matrix ``P``:

* ``max``: ``np.max(P, axis=1)``, the floor (one read);
* ``argsort``: ``np.argsort(P, axis=1)``, the cost of one sort per row;
* ``lac_scores``: :func:`lac_scores` (``1 - P``, validated);
* ``LAC sets``: :func:`lac_sets` at the calibrated LAC threshold (the
  threshold from ``n // 10`` calibration rows, computed once, outside the
  timing): one threshold test per cell, no sort;
* ``socop_scores``: :func:`socop_scores` (one sort and one cumulative sum
  per row);
* ``socop_sets``: :func:`socop_sets` at the calibrated SOCOP threshold;
* ``LAC est`` / ``SOCOP est``: ``predict_set`` of a ``SplitConformalClassifier``
  (LAC) and a ``SOCOPClassifier`` (fixed ``lam``) calibrated once on the
  calibration matrix, around a frozen pass-through model whose
  ``predict_proba`` returns its input: the estimator path (validation, row
  batches by ``working_memory``, the empty-set fill) given precomputed
  probabilities;
* with ``--mapie``: MAPIE v1's ``SplitConformalClassifier`` (LAC) on the
  same pass-through model, ``predict_set`` only.

Rounds are interleaved: every round times each step once, in a rotated order,
so that load on the shared machine hits all steps alike; the table reports
the median over rounds of the per-round ratio to the ``max`` pass (and the
median ``max`` time). Results are appended to ``--out`` as each ``K``
finishes; a ``K`` already there is skipped (resumable; ``--force`` reruns).

Goals (issue 31, item 7): ``LAC sets`` <= 3x the ``max`` pass at every ``K``;
``socop_sets`` at most half its ratio before the change. Run::

    OMP_NUM_THREADS=1 python benchmarks/bench_socop.py            # n = 1e5
    OMP_NUM_THREADS=1 python benchmarks/bench_socop.py --quick    # n = 1e4
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import importlib.util
import json
import time
import warnings
from functools import partial
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.frozen import FrozenEstimator

from sklearn_iclr26.conformal import (
    SOCOPClassifier,
    SplitConformalClassifier,
    conformal_quantile,
    lac_scores,
    lac_sets,
    socop_scores,
    socop_sets,
)

STEPS = [
    "max",
    "argsort",
    "lac_scores",
    "LAC sets",
    "socop_scores",
    "socop_sets",
    "LAC est",
    "SOCOP est",
]


class PassThroughClassifier(ClassifierMixin, BaseEstimator):
    """A 'fitted' classifier whose input is already the probability matrix."""

    def __init__(self, n_classes=2):
        self.n_classes = n_classes

    def fit(self, X, y=None):
        self.classes_ = np.arange(self.n_classes)
        return self

    def predict_proba(self, X):
        return np.asarray(X)

    def predict(self, X):
        return np.argmax(X, axis=1)


def interleaved(fns, rounds):
    """Time each function once per round, in a rotated order per round.

    Returns ``{name: array of per-round times}``.
    """
    names = list(fns)
    times = {name: [] for name in names}
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            start = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - start)
    return {name: np.asarray(t) for name, t in times.items()}


def steps(P_cal, y_cal, P_test, lam, level=0.9, mapie=False):
    """The timed callables, their thresholds computed outside the timing."""
    rows = np.arange(len(y_cal))
    q_lac = conformal_quantile(lac_scores(P_cal)[rows, y_cal], level)
    q_socop = conformal_quantile(socop_scores(P_cal, lam=lam)[rows, y_cal], level)
    model = FrozenEstimator(PassThroughClassifier(P_cal.shape[1]).fit(P_cal))
    lac_est = SplitConformalClassifier(model, confidence_level=level)
    lac_est.fit(P_cal, y_cal)
    socop_est = SOCOPClassifier(model, lam=lam, confidence_level=level)
    socop_est.fit(P_cal, y_cal)
    fns = {
        "max": partial(np.max, P_test, axis=1),
        "argsort": partial(np.argsort, P_test, axis=1),
        "lac_scores": partial(lac_scores, P_test),
        "LAC sets": partial(lac_sets, P_test, quantile=q_lac),
        "socop_scores": partial(socop_scores, P_test, lam=lam),
        "socop_sets": partial(socop_sets, P_test, lam=lam, quantile=q_socop),
        "LAC est": partial(lac_est.predict_set, P_test),
        "SOCOP est": partial(socop_est.predict_set, P_test),
    }
    if mapie:
        from mapie.classification import SplitConformalClassifier as MapieSCC

        clf = MapieSCC(
            PassThroughClassifier(P_cal.shape[1]).fit(P_cal),
            confidence_level=level,
            conformity_score="lac",
            prefit=True,
        )
        clf.conformalize(P_cal, y_cal)
        fns["MAPIE LAC"] = lambda: clf.predict_set(P_test)[1]
    return fns


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--ks", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--lam", type=float, default=0.1)
    parser.add_argument("--alpha", type=float, default=1.0, help="Dirichlet alpha")
    parser.add_argument("--quick", action="store_true", help="n = 1e4, 3 rounds")
    parser.add_argument("--mapie", action="store_true", help="add MAPIE's LAC")
    parser.add_argument("--out", type=Path, default=None, help="JSON lines")
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.n, args.rounds = 10_000, 3
    mapie = args.mapie and importlib.util.find_spec("mapie") is not None
    warnings.filterwarnings("ignore", module="mapie")
    warnings.filterwarnings("ignore", message="The number of unique classes")
    done = {}
    if args.out is not None and args.out.exists() and not args.force:
        for line in args.out.read_text().splitlines():
            record = json.loads(line)
            if record["n"] == args.n:
                done[record["K"]] = record
    names = STEPS + (["MAPIE LAC"] if mapie else [])
    print(
        f"n_test = {args.n}, n_cal = {args.n // 10}, Dirichlet({args.alpha}), "
        f"lam = {args.lam}, {args.rounds} interleaved rounds; median over rounds "
        "of each step's time / the np.max pass\n"
    )
    print(f"{'K':>5} {'max':>9} " + " ".join(f"{c:>12}" for c in names[1:]))
    for K in args.ks:
        if K in done:
            record = done[K]
        else:
            rng = np.random.default_rng(K)
            P_test = rng.dirichlet(np.full(K, args.alpha), size=args.n)
            P_cal = rng.dirichlet(np.full(K, args.alpha), size=args.n // 10)
            # labels drawn from the probabilities: a calibrated model
            u = rng.uniform(size=(P_cal.shape[0], 1))
            y_cal = np.minimum((np.cumsum(P_cal, axis=1) < u).sum(axis=1), K - 1)
            fns = steps(P_cal, y_cal, P_test, args.lam, mapie=mapie)
            times = interleaved(fns, args.rounds)
            record = {
                "n": args.n,
                "K": K,
                "rounds": args.rounds,
                "max_s": float(np.median(times["max"])),
                "ratio": {
                    name: float(np.median(t / times["max"]))
                    for name, t in times.items()
                },
            }
            if args.out is not None:
                with args.out.open("a") as f:
                    f.write(json.dumps(record) + "\n")
            del P_test, P_cal, fns
        print(
            f"{K:>5} {record['max_s'] * 1e3:>7.1f}ms "
            + " ".join(f"{record['ratio'].get(c, np.nan):>12.2f}" for c in names[1:]),
            flush=True,
        )


if __name__ == "__main__":
    main()
