"""Tests of the risk-control foundation (conformal risk control, Learn-then-Test).

Where MAPIE 1.6 computes the same quantity (``mapie.risk_control``: the
Hoeffding-Bentkus p-values, the family-wise procedures, the parameters
Learn-then-Test keeps, the conformal-risk-control bound), the results are
compared with it. Validity is checked by simulation with a stated error rate
(99% binomial or normal bands).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pytest
from scipy.stats import binom

from sklearn_iclr26.metrics import (
    conformal_risk_control,
    fwer_control,
    hoeffding_bentkus_p_values,
    learn_then_test,
    wsr_p_values,
)
from sklearn_iclr26.utils._sklearn_compat import InvalidParameterError


def _bernoulli_losses(rng, n, risks):
    return (rng.uniform(size=(n, len(risks))) < np.asarray(risks)).astype(float)


@pytest.mark.parametrize("binary", [False, True])
def test_hoeffding_bentkus_p_values_equal_mapie(binary):
    methods = pytest.importorskip("mapie.risk_control.methods")
    rng = np.random.RandomState(0)
    r_hat = np.r_[0.0, rng.uniform(0, 0.4, size=40), 1.0]
    for n_obs in [50, 1000, rng.randint(20, 500, size=len(r_hat))]:
        ours = hoeffding_bentkus_p_values(r_hat, n_obs, 0.2, binary_loss=binary)
        n_mapie = n_obs if isinstance(n_obs, int) else n_obs.astype(float)
        theirs = methods.compute_hoeffding_bentkus_p_value(
            r_hat, n_mapie, 0.2, binary=binary
        )[:, 0]
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("method", ["fixed_sequence", "bonferroni"])
def test_fwer_control_equals_mapie(method):
    fwer = pytest.importorskip("mapie.risk_control.fwer_control")
    rng = np.random.RandomState(1)
    for _ in range(50):
        p = np.sort(rng.uniform(0, 0.3, size=20)) * rng.uniform(0.5, 1.5, size=20)
        np.testing.assert_array_equal(
            fwer_control(p, 0.9, method=method), fwer.control_fwer(p, 0.1, method)
        )


@pytest.mark.parametrize("method", ["fixed_sequence", "bonferroni"])
def test_learn_then_test_keeps_mapies_parameters(method):
    methods = pytest.importorskip("mapie.risk_control.methods")
    fwer = pytest.importorskip("mapie.risk_control.fwer_control")
    rng = np.random.RandomState(2)
    for seed in range(10):
        risks = np.linspace(0.02, 0.2, 15)  # safest parameter first
        losses = _bernoulli_losses(np.random.RandomState(seed), 800, risks)
        ours = learn_then_test(losses, 0.1, confidence_level=0.9, method=method)
        p = methods.compute_hoeffding_bentkus_p_value(
            losses.mean(axis=0), len(losses), 0.1, binary=True
        )[:, 0]
        np.testing.assert_allclose(ours.p_values, p, rtol=1e-10)
        np.testing.assert_array_equal(
            ours.valid_index, fwer.control_fwer(p, 0.1, method)
        )
        assert len(ours.valid_index) > 0
    # a non-binary loss uses the factor e in Bentkus' bound
    losses = rng.uniform(0, 0.3, size=(500, 5)) * np.linspace(0.5, 1.5, 5)
    ours = learn_then_test(losses, 0.2, method=method)
    p = methods.compute_hoeffding_bentkus_p_value(
        losses.mean(axis=0), 500, 0.2, binary=False
    )[:, 0]
    np.testing.assert_allclose(ours.p_values, p, rtol=1e-10)


def test_conformal_risk_control_equals_mapie():
    methods = pytest.importorskip("mapie.risk_control.methods")
    rng = np.random.RandomState(3)
    lambdas = np.linspace(0, 1, 201)
    for n in [50, 400]:
        scores = rng.uniform(size=n)
        losses = (scores[:, None] > lambdas[None, :]).astype(float)  # decreasing
        index = conformal_risk_control(losses, 0.1)
        _, r_hat_plus = methods.get_r_hat_plus(losses, lambdas, "crc", None, None, None)
        corrected = n / (n + 1) * losses.mean(axis=0) + 1 / (n + 1)
        np.testing.assert_allclose(corrected, r_hat_plus)
        best = methods.find_best_predict_param(lambdas, r_hat_plus, np.array([0.1]))
        # MAPIE keeps r_hat_plus < alpha, the paper (and we) <= alpha
        if not np.any(np.isclose(r_hat_plus, 0.1)):
            assert lambdas[index] == pytest.approx(float(np.ravel(best)[0]))


def test_learn_then_test_is_valid_over_calibration_draws():
    # true risks straddle the target; a draw fails when any certified
    # parameter has true risk > target. FWER <= 0.1 must hold within the 99%
    # binomial band over 300 draws.
    risks = np.array([0.04, 0.06, 0.08, 0.095, 0.105, 0.12, 0.15])
    n_draws, target = 300, 0.1
    upper = binom.ppf(0.99, n_draws, 0.1) / n_draws
    for p_values in ["hoeffding_bentkus", "wsr"]:
        for method in ["fixed_sequence", "bonferroni"]:
            rng = np.random.RandomState(4)
            failures, certified = 0, 0
            for _ in range(n_draws):
                losses = _bernoulli_losses(rng, 1000, risks)
                valid = learn_then_test(
                    losses, target, p_values=p_values, method=method
                ).valid_index
                failures += bool(np.any(risks[valid] > target))
                certified += len(valid)
            assert failures / n_draws <= upper
            assert certified > 0  # not valid by certifying nothing


def test_p_values_are_super_uniform_at_the_boundary():
    # risk exactly at the target (the least favourable null)
    rng = np.random.RandomState(5)
    n_draws = 400
    upper = binom.ppf(0.99, n_draws, 0.1) / n_draws
    hb, wsr = [], []
    for _ in range(n_draws):
        losses = _bernoulli_losses(rng, 300, [0.2])
        hb.append(hoeffding_bentkus_p_values(losses.mean(axis=0), 300, 0.2)[0])
        wsr.append(wsr_p_values(losses, 0.2)[0])
    assert np.mean(np.array(hb) <= 0.1) <= upper
    assert np.mean(np.array(wsr) <= 0.1) <= upper
    # and powerful away from it
    losses = _bernoulli_losses(rng, 2000, [0.1])
    assert hoeffding_bentkus_p_values(losses.mean(axis=0), 2000, 0.2)[0] < 1e-6
    assert wsr_p_values(losses, 0.2)[0] < 1e-3


def test_conformal_risk_control_is_valid_in_expectation():
    # miscoverage 1{score > lambda}, scores uniform: the true risk at lambda
    # is 1 - lambda, so E[1 - lambda_hat] <= 0.1 must hold (normal 99% band)
    rng = np.random.RandomState(6)
    grid = np.linspace(0, 1, 401)
    test_risk = []
    for _ in range(500):
        scores = rng.uniform(size=60)
        losses = (scores[:, None] > grid[None, :]).astype(float)
        test_risk.append(1 - grid[conformal_risk_control(losses, 0.1)])
    test_risk = np.array(test_risk)
    se = test_risk.std(ddof=1) / np.sqrt(len(test_risk))
    assert test_risk.mean() <= 0.1 + 2.58 * se
    # and not far below (the bound is tight: E >= alpha - 1 / (n + 1))
    assert test_risk.mean() >= 0.1 - 1 / 61 - 2.58 * se


def test_bad_input():
    losses = np.zeros((10, 3))
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        learn_then_test(losses + 2, 0.1)
    with pytest.raises(InvalidParameterError):
        learn_then_test(losses, 1.5)
    with pytest.raises(InvalidParameterError):
        learn_then_test(losses, 0.1, confidence_level=1.0)
    with pytest.raises(InvalidParameterError):
        fwer_control([0.1], 0.9, method="holm")
    with pytest.raises(ValueError, match="non-increasing"):
        conformal_risk_control(np.array([[0.0, 1.0]]), 0.5)
    with pytest.raises(ValueError, match="No parameter controls the risk"):
        conformal_risk_control(np.ones((5, 3)), 0.1)
    with pytest.raises(ValueError, match=r"risks must lie in \[0, 1\]"):
        hoeffding_bentkus_p_values([1.2], 10, 0.1)
    # certifying nothing is an empty index, never a silent parameter
    assert learn_then_test(np.ones((50, 2)), 0.1).valid_index.size == 0
