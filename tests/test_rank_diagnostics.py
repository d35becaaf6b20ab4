"""Tests of metrics.rank_calibration: exact on a known Gaussian model."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pytest
from scipy import stats

from sklearn_iclr26.metrics import rank_calibration


def _gaussian_model(n, d, seed):
    """Y | X = x ~ N(A x, S(x)) with S(x) = (1 + x_0^2) L L^T, and its true ranks."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 2))
    A = rng.normal(size=(d, 2))
    L = np.tril(rng.normal(size=(d, d))) + 2 * np.eye(d)
    scale = np.sqrt(1 + X[:, 0] ** 2)
    Y = X @ A.T + scale[:, None] * (rng.normal(size=(n, d)) @ L.T)
    # the exact conditional rank map (the Brenier map of a Gaussian is affine)
    ranks = np.linalg.solve(L, (Y - X @ A.T).T).T / scale[:, None]
    return X, Y, ranks


@pytest.mark.parametrize("d", [1, 3, 8])
def test_exact_on_a_known_gaussian_model(d):
    X, _, ranks = _gaussian_model(4000, d, seed=d)
    res = rank_calibration(ranks, x=X, n_bins=4, quantiles=[0.5, 0.9])
    norms = np.linalg.norm(ranks, axis=1)
    # every statistic is the textbook one, computed exactly
    assert res.dimension == d and res.n_samples == 4000
    assert res.mean_squared_norm == pytest.approx(np.mean(norms**2), rel=1e-12)
    assert res.expected_squared_norm == d
    ks = stats.kstest(norms**2, stats.chi2(d).cdf)
    assert res.ks_statistic == pytest.approx(ks.statistic, rel=1e-10)
    assert res.ks_pvalue == pytest.approx(ks.pvalue, rel=1e-8)
    np.testing.assert_allclose(
        res.reference_quantiles, np.sqrt(stats.chi2(d).ppf([0.5, 0.9]))
    )
    np.testing.assert_allclose(res.norm_quantiles, np.quantile(norms, [0.5, 0.9]))
    # the true map passes: ratio within 4 standard errors (sd of ||U||^2 is
    # sqrt(2 d)), KS p-value above 1e-3 (a stated 0.1% error rate)
    se = np.sqrt(2 * d / 4000)
    assert abs(res.squared_norm_ratio - 1) < 4 * se / d
    assert res.ks_pvalue > 1e-3
    assert len(res.bins) == 4
    assert sum(b["n_samples"] for b in res.bins) == 4000
    for b in res.bins:
        assert b["ks_pvalue"] > 1e-3 / 4  # Bonferroni over the bins


def test_detects_a_miscalibrated_and_a_non_adaptive_map():
    X, _, ranks = _gaussian_model(4000, 2, seed=0)
    wide = rank_calibration(1.3 * ranks)
    assert wide.squared_norm_ratio == pytest.approx(
        1.69 * rank_calibration(ranks).squared_norm_ratio
    )
    assert wide.ks_pvalue < 1e-6
    # a map ignoring the x-dependent scale: fine on average, wrong by bin
    scale = np.sqrt(1 + X[:, 0] ** 2)
    flat = ranks * scale[:, None] / np.sqrt(np.mean(scale**2))
    res = rank_calibration(flat, x=X[:, 0], n_bins=3)
    ratios = [b["squared_norm_ratio"] for b in res.bins]
    assert max(ratios) / min(ratios) > 1.5


@pytest.mark.parametrize(
    "reference, expected", [("uniform_ball", 3 / 5), ("spherical_uniform", 1 / 3)]
)
def test_bounded_references(reference, expected):
    rng = np.random.RandomState(0)
    z = rng.normal(size=(20000, 3))
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    u = rng.uniform(size=(20000, 1))
    radius = u ** (1 / 3) if reference == "uniform_ball" else u
    res = rank_calibration(z * radius, reference=reference)
    assert res.expected_squared_norm == pytest.approx(expected)
    assert abs(res.squared_norm_ratio - 1) < 0.02
    assert res.ks_pvalue > 1e-3


def test_group_labels_and_bad_input():
    rng = np.random.RandomState(0)
    U = rng.normal(size=(300, 2))
    groups = np.array(["a", "b", "c"])[rng.randint(3, size=300)]
    res = rank_calibration(U, x=groups)
    assert [b["bin"] for b in res.bins] == ["a", "b", "c"]
    with pytest.raises(ValueError, match="quantiles"):
        rank_calibration(U, quantiles=[0.5, 1.0])
    with pytest.raises(ValueError, match="inconsistent"):
        rank_calibration(U, x=np.zeros(10))
