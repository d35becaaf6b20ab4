"""Tests of the label-noise estimators: the maths, the wrappers, the generators."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import pickle
import warnings

import numpy as np
import pytest
import torch
from lightgbm import LGBMClassifier
from scipy.special import expit, logit
from scipy.stats import spearmanr, truncnorm
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import make_label_noise
from sklearn_iclr26.label_noise import (
    ClassConditionalNoiseCorrector,
    InstanceNoiseCorrector,
)
from sklearn_iclr26.label_noise._instance import reweight_weights
from sklearn_iclr26.label_noise._lgbm_objective import (
    ForwardCorrectedObjective,
    NoiseCorrectedObjective,
)
from sklearn_iclr26.label_noise._loss import (
    corrected_grad_hess,
    corrected_loss,
    flip_rate,
    general_corrected_loss,
)
from sklearn_iclr26.label_noise._torch_loss import NoiseCorrectedLoss
from sklearn_iclr26.neural_network import TorchMLPClassifier
from sklearn_iclr26.utils._sklearn_compat import InvalidParameterError

PHIS = ["logistic", "exponential", "gaussian"]


def _lgbm(**kw):
    params = {"n_estimators": 30, "min_child_samples": 5, "n_jobs": 1, "verbose": -1}
    params.update(kw)
    return LGBMClassifier(**params)


@pytest.fixture(scope="module")
def noisy_binary():
    X, y = make_classification(
        n_samples=400, n_features=6, n_informative=4, random_state=0
    )
    y_noisy, flipped = make_label_noise(y, X, kind="instance", rate=0.2, random_state=0)
    return X, y, y_noisy, flipped


# --------------------------------------------------------------------- maths


def test_risk_equivalence_identity_any_rho():
    # sum_{y~} q(y~) l~(y~) = sum_y pi(y) l(y) for random pi, q, rho, losses
    rng = np.random.RandomState(0)
    n = 1000
    pi1, q1 = rng.uniform(0.05, 0.95, n), rng.uniform(0.05, 0.95, n)
    rho = rng.uniform(0.0, 0.5, n)
    l1, l0 = rng.exponential(size=n), rng.exponential(size=n)  # l(h, 1), l(h, 0)
    keep = np.abs(q1 * (1 - q1) - rho) > 1e-3
    pi1, q1, rho, l1, l0 = pi1[keep], q1[keep], rho[keep], l1[keep], l0[keep]
    tilde1 = general_corrected_loss(l1, l0, pi1, q1, rho)  # observed y~ = 1
    tilde0 = general_corrected_loss(l0, l1, 1 - pi1, 1 - q1, rho)  # observed 0
    noisy_risk = q1 * tilde1 + (1 - q1) * tilde0
    clean_risk = pi1 * l1 + (1 - pi1) * l0
    np.testing.assert_allclose(noisy_risk, clean_risk, rtol=1e-9, atol=1e-9)


def test_regularized_loss_is_numerator_minus_lam_denominator():
    rng = np.random.RandomState(1)
    raw, y = rng.normal(scale=3, size=200), rng.randint(0, 2, 200)
    rho, lam = rng.uniform(0, 0.5, 200), 0.7
    p = expit(np.where(y == 1, raw, -raw))
    l_obs, l_flip = -np.log(p), -np.log(1 - p)
    denominator = p * (1 - p) - rho
    eq3 = general_corrected_loss(l_obs, l_flip, p, p, rho)  # pi = q = p (Eq. 4)
    expected = eq3 * denominator - lam * denominator
    np.testing.assert_allclose(corrected_loss(raw, y, rho, lam), expected, rtol=1e-9)


def test_rho_zero_gives_variance_weighted_loss():
    rng = np.random.RandomState(2)
    raw, y = rng.normal(scale=2, size=100), rng.randint(0, 2, 100)
    p = expit(np.where(y == 1, raw, -raw))
    lam = 0.3
    np.testing.assert_allclose(
        corrected_loss(raw, y, 0.0, lam), p * (1 - p) * (-np.log(p) - lam), rtol=1e-9
    )


@pytest.mark.parametrize("lam", [0.0, 1.0])
def test_loss_is_bounded_and_vanishes_far_from_the_boundary(lam):
    raw = np.array([-60.0, -30.0, 30.0, 60.0])
    for y in (0, 1):
        rho = flip_rate(np.abs(raw), 2.0)[0]
        loss = corrected_loss(raw, np.full(4, y), rho, lam)
        np.testing.assert_allclose(loss, 0.0, atol=1e-9)
    grid = np.linspace(-40, 40, 2001)
    for y in (0, 1):
        loss = corrected_loss(
            grid, np.full(grid.size, y), flip_rate(np.abs(grid), 2)[0]
        )
        assert np.all(np.abs(loss) < 1.0)


@pytest.mark.parametrize("phi", PHIS)
def test_flip_rate_is_half_at_boundary_and_derivative(phi):
    d = np.linspace(0, 5, 51)
    rho, drho = flip_rate(d, 1.5, phi)
    assert rho[0] == pytest.approx(0.5)
    assert np.all(np.diff(rho) < 0) and np.all(rho <= 0.5)
    eps = 1e-6
    fd = (flip_rate(d + eps, 1.5, phi)[0] - flip_rate(d - eps, 1.5, phi)[0]) / (2 * eps)
    np.testing.assert_allclose(drho[1:], fd[1:], rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("phi", PHIS)
@pytest.mark.parametrize("detach", [True, False])
@pytest.mark.parametrize("lam", [0.0, 0.8])
def test_gradient_matches_finite_differences(phi, detach, lam):
    rng = np.random.RandomState(3)
    raw = rng.normal(scale=2.5, size=300)
    raw = raw[np.abs(raw) > 1e-3]  # |h| is not differentiable at 0
    y = rng.randint(0, 2, raw.size)
    beta, eps = 1.7, 1e-6
    grad, _ = corrected_grad_hess(
        raw, y, beta=beta, lam=lam, phi=phi, detach_rho=detach
    )

    def loss(h):
        if detach:  # rho frozen at the current scores
            rho = flip_rate(np.abs(raw), beta, phi)[0]
        else:
            rho = flip_rate(np.abs(h), beta, phi)[0]
        return corrected_loss(h, y, rho, lam)

    fd = (loss(raw + eps) - loss(raw - eps)) / (2 * eps)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("lam", [0.0, 0.5])
def test_exact_hessian_matches_finite_differences(lam):
    rng = np.random.RandomState(4)
    raw, y = rng.normal(scale=2.5, size=300), rng.randint(0, 2, 300)
    rho = rng.uniform(0, 0.5, 300)  # a fixed (offline) flip rate
    eps = 1e-5
    kw = {"lam": lam, "rho": rho, "hessian": "abs", "hessian_floor": 0.0}
    _, hess_abs = corrected_grad_hess(raw, y, **kw)
    g_plus, _ = corrected_grad_hess(raw + eps, y, **kw)
    g_minus, _ = corrected_grad_hess(raw - eps, y, **kw)
    fd = (g_plus - g_minus) / (2 * eps)
    np.testing.assert_allclose(hess_abs, np.abs(fd), rtol=1e-4, atol=1e-8)
    assert np.mean(fd < 0) > 0.05  # the exact hessian is indeed non-convex
    _, hess_clip = corrected_grad_hess(
        raw, y, lam=lam, rho=rho, hessian="exact_clipped"
    )
    np.testing.assert_allclose(hess_clip, np.maximum(fd, 1e-6), rtol=1e-4, atol=1e-8)
    _, hess_gn = corrected_grad_hess(raw, y, lam=lam, rho=rho)
    np.testing.assert_allclose(hess_gn, expit(raw) * expit(-raw))


def test_torch_criterion_matches_numpy_and_reference_formula():
    rng = np.random.RandomState(5)
    raw, y = rng.normal(scale=2, size=64), rng.randint(0, 2, 64)
    beta, lam = 1.3, 0.4
    scores = torch.tensor(raw, requires_grad=True)
    labels = torch.tensor(y)
    crit = NoiseCorrectedLoss(beta=beta, lam=lam, warmup=2, detach_rho=True)
    crit.epoch = 3  # past warm-up
    out = crit(torch.stack([torch.zeros_like(scores), scores], dim=1), labels)
    rho = flip_rate(np.abs(raw), beta)[0]
    np.testing.assert_allclose(
        out.detach().numpy(), corrected_loss(raw, y, rho, lam), rtol=1e-10
    )
    # the authors' NDX_Loss.forward, written from its published formula
    base = torch.nn.functional.binary_cross_entropy_with_logits
    with torch.no_grad():
        s = scores.detach()
        rho_t = 1 / (1 + torch.exp(beta * s.abs()))
        normal = base(s, labels.double(), reduction="none")
        opposite = base(s, 1 - labels.double(), reduction="none")
        f = torch.sigmoid(s)
        pyy = torch.where(labels == 1, f, 1 - f)
        num = (1 - pyy - rho_t) * pyy * normal - rho_t * (1 - pyy) * opposite
        ref = (num - lam * (pyy * (1 - pyy) - rho_t)).mean()
    assert out.mean().item() == pytest.approx(ref.item(), rel=1e-10)
    out.sum().backward()
    grad, _ = corrected_grad_hess(raw, y, beta=beta, lam=lam, detach_rho=True)
    np.testing.assert_allclose(scores.grad.numpy(), grad, rtol=1e-8, atol=1e-12)
    # non-detached rho: autograd equals the closed form too
    scores.grad = None
    crit = NoiseCorrectedLoss(beta=beta, lam=lam, detach_rho=False)
    crit(scores, labels).sum().backward()
    grad, _ = corrected_grad_hess(raw, y, beta=beta, lam=lam, detach_rho=False)
    np.testing.assert_allclose(scores.grad.numpy(), grad, rtol=1e-8, atol=1e-12)
    # warm-up epochs use the plain logistic loss
    crit.warmup, crit.epoch = 4, 4
    np.testing.assert_allclose(
        crit(scores, labels).detach().numpy(),
        base(scores, labels.double(), reduction="none").detach().numpy(),
    )


# ------------------------------------------------------------ the objectives


def test_objective_warmup_weights_pickle_and_clone():
    rng = np.random.RandomState(6)
    raw, y = rng.normal(size=50), rng.randint(0, 2, 50).astype(float)
    w = rng.uniform(0.5, 2.0, 50)
    obj = NoiseCorrectedObjective(beta=3.0, lam=0.1, warmup=1)
    g, h = obj(y, raw, None)  # round 1: plain logistic
    np.testing.assert_allclose(g, expit(raw) - y)
    np.testing.assert_allclose(h, expit(raw) * expit(-raw))
    g2, h2 = obj(y, raw, w)  # round 2: corrected, weights multiplied in
    g_ref, h_ref = corrected_grad_hess(raw, y, beta=3.0, lam=0.1)
    np.testing.assert_allclose(g2, w * g_ref)
    np.testing.assert_allclose(h2, w * h_ref)
    assert obj.n_calls_ == 2
    fresh = clone(obj)
    assert not hasattr(fresh, "n_calls_") and fresh.beta == 3.0 and fresh.warmup == 1
    restored = pickle.loads(pickle.dumps(obj))
    assert restored.n_calls_ == 2
    np.testing.assert_allclose(restored(y, raw, w)[0], g2)
    assert "beta=3.0" in repr(obj)
    fixed = NoiseCorrectedObjective(rho=np.full(50, 0.1))
    assert "array of shape (50,)" in repr(clone(fixed))


def test_forward_objective_gradient():
    T = np.array([[0.8, 0.2], [0.3, 0.7]])
    rng = np.random.RandomState(7)
    raw, y = rng.normal(size=100), rng.randint(0, 2, 100).astype(float)

    def loss(h):
        q1 = T[0, 1] * expit(-h) + T[1, 1] * expit(h)
        return -(y * np.log(q1) + (1 - y) * np.log(1 - q1))

    g, h = ForwardCorrectedObjective(T)(y, raw, None)
    fd = (loss(raw + 1e-6) - loss(raw - 1e-6)) / 2e-6
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-9)
    assert np.all(h > 0)


# --------------------------------------------------------------- estimators


def test_lightgbm_wrapper_outputs_labels_and_probabilities(noisy_binary):
    X, _, y_noisy, _ = noisy_binary
    labels = np.array(["neg", "pos"])[y_noisy]
    clf = InstanceNoiseCorrector(_lgbm(), random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "Cannot compute class probabilities"
        # (the noise-rate warning is legitimate here: 30 trees on hard data)
        warnings.filterwarnings("ignore", message="noise_rate_=")
        clf.fit(X, labels)
        proba = clf.predict_proba(X)
        pred = clf.predict(X)
    assert clf.strategy_ == "objective"
    assert callable(clf.estimator_.objective)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.all((proba >= 0) & (proba <= 1))
    assert set(pred) <= {"neg", "pos"}
    np.testing.assert_array_equal(pred, clf.classes_[proba.argmax(axis=1)])
    np.testing.assert_allclose(proba[:, 1], expit(clf.decision_function(X)))
    assert clf.init_scores_[0] == pytest.approx(logit(np.mean(y_noisy)))
    # the offset is added back: raw LightGBM scores are not returned
    raw = clf.estimator_.predict(X, raw_score=True)
    np.testing.assert_allclose(clf.decision_function(X), raw + clf.init_scores_[0])
    # non-inferiority to the plain model on the same fixed split (margin 0.05)
    for scoring in ("accuracy", "roc_auc"):
        ours = cross_val_score(clf, X, labels, cv=3, scoring=scoring).mean()
        plain = cross_val_score(_lgbm(), X, labels, cv=3, scoring=scoring).mean()
        assert ours >= plain - 0.05, (scoring, ours, plain)
    # warm-up: 10 % of 30 rounds are plain logistic rounds
    assert clf.estimator_.objective.warmup == 3


def test_lightgbm_warmup_rounds_are_the_plain_logistic_loss(noisy_binary):
    X, _, y_noisy, _ = noisy_binary
    all_warm = InstanceNoiseCorrector(_lgbm(n_estimators=10), warmup=10).fit(X, y_noisy)
    init = logit(np.mean(y_noisy))
    builtin = _lgbm(n_estimators=10).fit(
        X, y_noisy, init_score=np.full(X.shape[0], init)
    )
    expected = builtin.predict(X, raw_score=True) + init
    np.testing.assert_allclose(all_warm.decision_function(X), expected, atol=1e-6)
    corrected = InstanceNoiseCorrector(_lgbm(n_estimators=10), warmup=5).fit(X, y_noisy)
    assert not np.allclose(corrected.decision_function(X), expected, atol=1e-3)


def test_sample_weight_changes_the_fit(noisy_binary):
    X, _, y_noisy, _ = noisy_binary
    w = np.random.RandomState(0).uniform(0.1, 3.0, X.shape[0])
    for est in (_lgbm(), LogisticRegression(), TorchMLPClassifier(max_iter=20)):
        a = InstanceNoiseCorrector(est, random_state=0).fit(X, y_noisy)
        b = InstanceNoiseCorrector(est, random_state=0).fit(X, y_noisy, sample_weight=w)
        assert not np.allclose(a.decision_function(X), b.decision_function(X))


def test_strategies_and_fitted_attributes(noisy_binary):
    X, _, y_noisy, flipped = noisy_binary
    cases = [
        (_lgbm(), "objective"),
        (TorchMLPClassifier(max_iter=40), "objective"),
        (LogisticRegression(), "reweight"),
    ]
    for est, strategy in cases:
        clf = InstanceNoiseCorrector(est, random_state=0).fit(X, y_noisy)
        assert clf.strategy_ == strategy
        n = X.shape[0]
        assert clf.rho_.shape == (n,) and clf.mislabel_scores_.shape == (n,)
        assert np.all((clf.rho_ >= 0) & (clf.rho_ <= 0.5))
        assert 0 <= clf.noise_rate_ < 0.5
        np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
        # better than a random ranking (AUROC 0.5) of the flipped rows; not
        # always as good as 1 - p(observed) of a plain fit (torch: 0.68 vs 0.90)
        assert roc_auc_score(flipped, clf.mislabel_scores_) > 0.6
    clf = InstanceNoiseCorrector(_lgbm(), strategy="reweight", random_state=0)
    assert clf.fit(X, y_noisy).strategy_ == "reweight"


def test_reweight_weights_are_bounded_and_plain_at_rho_zero(noisy_binary):
    rng = np.random.RandomState(8)
    p, rho = rng.uniform(0.01, 0.99, 1000), rng.uniform(0, 0.5, 1000)
    a, b = reweight_weights(p, rho)
    assert np.all((a >= 1 - 1e-12) & (a <= 2 + 1e-12))
    assert np.all((b <= 0) & (b >= -(1 - p) - 1e-12))
    a0, b0 = reweight_weights(p, np.zeros(1000))
    np.testing.assert_allclose(a0, 1.0)
    np.testing.assert_allclose(b0, 0.0)
    # rho = 0 everywhere: the reweighted fit is the plain fit
    X, _, y_noisy, _ = noisy_binary
    clf = InstanceNoiseCorrector(
        LogisticRegression(), rho=lambda X, y: np.zeros(X.shape[0])
    ).fit(X, y_noisy)
    plain = LogisticRegression().fit(X, y_noisy)
    np.testing.assert_allclose(clf.estimator_.coef_, plain.coef_, rtol=1e-4)


@pytest.mark.parametrize("rho", ["cluster", "reconstruction", "ensemble"])
def test_offline_rho_estimators(noisy_binary, rho):
    X, _, y_noisy, _ = noisy_binary
    for est in (LogisticRegression(), _lgbm()):
        clf = InstanceNoiseCorrector(est, rho=rho, random_state=0).fit(X, y_noisy)
        assert np.all((clf.rho_ >= 0) & (clf.rho_ <= 0.5)) and clf.noise_rate_ < 0.5
        assert np.ptp(clf.rho_) > 0
        np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)


def test_torch_offline_rho_reaches_the_criterion(noisy_binary):
    X, _, y_noisy, _ = noisy_binary
    clf = InstanceNoiseCorrector(
        TorchMLPClassifier(max_iter=20), rho="cluster", random_state=0
    ).fit(X, y_noisy)
    assert clf.estimator_.n_iter_ == 20
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)


def test_multiclass_one_vs_rest():
    X, y = make_classification(
        n_samples=300, n_features=6, n_informative=4, n_classes=3, random_state=0
    )
    y_noisy, flipped = make_label_noise(y, X, kind="instance", rate=0.2, random_state=0)
    for est in (_lgbm(), LogisticRegression()):
        clf = InstanceNoiseCorrector(est, random_state=0).fit(X, y_noisy)
        assert len(clf.estimators_) == 3 and not hasattr(clf, "estimator_")
        proba = clf.predict_proba(X)
        assert proba.shape == (300, 3)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        assert clf.decision_function(X).shape == (300, 3)
        plain = clone(est).fit(X, y_noisy)
        assert clf.score(X, y) >= plain.score(X, y) - 0.05
        assert roc_auc_score(flipped, clf.mislabel_scores_) > 0.5


# determinism and the global RNGs for the LightGBM and torch inner models (both
# test instances): tests/test_common_contracts.py


def test_pipeline_and_grid_search(noisy_binary):
    X, _, y_noisy, _ = noisy_binary
    pipe = make_pipeline(
        StandardScaler(), InstanceNoiseCorrector(_lgbm(), random_state=0)
    )
    grid = GridSearchCV(
        pipe,
        {
            "instancenoisecorrector__beta": [1.0, 4.0],
            "instancenoisecorrector__regularization_weight": [0.0, 0.5],
        },
        cv=3,
    ).fit(X, y_noisy)
    plain = make_pipeline(StandardScaler(), _lgbm())
    assert grid.best_score_ >= cross_val_score(plain, X, y_noisy, cv=3).mean() - 0.05


# --------------------------------------------------------------- bad input


def test_bad_input_errors(noisy_binary):
    X, _, y_noisy, _ = noisy_binary
    with pytest.raises(ValueError, match="neither a custom objective nor"):
        InstanceNoiseCorrector(KNeighborsClassifier()).fit(X, y_noisy)
    with pytest.raises(ValueError, match="strategy='objective' needs"):
        InstanceNoiseCorrector(LogisticRegression(), strategy="objective").fit(
            X, y_noisy
        )
    with pytest.raises(InvalidParameterError, match="beta"):
        InstanceNoiseCorrector(beta=0.0).fit(X, y_noisy)
    with pytest.raises(InvalidParameterError, match="regularization_weight"):
        InstanceNoiseCorrector(regularization_weight=-1.0).fit(X, y_noisy)
    with pytest.raises(InvalidParameterError, match="phi"):
        InstanceNoiseCorrector(phi="cauchy").fit(X, y_noisy)
    with pytest.raises(ValueError, match="must keep objective=None"):
        InstanceNoiseCorrector(_lgbm(objective="cross_entropy")).fit(X, y_noisy)
    with pytest.raises(ValueError, match="must return shape"):
        InstanceNoiseCorrector(LogisticRegression(), rho=lambda X, y: np.zeros(3)).fit(
            X, y_noisy
        )
    with pytest.raises(ValueError, match=r"flip rates in \[0, 1/2\]"):
        InstanceNoiseCorrector(
            LogisticRegression(), rho=lambda X, y: np.full(X.shape[0], 0.7)
        ).fit(X, y_noisy)
    with pytest.raises(ValueError, match="class"):
        InstanceNoiseCorrector(LogisticRegression()).fit(X, np.zeros(X.shape[0]))
    with pytest.raises(ValueError, match="NaN"):
        X_nan = X.copy()
        X_nan[0, 0] = np.nan
        InstanceNoiseCorrector(LogisticRegression()).fit(X_nan, y_noisy)
    clf = InstanceNoiseCorrector(LogisticRegression()).fit(X, y_noisy)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :3])


def test_class_conditional_baseline(noisy_binary):
    X, y, _, _ = noisy_binary
    y_noisy, _ = make_label_noise(y, kind="symmetric", rate=0.2, random_state=0)
    # the identity transition matrix gives the plain fit
    cc = ClassConditionalNoiseCorrector(transition_matrix=np.eye(2)).fit(X, y_noisy)
    plain = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y_noisy)
    np.testing.assert_allclose(cc.estimator_[-1].coef_, plain[-1].coef_, rtol=1e-4)
    cc = ClassConditionalNoiseCorrector(random_state=0).fit(X, y_noisy)
    assert np.all(np.diag(cc.transition_matrix_) > 0.5)
    np.testing.assert_allclose(cc.transition_matrix_.sum(axis=1), 1.0)
    for est in (_lgbm(), TorchMLPClassifier(max_iter=30)):
        fwd = ClassConditionalNoiseCorrector(est, method="forward", random_state=0)
        proba = fwd.fit(X, y_noisy).predict_proba(X)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        assert fwd.score(X, y) >= clone(est).fit(X, y_noisy).score(X, y) - 0.05
    with pytest.raises(ValueError, match="needs a TorchMLPClassifier"):
        ClassConditionalNoiseCorrector(method="forward").fit(X, y_noisy)
    X3, y3 = make_classification(
        n_samples=150, n_informative=4, n_classes=3, random_state=0
    )
    # multi-class forward correction with LightGBM (a custom softmax objective)
    fwd3 = ClassConditionalNoiseCorrector(_lgbm(), method="forward", random_state=0)
    proba3 = fwd3.fit(X3, y3).predict_proba(X3)
    np.testing.assert_allclose(proba3.sum(axis=1), 1.0)
    assert fwd3.method_ == "forward" and fwd3.init_score_.shape == (3,)
    with pytest.raises(ValueError, match="shape"):
        ClassConditionalNoiseCorrector(transition_matrix=np.eye(3)).fit(X, y_noisy)


# -------------------------------------------------------------- generators


@pytest.mark.parametrize(
    "kind", ["symmetric", "class_conditional", "instance", "xia2020"]
)
@pytest.mark.parametrize("rate", [0.1, 0.28, 0.44])
def test_make_label_noise_hits_the_target_rate(kind, rate):
    X, y = make_classification(n_samples=4000, n_features=5, random_state=0)
    y_noisy, flipped, proba = make_label_noise(
        y, X, kind=kind, rate=rate, random_state=0, return_flip_proba=True
    )
    np.testing.assert_array_equal(flipped, y_noisy != y)
    target = rate
    if kind == "xia2020":  # N(rate, 0.1^2) truncated to [0, 1]: mean above rate
        target = truncnorm.mean(-rate / 0.1, (1 - rate) / 0.1, loc=rate, scale=0.1)
        assert target == pytest.approx(rate, abs=0.03)
    assert abs(proba.mean() - target) < 0.01
    assert abs(flipped.mean() - target) < 0.03
    same = make_label_noise(y, X, kind=kind, rate=rate, random_state=0)[0]
    np.testing.assert_array_equal(same, y_noisy)


def test_make_label_noise_instance_depends_on_x_and_xia_does_not():
    X, y = make_classification(n_samples=3000, n_features=5, random_state=1)
    margin = np.abs(
        LogisticRegression()
        .fit(StandardScaler().fit_transform(X), y)
        .decision_function(StandardScaler().fit_transform(X))
    )
    _, _, p_inst = make_label_noise(
        y, X, kind="instance", rate=0.28, random_state=0, return_flip_proba=True
    )
    _, _, p_xia = make_label_noise(
        y, X, kind="xia2020", rate=0.28, random_state=0, return_flip_proba=True
    )
    assert spearmanr(margin, p_inst)[0] < -0.9
    assert abs(spearmanr(margin, p_xia)[0]) < 0.1
    assert p_inst.max() <= 0.5


def test_make_label_noise_multiclass_and_strings():
    y = np.array(["a", "b", "c"] * 300)
    X = np.random.RandomState(0).normal(size=(900, 4))
    for kind in ("symmetric", "class_conditional", "instance", "xia2020"):
        y_noisy, flipped = make_label_noise(y, X, kind=kind, rate=0.3, random_state=0)
        assert set(y_noisy) <= {"a", "b", "c"}
        np.testing.assert_array_equal(flipped, y_noisy != y)
    y_noisy, flipped = make_label_noise(
        y, kind="class_conditional", rate=[0.0, 0.5, 0.0], random_state=0
    )
    assert not flipped[y == "a"].any() and flipped[y == "b"].mean() > 0.4


def test_make_label_noise_errors():
    y = np.array([0, 1] * 50)
    X = np.random.RandomState(0).normal(size=(100, 3))
    with pytest.raises(InvalidParameterError, match="kind"):
        make_label_noise(y, X, kind="pairflip", rate=0.2)
    with pytest.raises(InvalidParameterError, match="rate"):
        make_label_noise(y, kind="symmetric", rate=1.2)
    with pytest.raises(ValueError, match="needs the features X"):
        make_label_noise(y, kind="instance", rate=0.2)
    with pytest.raises(ValueError, match="rows"):
        make_label_noise(y, X[:50], kind="xia2020", rate=0.2)
    with pytest.raises(ValueError, match="at least 2 classes"):
        make_label_noise(np.zeros(10), kind="symmetric", rate=0.2)
    with pytest.raises(ValueError, match="rate < 1/2"):
        make_label_noise(y, X, kind="instance", rate=0.6)
    with pytest.raises(ValueError, match="shape"):
        make_label_noise(y, kind="symmetric", rate=[0.1, 0.2])
    with pytest.raises(ValueError, match=r"NaN|infinity"):
        X_nan = X.copy()
        X_nan[0, 0] = np.nan
        make_label_noise(y, X_nan, kind="instance", rate=0.2)


# ------------------------------------------------------------- statistics


def test_mislabel_ranking_and_rho_over_seeds():
    """Over 5 seeds: mislabel AUROC and rho's correlation with the true flip rate."""
    aurocs, corrs, gains = [], [], []
    for seed in range(5):
        X, y = make_classification(
            n_samples=600, n_features=8, n_informative=5, random_state=seed
        )
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, random_state=seed)
        y_noisy, flipped, proba = make_label_noise(
            y_tr,
            X_tr,
            kind="instance",
            rate=0.28,
            random_state=seed,
            return_flip_proba=True,
        )
        clf = InstanceNoiseCorrector(LogisticRegression(), random_state=seed)
        clf.fit(X_tr, y_noisy)
        aurocs.append(roc_auc_score(flipped, clf.mislabel_scores_))
        corrs.append(spearmanr(clf.rho_, proba)[0])
        plain = LogisticRegression().fit(X_tr, y_noisy)
        gains.append(clf.score(X_te, y_te) - plain.score(X_te, y_te))
    assert np.mean(aurocs) > 0.75 and min(aurocs) > 0.65
    assert np.mean(corrs) > 0.5
    # a linear model is already robust to this noise: no loss beyond 2 points
    assert np.mean(gains) > -0.02


@pytest.mark.parametrize(
    "params",
    [
        {"hessian": "exact_clipped"},
        {"hessian": "abs", "detach_rho": False, "regularization_weight": 0.5},
        {"phi": "exponential", "beta": 1.0},
        {"phi": "gaussian", "warmup": 0},
    ],
)
def test_lightgbm_objective_options_fit(noisy_binary, params):
    X, y, y_noisy, _ = noisy_binary
    clf = InstanceNoiseCorrector(_lgbm(), random_state=0, **params).fit(X, y_noisy)
    proba = clf.predict_proba(X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    plain = _lgbm().fit(X, y_noisy)
    assert clf.score(X, y) >= plain.score(X, y) - 0.05


def test_torch_options_and_verbose(noisy_binary, capsys):
    X, y, y_noisy, _ = noisy_binary
    clf = InstanceNoiseCorrector(
        TorchMLPClassifier(max_iter=15),
        detach_rho=False,
        regularization_weight=0.5,
        phi="gaussian",
        warmup=3,
        random_state=0,
        verbose=1,
    ).fit(X, y_noisy)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("[InstanceNoiseCorrector] sub-problem 1/1: fitting")
    # a progress line every tenth of the epochs (15 // 10 = every epoch)
    epochs = [line for line in lines if ": epoch " in line]
    assert len(epochs) == 15 and "epoch 15/15" in epochs[-1]
    assert not any("\x1b" in line for line in lines)
    assert clf.estimator_.n_iter_ == 15
    # an options smoke test: 15 epochs of the p (1 - p)-scaled loss learn
    # slower than a plain fit (0.73 vs 0.87 here), but beat the majority class
    majority = DummyClassifier().fit(X, y_noisy)
    assert clf.score(X, y) > majority.score(X, y) + 0.1


def test_lightgbm_verbose_prints_rounds(noisy_binary, capsys):
    X, _, y_noisy, _ = noisy_binary
    InstanceNoiseCorrector(_lgbm(n_estimators=20), verbose=1).fit(X, y_noisy)
    lines = capsys.readouterr().out.splitlines()
    rounds = [line for line in lines if "boosting round" in line]
    assert len(rounds) == 10 and "round 20/20" in rounds[-1]
    assert lines[-1].startswith("[InstanceNoiseCorrector] done; noise_rate_=")
    InstanceNoiseCorrector(_lgbm(n_estimators=20)).fit(X, y_noisy)
    assert capsys.readouterr().out == ""


def test_class_conditional_bad_matrix_and_shrink_warning(noisy_binary):
    X, _, y_noisy, _ = noisy_binary
    with pytest.raises(ValueError, match="rows summing to 1"):
        ClassConditionalNoiseCorrector(
            transition_matrix=np.array([[0.9, 0.2], [0.1, 0.9]])
        ).fit(X, y_noisy)
    with pytest.raises(ValueError, match="singular"):
        ClassConditionalNoiseCorrector(transition_matrix=np.full((2, 2), 0.5)).fit(
            X, y_noisy
        )
    # labels unrelated to X: both estimates flip more than they keep
    y_random = np.random.RandomState(0).randint(0, 2, X.shape[0])
    for estimate in ("confident_joint", "anchor"):
        with pytest.warns(
            UserWarning,
            match=r"estimated flip rate of class \d+: 0\.\d\d.* is near or above 1/2",
        ):
            cc = ClassConditionalNoiseCorrector(
                LogisticRegression(C=1e-4),
                transition_estimate=estimate,
                random_state=0,
            ).fit(X, y_random)
        assert np.all(np.diag(cc.transition_matrix_) >= 0.55 - 1e-12)


# ------------------------------------------------------------ label issues


@pytest.fixture(scope="module")
def noisy_multiclass():
    X, y = make_classification(
        n_samples=450,
        n_features=8,
        n_informative=6,
        n_classes=3,
        class_sep=1.5,
        random_state=0,
    )
    y_noisy, flipped = make_label_noise(y, kind="symmetric", rate=0.2, random_state=0)
    # string labels: the correctors encode them, the masks do not care
    labels = np.array(["ant", "bee", "cat"])[y_noisy]
    return X, labels, flipped


def _correctors():
    return [
        InstanceNoiseCorrector(LogisticRegression(), random_state=0),
        # LightGBM's default min_child_samples: with 5 the in-sample fit is so
        # confident that noise_rate_ (0.02) flags no row (the ranking holds)
        InstanceNoiseCorrector(
            _lgbm(n_estimators=120, min_child_samples=20), random_state=0
        ),
        ClassConditionalNoiseCorrector(LogisticRegression(), random_state=0),
        ClassConditionalNoiseCorrector(
            LogisticRegression(),
            transition_matrix=np.full((3, 3), 0.1) + 0.7 * np.eye(3),
            random_state=0,
        ),
    ]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("clf", _correctors(), ids=lambda c: type(c).__name__)
def test_find_label_issues_agrees_with_mislabel_scores(noisy_multiclass, clf):
    """The ranked indices are the flagged rows sorted by ``mislabel_scores_``
    (exact), the mask is ``label_issues_``, both equal the public function's
    rule on the probabilities the corrector reads, and the flags find flips."""
    from sklearn_iclr26.label_noise import find_label_issues

    X, labels, flipped = noisy_multiclass
    mask = clone(clf).find_label_issues(X, labels)
    fitted = clone(clf).fit(X, labels)
    np.testing.assert_array_equal(mask, fitted.label_issues_)
    assert mask.dtype == bool and mask.shape == (len(labels),)
    scores = fitted.mislabel_scores_
    flagged = np.flatnonzero(mask)
    ranked = clone(clf).find_label_issues(
        X, labels, return_indices_ranked_by="mislabel_score"
    )
    np.testing.assert_array_equal(
        ranked, flagged[np.argsort(-scores[flagged], kind="stable")]
    )
    assert np.all(np.diff(scores[ranked]) <= 0)
    codes = np.searchsorted(fitted.classes_, labels)
    proba = fitted._issue_proba
    for rank_by in ("self_confidence", "normalized_margin"):
        idx = clone(clf).find_label_issues(X, labels, return_indices_ranked_by=rank_by)
        np.testing.assert_array_equal(np.sort(idx), flagged)
        np.testing.assert_array_equal(
            idx,
            find_label_issues(
                codes,
                proba,
                filter_by=(
                    "posterior"
                    if isinstance(clf, InstanceNoiseCorrector)
                    else "confident_learning"
                ),
                noise_rate=getattr(fitted, "noise_rate_", None),
                return_indices_ranked_by=rank_by,
            ),
        )
    if isinstance(clf, InstanceNoiseCorrector):
        # the posterior rule flags the top round(noise_rate_ * n) rows
        assert mask.sum() == round(fitted.noise_rate_ * len(labels))
        if mask.any() and not mask.all():
            assert scores[mask].min() > scores[~mask].max()
    else:
        rows = np.arange(len(codes))
        np.testing.assert_allclose(scores, 1.0 - proba[rows, codes])
    # a real detector (20 % flips): flagged rows are mostly flips, and the
    # ranking separates them
    assert mask.sum() >= 20
    assert np.mean(flipped[mask]) > 0.5
    assert np.mean(mask[flipped]) > 0.2
    assert roc_auc_score(flipped, scores) > 0.85


def test_find_label_issues_bad_ranking_raises_before_fitting(noisy_multiclass):
    X, labels, _ = noisy_multiclass
    clf = InstanceNoiseCorrector(LogisticRegression())
    with pytest.raises(ValueError, match="return_indices_ranked_by must be"):
        clf.find_label_issues(X, labels, return_indices_ranked_by="csg")
    assert not hasattr(clf, "classes_")


def test_find_label_issues_function_rules():
    from sklearn_iclr26.label_noise import find_label_issues
    from sklearn_iclr26.label_noise._transition import (
        confident_joint_transition_matrix,
        implied_flip_rate,
    )

    rng = np.random.RandomState(0)
    pred_probs = rng.dirichlet(np.ones(4), size=300)
    labels = rng.randint(0, 4, 300)
    p = pred_probs[np.arange(300), labels]

    # posterior: the round(r n) rows with the lowest p (ties in row order)
    def lowest(rate):
        expected = np.zeros(len(p), dtype=bool)
        expected[np.argsort(p, kind="stable")[: round(rate * len(p))]] = True
        return expected

    for rate in (0.1, 0.3):
        mask = find_label_issues(
            labels, pred_probs, filter_by="posterior", noise_rate=rate
        )
        np.testing.assert_array_equal(mask, lowest(rate))
    rate = implied_flip_rate(
        confident_joint_transition_matrix(pred_probs, labels), labels
    )
    np.testing.assert_array_equal(
        find_label_issues(labels, pred_probs, filter_by="posterior"), lowest(rate)
    )
    # predicted_neq_given: argmax differs from the label
    np.testing.assert_array_equal(
        find_label_issues(labels, pred_probs, filter_by="predicted_neq_given"),
        pred_probs.argmax(axis=1) != labels,
    )
    # mask and ranked indices agree for every rule and ranking
    for filter_by in ("confident_learning", "predicted_neq_given", "posterior"):
        mask = find_label_issues(labels, pred_probs, filter_by=filter_by)
        for rank_by in ("self_confidence", "normalized_margin", "mislabel_score"):
            idx = find_label_issues(
                labels,
                pred_probs,
                filter_by=filter_by,
                return_indices_ranked_by=rank_by,
            )
            np.testing.assert_array_equal(np.sort(idx), np.flatnonzero(mask))
        idx = find_label_issues(
            labels,
            pred_probs,
            filter_by=filter_by,
            return_indices_ranked_by="self_confidence",
        )
        assert np.all(np.diff(p[idx]) >= 0)


def test_find_label_issues_function_errors():
    from sklearn_iclr26.label_noise import find_label_issues

    pred_probs = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 1\]"):
        find_label_issues([0, 2, 1], pred_probs)
    with pytest.raises(ValueError, match="integer class codes"):
        find_label_issues(["a", "b", "a"], pred_probs)
    with pytest.raises(ValueError, match="at least 2 columns"):
        find_label_issues([0, 0, 0], pred_probs[:, :1])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        find_label_issues([0, 1], pred_probs)
    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\]"):
        find_label_issues([0, 1, 0], -pred_probs)
    # not probabilities: scaled rows, rows not summing to 1
    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\]"):
        find_label_issues([0, 1, 0], pred_probs * 5)
    with pytest.raises(ValueError, match="must sum to 1"):
        find_label_issues([0, 1, 0], pred_probs * 0.5)
    with pytest.raises(InvalidParameterError, match="filter_by"):
        find_label_issues([0, 1, 0], pred_probs, filter_by="prune")
    with pytest.raises(InvalidParameterError, match="noise_rate"):
        find_label_issues([0, 1, 0], pred_probs, filter_by="posterior", noise_rate=1)
    with pytest.raises(InvalidParameterError, match="return_indices_ranked_by"):
        find_label_issues([0, 1, 0], pred_probs, return_indices_ranked_by="csg")


def test_label_issues_display_ranks_the_flagged_rows(noisy_multiclass):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sklearn_iclr26.label_noise import LabelIssuesDisplay

    X, labels, flipped = noisy_multiclass
    clf = InstanceNoiseCorrector(LogisticRegression(), random_state=0).fit(X, labels)
    disp = LabelIssuesDisplay.from_estimator(clf, X, labels, flipped=flipped)
    # from the training rows, the display reproduces the fitted flags
    np.testing.assert_array_equal(disp.label_issues, clf.label_issues_)
    np.testing.assert_allclose(disp.mislabel_scores, clf.mislabel_scores_, atol=1e-12)
    scores = disp.mislabel_scores[disp.ranked_indices_]
    assert np.all(np.diff(scores) <= 0)
    np.testing.assert_allclose(disp.line_.get_ydata(), scores)
    assert len(disp.issues_line_.get_xdata()) == clf.label_issues_.sum()
    assert len(disp.flipped_line_.get_xdata()) == flipped.sum()
    with pytest.raises(ValueError, match="not fitted on"):
        LabelIssuesDisplay.from_estimator(
            clf, X, np.where(labels == "ant", "dog", labels)
        )
    with pytest.raises(ValueError, match="filter_by must be"):
        LabelIssuesDisplay.from_predictions([0, 1], [[0.5, 0.5]] * 2, filter_by="x")
    with pytest.raises(ValueError, match="flipped has"):
        LabelIssuesDisplay.from_predictions([0, 1], [[0.5, 0.5]] * 2, flipped=[True])
    plt.close("all")


def test_multiclass_torch_proba_stays_on_the_simplex_far_outside_training_scale():
    """Per-class sigmoids normalised in log space: inputs at 1e3x and 1e4x the
    training scale give rows summing to 1 whose largest entry is ``predict``'s class (on
    main, some rows were all zeros: every sigmoid underflowed)."""
    X, y = make_classification(
        n_samples=200,
        n_features=5,
        n_informative=4,
        n_redundant=0,
        n_classes=3,
        random_state=0,
    )
    clf = InstanceNoiseCorrector(
        TorchMLPClassifier(max_iter=30), cv=None, random_state=0
    ).fit(X, y)
    rng = np.random.RandomState(1)
    for scale in (1e3, 1e4):
        X_far = scale * rng.normal(size=(50, 5))
        proba = clf.predict_proba(X_far)
        assert np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        # predict's class has the largest probability (saturated sigmoids
        # may tie at 1/n_top)
        codes = np.searchsorted(clf.classes_, clf.predict(X_far))
        np.testing.assert_array_equal(proba[np.arange(50), codes], proba.max(axis=1))


def test_offline_rho_increases_with_the_true_flip_probability():
    """Direction of the difficulty -> flip-rate mapping: on instance noise
    whose flip probability is known, ``rho_`` of the offline estimators is
    positively rank-correlated with it (measured +0.95 for "ensemble"; the
    inverted mapping gives -0.95 and fails)."""
    X, y = make_classification(
        n_samples=1500, n_features=10, n_informative=5, random_state=0
    )
    y_noisy, _, p_flip = make_label_noise(
        y, X, kind="instance", rate=0.3, random_state=0, return_flip_proba=True
    )
    clf = InstanceNoiseCorrector(
        LogisticRegression(), rho="ensemble", cv=None, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        clf.fit(X, y_noisy)
    assert spearmanr(clf.rho_, p_flip)[0] > 0.5


def test_forward_multiclass_lightgbm_gradient_matches_finite_differences():
    """The multi-class forward objective's gradient is that of ``-log (T^T
    softmax(f))[y~]`` (central differences), and the softmax loss's at T = I."""
    from scipy.special import softmax

    from sklearn_iclr26.label_noise._lgbm_objective import ForwardCorrectedObjective

    rng = np.random.RandomState(0)
    n, k = 20, 4
    T = rng.dirichlet(np.ones(k), size=k) * 0.4 + 0.6 * np.eye(k)
    raw = rng.normal(size=(n, k))
    y = rng.randint(0, k, n)

    def loss(f):
        return -np.log((softmax(f, axis=1) @ T)[np.arange(n), y]).sum()

    grad, hess = ForwardCorrectedObjective(T)(y, raw, None)
    numeric = np.zeros_like(raw)
    for i in range(n):
        for j in range(k):
            step = np.zeros_like(raw)
            step[i, j] = 1e-6
            numeric[i, j] = (loss(raw + step) - loss(raw - step)) / 2e-6
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)
    assert np.all(hess > 0)
    grad_identity, _ = ForwardCorrectedObjective(np.eye(k))(y, raw, None)
    np.testing.assert_allclose(
        grad_identity, softmax(raw, axis=1) - np.eye(k)[y], atol=1e-12
    )


def test_class_conditional_lightgbm_default_not_below_plain_on_multiclass():
    """With LightGBM the default correction is forward: on 4 generated classes
    with 20 % symmetric flips it is within 0.03 of plain LightGBM on clean test
    labels (on main, backward by default: 0.15 below)."""
    X, y = make_classification(
        n_samples=1600,
        n_features=10,
        n_informative=6,
        n_classes=4,
        random_state=0,
    )
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.5, random_state=0, stratify=y
    )
    y_noisy, _ = make_label_noise(y_train, kind="symmetric", rate=0.2, random_state=0)
    plain = _lgbm().fit(X_train, y_noisy).score(X_test, y_test)
    clf = ClassConditionalNoiseCorrector(_lgbm(), random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        clf.fit(X_train, y_noisy)
    assert clf.method_ == "forward"
    assert clf.score(X_test, y_test) >= plain - 0.03


def test_class_conditional_default_pipeline_converges_on_many_classes():
    """The default logistic-regression pipeline raises no ConvergenceWarning on
    digits (10 classes, 20 % flips; on main, max_iter=100 did)."""
    from sklearn.datasets import load_digits
    from sklearn.exceptions import ConvergenceWarning

    X, y = load_digits(return_X_y=True)
    y_noisy, _ = make_label_noise(y, kind="symmetric", rate=0.2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        # after the line above: a ConvergenceWarning is a UserWarning
        warnings.simplefilter("error", ConvergenceWarning)
        ClassConditionalNoiseCorrector(random_state=0).fit(X, y_noisy)


def test_huge_finite_inputs_get_a_clear_message_not_nan():
    """Finite 1e300 features overflow inside the default StandardScaler +
    LogisticRegression; the error says so instead of "Input X contains NaN"
    (on main: scikit-learn's NaN message)."""
    X, y = make_classification(n_samples=200, random_state=0)
    X[:, 0] *= 1e300
    with pytest.raises(ValueError, match="contains no NaN or infinity, but values"):
        ClassConditionalNoiseCorrector(random_state=0).fit(X, y)
    X[0, 1] = np.nan  # a real NaN keeps scikit-learn's message
    with pytest.raises(ValueError, match="Input X contains NaN"):
        ClassConditionalNoiseCorrector(random_state=0).fit(X, y)


def _reference_grad_hess(raw, y, beta, lam, phi, detach_rho, hessian):
    # the objective written term by term with scipy's expit and numpy's
    # logaddexp (two of each), as it was before the fused form
    from scipy.special import expit

    s = 2.0 * y - 1.0
    t = s * raw
    u, v = expit(t), expit(-t)
    log_u, log_v = -np.logaddexp(0.0, -t), -np.logaddexp(0.0, t)
    rho, drho = flip_rate(np.abs(raw), beta, phi)
    d1 = -(1.0 - 2.0 * u - rho) * log_u - rho * log_v - v - lam * (1.0 - 2.0 * u)
    grad = s * u * v * d1
    if not detach_rho:
        entropy = -u * log_u - v * log_v
        grad = grad + (lam - entropy) * np.sign(raw) * drho
    if hessian == "gauss_newton":
        return grad, u * v
    uv = u * v
    d2 = uv * (2.0 * log_u * uv - (1.0 - 2.0 * u - rho) * v + rho * u)
    exact = d2 + uv * uv * (1.0 + 2.0 * lam) + uv * (1.0 - 2.0 * u) * d1
    return grad, np.maximum(exact, 1e-6)


@pytest.mark.parametrize("phi", PHIS)
@pytest.mark.parametrize(
    "beta, lam, detach, hessian",
    [
        (2.0, 0.0, True, "gauss_newton"),
        (1.0, 0.3, False, "exact_clipped"),
        (0.7, 0.1, True, "exact_clipped"),
    ],
)
def test_fused_objective_equals_the_term_by_term_formula(
    phi, beta, lam, detach, hessian
):
    # The fused objective (one exp and one log1p for the sigmoids and the
    # softplus terms) rounds differently from expit/logaddexp: equal within
    # 1e-14 absolute (4e-16 measured; the gradient cancels to ~1e-6 near
    # |raw| ~ 1, hence no relative bound), over raw scores up to +-800 where
    # the sigmoids saturate.
    rng = np.random.default_rng(0)
    raw = np.concatenate([rng.normal(scale=4, size=20_000), [0.0, -0.0, 800, -800]])
    y = (rng.random(raw.size) < 0.5).astype(np.float64)
    grad, hess = corrected_grad_hess(
        raw, y, beta=beta, lam=lam, phi=phi, detach_rho=detach, hessian=hessian
    )
    ref_grad, ref_hess = _reference_grad_hess(raw, y, beta, lam, phi, detach, hessian)
    assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))
    np.testing.assert_allclose(grad, ref_grad, rtol=0, atol=1e-14)
    np.testing.assert_allclose(hess, ref_hess, rtol=0, atol=1e-14)


def test_lightgbm_training_scores_replace_the_in_sample_predict(
    noisy_binary, monkeypatch
):
    # rho_ and the mislabel scores come from LightGBM's own running training
    # scores (no second pass over X): equal to predict + init_score within a
    # few ulps (summed in another order), and no in-sample predict runs.
    from sklearn_iclr26.label_noise._backends import LightGBMBackend

    X, _, y_noisy, _ = noisy_binary
    calls = []
    original = LightGBMBackend.raw_score

    def counting(self, fitted, X_, offset=0.0):
        calls.append(len(X_))
        return original(self, fitted, X_, offset)

    monkeypatch.setattr(LightGBMBackend, "raw_score", counting)
    est = InstanceNoiseCorrector(_lgbm()).fit(X, y_noisy)
    assert calls == []  # no in-sample predict during fit
    raw = est.decision_function(X)
    assert calls == [len(X)]
    rho = flip_rate(np.abs(raw), est.beta, est.phi)[0]
    np.testing.assert_allclose(est.rho_, rho, rtol=0, atol=1e-13)


def _one_split_noisy_binary():
    # y is set by one split (x0 < 0.3: 30 % positives); 20 % of the labels are
    # flipped, so a model that learns the split contradicts about 20 %
    rng = np.random.RandomState(0)
    X = rng.rand(600, 2)
    y = (X[:, 0] < 0.3).astype(int)
    flip = rng.rand(600) < 0.2
    return X, np.where(flip, 1 - y, y)


def test_undertrained_corrector_warns_and_reports_train_disagreement():
    # Issue 40 item 2. Two rounds from the log-odds of the label mean (which
    # predicts 0 everywhere): the plain loss crosses zero on the positive side
    # of the split in one round at learning_rate=0.5, so its out-of-fold
    # predictions contradict about the flipped 20 %; the corrected gradient is
    # scaled by about p (1 - p), so the corrected model still predicts 0
    # everywhere and contradicts every positive label (about 37 %).
    from sklearn.exceptions import ConvergenceWarning

    X, y = _one_split_noisy_binary()
    short = _lgbm(n_estimators=2, learning_rate=0.5)
    with pytest.warns(ConvergenceWarning, match="under-trained"):
        est = InstanceNoiseCorrector(short, warmup=0, random_state=0).fit(X, y)
    assert est.train_disagreement_ > est.oof_disagreement_ + 0.1
    assert est.train_disagreement_ == pytest.approx(np.mean(y == 1), abs=1 / 600)
    # the attribute is the fitted model's in-sample disagreement (LightGBM's
    # training scores and predict agree to a few ulps, so to within a row)
    assert abs(est.train_disagreement_ - np.mean(est.predict(X) != y)) <= 1 / 600

    # 100 rounds learn the split: the corrected model contradicts the flips
    # (about 20 %), fewer rows than the plain out-of-fold predictions; and
    # with cv=None or another learner (reweight strategy) the rule, measured
    # with LightGBM's objective against out-of-fold figures, is not applied
    for estimator, cv in [
        (_lgbm(n_estimators=100), 5),
        (short, None),
        (LogisticRegression(), 5),
    ]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the flagged-set warning of cv=None
            warnings.simplefilter("error", ConvergenceWarning)
            est = InstanceNoiseCorrector(
                estimator, warmup=0, cv=cv, random_state=0
            ).fit(X, y)
        assert 0 <= est.train_disagreement_ <= 1
    assert est.train_disagreement_ == pytest.approx(np.mean(est.predict(X) != y))
