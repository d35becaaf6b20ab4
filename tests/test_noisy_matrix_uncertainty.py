"""Plausible transition matrices in noisy-label conformal calibration.

``label_noise`` of shape ``(B, K, K)`` (e.g. the bootstrap replicates of
``ClassConditionalNoiseCorrector.transition_matrix_samples``) thresholds at
the most conservative of the matrices, per group (issue 40 item 6).
"""

import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression

from sklearn_iclr26.conformal import SOCOPClassifier, SplitConformalClassifier
from sklearn_iclr26.datasets import make_label_noise
from sklearn_iclr26.label_noise import ClassConditionalNoiseCorrector


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
K = PRIORS.shape[0]


def _symmetric(rate, n_classes=K):
    T = np.full((n_classes, n_classes), rate / (n_classes - 1))
    np.fill_diagonal(T, 1 - rate)
    return T


def _imbalanced(n, rng, rate=0.2, signal=1.5):
    """Six imbalanced classes (4 % the rarest), a model's softmax
    probabilities as X, the clean labels and their symmetric-noise copy."""
    y = rng.choice(K, size=n, p=PRIORS)
    z = rng.normal(size=(n, K))
    z[np.arange(n), y] += signal
    proba = np.exp(z)
    proba /= proba.sum(axis=1, keepdims=True)
    other = (y + rng.integers(1, K, size=n)) % K
    return proba, y, np.where(rng.uniform(size=n) < rate, other, y)


def _calibrated(X, y, label_noise, cls=SplitConformalClassifier, **params):
    clf = cls(_ProbaColumns().fit(X, y), label_noise=label_noise, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clf.calibrate(X, y)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X, _, y_noisy = _imbalanced(1500, rng)
    X_test, y_test, _ = _imbalanced(1000, rng)
    return X, y_noisy, X_test, y_test


# ------------------------------------------------------------ validation
_NEGATIVE = np.zeros((K, K))
_NEGATIVE[0, :2] = [0.1, -0.1]  # keeps the row sum, makes T[0, 1] negative


@pytest.mark.parametrize(
    "samples, match",
    [
        (np.zeros((0, K, K)), r"\(B, 6, 6\) with B >= 1"),
        (np.stack([_symmetric(0.2)[:, :5]] * 3), r"\(B, 6, 6\)"),
        (
            np.stack([_symmetric(0.2), _symmetric(0.1), _symmetric(0.2) * 0.9]),
            r"label_noise\[2\] rows must sum to 1",
        ),
        (
            np.stack([_symmetric(0.2), _symmetric(0.2) + _NEGATIVE]),
            r"label_noise\[1\] must have finite, non-negative",
        ),
        (
            np.stack([_symmetric(0.2), np.full((K, K), 1.0 / K)]),
            r"label_noise\[1\] is \(nearly\) singular",
        ),
    ],
)
def test_invalid_matrix_samples_raise(data, samples, match):
    X, y_noisy, _, _ = data
    clf = SplitConformalClassifier(_ProbaColumns().fit(X, y_noisy), label_noise=samples)
    with pytest.raises(ValueError, match=match):
        clf.calibrate(X, y_noisy)


def test_matrix_samples_with_shift_raise(data):
    X, y_noisy, X_test, _ = data
    clf = SplitConformalClassifier(
        _ProbaColumns().fit(X, y_noisy),
        label_noise=np.stack([_symmetric(0.2)] * 2),
        shift="label",
    )
    with pytest.raises(ValueError, match="not combined with shift"):
        clf.calibrate(X, y_noisy, X_target=X_test)


# ------------------------------------------------- identical copies = 2-D
@pytest.mark.parametrize("cls", [SplitConformalClassifier, SOCOPClassifier])
@pytest.mark.parametrize(
    "conditional, correction",
    [(None, "plugin"), (None, "finite_sample"), ("class", "auto"), ("class", "plugin")],
)
def test_identical_copies_equal_the_single_matrix(data, cls, conditional, correction):
    X, y_noisy, X_test, _ = data
    T = _symmetric(0.2)
    params = {"conditional": conditional, "label_noise_correction": correction}
    if cls is SOCOPClassifier:
        params["lam"] = 0.1
    one = _calibrated(X, y_noisy, T, cls, **params)
    many = _calibrated(X, y_noisy, np.stack([T] * 4), cls, **params)
    np.testing.assert_array_equal(many.threshold_, one.threshold_)
    np.testing.assert_array_equal(many.label_noise_matrix_, T)
    np.testing.assert_array_equal(many.predict_set(X_test), one.predict_set(X_test))
    np.testing.assert_array_equal(many.predict_p(X_test), one.predict_p(X_test))
    thresholds = many.label_noise_thresholds_
    assert thresholds.shape == ((4,) if conditional is None else (4, K))
    np.testing.assert_array_equal(
        thresholds, np.broadcast_to(one.threshold_, thresholds.shape)
    )
    assert one.label_noise_thresholds_ is None


def test_identical_copies_equal_the_single_matrix_per_bin(data):
    X, y_noisy, X_test, _ = data
    T = _symmetric(0.2)
    bins, bins_test = (X[:, 0] > 0.2).astype(int), (X_test[:, 0] > 0.2).astype(int)
    out = []
    for noise in (T, np.stack([T] * 3)):
        clf = SplitConformalClassifier(
            _ProbaColumns().fit(X, y_noisy), label_noise=noise, conditional="bins"
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.calibrate(X, y_noisy, bins=bins)
        out.append(
            (
                clf.threshold_,
                clf.predict_set(X_test, bins=bins_test),
                clf.predict_p(X_test, bins=bins_test),
            )
        )
    for one, many in zip(*out):
        np.testing.assert_array_equal(many, one)
    assert clf.label_noise_thresholds_.shape == (3, 2)


# ---------------------------------------------- the conservative threshold
@pytest.mark.parametrize("conditional", [None, "class"])
def test_threshold_is_the_largest_member_threshold(data, conditional):
    """Per group, the threshold is the largest of the thresholds each matrix
    gives alone, so the sets are the union of the members' sets, and the
    p-values still reproduce the sets."""
    X, y_noisy, X_test, _ = data
    samples = np.stack([_symmetric(r) for r in (0.15, 0.2, 0.25)])
    many = _calibrated(X, y_noisy, samples, conditional=conditional)
    alone = [_calibrated(X, y_noisy, S, conditional=conditional) for S in samples]
    expected = np.max([a.threshold_ for a in alone], axis=0)
    np.testing.assert_array_equal(many.threshold_, expected)
    np.testing.assert_array_equal(
        many.label_noise_thresholds_, np.array([a.threshold_ for a in alone])
    )
    sets = many.predict_set(X_test)
    union = np.any([a.predict_set(X_test) for a in alone], axis=0)
    np.testing.assert_array_equal(sets, union)
    np.testing.assert_array_equal(many.predict_p(X_test) > 0.1, sets)


@pytest.mark.parametrize("conditional", [None, "class"])
def test_threshold_grows_as_the_matrices_spread(data, conditional):
    """Nested sets of plausible matrices (symmetric rates 0.2 +- c, c
    growing) give thresholds that never decrease, and strictly larger ones
    once the spread reaches the less noisy matrices."""
    X, y_noisy, _, _ = data
    previous = None
    grid = [0.2]
    for c in (0.0, 0.02, 0.05, 0.1):
        grid = sorted(set(grid) | {0.2 - c, 0.2 + c})
        samples = np.stack([_symmetric(r) for r in grid])
        t = np.atleast_1d(
            _calibrated(X, y_noisy, samples, conditional=conditional).threshold_
        )
        if previous is not None:
            assert np.all(t >= previous)
        previous = t
    first = np.atleast_1d(_calibrated(X, y_noisy, _symmetric(0.2)).threshold_)
    assert np.max(previous) > np.max(first)


def test_infinite_margin_gives_an_infinite_class_threshold():
    """A class whose estimated clean count ``sum_i W[y~_i, k]`` is not
    positive has an infinite finite-sample margin: its threshold is infinite
    (it is in every set), with a warning, and the p-values reproduce the
    sets. Before, the -inf target found index 0, the class's smallest score:
    it was in almost no set while its p-values said every set."""
    rng = np.random.default_rng(12)
    X, _, y_noisy = _imbalanced(200, rng, signal=0.3)
    W = np.linalg.inv(_symmetric(0.2))
    empty = np.flatnonzero(W[y_noisy].sum(axis=0) <= 0)
    assert empty.tolist() == [5]  # the 4 % class of this draw
    clf = SplitConformalClassifier(
        _ProbaColumns().fit(X, y_noisy), label_noise=0.2, conditional="class"
    )
    with pytest.warns(UserWarning, match="out of reach"):
        clf.calibrate(X, y_noisy)
    assert np.isinf(clf.threshold_[5])
    sets = clf.predict_set(X)
    assert sets[:, 5].all()
    np.testing.assert_array_equal(clf.predict_p(X) > 0.1, sets)


def test_verbose_reports_the_spread(data, capsys):
    X, y_noisy, _, _ = data
    samples = np.stack([_symmetric(r) for r in (0.15, 0.2, 0.25)])
    _calibrated(X, y_noisy, samples, verbose=1)
    out = capsys.readouterr().out
    assert "3 plausible matrices" in out and "the largest used" in out


# ------------------------------------------------------ the corrector
@pytest.fixture(scope="module")
def corrector():
    rng = np.random.default_rng(1)
    n = 1200
    y = rng.choice(4, size=n, p=[0.45, 0.3, 0.15, 0.1])
    X = rng.normal(size=(n, 5))
    X[np.arange(n), y] += 2.0
    y_noisy, _ = make_label_noise(y, kind="symmetric", rate=0.2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ClassConditionalNoiseCorrector(
            LogisticRegression(max_iter=300), random_state=0
        ).fit(X, y_noisy)


def test_corrector_samples_are_reproducible_and_centred(corrector):
    a = corrector.transition_matrix_samples(n_samples=200, random_state=0)
    b = corrector.transition_matrix_samples(n_samples=200, random_state=0)
    c = corrector.transition_matrix_samples(n_samples=200, random_state=1)
    assert a.shape == (200, 4, 4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    np.testing.assert_allclose(a.sum(axis=2), 1.0)
    assert np.all(a >= 0)
    T = corrector.transition_matrix_
    sd = a.std(axis=0)
    assert sd.max() > 0
    # centred: the replicates' mean is within a third of their spread (and
    # 0.02) of the point estimate in every entry
    assert np.all(np.abs(a.mean(axis=0) - T) <= np.maximum(sd / 3, 0.02))


def test_corrector_samples_of_a_given_matrix_are_copies():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    T = np.array([[0.9, 0.1], [0.2, 0.8]])
    clf = ClassConditionalNoiseCorrector(
        LogisticRegression(), transition_matrix=T, random_state=0
    ).fit(X, y)
    out = clf.transition_matrix_samples(n_samples=3, random_state=0)
    np.testing.assert_array_equal(out, np.stack([T] * 3))
    with pytest.raises(ValueError, match="n_samples must be a positive integer"):
        clf.transition_matrix_samples(n_samples=0)


def test_corrector_samples_feed_the_conformal_classifier(corrector):
    """End to end: the replicates are accepted as ``label_noise`` and give
    sets that contain the point estimate's."""
    rng = np.random.default_rng(5)
    n = 800
    y = rng.choice(4, size=n, p=[0.45, 0.3, 0.15, 0.1])
    X = rng.normal(size=(n, 5))
    X[np.arange(n), y] += 2.0
    y_noisy, _ = make_label_noise(y, kind="symmetric", rate=0.2, random_state=1)
    model = corrector.estimator_
    samples = corrector.transition_matrix_samples(n_samples=30, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        point = SplitConformalClassifier(
            model, label_noise=corrector.transition_matrix_
        ).calibrate(X, y_noisy)
        boot = SplitConformalClassifier(model, label_noise=samples).calibrate(
            X, y_noisy
        )
    assert boot.threshold_ >= point.threshold_
    assert np.all(boot.predict_set(X) >= point.predict_set(X))


# ---------------------------------------------------------------- coverage
def test_plausible_matrices_around_the_truth_cover():
    """Imbalanced six-class data, 20 % symmetric noise, 500 noisy calibration
    rows. With plausible matrices that contain the true one (symmetric rates
    0.15, 0.2, 0.25), the threshold is at least the true matrix's, so the
    clean-label coverage is at least the (asymptotically valid) true-matrix
    coverage, calibration by calibration (by construction), and its mean
    over 40 calibrations is at least the level less 3 standard errors
    (a false alarm rate about 0.1 % under validity)."""
    rng = np.random.default_rng(40)
    samples = np.stack([_symmetric(r) for r in (0.15, 0.2, 0.25)])
    cov_true, cov_many = [], []
    for _ in range(40):
        X, _, y_noisy = _imbalanced(500, rng)
        X_test, y_test, _ = _imbalanced(2000, rng)
        rows = np.arange(y_test.shape[0])
        for noise, out in ((_symmetric(0.2), cov_true), (samples, cov_many)):
            sets = _calibrated(X, y_noisy, noise).predict_set(X_test)
            out.append(sets[rows, y_test].mean())
    cov_true, cov_many = np.array(cov_true), np.array(cov_many)
    assert np.all(cov_many >= cov_true)
    se = cov_many.std(ddof=1) / np.sqrt(cov_many.shape[0])
    assert cov_many.mean() >= 0.9 - 3 * se, (cov_many.mean(), se)
