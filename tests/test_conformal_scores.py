"""Exact-math tests of the conformity scores, SOCOP against brute-force oracles."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_iclr26.conformal import (
    _conformity_scores,
    aps_scores,
    conformal_quantile,
    conformity_scores,
    lac_scores,
    lac_sets,
    margin_scores,
    raps_scores,
    socop_scores,
    socop_sets,
)


def _lagrangian_oracle(p, lam, k0):
    """SOCOP scores of one probability vector by brute force, O(K^3).

    With the stable descending order, Gamma_k the mass of the top k labels and
    g_k = 1{k > k0} + lam k, the label of rank j enters the minimiser of
    g_k - eta Gamma_k at the smallest eta >= 0 such that some k >= j is at least
    as good as every m < j: r_j = max(0, min_{k >= j} max_{m < j} slope(m, k)),
    slope(m, k) = (g_k - g_m) / (Gamma_k - Gamma_m) (+inf if the masses are
    equal and g_k > g_m).
    """
    K = p.shape[0]
    order = np.argsort(-p, kind="stable")
    gamma = p[order]
    r_sorted = np.empty(K)
    for j in range(1, K + 1):
        best = np.inf
        for k in range(j, K + 1):
            worst = -np.inf
            for m in range(j):
                dG = math.fsum(gamma[m:k])  # exact mass, no cancellation
                # exact difference (g[k] - g[m] cancels catastrophically)
                dg = float((k > k0) - (m > k0)) + lam * (k - m)
                if dG > 0:
                    s = dg / dG
                else:
                    s = np.inf if dg > 0 else -np.inf
                worst = max(worst, s)
            best = min(best, worst)
        r_sorted[j - 1] = max(0.0, best)
    r = np.empty(K)
    r[order] = r_sorted
    return r


def _lower_hull_oracle(p, lam, k0):
    """SOCOP scores from an explicit lower convex hull (monotone chain)."""
    K = p.shape[0]
    order = np.argsort(-p, kind="stable")
    gamma = p[order]
    g = np.array([(k > k0) + lam * k for k in range(K + 1)], dtype=float)
    hull = []
    for k in range(K + 1):
        # among points with equal mass keep the lowest; on a tie (lam = 0) the
        # larger set, since a label enters at the infimum of its prices
        if hull and math.fsum(gamma[hull[-1] : k]) <= 0:
            if g[k] > g[hull[-1]]:
                continue
            hull.pop()
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            cross = math.fsum(gamma[a:b]) * (g[k] - g[a]) - (g[b] - g[a]) * math.fsum(
                gamma[a:k]
            )
            if cross <= 0:
                hull.pop()
            else:
                break
        hull.append(k)
    slopes = [
        (g[hull[i]] - g[hull[i - 1]]) / math.fsum(gamma[hull[i - 1] : hull[i]])
        for i in range(1, len(hull))
    ]
    r_sorted = np.full(K, np.inf)
    for j in range(1, K + 1):
        for i in range(1, len(hull)):
            if hull[i] >= j:
                r_sorted[j - 1] = max(0.0, slopes[i - 1])
                break
    r = np.empty(K)
    r[order] = r_sorted
    return r


def _random_probability_vectors(rng, n):
    out = []
    for _ in range(n):
        K = int(rng.integers(2, 16))
        concentration = rng.choice([0.1, 0.5, 1.0, 5.0])
        p = rng.dirichlet(np.full(K, concentration))
        if rng.random() < 0.3:  # exact zeros
            p[rng.random(K) < 0.3] = 0.0
        if rng.random() < 0.3:  # exact ties
            p = np.round(p, 1)
        if p.sum() == 0:
            p[0] = 1.0
        out.append(p / p.sum())
    return out


@pytest.mark.parametrize("k0", [1, 2, 3])
def test_socop_closed_form_equals_lagrangian_and_hull_oracles(k0):
    rng = np.random.default_rng(k0)
    vectors = _random_probability_vectors(rng, 1000)
    for p in vectors:
        lam = float(rng.choice([0.0, 1e-3, 0.05, 0.3, 2.0]))
        fast = socop_scores(p[None, :], lam=lam, k0=k0)[0]
        lagrangian = _lagrangian_oracle(p, lam, k0)
        hull = _lower_hull_oracle(p, lam, k0)
        np.testing.assert_allclose(fast, lagrangian, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(fast, hull, rtol=1e-9, atol=1e-12)


def test_socop_vectorized_over_rows_equals_row_by_row():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(7), size=200)
    full = socop_scores(P, lam=0.1)
    rows = np.vstack([socop_scores(P[i : i + 1], lam=0.1) for i in range(200)])
    np.testing.assert_array_equal(full, rows)


def test_socop_sets_are_nested_top_sets():
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(8) * 0.5, size=300)
    S = socop_scores(P, lam=0.05)
    for q in np.quantile(S[np.isfinite(S)], [0.1, 0.3, 0.5, 0.7, 0.9]):
        sets = S <= q
        # every set is a top-j set: included labels outrank excluded ones
        for p, s in zip(P, sets):
            if s.any() and (~s).any():
                assert p[s].min() >= p[~s].max()
    # nested in q
    q1, q2 = np.quantile(S[np.isfinite(S)], [0.4, 0.8])
    assert np.all((S <= q1) <= (S <= q2))


def test_socop_lambda_zero_is_singleton_or_full_set():
    rng = np.random.default_rng(2)
    P = rng.dirichlet(np.ones(6), size=400)
    S = socop_scores(P, lam=0.0)
    top = np.argmax(P, axis=1)
    assert np.all(S[np.arange(400), top] == 0)
    others = np.ones_like(P, dtype=bool)
    others[np.arange(400), top] = False
    np.testing.assert_allclose(
        S[others].reshape(400, 5), np.repeat(1 / (1 - P.max(axis=1)), 5).reshape(400, 5)
    )
    for q in [0.5, 2.0, 5.0]:
        sizes = (S <= q).sum(axis=1)
        assert set(np.unique(sizes)) <= {1, 6}


def test_socop_large_lambda_orders_labels_as_lac():
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(9), size=200)
    S = socop_scores(P, lam=1e6)
    np.testing.assert_array_equal(
        np.argsort(S, axis=1, kind="stable"),
        np.argsort(lac_scores(P), axis=1, kind="stable"),
    )


def test_socop_zero_probability_labels_never_enter():
    P = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])
    S = socop_scores(P, lam=0.1)
    assert np.isinf(S[0, 2]) and np.isinf(S[1, 1:]).all()
    assert np.isfinite(S[:, 0]).all()


def test_baseline_scores_by_hand():
    P = np.array([[0.5, 0.2, 0.3]])
    np.testing.assert_allclose(lac_scores(P), [[0.5, 0.8, 0.7]])
    np.testing.assert_allclose(aps_scores(P), [[0.5, 1.0, 0.8]])
    np.testing.assert_allclose(raps_scores(P, lam_reg=0.1, k_reg=1), [[0.5, 1.2, 0.9]])
    np.testing.assert_allclose(margin_scores(P), [[-0.2, 0.3, 0.2]])
    # tie at the top: each tied label's competitor is the other one
    np.testing.assert_allclose(margin_scores([[0.4, 0.4, 0.2]]), [[0.0, 0.0, 0.2]])
    randomized = aps_scores(P, randomized=True, random_state=0)
    assert np.all(randomized <= aps_scores(P)) and np.all(randomized >= 0)
    np.testing.assert_array_equal(
        randomized, aps_scores(P, randomized=True, random_state=0)
    )


@pytest.mark.parametrize("name", ["lac", "aps", "raps", "margin", "socop"])
def test_scores_by_name_and_bad_probabilities(name):
    P = np.array([[0.6, 0.4], [0.1, 0.9]])
    params = {"lam": 0.1} if name == "socop" else {}
    assert conformity_scores(P, name, **params).shape == (2, 2)
    with pytest.raises(ValueError, match="NaN"):
        conformity_scores(np.array([[np.nan, 1.0]]), name, **params)
    with pytest.raises(ValueError, match="sum to 1"):
        conformity_scores(np.array([[0.2, 0.2]]), name, **params)
    with pytest.raises(ValueError, match="negative"):
        conformity_scores(np.array([[-0.2, 1.2]]), name, **params)


def test_conformal_quantile():
    scores = np.arange(1, 20, dtype=float)  # n = 19
    assert conformal_quantile(scores, 0.9) == 18.0  # ceil(20 * 0.9) = 18
    assert conformal_quantile(scores, confidence_level=0.9) == 18.0
    assert conformal_quantile(scores[:5], 0.9) == np.inf  # ceil(6 * 0.9) = 6 > 5
    with pytest.raises(ValueError, match="confidence_level"):
        conformal_quantile(scores, 1.5)


@pytest.mark.parametrize("k0", [1, 2])
def test_socop_sets_equal_thresholded_scores(k0):
    rng = np.random.default_rng(5)
    for p in _random_probability_vectors(rng, 120):
        for lam in [0.0, 0.01, 0.2, 3.0]:
            scores = socop_scores(p[None, :], lam=lam, k0=k0)
            finite = np.unique(scores[np.isfinite(scores)])
            for q in [0.0, *finite, *(finite * (1 + 1e-9)), np.inf]:
                np.testing.assert_array_equal(
                    socop_sets(p[None, :], lam=lam, quantile=q, k0=k0), scores <= q
                )


@settings(max_examples=200, deadline=None)
@given(
    weights=st.lists(
        st.floats(min_value=0.0, max_value=1.0, allow_subnormal=False),
        min_size=2,
        max_size=12,
    ).filter(lambda w: sum(w) > 0),
    lam=st.floats(min_value=0.0, max_value=5.0),
)
def test_socop_properties(weights, lam):
    """Property test: scores are a hull-consistent price, sets are top-j sets."""
    p = np.asarray(weights) / np.sum(weights)
    scores = socop_scores(p[None, :], lam=lam)[0]
    assert np.all(scores >= 0)
    np.testing.assert_allclose(
        scores, _lagrangian_oracle(p, lam, 1), rtol=1e-9, atol=1e-12
    )
    # a more probable label never scores higher, except the first-ranked one
    # whose price is its own ratio lam / gamma_1
    ranked = scores[np.argsort(-p, kind="stable")][1:]
    assert all(a <= b * (1 + 1e-12) for a, b in itertools.pairwise(ranked))


def test_socop_sets_on_a_matrix_at_exact_score_thresholds():
    """The sort-free set rule equals the thresholded scores, boundaries included."""
    rng = np.random.default_rng(7)
    P = rng.dirichlet(np.full(12, 0.3), size=3000)
    for lam in [0.0, 0.02, 0.5]:
        S = socop_scores(P, lam=lam)
        finite = S[np.isfinite(S)]
        # thresholds equal to scores of some rows: the boundary case of
        # calibration, where q is one of the scores
        for q in [*rng.choice(finite, size=5), *np.quantile(finite, [0.1, 0.5, 0.9])]:
            np.testing.assert_array_equal(socop_sets(P, lam=lam, quantile=q), S <= q)


def _random_probabilities_with_ties(rng, n, K):
    """Dirichlet rows, a third rounded to eighths (ties, zeros), some uniform."""
    P = rng.dirichlet(np.full(K, rng.choice([0.05, 0.3, 1.0, 5.0])), size=n)
    tied = rng.uniform(size=n) < 1 / 3
    grid = np.round(P[tied] * 8) / 8
    grid[grid.sum(axis=1) == 0, 0] = 1.0
    P[tied] = grid / grid.sum(axis=1, keepdims=True)
    P[: n // 10] = 0.0
    P[: n // 10, K // 2 :] = 1.0 / (K - K // 2)  # exact ties at the top
    return P


@pytest.mark.parametrize("block_cells", [37, 2**19])
def test_blocked_sets_equal_thresholded_scores_exactly(monkeypatch, block_cells):
    """The fast set builders equal ``scores <= q`` bit for bit, ties included.

    ``block_cells=37``: many row blocks, a block of fewer rows at the end;
    thresholds are scores of the matrix (the calibration boundary), their
    neighbouring doubles, and the edge values (0, 1, inf, negative).
    """
    monkeypatch.setattr(_conformity_scores, "_BLOCK_CELLS", block_cells)
    rng = np.random.default_rng(31)
    for _ in range(15):
        K = int(rng.choice([2, 3, 10, 57]))
        P = _random_probabilities_with_ties(rng, int(rng.integers(1, 120)), K)
        L = lac_scores(P)
        for base in [*rng.choice(L.ravel(), 4), 0.0, 1.0, np.inf, -1.0, 1e-17]:
            for q in (base, np.nextafter(base, -np.inf), np.nextafter(base, np.inf)):
                np.testing.assert_array_equal(lac_sets(P, quantile=q), L <= q)
        lam = float(rng.choice([0.0, 1e-3, 0.1, 2.0]))
        S = socop_scores(P, lam=lam)
        finite = S[np.isfinite(S)]
        for base in [*rng.choice(finite, 4), 0.0, np.inf, 1e-300]:
            for q in (base, np.nextafter(base, np.inf)):
                np.testing.assert_array_equal(
                    socop_sets(P, lam=lam, quantile=q), S <= q
                )


def test_lac_cut_is_the_exact_boundary():
    """``p >= cut`` iff ``1 - p <= q`` on the doubles around the cut."""
    for q in [0.1, 0.3, 0.7, 0.9, 1 - 2**-40, 2**-60, 0.5]:
        cut = _conformity_scores._lac_cut(q)
        for p in [cut, np.nextafter(cut, 0.0), np.nextafter(cut, 2.0), 1 - q]:
            assert (p >= cut) == (1.0 - p <= q)
    cuts = _conformity_scores._lac_cut(np.array([[0.1, 0.9], [np.inf, -1.5]]))
    assert cuts[1, 0] == -np.inf and cuts[1, 1] == np.inf
    assert cuts[0, 0] == _conformity_scores._lac_cut(0.1)
    # the scalar path (Python floats) gives the array path's cut
    rng = np.random.default_rng(0)
    qs = [*rng.uniform(-0.5, 1.5, 50), *rng.uniform(0, 1e-3, 20), 0.0, 1.0, np.inf]
    for lam in [1e-3, 0.1, 2.0]:

        def ratio(p, lam=lam):
            return lam / p

        for score in (lambda p: 1.0 - p, ratio):
            vector = _conformity_scores._smallest_passing(score, np.array(qs))
            scalar = [_conformity_scores._smallest_passing(score, q) for q in qs]
            np.testing.assert_array_equal(scalar, vector)


def test_lac_sets_validates_every_block(monkeypatch):
    monkeypatch.setattr(_conformity_scores, "_BLOCK_CELLS", 4)
    P = np.full((10, 2), 0.5)
    P[7] = [0.9, 0.3]
    with pytest.raises(ValueError, match="sum to 1"):
        lac_sets(P, quantile=0.5)
    P[7] = [np.nan, 0.5]
    with pytest.raises(ValueError, match="NaN"):
        socop_sets(P, lam=0.1, quantile=1.0)
