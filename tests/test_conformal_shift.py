"""Shift-weighted conformal prediction (issue 43).

What holds by construction is asserted exactly: equal weights (a domain
classifier that cannot tell the populations apart) give today's sets and
intervals bit for bit; the weighted p-values reproduce the weighted sets; the
permutation p-value of the shift check is valid (its rejection rate under no
shift is within a binomial band). Prior estimation is checked on a simulation
with known priors (BBSE, EM, and BBSE de-mixed under known label noise), with
a tolerance several standard errors wide. Target coverage over many shifted
replicates is in ``benchmarks/shift_conformal_coverage.py``, not here.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.datasets import load_iris
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import cross_validate

from sklearn_iclr26.conformal import (
    BonferroniBoxRegressor,
    ConformalizedQuantileRegressor,
    EllipsoidRegressor,
    SOCOPClassifier,
    SplitConformalClassifier,
)
from sklearn_iclr26.utils._shift import (
    _permutation_pvalue,
    bbse_priors,
    effective_sample_size,
    em_priors,
)

# a domain classifier that cannot tell the populations apart: every ratio is
# the same, so the weighted calibration must be the unweighted one exactly
EQUAL = DummyClassifier(strategy="prior")


def _blobs(n, priors, rng, d=4):
    y = rng.choice(len(priors), size=n, p=priors)
    centers = np.array([[0, 0, 0, 0], [2.5, 0, 0, 0], [0, 2.5, 0, 0]])[:, :d]
    return centers[y] + rng.normal(size=(n, d)), y


def _classifier_data(n=500, seed=0):
    rng = np.random.RandomState(seed)
    X, y = _blobs(n, [1 / 3, 1 / 3, 1 / 3], rng)
    return X, y, rng


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: SplitConformalClassifier(random_state=0, **kw),
        lambda **kw: SplitConformalClassifier(
            conformity_score="aps",
            score_params={"randomized": True},
            random_state=0,
            **kw,
        ),
        lambda **kw: SOCOPClassifier(random_state=0, **kw),
    ],
    ids=["lac", "aps_randomized", "socop"],
)
def test_equal_weights_give_todays_sets_bit_for_bit(make):
    X, y, rng = _classifier_data()
    plain = make().fit(X, y)
    n_cal = plain.n_calibration_samples_
    # target rows as many as calibration rows, both multiples of the 5 folds:
    # every fold's training part has the same domain proportion, so every
    # ratio is the same float
    assert n_cal % 5 == 0
    X_target = X[:n_cal] + 0.5
    shifted = make(shift="covariate", shift_estimator=EQUAL).fit(
        X, y, X_target=X_target
    )
    assert np.unique(shifted.calibration_weights_).size == 1
    X_test = rng.normal(size=(300, 4))
    np.testing.assert_array_equal(
        shifted.predict_set(X_test), plain.predict_set(X_test)
    )
    levels = [0.5, 0.8, 0.95]
    np.testing.assert_array_equal(
        shifted.predict_set(X_test, confidence_level=levels),
        plain.predict_set(X_test, confidence_level=levels),
    )
    np.testing.assert_array_equal(shifted.predict_p(X_test), plain.predict_p(X_test))
    assert shifted.threshold_ == plain.threshold_


@pytest.mark.parametrize(
    "make, d",
    [
        (
            lambda **kw: ConformalizedQuantileRegressor(
                (LinearRegression(), LinearRegression()), random_state=0, **kw
            ),
            1,
        ),
        (
            lambda **kw: ConformalizedQuantileRegressor(
                (LinearRegression(), LinearRegression()),
                symmetric_correction=True,
                random_state=0,
                **kw,
            ),
            1,
        ),
        (lambda **kw: BonferroniBoxRegressor(random_state=0, **kw), 2),
        (lambda **kw: EllipsoidRegressor(random_state=0, **kw), 2),
    ],
    ids=["cqr", "cqr_symmetric", "box", "ellipsoid"],
)
def test_equal_weights_give_todays_regions_bit_for_bit(make, d):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, 3))
    Y = X[:, :d] + rng.normal(size=(400, d)) * (1 + np.abs(X[:, :1]))
    y = Y[:, 0] if d == 1 else Y
    plain = make().fit(X, y)
    assert plain.n_calibration_samples_ % 5 == 0
    X_target = X[: plain.n_calibration_samples_] + 1.0
    shifted = make(shift="covariate", shift_estimator=EQUAL).fit(
        X, y, X_target=X_target
    )
    X_test = rng.normal(size=(200, 3))
    y_test = y[:200]
    for level in (None, [0.5, 0.9]):
        np.testing.assert_array_equal(
            shifted.contains(X_test, y_test, confidence_level=level),
            plain.contains(X_test, y_test, confidence_level=level),
        )
        np.testing.assert_array_equal(
            shifted.region_log_volume(X_test, confidence_level=level),
            plain.region_log_volume(X_test, confidence_level=level),
        )
    if d <= 2:
        np.testing.assert_array_equal(
            shifted.predict_region(X_test), plain.predict_region(X_test)
        )
    np.testing.assert_array_equal(shifted.threshold_, plain.threshold_)


@pytest.mark.parametrize("shift", ["covariate", "label"])
def test_weighted_p_values_reproduce_the_weighted_sets(shift):
    X, y, rng = _classifier_data(800)
    X_target, _ = _blobs(400, [0.6, 0.3, 0.1], rng)
    X_target[:, 2] += 0.3
    clf = SplitConformalClassifier(shift=shift, allow_empty=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        clf.fit(X, y, X_target=X_target)
    X_test = X_target[:200]
    p = clf.predict_p(X_test)
    for level in (0.8, 0.9):
        sets = clf.predict_set(X_test, confidence_level=level)
        np.testing.assert_array_equal(p > 1 - level, sets)


def test_covariate_shift_thresholds_follow_the_weighted_quantile():
    # each test row's threshold is the weighted quantile with its own weight
    from sklearn_iclr26.conformal import weighted_conformal_quantile

    X, y, _ = _classifier_data(600)
    X_target = X[:300] + np.array([0.8, 0, 0, 0])
    clf = SplitConformalClassifier(shift="covariate", random_state=0)
    clf.fit(X, y, X_target=X_target)
    X_test = X_target[:50]
    w_test = clf._shift_ratio.weights(X_test)
    expected = weighted_conformal_quantile(
        clf.calibration_scores_,
        0.9,
        sample_weight=clf.calibration_weights_,
        test_weight=w_test,
    )
    scores = clf.conformity_scores(X_test)
    sets = clf.predict_set(X_test)
    inside = scores <= expected[:, None]
    empty = np.flatnonzero(~inside.any(axis=1))
    if empty.size:
        inside[empty, np.argmax(clf.predict_proba(X_test[empty]), axis=1)] = True
    np.testing.assert_array_equal(sets, inside)
    # the ratio is larger where the target is denser (feature 0 moved up)
    assert np.corrcoef(X_test[:, 0], w_test)[0, 1] > 0.5


def test_label_shift_weights_recover_known_priors():
    rng = np.random.RandomState(0)
    source_priors = np.array([1 / 3, 1 / 3, 1 / 3])
    target_priors = np.array([0.6, 0.3, 0.1])
    X_train, y_train = _blobs(3000, source_priors, rng)
    X_cal, y_cal = _blobs(3000, source_priors, rng)
    X_target, _ = _blobs(6000, target_priors, rng)
    model = LogisticRegression().fit(X_train, y_train)
    est, _ = bbse_priors(y_cal, model.predict(X_cal), model.predict(X_target), 3)
    # BBSE's standard error here is about 0.01 per class
    np.testing.assert_allclose(est, target_priors, atol=0.04)
    em = em_priors(model.predict_proba(X_target), np.bincount(y_train) / 3000)
    np.testing.assert_allclose(em, target_priors, atol=0.04)
    # noisy calibration labels (known T): the de-mixed BBSE still recovers them
    T = np.full((3, 3), 0.1) + 0.7 * np.eye(3)
    noisy = np.array([rng.choice(3, p=T[k]) for k in y_cal])
    naive, _ = bbse_priors(noisy, model.predict(X_cal), model.predict(X_target), 3)
    demixed, source = bbse_priors(
        noisy,
        model.predict(X_cal),
        model.predict(X_target),
        3,
        demix=np.linalg.inv(T),
    )
    np.testing.assert_allclose(demixed, target_priors, atol=0.06)
    np.testing.assert_allclose(source, source_priors, atol=0.05)
    assert np.abs(naive - target_priors).max() > np.abs(demixed - target_priors).max()
    # and the estimator's fit stores the same estimate
    clf = SplitConformalClassifier(shift="label", random_state=0)
    X = np.vstack([X_train, X_cal])
    y = np.r_[y_train, y_cal]
    clf.fit(X, y, X_target=X_target)
    np.testing.assert_allclose(clf.target_priors_, target_priors, atol=0.04)
    np.testing.assert_allclose(
        clf.class_weights_, clf.target_priors_ / clf.source_priors_
    )
    clf_em = SplitConformalClassifier(
        shift="label", label_shift_method="em", random_state=0
    ).fit(X, y, X_target=X_target)
    np.testing.assert_allclose(clf_em.target_priors_, target_priors, atol=0.04)


def test_label_noise_and_shift_compose_into_one_calibration():
    # with equal shift weights the composed calibration is the noisy-label one
    X, y, rng = _classifier_data()
    T = np.full((3, 3), 0.05) + 0.85 * np.eye(3)
    noisy = SplitConformalClassifier(label_noise=T, random_state=0).fit(X, y)
    n_cal = noisy.n_calibration_samples_
    both = SplitConformalClassifier(
        label_noise=T, shift="covariate", shift_estimator=EQUAL, random_state=0
    ).fit(X, y, X_target=X[:n_cal] + 1.0)
    X_test = rng.normal(size=(300, 4))
    np.testing.assert_array_equal(both.predict_set(X_test), noisy.predict_set(X_test))
    assert both.threshold_ == noisy.threshold_
    # label shift with noise: BBSE de-mixed; EM is refused (noisy posteriors)
    X_target, _ = _blobs(400, [0.6, 0.3, 0.1], rng)
    lab = SplitConformalClassifier(label_noise=T, shift="label", random_state=0)
    lab.fit(X, y, X_target=X_target)
    assert lab.threshold_.shape == (3,)
    with pytest.raises(ValueError, match="bbse"):
        SplitConformalClassifier(
            label_noise=T, shift="label", label_shift_method="em"
        ).fit(X, y, X_target=X_target)


def test_shift_check_warns_when_shift_is_ignored():
    X, y, rng = _classifier_data(600)
    X_target = X[:300] + np.array([1.0, 0, 0, 0])
    with pytest.warns(UserWarning, match="shift=None"):
        clf = SplitConformalClassifier(random_state=0).fit(X, y, X_target=X_target)
    assert clf.shift_pvalue_ < 0.01 and clf.shift_auc_ > 0.6
    X_same, _ = _blobs(300, [1 / 3, 1 / 3, 1 / 3], rng)
    clf = SplitConformalClassifier(random_state=0).fit(X, y, X_target=X_same)
    assert 0 < clf.shift_pvalue_ <= 1
    # without X_target nothing is tested
    assert SplitConformalClassifier().fit(X, y).shift_pvalue_ is None
    # OT-CP has no weighted calibration, but runs the check
    from sklearn_iclr26.conformal import OTCPRegressor

    with pytest.warns(UserWarning, match="shift=None"):
        otcp = OTCPRegressor(random_state=0).fit(X, X[:, :2], X_target=X_target)
    assert otcp.shift_pvalue_ < 0.01


def test_permutation_p_value_is_valid_under_no_shift():
    # 300 tests with scores independent of the labels: the rejection rate at
    # 0.1 is binomial(300, <= 0.1), below 0.1 + 3 sd = 0.152 w.p. > 0.998
    rng = np.random.RandomState(0)
    rejections = 0
    for _ in range(300):
        domain = np.r_[np.zeros(60, dtype=int), np.ones(40, dtype=int)]
        folds = np.array_split(rng.permutation(100), 5)
        _, p = _permutation_pvalue(rng.normal(size=100), domain, folds, 99, rng)
        rejections += p <= 0.1
    assert rejections / 300 <= 0.152


def test_poor_overlap_fires_the_ess_warning():
    X, y, _ = _classifier_data(600)
    X_target = X[:200] + np.array([5.0, 5.0, 0, 0])
    clf = SplitConformalClassifier(shift="covariate", random_state=0)
    with pytest.warns(UserWarning, match="effective sample size"):
        clf.fit(X, y, X_target=X_target)
    assert clf.effective_sample_size_ < 9
    assert effective_sample_size(np.ones(7)) == 7.0


def test_bad_input():
    X, y, _ = _classifier_data(300)
    for est, target in (
        (SplitConformalClassifier(shift="covariate"), y),
        (SOCOPClassifier(shift="label"), y),
        (EllipsoidRegressor(shift="covariate"), X[:, :2]),
    ):
        with pytest.raises(ValueError, match="X_target"):
            est.fit(X, target)
        with pytest.raises(ValueError, match="columns of X"):
            est.fit(X, target, X_target=X[:50, :3])
        with pytest.raises(ValueError, match="at least 10"):
            est.fit(X, target, X_target=X[:5])
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=list("abcd"))
    other = pd.DataFrame(X[:50], columns=list("abce"))
    with pytest.raises(ValueError, match="columns of X"):
        SplitConformalClassifier(shift="covariate").fit(frame, y, X_target=other)
    with pytest.raises(ValueError, match="conditional=None"):
        SplitConformalClassifier(shift="label", conditional="class").fit(
            X, y, X_target=X[:50]
        )
    with pytest.raises(ValueError, match="conformal_cv='split'"):
        BonferroniBoxRegressor(shift="covariate", conformal_cv=3).fit(
            X, X[:, :2], X_target=X[:50]
        )
    clf = SplitConformalClassifier(shift="covariate", random_state=0)
    clf.fit(X, y, X_target=X[:60] + 0.3)
    with pytest.raises(ValueError, match="smoothed"):
        clf.predict_p(X[:3], smoothed=True)


def test_x_target_is_routable_metadata():
    X, y = load_iris(return_X_y=True)
    X_target = X[:40] + 0.2
    with sklearn.config_context(enable_metadata_routing=True):
        est = SplitConformalClassifier(shift="covariate", random_state=0)
        est.set_fit_request(X_target=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = cross_validate(
                est, X, y, cv=3, params={"X_target": X_target}, return_estimator=True
            )
    for fitted in out["estimator"]:
        assert fitted.calibration_weights_ is not None
        assert fitted.shift_pvalue_ is not None
    rng = np.random.RandomState(0)
    Y = X[:, :2] + rng.normal(size=(X.shape[0], 2))
    with sklearn.config_context(enable_metadata_routing=True):
        box = BonferroniBoxRegressor(shift="covariate", random_state=0)
        box.set_fit_request(X_target=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = cross_validate(
                box, X, Y, cv=3, params={"X_target": X_target}, return_estimator=True
            )
    assert all(f.calibration_weights_ is not None for f in out["estimator"])


def test_predict_time_weights_are_batched_by_working_memory():
    X, y, rng = _classifier_data(600)
    X_target = X[:300] + np.array([0.8, 0, 0, 0])
    X_test = rng.normal(size=(200, 4)) + np.array([0.8, 0, 0, 0])
    clf = SplitConformalClassifier(shift="covariate", random_state=0)
    clf.fit(X, y, X_target=X_target)
    reg = EllipsoidRegressor(shift="covariate", random_state=0)
    reg.fit(X, X[:, :2] + rng.normal(size=(600, 2)), X_target=X_target)
    whole = (
        clf.predict_set(X_test),
        clf.predict_p(X_test),
        reg.contains(X_test, X_test[:, :2]),
    )
    with sklearn.config_context(working_memory=0.002):  # batches of ~10 rows
        batched = (
            clf.predict_set(X_test),
            clf.predict_p(X_test),
            reg.contains(X_test, X_test[:, :2]),
        )
    for a, b in zip(whole, batched):
        np.testing.assert_array_equal(a, b)
