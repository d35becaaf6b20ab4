"""Tests of SparseAutoencoder, the identifiability metrics and make_latent_concepts."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import make_latent_concepts
from sklearn_iclr26.decomposition import SparseAutoencoder
from sklearn_iclr26.metrics import (
    concept_identifiability_score,
    linear_identifiability_check,
)
from sklearn_iclr26.neural_network import TorchMLPClassifier
from sklearn_iclr26.utils._torch import forward_module


@pytest.fixture(scope="module")
def X():
    rng = np.random.RandomState(0)
    return rng.normal(size=(300, 6)) @ rng.normal(size=(6, 10))


# ------------------------------------------------------------------ SAE
@pytest.mark.parametrize("positive", [True, False])
def test_topk_codes_have_at_most_k_nonzeros(X, positive):
    sae = SparseAutoencoder(
        n_components=20, k=3, positive_codes=positive, max_iter=5, random_state=0
    ).fit(X)
    nnz = (sae.transform(X) != 0).sum(axis=1)
    assert nnz.max() <= 3
    if not positive:  # no trailing ReLU: exactly k (pre-activations are never 0)
        assert np.all(nnz == 3)


@pytest.mark.parametrize(
    "params",
    [
        {"sparsity": "topk", "k": 3},
        {"sparsity": "batchtopk", "k": 3},
        {"sparsity": "l1", "l1_penalty": 1e-2},
        {"sparsity": "topk", "k": 3, "structured_rank": 2},
    ],
)
def test_decoder_columns_unit_norm_after_every_step(X, params):
    from skorch.callbacks import Callback

    norms = []

    class Record(Callback):
        def on_batch_end(self, net, training=None, **kwargs):
            if training:
                W = net.module_.W_dec.detach().numpy()
                norms.append(np.linalg.norm(W, axis=1))

    sae = SparseAutoencoder(
        n_components=12, max_iter=3, batch_size=64, random_state=0, **params
    )
    # the recording callback runs after the unit-norm callback, on every step
    from sklearn_iclr26.decomposition import _sparse_autoencoder as mod

    original = mod.train_module

    def train_with_record(*args, callbacks=None, **kwargs):
        return original(*args, callbacks=[*callbacks, ("record", Record())], **kwargs)

    mod.train_module = train_with_record
    try:
        sae.fit(X)
    finally:
        mod.train_module = original
    assert len(norms) == 3 * 5  # 3 epochs of 5 batches (300 rows / 64)
    np.testing.assert_allclose(np.array(norms), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(sae.components_, axis=1), 1.0)


def test_sae_attributes_inverse_and_feature_names(X):
    sae = SparseAutoencoder(n_components=16, k=4, max_iter=20, random_state=0).fit(X)
    assert sae.components_.shape == (16, 10)
    assert sae.dead_features_.shape == (16,) and sae.dead_features_.dtype == bool
    codes = sae.transform(X)
    recon = sae.inverse_transform(codes)
    err = np.mean(np.sum((X - recon) ** 2, axis=1))
    assert sae.reconstruction_error_ == pytest.approx(err)
    # better than reconstructing every row by the mean
    assert err < np.mean(np.sum((X - X.mean(0)) ** 2, axis=1))
    assert list(sae.get_feature_names_out()[:2]) == [
        "sparseautoencoder0",
        "sparseautoencoder1",
    ]
    out = clone(sae).set_output(transform="pandas").fit_transform(X)
    assert list(out.columns) == list(sae.get_feature_names_out())
    with pytest.raises(ValueError, match="columns"):
        sae.inverse_transform(codes[:, :3])


def test_sae_batchtopk_threshold_and_l1(X):
    sae = SparseAutoencoder(
        n_components=20, sparsity="batchtopk", k=3, max_iter=10, random_state=0
    ).fit(X)
    assert sae.threshold_ > 0
    codes = sae.transform(X)
    assert np.all(codes[codes != 0] > sae.threshold_)
    l1 = SparseAutoencoder(n_components=20, sparsity="l1", max_iter=5).fit(X)
    assert np.all(l1.transform(X) >= 0)


def test_sae_random_state_pickle_pipeline_grid(X):
    a = SparseAutoencoder(n_components=12, k=2, max_iter=5, random_state=7)
    np.testing.assert_array_equal(a.fit_transform(X), clone(a).fit_transform(X))
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    pipe = make_pipeline(
        StandardScaler(), SparseAutoencoder(max_iter=3, random_state=0)
    )
    assert pipe.fit_transform(X).shape == (300, 40)
    grid = GridSearchCV(
        SparseAutoencoder(n_components=8, max_iter=3, random_state=0),
        {"k": [1, 2]},
        cv=2,
        scoring=lambda est, X_, y_=None: (
            -np.mean((X_ - est.inverse_transform(est.transform(X_))) ** 2)
        ),
    ).fit(X)
    assert grid.best_params_["k"] in (1, 2)


def test_sae_bad_input(X):
    with pytest.raises(ValueError, match="must not exceed n_components"):
        SparseAutoencoder(n_components=4, k=5).fit(X)
    with pytest.raises(ValueError, match="structured_rank"):
        SparseAutoencoder(n_components=4, structured_rank=5).fit(X)


# ------------------------------------------------------ identifiability
def _probe_case(seed=0, n=400):
    rng = np.random.RandomState(seed)
    H = rng.normal(size=(n, 6))
    log_odds = H[:, :3] @ rng.normal(size=(3, 3))
    labels = (rng.uniform(size=(n, 3)) < 1 / (1 + np.exp(-log_odds))).astype(int)
    return H, labels, log_odds


@pytest.mark.parametrize("matching", ["hungarian", "max"])
def test_score_is_one_on_probe_logits_up_to_permutation_and_scale(matching):
    H, labels, _ = _probe_case()
    details = concept_identifiability_score(
        H, labels, representations=H, random_state=0, return_details=True
    )
    probe = details.targets  # the cross-fitted probe logits
    rng = np.random.RandomState(1)
    codes = np.column_stack(
        [rng.normal(size=len(H)), -2.5 * probe[:, 2], 0.1 * probe[:, 0], probe[:, 1]]
    )
    score = concept_identifiability_score(
        codes, labels, representations=H, matching=matching, random_state=0
    )
    assert score == pytest.approx(1.0, abs=1e-12)


def test_hungarian_matching_is_one_to_one():
    _, labels, log_odds = _probe_case()
    # one feature correlated with every concept, the others weakly
    codes = np.column_stack(
        [
            log_odds.sum(1),
            0.2 * log_odds[:, 0] + np.random.RandomState(0).normal(size=400),
        ]
        + [np.random.RandomState(i).normal(size=400) for i in range(1, 4)]
    )
    hung = concept_identifiability_score(
        codes, labels, log_posteriors=log_odds, return_details=True
    )
    best = concept_identifiability_score(
        codes, labels, log_posteriors=log_odds, matching="max", return_details=True
    )
    assert len(set(hung.matched_features)) == 3
    assert len(set(best.matched_features)) < 3  # "max" reuses feature 0
    assert best.score >= hung.score


def test_identifiability_bad_input():
    H, labels, log_odds = _probe_case()
    with pytest.raises(ValueError, match="rows must match"):
        concept_identifiability_score(H[:10], labels, log_posteriors=log_odds)
    with pytest.raises(ValueError, match="two classes"):
        concept_identifiability_score(
            H, np.zeros((400, 1)), log_posteriors=log_odds[:, :1]
        )
    with pytest.raises(ValueError, match="representations"):
        concept_identifiability_score(H, labels)
    with pytest.raises(ValueError, match="rows must match"):
        linear_identifiability_check(H, log_odds[:10])


def test_linear_identifiability_check_exact_and_in_sample():
    rng = np.random.RandomState(0)
    L = rng.normal(size=(100, 4))
    H = L @ rng.normal(size=(4, 7)) - 2.0
    res = linear_identifiability_check(H, L, cv=None)
    assert res.r2 == pytest.approx(1.0)
    assert res.coef.shape == (7, 4)
    assert linear_identifiability_check(rng.normal(size=(100, 3)), L).r2 < 0.2


# ------------------------------------------------------ generator
def test_make_latent_concepts_posteriors_are_normalised_and_consistent():
    d = make_latent_concepts(500, n_concepts=3, random_state=0)
    np.testing.assert_allclose(np.exp(d.log_posteriors).sum(1), 1.0)
    np.testing.assert_allclose(np.exp(d.token_log_proba).sum(1), 1.0)
    # the true concept configuration is, on average, more probable a posteriori
    idx = d.concepts @ (2 ** np.arange(2, -1, -1))
    true_post = np.exp(d.log_posteriors[np.arange(500), idx])
    assert true_post.mean() > 1 / 8
    again = make_latent_concepts(500, n_concepts=3, random_state=0)
    np.testing.assert_array_equal(d.data, again.data)


def test_next_token_mlp_is_linear_in_log_posteriors_and_sae_beats_noise():
    # checked in doc/decomposition.rst: R^2 0.67-0.71 over 3 seeds at 3000 rows
    d = make_latent_concepts(1500, n_concepts=3, n_tokens=32, random_state=0)
    clf = TorchMLPClassifier((32,), activation="tanh", max_iter=100, random_state=0)
    clf.fit(d.data, d.target)
    H = forward_module(clf.net_, d.data, func=lambda m, x: m.layers[:-1](x))
    assert linear_identifiability_check(H, d.log_posteriors).r2 > 0.5
    sae = SparseAutoencoder(n_components=32, k=4, max_iter=30, random_state=0).fit(H)
    score = concept_identifiability_score(
        sae.transform(H), d.concepts, log_posteriors=d.concept_log_odds
    )
    noise = np.random.RandomState(0).normal(size=(1500, 32))
    baseline = concept_identifiability_score(
        noise, d.concepts, log_posteriors=d.concept_log_odds
    )
    assert score > baseline + 0.2
