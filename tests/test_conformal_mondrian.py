"""Mondrian calibration, p-values and several levels of the conformal classifiers.

Issue 31: ``conditional="class" | "bins"``, ``predict_p`` and a sequence of
``confidence_level`` in ``predict_set``, on ``SOCOPClassifier`` and
``SplitConformalClassifier``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
import warnings

import numpy as np
import pytest
from sklearn import clone, config_context
from sklearn.datasets import load_digits, load_iris
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import (
    GridSearchCV,
    StratifiedKFold,
    cross_validate,
    train_test_split,
)
from sklearn.naive_bayes import GaussianNB

from sklearn_iclr26.conformal import SOCOPClassifier, SplitConformalClassifier
from sklearn_iclr26.metrics import conditional_coverage_score, coverage_score

CLASSES = [
    pytest.param(lambda **kw: SOCOPClassifier(GaussianNB(), lam=0.1, **kw), id="socop"),
    pytest.param(lambda **kw: SOCOPClassifier(GaussianNB(), **kw), id="socop_auto"),
    pytest.param(lambda **kw: SplitConformalClassifier(GaussianNB(), **kw), id="lac"),
    pytest.param(
        lambda **kw: SplitConformalClassifier(
            GaussianNB(), conformity_score="aps", **kw
        ),
        id="aps",
    ),
    pytest.param(
        lambda **kw: SplitConformalClassifier(
            GaussianNB(),
            conformity_score="raps",
            score_params={"randomized": True},
            **kw,
        ),
        id="raps_randomized",
    ),
]
CONDITIONAL = [None, "class", "bins"]


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    bins = (X[:, 20] > 8).astype(int) + 2 * (X[:, 43] > 8)
    return X, y, bins


def _bins_kw(conditional, bins):
    return {"bins": bins} if conditional == "bins" else {}


def _rule(clf, p_values, level, groups=None):
    """The set rule on p-values: (n + 1) p > (n + 1)(1 - level), 1e-12 slack."""
    if clf.conditional is None:
        n = np.full(p_values.shape, clf.n_calibration_samples_)
    elif clf.conditional == "class":
        n = np.broadcast_to(clf.n_calibration_per_bin_, p_values.shape)
    else:
        n = np.broadcast_to(clf.n_calibration_per_bin_[groups][:, None], p_values.shape)
    return np.rint((n + 1) * p_values) > (n + 1) * (1 - level) + 1e-12


@pytest.mark.parametrize("make", CLASSES)
@pytest.mark.parametrize("conditional", CONDITIONAL)
def test_thresholds_are_per_group_conformal_quantiles(make, conditional, digits):
    X, y, bins = digits
    clf = make(conditional=conditional, random_state=0)
    clf.fit(X, y, **_bins_kw(conditional, bins))
    if conditional is None:
        assert np.ndim(clf.threshold_) == 0
        assert not hasattr(clf, "bins_")
        return
    names = clf.classes_ if conditional == "class" else clf.bins_
    if conditional == "bins":
        np.testing.assert_array_equal(clf.bins_, np.unique(bins))
    assert clf.threshold_.shape == names.shape
    assert clf.n_calibration_per_bin_.sum() == clf.n_calibration_samples_
    for g, scores in enumerate(clf.calibration_bin_scores_):
        n = scores.shape[0]
        assert n == clf.n_calibration_per_bin_[g]
        assert np.all(scores[:-1] <= scores[1:])
        rank = int(np.ceil((n + 1) * 0.9 - 1e-12))
        assert clf.threshold_[g] == scores[rank - 1]
    np.testing.assert_array_equal(
        np.sort(np.concatenate(clf.calibration_bin_scores_)), clf.calibration_scores_
    )


@pytest.mark.parametrize("make", CLASSES)
@pytest.mark.parametrize("conditional", CONDITIONAL)
def test_sets_are_the_per_group_threshold_rule(make, conditional, digits):
    X, y, bins = digits
    clf = make(conditional=conditional, allow_empty=True, random_state=0)
    clf.fit(X, y, **_bins_kw(conditional, bins))
    kw = _bins_kw(conditional, bins)
    sets = clf.predict_set(X, **kw)
    scores = clf.conformity_scores(X)
    if conditional is None:
        expected = scores <= clf.threshold_
    elif conditional == "class":
        expected = scores <= clf.threshold_[None, :]
    else:
        groups = np.searchsorted(clf.bins_, bins)
        expected = scores <= clf.threshold_[groups][:, None]
    np.testing.assert_array_equal(sets, expected)


@pytest.mark.parametrize("make", CLASSES)
@pytest.mark.parametrize("conditional", CONDITIONAL)
@pytest.mark.parametrize("allow_empty", [True, False])
def test_unsmoothed_p_values_reproduce_the_sets(make, conditional, allow_empty, digits):
    X, y, bins = digits
    clf = make(conditional=conditional, allow_empty=allow_empty, random_state=0)
    clf.fit(X, y, **_bins_kw(conditional, bins))
    kw = _bins_kw(conditional, bins)
    p = clf.predict_p(X, **kw)
    assert p.shape == (X.shape[0], clf.classes_.shape[0])
    assert np.all((p > 0) & (p <= 1))
    groups = np.searchsorted(clf.bins_, bins) if conditional == "bins" else None
    for level in (0.8, 0.9, 0.95):
        sets = clf.predict_set(X, confidence_level=level, **kw)
        expected = _rule(clf, p, level, groups)
        if not allow_empty:
            # the top label, or with conditional="class" the largest p-value
            empty = ~expected.any(axis=1)
            rank = p if conditional == "class" else clf.predict_proba(X)
            expected[np.flatnonzero(empty), np.argmax(rank[empty], 1)] = True
        np.testing.assert_array_equal(sets, expected)
        # the plain inequality agrees except where (n + 1)(1 - level) is an
        # integer that floating point misses by one rounding
        assert np.mean((p > 1 - level) != expected) < 0.05


@pytest.mark.parametrize("conditional", CONDITIONAL)
def test_smoothed_p_values_are_randomised_and_bounded(conditional, digits):
    X, y, bins = digits
    clf = SplitConformalClassifier(
        GaussianNB(), conditional=conditional, random_state=0
    )
    clf.fit(X, y, **_bins_kw(conditional, bins))
    kw = _bins_kw(conditional, bins)
    plain = clf.predict_p(X, **kw)
    a = clf.predict_p(X, smoothed=True, random_state=0, **kw)
    b = clf.predict_p(X, smoothed=True, random_state=0, **kw)
    c = clf.predict_p(X, smoothed=True, random_state=1, **kw)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    # smoothing only lowers a p-value, by less than one calibration point's share
    assert np.all(a <= plain + 1e-15) and np.all(a > 0)
    n = (
        clf.n_calibration_samples_
        if conditional is None
        else clf.n_calibration_per_bin_.min()
    )
    assert np.all(
        plain - a <= (1 + np.max(np.unique(plain, return_counts=True)[1])) / (n + 1)
    )


def test_smoothed_p_values_are_uniform_on_the_true_label(digits):
    # the true-label smoothed p-value is exactly uniform over calibration +
    # test exchangeability: averaged over 20 splits, P(p <= t) within 3 se of t
    X, y, _ = digits
    hits = {t: [] for t in (0.05, 0.1, 0.2, 0.5)}
    for seed in range(20):
        X_fit, X_test, y_fit, y_test = train_test_split(
            X, y, test_size=0.3, random_state=seed
        )
        clf = SplitConformalClassifier(GaussianNB(), random_state=seed).fit(
            X_fit, y_fit
        )
        p = clf.predict_p(X_test, smoothed=True, random_state=seed)
        true = p[np.arange(len(y_test)), np.searchsorted(clf.classes_, y_test)]
        for t, values in hits.items():
            values.append(np.mean(true <= t))
    for t, values in hits.items():
        se = np.std(values) / np.sqrt(len(values))
        assert abs(np.mean(values) - t) <= 3 * se + 0.01, (t, np.mean(values))


@pytest.mark.parametrize("make", CLASSES)
@pytest.mark.parametrize("conditional", CONDITIONAL)
def test_several_levels_equal_separate_calls_and_nest(make, conditional, digits):
    X, y, bins = digits
    clf = make(conditional=conditional, random_state=0)
    clf.fit(X, y, **_bins_kw(conditional, bins))
    kw = _bins_kw(conditional, bins)
    levels = [0.7, 0.9, 0.8, 0.97]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # 0.97 on a small class
        sets = clf.predict_set(X, confidence_level=levels, **kw)
        sparse = clf.predict_set(X, confidence_level=levels, output="sparse", **kw)
        separate = [clf.predict_set(X, confidence_level=lv, **kw) for lv in levels]
    assert sets.shape == (X.shape[0], clf.classes_.shape[0], len(levels))
    assert isinstance(sparse, list) and len(sparse) == len(levels)
    for i, level_sets in enumerate(separate):
        np.testing.assert_array_equal(sets[..., i], level_sets)
        np.testing.assert_array_equal(sparse[i].toarray(), level_sets)
    order = np.argsort(levels)
    for low, high in itertools.pairwise(order):
        assert np.all(sets[..., low] <= sets[..., high])
    one = clf.predict_set(
        X[:5], confidence_level=[0.9], **_bins_kw(conditional, bins[:5])
    )
    assert one.shape == (5, clf.classes_.shape[0], 1)
    np.testing.assert_array_equal(one[..., 0], separate[1][:5])


def test_several_levels_are_checked(digits):
    X, y, _ = digits
    clf = SplitConformalClassifier(GaussianNB(), random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="open interval"):
        clf.predict_set(X[:3], confidence_level=[0.9, 1.0])
    with pytest.raises(ValueError, match="empty"):
        clf.predict_set(X[:3], confidence_level=[])
    with pytest.raises(TypeError):
        clf.predict_set(X[:3], confidence_level="0.9")


@pytest.mark.parametrize("make", CLASSES)
def test_bins_errors(make, digits):
    X, y, bins = digits
    with pytest.raises(ValueError, match="needs the Mondrian bin"):
        make(conditional="bins", random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="only"):
        make(random_state=0).fit(X, y, bins=bins)
    with pytest.raises(ValueError, match="entries"):
        make(conditional="bins", random_state=0).fit(X, y, bins=bins[:-1])
    clf = make(conditional="bins", random_state=0).fit(X, y, bins=bins)
    with pytest.raises(ValueError, match="never seen at calibration"):
        clf.predict_set(X[:4], bins=[0, 1, 7, 0])
    with pytest.raises(ValueError, match="never seen at calibration"):
        clf.predict_p(X[:4], bins=[0, 1, 7, 0])
    with pytest.raises(ValueError, match="needs the Mondrian bin"):
        clf.predict_set(X[:4])
    unconditional = make(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="only"):
        unconditional.predict_set(X[:4], bins=[0, 0, 0, 0])


@pytest.mark.parametrize("make", CLASSES)
def test_too_small_bin_warns_and_gets_the_trivial_set(make, digits):
    X, y, bins = digits
    bins = bins.copy()
    rare = np.flatnonzero(bins == 0)[:12]
    bins[rare] = 9  # about 3 calibration rows: too few at 0.9
    clf = make(conditional="bins", random_state=0)
    with pytest.warns(UserWarning, match=r"calibration \(bin 9\) set has \d samples"):
        clf.fit(X, y, bins=bins)
    g = int(np.searchsorted(clf.bins_, 9))
    assert np.isinf(clf.threshold_[g])
    assert np.isfinite(np.delete(clf.threshold_, g)).all()
    sets = clf.predict_set(X, bins=bins)
    assert sets[bins == 9].all()
    assert not sets[bins != 9].all()


def test_too_small_class_warns_and_is_always_in_the_set(digits):
    X, y, _ = digits
    keep = (y != 3) | (np.cumsum(y == 3) <= 14)  # about 4 calibration rows of 3
    X, y = X[keep], y[keep]
    clf = SplitConformalClassifier(GaussianNB(), conditional="class", random_state=0)
    with pytest.warns(UserWarning, match=r"calibration \(class 3\) set"):
        clf.fit(X, y)
    assert (
        np.isinf(clf.threshold_[3]) and np.isfinite(np.delete(clf.threshold_, 3)).all()
    )
    assert clf.predict_set(X)[:, 3].all()


def _crepes_split(X, y, seed, level):
    """A fitted model, calibration and test rows with every class's
    ``(n_c + 1)(1 - level)`` away from an integer (see the test)."""
    X_fit, X_rest, y_fit, y_rest = train_test_split(
        X, y, test_size=0.5, random_state=seed
    )
    X_cal, X_test, y_cal, y_test = train_test_split(
        X_rest, y_rest, test_size=0.4, random_state=seed
    )
    return GaussianNB().fit(X_fit, y_fit), X_cal, y_cal, X_test, y_test


def test_mondrian_lac_equals_crepes_class_conditional(digits):
    """Exact equality with crepes' Mondrian sets and p-values.

    crepes includes a label when its unsmoothed p-value is ``>= 1 - level``,
    this package when it is ``> 1 - level`` (the split-conformal quantile
    ``ceil((n + 1) level)``): the two differ only for a class (or bin) whose
    ``(n + 1)(1 - level)`` is an integer, where crepes takes one more
    calibration score. The calibration classes here avoid that case (checked),
    and the p-values are equal everywhere.
    """
    crepes = pytest.importorskip("crepes")
    X, y, _ = digits
    level = 0.9
    model, X_cal, y_cal, X_test, _ = _crepes_split(X, y, 0, level)
    counts = np.bincount(y_cal)
    frac = ((counts + 1) * (1 - level)) % 1
    assert np.all((frac > 1e-6) & (frac < 1 - 1e-6)), counts
    clf = SplitConformalClassifier(
        FrozenEstimator(model), conditional="class", allow_empty=True
    ).calibrate(X_cal, y_cal)
    alphas_cal = 1 - model.predict_proba(X_cal)[np.arange(len(y_cal)), y_cal]
    alphas_test = 1 - model.predict_proba(X_test)
    cc = crepes.ConformalClassifier().fit(alphas_cal, bins=y_cal)
    theirs = np.column_stack(
        [
            cc.predict_set(
                alphas_test,
                bins=np.full(len(X_test), c),
                confidence=level,
                smoothing=False,
            )[:, c]
            for c in range(10)
        ]
    ).astype(bool)
    ours = clf.predict_set(X_test)
    np.testing.assert_array_equal(ours, theirs)
    p_theirs = np.column_stack(
        [
            cc.predict_p(alphas_test, bins=np.full(len(X_test), c), smoothing=False)[
                :, c
            ]
            for c in range(10)
        ]
    )
    np.testing.assert_allclose(clf.predict_p(X_test), p_theirs, rtol=0, atol=1e-15)
    assert ours.sum() > len(X_test)  # not all singletons: a test that can fail


def test_mondrian_bins_equals_crepes(digits):
    crepes = pytest.importorskip("crepes")
    X, y, bins = digits
    level = 0.9
    idx = np.arange(len(y))
    model, _, _, _, _ = _crepes_split(X, y, 1, level)
    rng = np.random.RandomState(1)
    rest = rng.permutation(idx)[: len(idx) // 2]
    cal, test = rest[:500], rest[500:]
    counts = np.bincount(bins[cal])
    frac = ((counts + 1) * (1 - level)) % 1
    assert np.all((frac > 1e-6) & (frac < 1 - 1e-6)), counts
    clf = SplitConformalClassifier(
        FrozenEstimator(model), conditional="bins", allow_empty=True
    ).calibrate(X[cal], y[cal], bins=bins[cal])
    alphas_cal = 1 - model.predict_proba(X[cal])[np.arange(len(cal)), y[cal]]
    alphas_test = 1 - model.predict_proba(X[test])
    cc = crepes.ConformalClassifier().fit(alphas_cal, bins=bins[cal])
    theirs = cc.predict_set(
        alphas_test, bins=bins[test], confidence=level, smoothing=False
    ).astype(bool)
    np.testing.assert_array_equal(clf.predict_set(X[test], bins=bins[test]), theirs)
    np.testing.assert_allclose(
        clf.predict_p(X[test], bins=bins[test]),
        cc.predict_p(alphas_test, bins=bins[test], smoothing=False),
        rtol=0,
        atol=1e-15,
    )


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(
            lambda **kw: SplitConformalClassifier(GaussianNB(), **kw), id="lac"
        ),
        pytest.param(
            lambda **kw: SOCOPClassifier(GaussianNB(), lam=0.1, **kw), id="socop"
        ),
    ],
)
def test_class_conditional_coverage_is_valid_on_digits(make, digits):
    """Per-class coverage at 0.9, averaged over 20 random splits of digits.

    Split conformal per class guarantees ``E[coverage | class] >= 0.9``; the
    mean over splits of every class's test coverage must be at least
    ``0.9 - 3 se`` (se: the standard error over the splits), plus 0.005 for
    the finite number of splits. The marginal version misses some class by
    more, which shows that the test can fail.
    """
    X, y, _ = digits
    per_class = {None: [], "class": []}
    for seed in range(20):
        X_fit, X_test, y_fit, y_test = train_test_split(
            X, y, test_size=0.3, random_state=seed, stratify=y
        )
        for conditional, values in per_class.items():
            clf = make(conditional=conditional, calibration_size=0.4, random_state=seed)
            clf.fit(X_fit, y_fit)
            result = conditional_coverage_score(
                y_test, clf.predict_set(X_test), classes=clf.classes_
            )
            values.append(result.coverage)
    cond = np.array(per_class["class"])
    bound = 0.9 - 3 * cond.std(axis=0) / np.sqrt(len(cond)) - 0.005
    assert np.all(cond.mean(axis=0) >= bound), (cond.mean(axis=0), bound)
    marginal = np.array(per_class[None]).mean(axis=0)
    assert marginal.min() < 0.9 - 0.02, marginal


def test_routing_bins_through_grid_search_and_cross_validate(digits):
    X, y, bins = digits
    est = SplitConformalClassifier(GaussianNB(), conditional="bins", random_state=0)
    with config_context(enable_metadata_routing=True):
        est = est.set_fit_request(bins=True)
        search = GridSearchCV(est, {"confidence_level": [0.8, 0.9]}, cv=3)
        search.fit(X, y, bins=bins)
        best = search.best_estimator_
        assert best.conditional == "bins"
        np.testing.assert_array_equal(best.bins_, np.unique(bins))
        result = cross_validate(
            est, X, y, cv=3, params={"bins": bins}, return_estimator=True
        )
        for fitted in result["estimator"]:
            assert fitted.threshold_.shape == (4,)
        # without a request the bins are refused, not silently dropped
        plain = SplitConformalClassifier(
            GaussianNB(), conditional="bins", random_state=0
        )
        with pytest.raises(ValueError, match="bins"):
            GridSearchCV(plain, {"confidence_level": [0.9]}, cv=3).fit(X, y, bins=bins)
    # without routing, GridSearchCV splits and passes fit params as before
    search = GridSearchCV(
        SplitConformalClassifier(GaussianNB(), conditional="bins", random_state=0),
        {"confidence_level": [0.8, 0.9]},
        cv=3,
    ).fit(X, y, bins=bins)
    sets = search.best_estimator_.predict_set(X, bins=bins)
    assert sets.shape == (X.shape[0], 10)


def test_routing_keeps_sample_weight_to_the_estimator():
    X, y = load_iris(return_X_y=True)
    w = np.ones(len(y))
    with config_context(enable_metadata_routing=True):
        inner = GaussianNB().set_fit_request(sample_weight=True)
        est = SplitConformalClassifier(inner, conditional="bins", random_state=0)
        est.set_fit_request(bins=True)
        est.fit(X, y, bins=y % 2, sample_weight=w)
        assert est.threshold_.shape == (2,)


def test_conditional_coverage_score():
    sets = np.array([[True, False], [True, False], [False, True], [True, True]])
    y = np.array([0, 1, 1, 0])
    result = conditional_coverage_score(y, sets)
    np.testing.assert_array_equal(result.groups, [0, 1])
    np.testing.assert_array_equal(result.coverage, [1.0, 0.5])
    np.testing.assert_array_equal(result.n_samples, [2, 2])
    result = conditional_coverage_score(y, sets, bins=["b", "a", "a", "b"])
    np.testing.assert_array_equal(result.groups, ["a", "b"])
    np.testing.assert_array_equal(result.coverage, [0.5, 1.0])
    weighted = np.sum(result.coverage * result.n_samples) / result.n_samples.sum()
    assert weighted == coverage_score(y, sets)
    labelled = conditional_coverage_score(
        ["x", "y", "y", "x"], sets, classes=["x", "y", "z"][:2]
    )
    np.testing.assert_array_equal(labelled.groups, ["x", "y"])
    empty_class = conditional_coverage_score(
        [0, 0], np.ones((2, 3), bool), classes=[0, 1, 2]
    )
    assert np.isnan(empty_class.coverage[1:]).all()
    with pytest.raises(ValueError, match="entries"):
        conditional_coverage_score(y, sets, bins=[0, 1])


@pytest.mark.parametrize("conditional", ["class", "bins"])
def test_conditional_verbose_and_pickle(conditional, digits, capsys):
    import pickle

    X, y, bins = digits
    kw = _bins_kw(conditional, bins)
    clf = SOCOPClassifier(
        GaussianNB(), conditional=conditional, verbose=1, random_state=0
    )
    clf.fit(X, y, **kw)
    assert "threshold_=[" in capsys.readouterr().out
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict_set(X, **kw), clf.predict_set(X, **kw))


def test_crepes_takes_one_score_more_where_the_rank_is_an_integer(digits):
    """The one difference from crepes: with ``(n + 1)(1 - level)`` an integer
    (here n = 99 at 0.9), crepes' ``p >= 1 - level`` takes the calibration
    score of rank ``(n + 1) level + 1``, the split-conformal rule (``p > 1 -
    level``) the one of rank ``(n + 1) level``."""
    crepes = pytest.importorskip("crepes")
    X, y, _ = digits
    model, X_cal, y_cal, X_test, _ = _crepes_split(X, y, 0, 0.9)
    X_cal, y_cal = X_cal[:99], y_cal[:99]
    clf = SplitConformalClassifier(
        FrozenEstimator(model), conditional="bins", allow_empty=True
    ).calibrate(X_cal, y_cal, bins=np.zeros(99))
    alphas_cal = 1 - model.predict_proba(X_cal)[np.arange(99), y_cal]
    alphas_test = 1 - model.predict_proba(X_test)
    cc = crepes.ConformalClassifier().fit(alphas_cal, bins=np.zeros(99))
    theirs = cc.predict_set(
        alphas_test, bins=np.zeros(len(X_test)), confidence=0.9, smoothing=False
    ).astype(bool)
    ours = clf.predict_set(X_test, bins=np.zeros(len(X_test)))
    ranked = np.sort(alphas_cal)
    np.testing.assert_array_equal(ours, alphas_test <= ranked[89])
    np.testing.assert_array_equal(theirs, alphas_test <= ranked[90])
    assert (theirs & ~ours).any() and not (ours & ~theirs).any()


def test_set_scorers_take_bins_and_tune_on_per_bin_coverage(digits):
    """The set scorers pass ``bins`` to ``predict_set``; ``worst_group_coverage``
    is the smallest per-bin coverage; in a search the bins are routed to the
    scorer as metadata (``set_score_request(bins=True)``)."""
    from sklearn_iclr26.conformal._scorers import SCORERS

    X, y, bins = digits
    X_fit, X_test, y_fit, y_test, b_fit, b_test = train_test_split(
        X, y, bins, test_size=0.4, random_state=0
    )
    est = SplitConformalClassifier(GaussianNB(), conditional="bins", random_state=0)
    est.fit(X_fit, y_fit, bins=b_fit)
    sets = est.predict_set(X_test, bins=b_test)
    per_bin = conditional_coverage_score(y_test, sets, bins=b_test).coverage
    assert SCORERS["set_coverage"](est, X_test, y_test, bins=b_test) == (
        coverage_score(y_test, sets)
    )
    assert SCORERS["worst_group_coverage"](est, X_test, y_test, bins=b_test) == (
        per_bin.min()
    )
    per_class = conditional_coverage_score(y_test, sets).coverage
    assert SCORERS["worst_group_coverage"](est, X_test, y_test, bins=b_test) != (
        per_class.min()
    )
    assert SCORERS["neg_mean_set_size"](est, X_test, y_test, bins=b_test) == (
        -sets.sum(axis=1).mean()
    )
    with pytest.raises(ValueError, match="bins"):  # a Mondrian estimator needs them
        SCORERS["set_efficiency"](est, X_test, y_test)

    scorer = SCORERS["worst_group_coverage"]
    if not hasattr(scorer, "set_score_request"):
        pytest.skip("the package's scorers take set_score_request under issue 32")
    with config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            est.set_fit_request(bins=True),
            {"confidence_level": [0.7, 0.95]},
            scoring=scorer.set_score_request(bins=True),
            cv=3,
        ).fit(X, y, bins=bins)
    # the higher level covers every bin better
    assert search.best_params_ == {"confidence_level": 0.95}
    # the routed score is the worst per-bin coverage of each held-out fold
    folds = []
    for train, test in StratifiedKFold(3).split(X, y):
        fold = clone(est).set_params(confidence_level=0.95)
        fold.fit(X[train], y[train], bins=bins[train])
        fold_sets = fold.predict_set(X[test], bins=bins[test])
        folds.append(
            conditional_coverage_score(
                y[test], fold_sets, bins=bins[test]
            ).coverage.min()
        )
    assert search.cv_results_["mean_test_score"][1] == pytest.approx(
        np.mean(folds), abs=1e-12
    )
