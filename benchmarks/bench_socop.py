"""Speed of SOCOP's calibrate + predict_set against the argsort floor and MAPIE.

For ``n`` random probability vectors with ``K`` classes (Dirichlet), time in
one process, on the same matrices:

* ``argsort``: ``np.argsort`` of the test matrix, the floor (one sort);
* ``SOCOP``: :func:`socop_scores` of the calibration matrix (true labels) +
  :func:`conformal_quantile` + :func:`socop_sets` of the test matrix (what
  ``SOCOPClassifier.predict_set`` runs);
* ``SOCOP full``: the same with the full score matrix,
  ``socop_scores(P) <= q``;
* ``SOCOP est``: ``SOCOPClassifier(FrozenEstimator(pass-through)).fit`` on
  the calibration matrix + ``predict_set`` (the estimator path: validation,
  row batches by ``working_memory``, empty-set fill);
* ``LAC`` / ``APS``: the same with our score functions;
* ``MAPIE LAC`` / ``MAPIE APS``: MAPIE v1 ``SplitConformalClassifier``
  (``prefit=True``) on a pass-through model whose ``predict_proba`` returns
  the probabilities, ``conformalize`` + ``predict_set``.

Rounds are interleaved: every round times each method once, in a rotated
order, so that load on the shared machine hits all methods alike; the table
reports the median time over rounds and the median over rounds of the
per-round ratios (not best-of per method).

Targets (issue 11): SOCOP within 2x of the argsort floor at every K, no
slower than MAPIE LAC at K = 1000. Run: ``python benchmarks/bench_socop.py
[--n 100000] [--ks 10 100 1000] [--rounds 3]``. The calibration set has
``n // 10`` rows.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import importlib.util
import time
import warnings
from functools import partial

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.frozen import FrozenEstimator

from sklearn_iclr26.conformal import (
    SOCOPClassifier,
    aps_scores,
    conformal_quantile,
    lac_scores,
    socop_scores,
    socop_sets,
)


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


def ours(score_fn, P_cal, y_cal, P_test, level=0.9):
    def run():
        cal = score_fn(P_cal)[np.arange(len(y_cal)), y_cal]
        q = conformal_quantile(cal, level)
        return score_fn(P_test) <= q

    return run


def ours_socop(lam, P_cal, y_cal, P_test, level=0.9):
    def run():
        cal = socop_scores(P_cal, lam=lam)[np.arange(len(y_cal)), y_cal]
        return socop_sets(P_test, lam=lam, quantile=conformal_quantile(cal, level))

    return run


def ours_estimator(lam, P_cal, y_cal, P_test, level=0.9):
    model = FrozenEstimator(PassThroughClassifier(P_cal.shape[1]).fit(P_cal))

    def run():
        clf = SOCOPClassifier(model, lam=lam, confidence_level=level, allow_empty=True)
        return clf.fit(P_cal, y_cal).predict_set(P_test)

    return run


def mapie(score, P_cal, y_cal, P_test, level=0.9):
    from mapie.classification import SplitConformalClassifier

    model = PassThroughClassifier(P_cal.shape[1]).fit(P_cal)

    def run():
        clf = SplitConformalClassifier(
            model, confidence_level=level, conformity_score=score, prefit=True
        )
        clf.conformalize(P_cal, y_cal)
        return clf.predict_set(P_test)[1]

    return run


def _median_ratio(times, missing, a, b):
    return float(np.median(times.get(a, missing) / times.get(b, missing)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--ks", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lam", type=float, default=0.1)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", module="mapie")
    rng = np.random.default_rng(0)
    print(
        f"n_test = {args.n}, n_cal = {args.n // 10}, {args.rounds} interleaved "
        "rounds; median seconds, and median of the per-round ratios\n"
    )
    columns = ["argsort", "SOCOP", "SOCOP est", "SOCOP full", "LAC", "APS"]
    columns += ["MAPIE LAC", "MAPIE APS"]
    print(
        f"{'K':>5} "
        + " ".join(f"{c:>10}" for c in columns)
        + f" {'SOCOP/argsort':>14} {'est/argsort':>12} {'SOCOP/MAPIE LAC':>16}"
        + f" {'SOCOP/MAPIE APS':>16}"
    )
    for K in args.ks:
        P_test = rng.dirichlet(np.ones(K), size=args.n)
        P_cal = rng.dirichlet(np.ones(K), size=args.n // 10)
        y_cal = np.array([rng.choice(K, p=p) for p in P_cal[:2000]])
        y_cal = np.resize(y_cal, P_cal.shape[0])

        def socop(P, lam=args.lam):
            return socop_scores(P, lam=lam)

        fns = {
            "argsort": partial(np.argsort, P_test, axis=1),
            "SOCOP": ours_socop(args.lam, P_cal, y_cal, P_test),
            "SOCOP est": ours_estimator(args.lam, P_cal, y_cal, P_test),
            "SOCOP full": ours(socop, P_cal, y_cal, P_test),
            "LAC": ours(lac_scores, P_cal, y_cal, P_test),
            "APS": ours(aps_scores, P_cal, y_cal, P_test),
        }
        if importlib.util.find_spec("mapie") is not None:
            fns["MAPIE LAC"] = mapie("lac", P_cal, y_cal, P_test)
            fns["MAPIE APS"] = mapie("aps", P_cal, y_cal, P_test)
        times = interleaved(fns, args.rounds)
        nan = np.full(args.rounds, np.nan)
        ratio = partial(_median_ratio, times, nan)

        print(
            f"{K:>5} "
            + " ".join(f"{np.median(times.get(c, nan)):>9.3f}s" for c in columns)
            + f" {ratio('SOCOP', 'argsort'):>14.2f}"
            + f" {ratio('SOCOP est', 'argsort'):>12.2f}"
            + f" {ratio('SOCOP', 'MAPIE LAC'):>16.2f}"
            + f" {ratio('SOCOP', 'MAPIE APS'):>16.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
