"""Speed of SOCOP's calibrate + predict_set against the argsort floor and MAPIE.

For ``n`` random probability vectors with ``K`` classes (Dirichlet), time in
one process, on the same matrices:

* ``argsort``: ``np.argsort`` of the test matrix, the floor (one sort);
* ``SOCOP``: :func:`socop_scores` of the calibration matrix (true labels) +
  :func:`conformal_quantile` + :func:`socop_sets` of the test matrix (what
  ``SOCOPClassifier.predict_set`` runs);
* ``SOCOP full``: the same with the full score matrix,
  ``socop_scores(P) <= q``;
* ``LAC`` / ``APS``: the same with our score functions;
* ``MAPIE LAC`` / ``MAPIE APS``: MAPIE v1 ``SplitConformalClassifier``
  (``prefit=True``) on a pass-through model whose ``predict_proba`` returns
  the probabilities, ``conformalize`` + ``predict_set``.

Targets (issue 2): SOCOP within 2x of the argsort floor, no slower than
MAPIE APS. Run: ``python benchmarks/bench_socop.py [--n 100000] [--ks 10 100
1000] [--repeat 3]``. The calibration set has ``n // 10`` rows.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time
import warnings
from functools import partial

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from sklearn_iclr26.conformal import (
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


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def ours(score_fn, P_cal, y_cal, P_test, alpha=0.1):
    def run():
        cal = score_fn(P_cal)[np.arange(len(y_cal)), y_cal]
        q = conformal_quantile(cal, alpha)
        return score_fn(P_test) <= q

    return run


def ours_socop(lam, P_cal, y_cal, P_test, alpha=0.1):
    def run():
        cal = socop_scores(P_cal, lam=lam)[np.arange(len(y_cal)), y_cal]
        return socop_sets(P_test, lam=lam, quantile=conformal_quantile(cal, alpha))

    return run


def mapie(score, P_cal, y_cal, P_test, alpha=0.1):
    from mapie.classification import SplitConformalClassifier

    model = PassThroughClassifier(P_cal.shape[1]).fit(P_cal)

    def run():
        clf = SplitConformalClassifier(
            model, confidence_level=1 - alpha, conformity_score=score, prefit=True
        )
        clf.conformalize(P_cal, y_cal)
        return clf.predict_set(P_test)[1]

    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--ks", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lam", type=float, default=0.1)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", module="mapie")
    rng = np.random.default_rng(0)
    print(f"n_test = {args.n}, n_cal = {args.n // 10}, best of {args.repeat}\n")
    header = (
        f"{'K':>5} {'argsort':>9} {'SOCOP':>9} {'SOCOP full':>10} {'LAC':>9} "
        f"{'APS':>9} "
        f"{'MAPIE LAC':>10} {'MAPIE APS':>10} {'SOCOP/argsort':>14} "
        f"{'SOCOP/MAPIE APS':>16}"
    )
    print(header)
    for K in args.ks:
        P_test = rng.dirichlet(np.ones(K), size=args.n)
        P_cal = rng.dirichlet(np.ones(K), size=args.n // 10)
        y_cal = np.array([rng.choice(K, p=p) for p in P_cal[:2000]])
        y_cal = np.resize(y_cal, P_cal.shape[0])

        def socop(P, lam=args.lam):
            return socop_scores(P, lam=lam)

        timings = {
            "argsort": best_of(partial(np.argsort, P_test, axis=1), args.repeat),
            "SOCOP": best_of(ours_socop(args.lam, P_cal, y_cal, P_test), args.repeat),
            "SOCOP full": best_of(ours(socop, P_cal, y_cal, P_test), args.repeat),
            "LAC": best_of(ours(lac_scores, P_cal, y_cal, P_test), args.repeat),
            "APS": best_of(ours(aps_scores, P_cal, y_cal, P_test), args.repeat),
        }
        try:
            timings["MAPIE LAC"] = best_of(
                mapie("lac", P_cal, y_cal, P_test), args.repeat
            )
            timings["MAPIE APS"] = best_of(
                mapie("aps", P_cal, y_cal, P_test), args.repeat
            )
        except ImportError:
            timings["MAPIE LAC"] = timings["MAPIE APS"] = float("nan")
        print(
            f"{K:>5} {timings['argsort']:>8.3f}s {timings['SOCOP']:>8.3f}s "
            f"{timings['SOCOP full']:>9.3f}s "
            f"{timings['LAC']:>8.3f}s {timings['APS']:>8.3f}s "
            f"{timings['MAPIE LAC']:>9.3f}s {timings['MAPIE APS']:>9.3f}s "
            f"{timings['SOCOP'] / timings['argsort']:>14.2f} "
            f"{timings['SOCOP'] / timings['MAPIE APS']:>16.2f}"
        )


if __name__ == "__main__":
    main()
