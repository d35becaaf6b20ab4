"""Noise-aware conformal calibration (``label_noise=``) of the conformal classifiers."""

import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_iris

from sklearn_iclr26.conformal import SOCOPClassifier, SplitConformalClassifier


class _ColumnProba(ClassifierMixin, BaseEstimator):
    """Binary 'model' whose P(class 1 | x) is the first feature."""

    def fit(self, X, y):
        self.classes_ = np.array([0, 1])
        return self

    def predict_proba(self, X):
        p1 = np.asarray(X, dtype=float)[:, 0]
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X):
        return (np.asarray(X)[:, 0] > 0.5).astype(int)


T2 = np.array([[0.8, 0.2], [0.3, 0.7]])


def _sample(n, rng, T=T2):
    """Clean labels with P(class 1 | x) uniform on (0.3, 1) given Y=1, on (0, 0.7)
    given Y=0: the LAC score of the true label is uniform on (0, 0.7) for both
    classes, so the clean 0.9-quantile is 0.63."""
    y = rng.integers(0, 2, size=n)
    p1 = np.where(y == 1, rng.uniform(0.3, 1.0, n), rng.uniform(0.0, 0.7, n))
    flip = rng.uniform(size=n)
    y_noisy = np.where(flip < T[y, 1], 1, 0)
    return p1[:, None], y, y_noisy


def _calibrated(X, y, **params):
    clf = SplitConformalClassifier(_ColumnProba().fit(X, y), **params)
    return clf.calibrate(X, y)


def _brute_force_threshold(scores, y_noisy, T, level):
    """The de-mixed rule by loops: the smallest candidate score t with
    sum_i sum_k W[y~_i, k] 1{s_ik <= t} >= (n + 1) level, W = T^{-1}."""
    W = np.linalg.inv(T)
    n, K = scores.shape
    for t in np.sort(np.unique(scores)):
        total = 0.0
        for i in range(n):
            for k in range(K):
                if scores[i, k] <= t:
                    total += W[y_noisy[i], k]
        if total >= (n + 1) * level - 1e-12:
            return t
    return np.inf


def test_threshold_equals_the_hand_computed_demixed_quantile():
    rng = np.random.default_rng(0)
    X, _, y_noisy = _sample(60, rng)
    clf = _calibrated(
        X, y_noisy, label_noise=T2, confidence_level=0.8, allow_empty=True
    )
    scores = np.column_stack([X[:, 0], 1.0 - X[:, 0]])  # LAC: 1 - p(k | x)
    expected = _brute_force_threshold(scores, y_noisy, T2, 0.8)
    assert clf.threshold_ == expected
    # and at a per-call level
    sets = clf.predict_set(X, confidence_level=0.7)
    expected_07 = _brute_force_threshold(scores, y_noisy, T2, 0.7)
    np.testing.assert_array_equal(sets, scores <= expected_07)


def test_threshold_converges_to_the_clean_population_quantile():
    # clean 0.9-quantile of U(0, 0.7) is 0.63; the quantile estimate's standard
    # deviation here is about 0.003 (n = 20000, weights up to |W| ~ 2), the
    # tolerance 0.015 is five of them. The plain threshold on noisy labels is
    # far off (the noisy score mixes in the wrong labels' scores).
    rng = np.random.default_rng(1)
    X, _, y_noisy = _sample(20000, rng)
    corrected = _calibrated(X, y_noisy, label_noise=T2).threshold_
    plain = _calibrated(X, y_noisy).threshold_
    assert abs(corrected - 0.63) < 0.015
    assert plain > 0.63 + 0.05


def test_clean_label_coverage_on_a_fixed_seed_simulation():
    # 30 calibration/test draws of 2000 rows each, noise T2 on the calibration
    # labels only: the mean clean-label coverage of the corrected sets is
    # within 0.01 of the level (its standard error here is about 0.002);
    # the plain sets over-cover and are larger.
    rng = np.random.default_rng(2)
    cov = {"plain": [], "corrected": []}
    size = {"plain": [], "corrected": []}
    for _ in range(30):
        X, _, y_noisy = _sample(2000, rng)
        X_test, y_test, _ = _sample(2000, rng)
        for name, noise in (("plain", None), ("corrected", T2)):
            sets = _calibrated(X, y_noisy, label_noise=noise).predict_set(X_test)
            cov[name].append(sets[np.arange(2000), y_test].mean())
            size[name].append(sets.sum(1).mean())
    assert abs(np.mean(cov["corrected"]) - 0.9) < 0.01
    assert np.mean(cov["plain"]) > 0.95
    assert np.mean(size["corrected"]) < np.mean(size["plain"])


def test_class_conditional_coverage_with_noise():
    rng = np.random.default_rng(3)
    cov = []
    for _ in range(20):
        X, _, y_noisy = _sample(3000, rng)
        X_test, y_test, _ = _sample(3000, rng)
        clf = _calibrated(
            X,
            y_noisy,
            label_noise=T2,
            conditional="class",
            label_noise_correction="plugin",
        )
        covered = clf.predict_set(X_test)[np.arange(3000), y_test]
        cov.append([covered[y_test == k].mean() for k in (0, 1)])
    assert np.all(np.abs(np.mean(cov, axis=0) - 0.9) < 0.015)


_CASES = [
    (SplitConformalClassifier, {}),
    (SplitConformalClassifier, {"conformity_score": "aps"}),
    (SplitConformalClassifier, {"conformity_score": "raps"}),
    (
        SplitConformalClassifier,
        {"conformity_score": "aps", "score_params": {"randomized": True}},
    ),
    (SplitConformalClassifier, {"conditional": "class"}),
    (SplitConformalClassifier, {"conditional": "bins"}),
    (SOCOPClassifier, {}),
    (SOCOPClassifier, {"conditional": "class", "lam": 0.1}),
]


@pytest.mark.parametrize("cls, params", _CASES)
@pytest.mark.parametrize("noise", [0, 0.0, "eye"])
def test_no_noise_reduces_to_the_plain_estimator_bit_for_bit(cls, params, noise):
    X, y = load_iris(return_X_y=True)
    noise = np.eye(3) if noise == "eye" else noise
    kw = {}
    if params.get("conditional") == "bins":
        kw = {"bins": (X[:, 0] > 5.8).astype(int)}
    plain = cls(random_state=0, **params).fit(X, y, **kw)
    zero = cls(random_state=0, label_noise=noise, **params).fit(X, y, **kw)
    np.testing.assert_array_equal(plain.threshold_, zero.threshold_)
    levels = [0.5, 0.8, 0.9]
    np.testing.assert_array_equal(
        plain.predict_set(X, confidence_level=levels, **kw),
        zero.predict_set(X, confidence_level=levels, **kw),
    )
    np.testing.assert_array_equal(plain.predict_p(X, **kw), zero.predict_p(X, **kw))


@pytest.mark.parametrize("correction", ["plugin", "auto"])
@pytest.mark.parametrize("conditional", [None, "class"])
def test_p_values_reproduce_the_sets(conditional, correction):
    X, y = load_iris(return_X_y=True)
    T = np.full((3, 3), 0.05) + np.eye(3) * 0.85
    clf = SplitConformalClassifier(
        label_noise=T,
        label_noise_correction=correction,
        allow_empty=True,
        conditional=conditional,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # iris' classes are small
        clf.fit(X, y)
    p = clf.predict_p(X)
    for level in (0.6, 0.8, 0.9):
        sets = clf.predict_set(X, confidence_level=level)
        np.testing.assert_array_equal(sets, p > 1 - level + 1e-12)
    with pytest.raises(ValueError, match="smoothed"):
        clf.predict_p(X, smoothed=True)


def test_flip_rate_is_the_symmetric_matrix():
    X, y = load_iris(return_X_y=True)
    T = np.full((3, 3), 0.1)
    np.fill_diagonal(T, 0.8)
    a = SplitConformalClassifier(label_noise=0.2, random_state=0).fit(X, y)
    b = SplitConformalClassifier(label_noise=T, random_state=0).fit(X, y)
    np.testing.assert_allclose(a.label_noise_matrix_, T)
    assert a.threshold_ == b.threshold_


@pytest.mark.parametrize(
    "noise, match",
    [
        (np.eye(2), "shape"),
        (np.full((3, 3), 0.5), "sum to 1"),
        (np.array([[1.2, -0.2, 0], [0, 1, 0], [0, 0, 1]]), "non-negative"),
        (np.full((3, 3), 1 / 3), "singular"),
        (0.7, "flip rate"),
    ],
)
def test_invalid_noise_models_raise(noise, match):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=match):
        SplitConformalClassifier(label_noise=noise).fit(X, y)


def test_finite_sample_margin_matches_the_reference_formula():
    from scipy import stats

    from sklearn_iclr26.conformal._noisy_calibration import finite_sample_margin

    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, size=400)
    # no noise: V = I, the margin is the mean one-sided KS statistic c_n,
    # checked against a Monte-Carlo estimate as the reference code computes it
    c = finite_sample_margin(np.eye(2), y)
    draws = [
        np.max(np.arange(1, 401) / 400 - np.sort(rng.uniform(size=400)))
        for _ in range(4000)
    ]
    assert abs(c - np.mean(draws)) < 0.002
    assert c == pytest.approx(stats.ksone.mean(400), rel=1e-3)
    # with noise: c_n plus the term in |V| (marginal, K^2 = 4)
    counts = np.bincount(y, minlength=2) / 400
    W = np.linalg.inv(T2)
    prior = W.T @ counts
    V = W.T * counts[None, :] / prior[:, None]
    off = np.abs(V).sum(1) - np.abs(np.diag(V))
    n_min = np.bincount(y).min()
    coeff = (2 * off.max() + np.abs(prior - counts).sum()) / np.sqrt(n_min)
    term = min(
        4 * np.sqrt(np.pi / 2),
        1 / np.sqrt(n_min) + np.sqrt((np.log(8) + np.log(n_min)) / 2),
    )
    assert finite_sample_margin(T2, y) == pytest.approx(c + coeff * term, rel=1e-9)


def test_finite_sample_correction_covers_and_is_conservative():
    rng = np.random.default_rng(5)
    X, _, y_noisy = _sample(20000, rng)
    X_test, y_test, _ = _sample(20000, rng)
    plugin = _calibrated(X, y_noisy, label_noise=T2)
    finite = _calibrated(
        X, y_noisy, label_noise=T2, label_noise_correction="finite_sample"
    )
    assert finite.threshold_ > plugin.threshold_
    covered = finite.predict_set(X_test)[np.arange(20000), y_test].mean()
    assert covered >= 0.9
    # the p-values carry the margin: they reproduce the sets
    finite.allow_empty = True
    p = finite.predict_p(X_test[:500])
    for level in (0.5, 0.8, 0.9):
        np.testing.assert_array_equal(
            finite.predict_set(X_test[:500], confidence_level=level),
            p > 1 - level + 1e-12,
        )
    # too few rows for level + margin: warns, every label
    with pytest.warns(UserWarning, match="margin"):
        small = _calibrated(
            X[:60], y_noisy[:60], label_noise=T2, label_noise_correction="finite_sample"
        )
    assert np.isinf(small.threshold_)


@pytest.mark.parametrize("correction", ["plugin", "finite_sample"])
def test_class_conditional_sets_are_never_empty(correction):
    X, y = load_iris(return_X_y=True)
    clf = SplitConformalClassifier(
        label_noise=0.05,
        label_noise_correction=correction,
        conditional="class",
        confidence_level=0.5,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sets = clf.fit(X, y).predict_set(X)
    assert sets.any(axis=1).all()


# ------------------------------------------------ rare classes (issue 40, 6)
class _ProbaColumns(ClassifierMixin, BaseEstimator):
    """'Model' whose probabilities are the features (one column per class)."""

    def fit(self, X, y):
        self.classes_ = np.arange(X.shape[1])
        return self

    def predict_proba(self, X):
        return np.asarray(X, dtype=float)

    def predict(self, X):
        return np.argmax(X, axis=1)


PRIORS = np.array([0.40, 0.25, 0.15, 0.10, 0.06, 0.04])


def _imbalanced(n, rng, rate=0.2):
    """Six imbalanced classes (4 % the rarest), a weak model's softmax
    probabilities as X, the clean labels and their symmetric-noise copy."""
    K = PRIORS.shape[0]
    y = rng.choice(K, size=n, p=PRIORS)
    z = rng.normal(size=(n, K))
    z[np.arange(n), y] += 1.0
    proba = np.exp(z)
    proba /= proba.sum(axis=1, keepdims=True)
    other = (y + rng.integers(1, K, size=n)) % K
    return proba, y, np.where(rng.uniform(size=n) < rate, other, y)


def _per_class_coverage(n_splits, n_cal, **params):
    rng = np.random.default_rng(40)
    K = PRIORS.shape[0]
    cov, size = np.zeros((n_splits, K)), np.zeros((n_splits, K))
    for s in range(n_splits):
        X, _, y_noisy = _imbalanced(n_cal, rng)
        X_test, y_test, _ = _imbalanced(3000, rng)
        clf = SplitConformalClassifier(
            _ProbaColumns().fit(X, y_noisy),
            label_noise=0.2,
            conditional="class",
            **params,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sets = clf.calibrate(X, y_noisy).predict_set(X_test)
        covered = sets[np.arange(len(y_test)), y_test]
        for k in range(K):
            cov[s, k] = covered[y_test == k].mean()
            size[s, k] = sets[y_test == k].sum(axis=1).mean()
    return cov, size


def test_noisy_class_conditional_covers_every_class_of_imbalanced_data():
    """The default correction with conditional="class" covers every class, the
    4 % one included, in expectation: over 150 calibrations of 600 noisy rows,
    each class's mean clean-label coverage is at least the level less three
    standard errors (measured over the calibrations). The per-class plug-in
    (the former default) gives the 4 % class 0.852 (se 0.012) here (the
    others 0.876-0.900); the margin gives 0.947-0.986. And the sets are not
    trivial: the most frequent class's mean size is under 5.6 of 6 (5.28;
    the plug-in's 3.72)."""
    cov, size = _per_class_coverage(150, 600)
    se = cov.std(axis=0, ddof=1) / np.sqrt(cov.shape[0])
    assert np.all(cov.mean(axis=0) >= 0.9 - 3 * se), (cov.mean(axis=0), se)
    assert size[:, 0].mean() < 5.6


def test_explicit_per_class_plugin_warns_on_rare_classes():
    rng = np.random.default_rng(0)
    X, _, y_noisy = _imbalanced(600, rng)
    clf = SplitConformalClassifier(
        _ProbaColumns().fit(X, y_noisy),
        label_noise=0.2,
        conditional="class",
        label_noise_correction="plugin",
    )
    with pytest.warns(UserWarning, match="expected deviation above 0.05"):
        clf.calibrate(X, y_noisy)


def test_per_class_margin_uses_the_class_own_row_and_counts():
    from scipy import stats

    from sklearn_iclr26.conformal._noisy_calibration import finite_sample_margin

    rng = np.random.default_rng(1)
    _, _, y_noisy = _imbalanced(2000, rng)
    K = PRIORS.shape[0]
    T = np.full((K, K), 0.2 / (K - 1))
    np.fill_diagonal(T, 0.8)
    W = np.linalg.inv(T)
    counts = np.bincount(y_noisy, minlength=K)
    margins = []
    for k in range(K):
        V_row = W[:, k] * counts / (W[:, k] * counts).sum()
        c = np.array([stats.ksone.mean(m) for m in counts])
        expected = np.sum(np.abs(V_row) * c)
        margins.append(finite_sample_margin(T, y_noisy, k))
        assert margins[-1] == pytest.approx(expected, rel=1e-3)
    # the frequent class's margin is the smallest, the rarest's the largest
    assert np.argmin(margins) == 0 and np.argmax(margins) == K - 1
    # no noise: c_{n_k}, the class's own count
    assert finite_sample_margin(np.eye(K), y_noisy, 2) == pytest.approx(
        stats.ksone.mean(counts[2]), rel=1e-3
    )
