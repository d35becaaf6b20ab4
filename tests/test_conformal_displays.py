"""Values drawn by the conformal displays: coverage per group with its
Clopper-Pearson bars, set-size counts, intervals and 2-D regions."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import matplotlib
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import binomtest
from sklearn.datasets import make_classification
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from sklearn_iclr26.conformal import (
    BonferroniBoxRegressor,
    ConditionalCoverageDisplay,
    ConformalizedQuantileRegressor,
    EllipsoidRegressor,
    OTCPRegressor,
    RegionDisplay,
    SetSizeDisplay,
    SOCOPClassifier,
    SplitConformalClassifier,
)
from sklearn_iclr26.conformal._coverage_display import _clopper_pearson_interval
from sklearn_iclr26.metrics import conditional_coverage_score

matplotlib.use("Agg")
import matplotlib.pyplot as plt


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def classification():
    X, y = make_classification(
        n_samples=900,
        n_features=8,
        n_informative=5,
        n_classes=4,
        weights=[0.55, 0.25, 0.15, 0.05],
        random_state=0,
    )
    labels = np.array(["a", "b", "c", "d"])[y]
    return X[:600], labels[:600], X[600:], labels[600:]


def _bar_bounds(disp):
    """Lower and upper ends of the drawn error bars, read from the artist."""
    segments = disp.errorbar_.lines[2][0].get_segments()
    return (
        np.array([s[0][1] for s in segments]),
        np.array([s[1][1] for s in segments]),
    )


def test_clopper_pearson_matches_scipy_exact_interval():
    hits = np.array([0, 1, 7, 10, 45, 50])
    n = np.array([10, 10, 10, 10, 50, 50])
    lower, upper = _clopper_pearson_interval(hits, n, level=0.9)
    for k, m, lo, hi in zip(hits, n, lower, upper):
        ci = binomtest(int(k), int(m)).proportion_ci(0.9, method="exact")
        assert lo == pytest.approx(ci.low, abs=1e-12)
        assert hi == pytest.approx(ci.high, abs=1e-12)
    # closed forms at the ends: k = n gives lower (alpha/2)^(1/n)
    lower, upper = _clopper_pearson_interval([10, 0], [10, 10], level=0.95)
    assert lower[0] == pytest.approx(0.025**0.1)
    assert upper[1] == pytest.approx(1 - 0.025**0.1)
    assert upper[0] == 1.0 and lower[1] == 0.0
    lower, upper = _clopper_pearson_interval([0], [0])
    assert np.isnan(lower[0]) and np.isnan(upper[0])
    with pytest.raises(ValueError, match="binomial_level"):
        _clopper_pearson_interval([1], [2], level=1.0)


@pytest.mark.parametrize("Estimator", [SplitConformalClassifier, SOCOPClassifier])
def test_coverage_display_by_class_equals_conditional_coverage(
    Estimator, classification
):
    X_fit, y_fit, X_test, y_test = classification
    clf = Estimator(LogisticRegression(), confidence_level=0.8, random_state=0)
    clf.fit(X_fit, y_fit)
    disp = ConditionalCoverageDisplay.from_estimator(
        clf, X_test, y_test, binomial_level=0.9
    )
    sets = clf.predict_set(X_test)
    expected = conditional_coverage_score(y_test, sets, classes=clf.classes_)
    np.testing.assert_array_equal(disp.groups, clf.classes_)
    np.testing.assert_allclose(disp.coverage, expected.coverage)
    np.testing.assert_array_equal(disp.n_samples, expected.n_samples)
    # the drawn points are the coverages, at one x per class
    np.testing.assert_allclose(disp.line_.get_ydata(), expected.coverage)
    assert [t.get_text() for t in disp.ax_.get_xticklabels()] == ["a", "b", "c", "d"]
    # the bars, computed by hand from the hits
    for j, label in enumerate(clf.classes_):
        in_class = y_test == label
        hits = int(sets[in_class, j].sum())
        ci = binomtest(hits, int(in_class.sum())).proportion_ci(0.9, method="exact")
        assert disp.lower[j] == pytest.approx(ci.low, abs=1e-12)
        assert disp.upper[j] == pytest.approx(ci.high, abs=1e-12)
    low, high = _bar_bounds(disp)
    np.testing.assert_allclose(low, disp.lower)
    np.testing.assert_allclose(high, disp.upper)
    assert disp.target_line_.get_ydata()[0] == 0.8


def test_coverage_display_by_bins_and_mondrian_estimator(classification):
    X_fit, y_fit, X_test, y_test = classification
    bins_fit = (X_fit[:, 0] > 0).astype(int)
    bins_test = (X_test[:, 0] > 0).astype(int)
    clf = SplitConformalClassifier(
        LogisticRegression(), conditional="bins", random_state=0
    )
    clf.fit(X_fit, y_fit, bins=bins_fit)
    disp = ConditionalCoverageDisplay.from_estimator(
        clf, X_test, y_test, bins=bins_test, confidence_level=0.7
    )
    sets = clf.predict_set(X_test, confidence_level=0.7, bins=bins_test)
    expected = conditional_coverage_score(
        y_test, sets, bins=bins_test, classes=clf.classes_
    )
    np.testing.assert_array_equal(disp.groups, [0, 1])
    np.testing.assert_allclose(disp.coverage, expected.coverage)
    assert disp.confidence_level == 0.7
    assert disp.ax_.get_xlabel() == "bin"
    # a marginal estimator grouped by bins: the bins only group the points
    marginal = SplitConformalClassifier(LogisticRegression(), random_state=0)
    marginal.fit(X_fit, y_fit)
    disp = ConditionalCoverageDisplay.from_estimator(
        marginal, X_test, y_test, bins=bins_test
    )
    expected = conditional_coverage_score(
        y_test, marginal.predict_set(X_test), bins=bins_test, classes=marginal.classes_
    )
    np.testing.assert_allclose(disp.coverage, expected.coverage)


def test_coverage_display_from_predictions_sparse_and_empty_class():
    y = np.array([0, 0, 1, 1, 1])
    sets = np.array([[1, 0, 0], [0, 1, 0], [0, 1, 0], [1, 1, 0], [1, 0, 0]], dtype=bool)
    disp = ConditionalCoverageDisplay.from_predictions(
        y, sp.csr_array(sets), classes=[0, 1, 2], confidence_level=0.9
    )
    np.testing.assert_allclose(disp.coverage[:2], [0.5, 2 / 3])
    assert np.isnan(disp.coverage[2]) and disp.n_samples[2] == 0
    assert np.isnan(disp.lower[2]) and np.isnan(disp.upper[2])
    disp = ConditionalCoverageDisplay.from_predictions(
        y, sets, classes=[0, 1, 2], confidence_level=None
    )
    assert disp.target_line_ is None
    with pytest.raises(ValueError, match="several"):
        ConditionalCoverageDisplay.from_predictions(
            y, np.stack([sets, sets], axis=-1), confidence_level=0.9
        )


def test_displays_reject_several_levels_and_unfitted(classification):
    X_fit, y_fit, X_test, y_test = classification
    clf = SplitConformalClassifier(LogisticRegression(), random_state=0)
    with pytest.raises(NotFittedError):
        SetSizeDisplay.from_estimator(clf, X_test)
    clf.fit(X_fit, y_fit)
    for Display in (ConditionalCoverageDisplay, SetSizeDisplay):
        with pytest.raises(ValueError, match="one float"):
            Display.from_estimator(clf, X_test, y_test, confidence_level=[0.8, 0.9])


def test_set_size_counts(classification):
    X_fit, y_fit, X_test, _ = classification
    clf = SOCOPClassifier(LogisticRegression(), random_state=0).fit(X_fit, y_fit)
    disp = SetSizeDisplay.from_estimator(clf, X_test, confidence_level=0.95)
    sizes = clf.predict_set(X_test, confidence_level=0.95).sum(axis=1)
    expected = np.bincount(sizes, minlength=5)
    np.testing.assert_array_equal(disp.set_sizes, np.arange(5))
    np.testing.assert_array_equal(disp.counts, expected)
    np.testing.assert_array_equal([b.get_height() for b in disp.line_], expected)
    assert disp.counts.sum() == X_test.shape[0]
    # normalized, shifted next to another display on the same axes
    sets = (
        SplitConformalClassifier(LogisticRegression(), random_state=0)
        .fit(X_fit, y_fit)
        .predict_set(X_test, confidence_level=0.95)
    )
    other = SetSizeDisplay.from_predictions(
        sets, name="LAC", ax=disp.ax_, normalize=True, width=0.4, offset=0.2
    )
    assert other.ax_ is disp.ax_
    heights = np.array([b.get_height() for b in other.line_])
    np.testing.assert_allclose(
        heights, np.bincount(sets.sum(axis=1), minlength=5) / 300
    )
    centres = [b.get_x() + b.get_width() / 2 for b in other.line_]
    np.testing.assert_allclose(centres, np.arange(5) + 0.2)
    # sparse and dense sets give the same counts
    dense = SetSizeDisplay.from_predictions(sets)
    sparse = SetSizeDisplay.from_predictions(sp.csr_array(sets))
    np.testing.assert_array_equal(dense.counts, sparse.counts)


@pytest.fixture(scope="module")
def regression():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, 3))
    Y = np.column_stack([X[:, 0], X[:, 0] - X[:, 1]]) + rng.normal(
        scale=0.3, size=(400, 2)
    )
    return X, Y


@pytest.mark.parametrize(
    "estimator",
    [
        BonferroniBoxRegressor(random_state=0),
        ConformalizedQuantileRegressor(
            GradientBoostingRegressor(loss="quantile", n_estimators=20),
            random_state=0,
        ),
    ],
    ids=["box", "cqr"],
)
def test_region_display_intervals(estimator, regression):
    X, Y = regression
    est = estimator.fit(X[:300], Y[:300, 0])
    disp = RegionDisplay.from_estimator(est, X[300:], Y[300:, 0], feature=1)
    intervals = est.predict_interval(X[300:])
    np.testing.assert_allclose(disp.lower, intervals[:, 0])
    np.testing.assert_allclose(disp.upper, intervals[:, 1])
    np.testing.assert_allclose(disp.feature_values, X[300:, 1])
    assert disp.ax_.get_xlabel() == "x1"
    # the band follows the covariate's order: lower bounds forward, upper back
    order = np.argsort(X[300:, 1], kind="stable")
    vertices = disp.line_.get_paths()[0].vertices
    np.testing.assert_allclose(vertices[1:101, 0], X[300:, 1][order])
    np.testing.assert_allclose(vertices[1:101, 1], intervals[order, 0])
    np.testing.assert_allclose(vertices[102:202, 1], intervals[order[::-1], 1])
    # the legend states the share of targets outside their interval
    y = Y[300:, 0]
    outside = np.mean((y < intervals[:, 0]) | (y > intervals[:, 1]))
    assert f"({outside:.0%} outside)" in disp.points_.get_label()
    # from_predictions takes predict_region's (n, 2, 1) as well
    again = RegionDisplay.from_predictions(
        y, est.predict_region(X[300:]), feature_values=X[300:, 1]
    )
    np.testing.assert_allclose(again.upper, disp.upper)


def test_region_display_boundaries(regression):
    X, Y = regression
    box = BonferroniBoxRegressor(random_state=0).fit(X[:300], Y[:300])
    disp = RegionDisplay.from_estimator(box, X[300:], Y[300:], rows=[0, 5])
    np.testing.assert_allclose(disp.boundaries, box.predict_region(X[300:][[0, 5]]))
    np.testing.assert_array_equal(disp.rows, [0, 5])
    assert len(disp.line_) == 2
    curve = disp.line_[1].get_xydata()
    np.testing.assert_allclose(curve[:4], disp.boundaries[1])
    np.testing.assert_allclose(curve[4], curve[0])  # closed
    labels = [t.get_text() for t in disp.ax_.get_legend().texts]
    assert "BonferroniBoxRegressor: row 5" in labels
    ellipse = EllipsoidRegressor(random_state=0).fit(X[:300], Y[:300])
    disp = RegionDisplay.from_estimator(ellipse, X[300:], Y[300:])
    assert disp.boundaries.shape == (3, 100, 2)
    with pytest.raises(ValueError, match="one or two targets"):
        RegionDisplay.from_estimator(
            EllipsoidRegressor().fit(X, np.column_stack([Y, Y[:, 0]])), X, Y
        )


def test_region_display_grid_agrees_with_contains_and_boundary(regression):
    X, Y = regression
    # OT-CP with two targets has no closed-form boundary: auto uses the grid
    otcp = OTCPRegressor(random_state=0).fit(X[:300], Y[:300])
    disp = RegionDisplay.from_estimator(
        otcp, X[300:], Y[300:], rows=[2], grid_resolution=25
    )
    assert disp.boundaries is None and disp.inside.shape == (1, 25, 25)
    a, b = 7, 12
    point = np.array([[disp.grid_x[a], disp.grid_y[b]]])
    assert disp.inside[0, a, b] == otcp.contains(X[300:][[2]], point)[0]
    assert 0 < disp.inside.mean() < 1
    # on the box, the grid mask is the box itself: |y - corner centre| <= half-width
    box = BonferroniBoxRegressor(random_state=0).fit(X[:300], Y[:300])
    grid = RegionDisplay.from_estimator(
        box, X[300:], Y[300:], rows=[0], method="grid", grid_resolution=40
    )
    corners = box.predict_region(X[300:][[0]])[0]
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    gx, gy = np.meshgrid(grid.grid_x, grid.grid_y, indexing="ij")
    expected = (gx >= lo[0]) & (gx <= hi[0]) & (gy >= lo[1]) & (gy <= hi[1])
    np.testing.assert_array_equal(grid.inside[0], expected)
    with pytest.raises(ValueError, match="d = 1"):
        RegionDisplay.from_estimator(otcp, X[300:], Y[300:], method="boundary")


def test_region_display_from_predictions_checks_shapes():
    with pytest.raises(ValueError, match="regions must be"):
        RegionDisplay.from_predictions(np.zeros(4), np.zeros((4, 3)))
    with pytest.raises(ValueError, match="shape \\(n_samples, 2\\)"):
        RegionDisplay.from_predictions(np.zeros(4), np.zeros((4, 10, 2)))
    disp = RegionDisplay.from_predictions(
        np.zeros(3), np.array([[-1.0, 1.0], [-np.inf, np.inf], [0.5, 2.0]])
    )
    assert disp.ax_.get_xlabel() == "sample index"
    assert "(33% outside)" in disp.points_.get_label()


def test_region_display_cvqr_boundary_and_hpd_grid(regression):
    from sklearn_iclr26.conformal import CVQRRegressor
    from sklearn_iclr26.conformal._test_instances import TEST_PARAMS

    X, Y = regression
    params = TEST_PARAMS["CVQRRegressor"][0]
    pb = CVQRRegressor(random_state=0, **params).fit(X[:300], Y[:300])
    disp = RegionDisplay.from_estimator(pb, X[300:], Y[300:], rows=[0])
    np.testing.assert_allclose(disp.boundaries, pb.predict_region(X[300:][[0]]))
    # HPD regions are density level sets without a boundary: auto uses the grid
    hpd = CVQRRegressor(conformity_score="hpd", random_state=0, **params)
    hpd.fit(X[:300], Y[:300])
    disp = RegionDisplay.from_estimator(
        hpd, X[300:], Y[300:], rows=[0], grid_resolution=15
    )
    assert disp.boundaries is None
    gx, gy = np.meshgrid(disp.grid_x, disp.grid_y, indexing="ij")
    points = np.column_stack([gx.ravel(), gy.ravel()])
    inside = hpd.contains(np.repeat(X[300:][[0]], len(points), axis=0), points)
    np.testing.assert_array_equal(disp.inside[0].ravel(), inside)
