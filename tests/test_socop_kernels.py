"""The compiled SOCOP set kernel equals the numpy path bit for bit."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pytest

from sklearn_iclr26.conformal import SOCOPClassifier, _socop_kernels, socop_sets
from sklearn_iclr26.conformal._conformity_scores import _socop_sets, socop_scores

pytest.importorskip("numba")


def _proba(n, K, seed, scale=2.0):
    rng = np.random.default_rng(seed)
    z = rng.normal(scale=scale, size=(n, K))
    P = np.exp(z - z.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    P[: n // 10] = np.round(P[: n // 10], 1)  # ties, exact zeros
    P[: n // 10] /= P[: n // 10].sum(1, keepdims=True)
    return P


@pytest.mark.parametrize("K", [2, 3, 10, 100])
@pytest.mark.parametrize("lam", [0.0, 0.01, 0.3])
def test_compiled_sets_equal_the_numpy_path(K, lam):
    P = _proba(3000, K, seed=K)
    for q in (0.05, 0.5, 1.0, 2.0, 7.5, 50.0):
        numpy_sets = _socop_sets(P, lam, q)
        compiled = _socop_kernels.socop_sets_fused(P, lam, q, validate=True)
        assert compiled is not None
        np.testing.assert_array_equal(compiled, numpy_sets)
        # and both equal the thresholded scores
        np.testing.assert_array_equal(compiled, socop_scores(P, lam=lam) <= q)


def test_boundary_rows_are_settled_exactly():
    # quantiles equal to a row's tau*: its hinge margin is zero up to
    # rounding, and the exact tau* of the sorted path decides
    lam = 0.1
    P = np.array([[0.5, 0.5, 0.0], [0.4, 0.35, 0.25], [0.7, 0.2, 0.1]])
    tau_rows = socop_scores(P, lam=lam)
    for quantile in np.unique(tau_rows[np.isfinite(tau_rows)]):
        compiled = _socop_kernels.socop_sets_fused(P, lam, quantile, validate=True)
        np.testing.assert_array_equal(compiled, _socop_sets(P, lam, quantile))
        np.testing.assert_array_equal(compiled, tau_rows <= quantile)


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.nan, "NaN or infinite"),
        (np.inf, "NaN or infinite"),
        (-0.1, "negative"),
        (0.9, "sum to 1"),
    ],
)
def test_invalid_rows_raise_the_numpy_errors(bad, match):
    P = _proba(50, 4, seed=0)
    P[17, 2] = bad
    assert _socop_kernels.socop_sets_fused(P, 0.1, 1.0, validate=True) is None
    with pytest.raises(ValueError, match=match):
        socop_sets(P, lam=0.1, quantile=1.0)


def test_rows_near_the_sum_tolerance_go_through_the_numpy_check():
    # accepted by np.allclose(atol=1e-6) yet not by the kernel's margin: the
    # numpy check decides, as before
    P = np.array([[0.5, 0.5 + 1.1e-5 - 1e-12], [0.3, 0.7]])
    assert _socop_kernels.socop_sets_fused(P, 0.1, 1.0, validate=True) is None
    np.testing.assert_array_equal(
        socop_sets(P, lam=0.1, quantile=1.0), _socop_sets(P, 0.1, 1.0)
    )


def test_estimator_path_uses_the_kernel_and_matches_without_numba(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 0.5)
    clf = SOCOPClassifier(confidence_level=0.9, random_state=0).fit(X, y)
    compiled = clf.predict_set(X)
    monkeypatch.setitem(_socop_kernels._COMPILED, "socop", None)  # no numba
    assert _socop_kernels.socop_sets_fused(np.eye(3), 0.1, 1.0, validate=True) is None
    np.testing.assert_array_equal(clf.predict_set(X), compiled)
