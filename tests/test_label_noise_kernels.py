"""The compiled corrected-loss gradient equals the numpy path bit for bit."""

import numpy as np
import pytest

from sklearn_iclr26.label_noise import _loss_kernels
from sklearn_iclr26.label_noise._lgbm_objective import NoiseCorrectedObjective
from sklearn_iclr26.label_noise._loss import corrected_grad_hess
from sklearn_iclr26.label_noise._loss_kernels import corrected_grad_hess_fused

pytest.importorskip("numba")


def _data(n=5000, seed=0):
    rng = np.random.default_rng(seed)
    raw = rng.normal(scale=4, size=n)
    raw[:5] = [0.0, -0.0, 40.0, -40.0, 1e-300]  # ties, saturation, tiny
    y = (rng.random(n) < 0.5).astype(np.float64)
    return raw, y, rng.random(n), rng.random(n) * 0.45


@pytest.mark.parametrize("beta", [1.0, 2.0, 3.5])
@pytest.mark.parametrize("lam", [0.0, 0.3])
@pytest.mark.parametrize("fixed_rho", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_fused_gradient_is_bit_identical(beta, lam, fixed_rho, weighted):
    raw, y, weight, rho = _data()
    rho = rho if fixed_rho else None
    weight = weight if weighted else None
    g0, h0 = corrected_grad_hess(raw, y, beta=beta, lam=lam, rho=rho)
    if weighted:
        g0, h0 = g0 * weight, h0 * weight
    g1, h1 = corrected_grad_hess_fused(
        raw,
        y,
        beta=beta,
        lam=lam,
        phi="logistic",
        rho=rho,
        detach_rho=True,
        hessian="gauss_newton",
        weight=weight,
    )
    np.testing.assert_array_equal(g1, g0)
    np.testing.assert_array_equal(h1, h0)


@pytest.mark.parametrize(
    "setting",
    [
        {"hessian": "exact_clipped", "phi": "logistic", "detach_rho": True},
        {"hessian": "abs", "phi": "logistic", "detach_rho": True},
        {"hessian": "gauss_newton", "phi": "gaussian", "detach_rho": True},
        {"hessian": "gauss_newton", "phi": "logistic", "detach_rho": False},
    ],
)
def test_outside_the_kernels_case_the_numpy_path_runs(setting):
    raw, y, _, _ = _data(50)
    out = corrected_grad_hess_fused(raw, y, beta=2.0, lam=0.0, rho=None, **setting)
    assert out is None


def test_the_objective_gives_the_same_gradient_with_and_without_numba(monkeypatch):
    raw, y, weight, _ = _data()
    objective = NoiseCorrectedObjective(beta=2.0, lam=0.1)
    fused = objective(y, raw, weight)
    monkeypatch.setitem(_loss_kernels._COMPILED, "rows", None)  # numba "missing"
    plain = NoiseCorrectedObjective(beta=2.0, lam=0.1)(y, raw, weight)
    np.testing.assert_array_equal(fused[0], plain[0])
    np.testing.assert_array_equal(fused[1], plain[1])


def test_a_lightgbm_fit_is_bit_identical_with_and_without_numba(monkeypatch):
    lightgbm = pytest.importorskip("lightgbm")
    from sklearn_iclr26.label_noise import InstanceNoiseCorrector

    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 4))
    y = (X[:, 0] + 0.5 * rng.normal(size=600) > 0).astype(int)
    y[rng.random(600) < 0.2] ^= 1

    def fit():
        est = lightgbm.LGBMClassifier(n_estimators=20, n_jobs=1, verbose=-1)
        return InstanceNoiseCorrector(est, cv=None, random_state=0).fit(X, y)

    kernel, calls = _loss_kernels._kernel(), []

    def counted(*args):
        calls.append(1)
        return kernel(*args)

    monkeypatch.setitem(_loss_kernels._COMPILED, "rows", counted)
    fused = fit().predict_proba(X)
    assert calls  # the default fit went through the kernel
    monkeypatch.setitem(_loss_kernels._COMPILED, "rows", None)
    plain = fit().predict_proba(X)
    np.testing.assert_array_equal(fused, plain)
