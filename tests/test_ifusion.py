"""Tests of DiffusionInterestFusionClassifier and InteractionSequenceEncoder."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import pickle

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline

from sklearn_iclr26.neural_network import (
    DiffusionInterestFusionClassifier,
    InteractionSequenceEncoder,
)
from sklearn_iclr26.neural_network._interest_fusion import row_noise
from sklearn_iclr26.neural_network._interest_fusion_modules import (
    IFusionModule,
    orthogonality_penalty,
)

L, K, S = 6, 2, 3
LAYOUT = {
    "long": list(range(L)),
    "sessions": [list(range(L + k * S, L + (k + 1) * S)) for k in range(K)],
    "candidate": [L + K * S],
}


def _toy(n=300, n_items=15, seed=0):
    """Item-id rows: click iff the candidate appears in the last session."""
    rng = np.random.RandomState(seed)
    X = rng.randint(0, n_items, size=(n, L + K * S + 1)).astype(float)
    X[:, -1] = rng.randint(1, n_items, size=n)
    last = X[:, L + (K - 1) * S : L + K * S]
    y = (last == X[:, -1:]).any(axis=1).astype(int)
    y[:10] = np.arange(10) % 2  # both classes
    return X, y


def _fit(**params):
    X, y = _toy()
    base = {"layout": LAYOUT, "embed_dim": 8, "n_diffusion_steps": 5, "max_iter": 5}
    base.update(batch_size=64, random_state=0, dtype="float64")
    base.update(params)
    return DiffusionInterestFusionClassifier(**base).fit(X, y), X, y


# ----------------------------------------------------------- by construction


def test_decorrelation_term_zero_for_orthogonal_vectors():
    g_cp = torch.tensor([[1.0, 0.0, 0.0], [0.0, 2.0, 1.0]])
    g_tf = torch.tensor([[0.0, 3.0, -1.0], [5.0, 1.0, -2.0]])
    assert torch.all(orthogonality_penalty(g_cp, g_tf) == 0)
    assert orthogonality_penalty(g_cp, g_cp).min() > 0


def test_zero_guidance_is_the_unconditional_denoiser():
    clf, X, _ = _fit(guidance_scales=(0.0, 0.0))
    fused = clf.transform(X)
    module = clf.net_.module_.eval()
    _dense, aux = clf._inputs(X)
    noise = torch.as_tensor(row_noise(X, clf._noise_seed, (K, 8)))
    with torch.no_grad():
        h = module.encode(**{k: torch.as_tensor(v) for k, v in aux.items()})[0]
        T = module.n_diffusion_steps
        t = torch.full((len(X),), T, dtype=torch.long)
        a_T = module.abar[T]
        for k in range(K):
            # each stage from the forward-process sample, null conditions
            x_T = a_T.sqrt() * h + (1 - a_T).sqrt() * noise[:, k]
            h = module.denoise(x_T, t)
    np.testing.assert_allclose(fused, h.numpy(), rtol=1e-12, atol=1e-12)
    # the sessions then reach the fused interest through nothing (other
    # sessions key other predict-time noise: the same noise given here)
    X2 = X.copy()
    X2[:, L : L + K * S] = np.random.RandomState(1).randint(1, 15, (len(X), K * S))
    _dense, aux2 = clf._inputs(X2)
    with torch.no_grad():
        a, b = (
            module.fuse(**{k: torch.as_tensor(v) for k, v in a.items()}, noise=noise)[0]
            for a in (aux, aux2)
        )
    torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_guidance_changes_the_fused_interest():
    clf, X, _ = _fit(guidance_scales=(1.0, 1.0))
    X2 = X.copy()
    X2[:, L : L + K * S] = np.random.RandomState(1).randint(1, 15, (len(X), K * S))
    assert not np.allclose(clf.transform(X2), clf.transform(X))


def _embedding_toy(n, seed, w=4):
    """Pre-computed embeddings; click ~ sigmoid(2 c.(long + last session))."""
    rng = np.random.RandomState(seed)
    long, ses, cand = rng.randn(n, w), rng.randn(n, K, w), rng.randn(n, w)
    logit = 2 * (cand * (long + ses[:, -1])).sum(axis=1)
    y = (rng.rand(n) < 1 / (1 + np.exp(-logit))).astype(int)
    layout = {
        "long": list(range(w)),
        "sessions": [list(range(w * (k + 1), w * (k + 2))) for k in range(K)],
        "candidate": list(range(w * (K + 1), w * (K + 2))),
    }
    return np.hstack([long, ses.reshape(n, -1), cand]), y, layout


def test_one_step_output_matches_the_multi_step_sampler():
    # After training on a toy problem, the one-step output (n_sampling_steps=1)
    # matches the deterministic T-step DDIM sampler on held-out rows: relative
    # gap ||one - multi||_F / ||multi||_F below 0.15 (measured 0.116 with
    # consistency_weight=3; 0.298 with the consistency loss off). The comparison
    # with consistency_weight=0 is what makes this test able to fail: the
    # closeness comes from the loss, not from the sampler being trivially one
    # step.
    X, y, layout = _embedding_toy(500, 0)
    X_test, _, _ = _embedding_toy(1000, 1)
    params = {"layout": layout, "n_items": None, "embed_dim": 8}
    params.update(n_diffusion_steps=5, max_iter=50, batch_size=64)
    params.update(learning_rate_init=3e-3, random_state=0, dtype="float64")
    gaps = {}
    for lam in (3.0, 0.0):
        clf = DiffusionInterestFusionClassifier(consistency_weight=lam, **params)
        clf.fit(X, y)
        one = clf.transform(X_test)
        multi = clf.set_params(n_sampling_steps=5).transform(X_test)
        assert np.all(np.isfinite(multi))
        gaps[lam] = np.linalg.norm(one - multi) / np.linalg.norm(multi)
        # n_sampling_steps=1 is the one-step output
        np.testing.assert_array_equal(
            clf.set_params(n_sampling_steps=1).transform(X_test), one
        )
    # from the noisy start (v-prediction form): 0.116 against 0.298
    assert gaps[3.0] < 0.15, gaps
    assert gaps[0.0] > 2 * gaps[3.0], gaps


def test_shapes_and_padding_mask():
    clf, X, _ = _fit()
    assert clf.transform(X[:7]).shape == (7, 8)
    assert clf.predict_proba(X[:7]).shape == (7, 2)
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    # padding (id 0) is masked: all-padding history gives h_L = long_proj(0)
    module = clf.net_.module_
    Xp = X.copy()
    Xp[:, :L] = 0
    _dense, aux = clf._inputs(Xp)
    with torch.no_grad():
        h = module.encode(**{k: torch.as_tensor(v) for k, v in aux.items()})[0]
    np.testing.assert_allclose(
        h.numpy(), module.long_proj.bias.detach().numpy()[None].repeat(len(X), 0)
    )
    # the padding row of the item table stays zero after training
    assert torch.all(module.item_embedding.weight[0] == 0)


def _module(fusion="diffusion", K=3, d=8, **kw):
    params = {
        "fusion": fusion,
        "n_items": 20,
        "input_dim": None,
        "embed_dim": d,
        "n_sessions": K,
        "has_candidate": True,
        "n_dense": 0,
        "hidden_layer_sizes": (16,),
        "n_diffusion_steps": 5,
        "guidance_scales": (1.0, 1.0),
        "evolution_weight": 1.0,
        "orthogonality_weight": 0.0,
        "consistency_weight": 0.0,
        "cond_dropout": 0.1,
        "dtype": torch.float64,
    }
    params.update(kw)
    torch.manual_seed(0)
    return IFusionModule(**params)


def test_evolution_loss_is_cosine_distance_to_next_session():
    module = _module()
    rng = torch.Generator().manual_seed(0)
    x0, out, target = (
        torch.randn(5, 8, generator=rng, dtype=torch.float64) for _ in "abc"
    )
    g = torch.zeros(5, 8, dtype=torch.float64)
    got = module._stage_penalty(x0, out, target, g, g)
    expected = 1 - (out * target).sum(1) / (out.norm(dim=1) * target.norm(dim=1))
    torch.testing.assert_close(got, expected)
    # zero when the fused interest points at the next session, any scale
    torch.testing.assert_close(
        module._stage_penalty(x0, 3 * target, target, g, g),
        torch.zeros(5, dtype=torch.float64),
    )
    # the last stage has no following session in the row
    assert torch.all(module._stage_penalty(x0, out, None, g, g) == 0)
    # the ablation is the DDPM reconstruction of the stage input instead
    recon = _module(evolution_loss="reconstruction")
    torch.manual_seed(0)
    assert not torch.allclose(recon._stage_penalty(x0, out, target, g, g), got)


def test_evolution_loss_trains_towards_the_next_session_interest():
    # the fused output of stage k gets the gradient of 1 - cos(x_k, s_{k+1});
    # the next session's vector is a stopped-gradient target
    module = _module(K=2).train()
    rng = np.random.RandomState(0)
    long = torch.as_tensor(rng.randint(1, 20, (16, 6)))
    sessions = torch.as_tensor(rng.randint(1, 20, (16, 2, 3)))
    cand = torch.as_tensor(rng.randint(1, 20, 16))
    _, penalty, _ = module.fuse(long, sessions, cand)
    # K=2: the loss of stage 1 to session 2, a cosine distance in (0, 2]
    assert penalty.min() > 0 and penalty.max() <= 2
    penalty.sum().backward()
    assert module.denoiser[0].weight.grad.abs().sum() > 0


def test_capacity_matched_concat_has_the_denoisers_size():
    # with K = 3 the MLP's input (K + 1) d equals the denoiser's 4 d input
    module = _module("diffusion")
    mlp = _module("mlp")
    size = lambda m: sum(p.numel() for p in m.parameters())
    assert size(mlp.concat_mlp) == size(module.denoiser)
    assert [type(m) for m in mlp.concat_mlp] == [type(m) for m in module.denoiser]


@pytest.mark.parametrize("fusion", ["mlp", "din"])
def test_baseline_fusions_fit(fusion):
    clf, X, y = _fit(fusion=fusion, max_iter=20, learning_rate_init=1e-2)
    assert clf.transform(X).shape == (len(X), 8)
    # the toy's click (candidate in the last session) is learnable
    assert clf.score(X, y) > 0.8


def test_din_needs_a_candidate():
    X, y = _toy()
    layout = {"long": LAYOUT["long"], "sessions": LAYOUT["sessions"]}
    clf = DiffusionInterestFusionClassifier("din", layout=layout, max_iter=1)
    with pytest.raises(ValueError, match="candidate"):
        clf.fit(X[:, :-1], y)


def test_predict_seeding_contract():
    # inference starts from noise; a row's output is the same on every call,
    # whatever the batching, the other rows and their order, and after pickling
    from sklearn import config_context

    clf, X, _ = _fit()
    assert np.ptp(clf.predict_proba(X)) > 0
    p = clf.predict_proba(X)
    np.testing.assert_array_equal(clf.predict_proba(X), p)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), p)
    # batching, subsets and order: the same up to rounding of batched matmuls
    close = {"rtol": 1e-12, "atol": 1e-14}
    with config_context(working_memory=0.001):  # a few rows per batch
        np.testing.assert_allclose(clf.predict_proba(X), p, **close)
    order = np.random.RandomState(0).permutation(len(X))
    np.testing.assert_allclose(clf.predict_proba(X[order]), p[order], **close)
    np.testing.assert_allclose(clf.predict_proba(X[5:6]), p[5:6], **close)
    # the noise reaches the output: another predict seed changes it
    other = pickle.loads(pickle.dumps(clf))
    other._noise_seed += 1
    assert not np.allclose(other.predict_proba(X), p)
    # and the draws are standard normal, independent of the row
    z = row_noise(np.arange(4000.0)[:, None], 0, (3, 8))
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    assert abs(np.corrcoef(z[:, 0, 0], z[:, 1, 0])[0, 1]) < 0.05


def test_validation_split_last_holds_out_the_latest_rows():
    clf, X, y = _fit()
    clf.set_params(validation_split="last", validation_fraction=0.25)
    rows, valid = clf._validation_split(X, y)
    np.testing.assert_array_equal(valid, np.arange(225, 300))
    np.testing.assert_array_equal(rows, np.arange(225))
    clf.set_params(early_stopping=True, n_iter_no_change=2, max_iter=30).fit(X, y)
    assert len(clf.validation_loss_curve_) == clf.n_iter_
    assert clf.best_iter_ <= clf.n_iter_


@pytest.mark.parametrize("fusion", ["concat", "mlp", "attention", "din", "diffusion"])
def test_random_state_bit_identical(fusion):
    # pickle and clone: tests/test_common_contracts.py
    a, X, _ = _fit(fusion=fusion)
    b, _, _ = _fit(fusion=fusion)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_device_honoured():
    clf, _X, _ = _fit(device="cpu")
    assert str(clf.net_.device) == "cpu"
    assert all(p.device.type == "cpu" for p in clf.net_.module_.parameters())


def test_gridsearch_over_fusion():
    X, y = _toy()
    clf = DiffusionInterestFusionClassifier(
        layout=LAYOUT, embed_dim=4, n_diffusion_steps=3, max_iter=2, random_state=0
    )
    # log-loss, not accuracy: after 2 epochs both predict the majority class
    fusions = ["concat", "diffusion"]
    search = GridSearchCV(clf, {"fusion": fusions}, cv=2, scoring="neg_log_loss")
    search.fit(X, y)
    by_hand = [
        cross_val_score(
            clone(clf).set_params(fusion=f), X, y, cv=2, scoring="neg_log_loss"
        ).mean()
        for f in fusions
    ]
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], by_hand)
    assert by_hand[0] != by_hand[1]  # the fusion reaches the model
    assert search.best_params_ == {"fusion": fusions[int(np.argmax(by_hand))]}


def test_dataframe_blocks_found_by_name_not_position():
    X, y = _toy()
    names = [f"long_{j}" for j in range(L)]
    names += [f"session{k + 1}_{j}" for k in range(K) for j in range(S)]
    names += ["candidate"]
    df = pd.DataFrame(X, columns=names)
    df["dense_a"] = np.random.RandomState(0).normal(size=len(df))
    params = {"embed_dim": 8, "n_diffusion_steps": 3, "max_iter": 3, "random_state": 0}
    clf = DiffusionInterestFusionClassifier(**params).fit(df, y)
    assert clf.layout_["candidate"] == [L + K * S]
    assert clf.layout_["dense"] == [L + K * S + 1]
    shuffled = df[list(np.random.RandomState(1).permutation(df.columns))]
    clf2 = DiffusionInterestFusionClassifier(**params).fit(shuffled, y)
    np.testing.assert_allclose(
        clf2.predict_proba(shuffled), clf.predict_proba(df), rtol=1e-5, atol=1e-6
    )
    # the same layout given by names
    by_name = {
        "long": names[:L],
        "sessions": [names[L + k * S : L + (k + 1) * S] for k in range(K)],
        "candidate": ["candidate"],
    }
    clf3 = DiffusionInterestFusionClassifier(layout=by_name, **params).fit(df, y)
    np.testing.assert_array_equal(clf3.predict_proba(df), clf.predict_proba(df))


# ------------------------------------------------------------------ errors


def test_bad_input_errors():
    X, y = _toy()
    est = DiffusionInterestFusionClassifier(layout=LAYOUT, max_iter=1, random_state=0)
    with pytest.raises(ValueError, match="layout"):
        DiffusionInterestFusionClassifier().fit(X, y)
    ragged = X.copy()
    ragged[0, L - 1] = np.nan
    with pytest.raises(ValueError, match="padded with 0"):
        clone(est).fit(ragged, y)
    with pytest.raises(ValueError, match="Only binary"):
        clone(est).fit(X, np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="non-negative integer"):
        clone(est).fit(X + 0.5, y)
    emb = np.random.RandomState(0).normal(size=(50, 5))
    bad = {"long": [0, 1], "sessions": [[2, 3, 4]]}
    with pytest.raises(ValueError, match="Mismatched embedding dimensions"):
        DiffusionInterestFusionClassifier(layout=bad, n_items=None).fit(
            emb, np.arange(50) % 2
        )
    with pytest.raises(ValueError, match="same width"):
        DiffusionInterestFusionClassifier(
            layout={"long": [0], "sessions": [[1, 2], [3]]}
        ).fit(X, y)
    # the package's one column resolver: overlap, range, names without names
    with pytest.raises(ValueError, match=r"layout\['long'\].*overlap"):
        DiffusionInterestFusionClassifier(
            layout={"long": [0, 1], "sessions": [[1, 2]]}
        ).fit(X, y)
    with pytest.raises(ValueError, match=r"layout\['sessions'\]\[0\].*outside"):
        DiffusionInterestFusionClassifier(
            layout={"long": [0], "sessions": [[1, 999]]}
        ).fit(X, y)
    with pytest.raises(ValueError, match="no string column names"):
        DiffusionInterestFusionClassifier(
            layout={"long": ["a"], "sessions": [[1, 2]]}
        ).fit(X, y)
    with pytest.warns(UserWarning, match="unknown-item bucket"):
        clone(est).set_params(n_items=5).fit(X, y)
    with pytest.raises(ValueError, match="outside the item table"):
        clone(est).set_params(n_items=5, handle_unknown="error").fit(X, y)
    fitted = clone(est).fit(X, y)
    X_new = X.copy()
    X_new[0, -1] = 10_000  # unseen item at predict: the unknown bucket
    assert fitted.predict_proba(X_new).shape == (len(X), 2)
    with pytest.raises(ValueError, match="outside the item table"):
        fitted.set_params(handle_unknown="error").predict(X_new)


# ----------------------------------------------------------------- encoder


def _log(seed=0, n_users=6, n=120):
    rng = np.random.RandomState(seed)
    users = rng.randint(0, n_users, size=n)
    times = rng.randint(0, 40, size=n) * 1000.0  # ties and session gaps
    items = rng.randint(0, 25, size=n)
    log = pd.DataFrame({"user": users, "item": items, "timestamp": times})
    log = log.sort_values(["user", "timestamp"], kind="stable").reset_index(drop=True)
    return log, rng.randint(0, 2, size=n)


def test_encoder_never_sees_own_or_later_rows():
    log, y = _log()
    enc = InteractionSequenceEncoder(
        max_history=5, n_sessions=2, session_length=3, session_gap=1500
    )
    Xt = enc.fit_transform(log, y)
    names = enc.get_feature_names_out()
    assert Xt.shape[1] == len(names)
    seq = [j for j, c in enumerate(names) if c.startswith(("long_", "session"))]
    codes = enc._codes(log["item"].to_numpy())
    for r in range(len(log)):
        earlier = (log["user"] == log["user"][r]) & (
            log["timestamp"] < log["timestamp"][r]
        )
        hist = Xt[r, seq]
        hist = np.sort(hist[hist > 0])
        allowed = np.sort(codes[earlier.to_numpy()])
        # every history code is an earlier interaction of the same user
        assert np.all(np.isin(hist, allowed))
        assert len(hist) <= len(allowed)
    # labels of a row itself and of later rows (any user) do not matter
    for r in range(0, len(log), 17):
        y2 = y.copy()
        later = (log["timestamp"] >= log["timestamp"][r]).to_numpy()
        y2[later] = 1 - y2[later]
        np.testing.assert_array_equal(enc.fit_transform(log, y2)[r], Xt[r])


def test_encoder_pipeline_and_errors():
    log, y = _log(n=200)
    enc = InteractionSequenceEncoder(max_history=4, n_sessions=2, session_length=3)
    clf = DiffusionInterestFusionClassifier(
        embed_dim=4, n_diffusion_steps=3, max_iter=2, random_state=0
    )
    pipe = make_pipeline(enc.set_output(transform="pandas"), clf).fit(log, y)
    assert pipe.predict_proba(log).shape == (len(log), 2)
    assert pipe[-1].layout_["candidate"] == [4 + 2 * 3]
    with pytest.raises(ValueError, match="interaction table"):
        InteractionSequenceEncoder().fit(log.to_numpy(), y)
    shuffled = log.iloc[::-1]
    with pytest.raises(ValueError, match="out of order"):
        InteractionSequenceEncoder().fit(shuffled, y[::-1])
    new = log.copy()
    new.loc[0, "item"] = 999
    fitted = InteractionSequenceEncoder(handle_unknown="error").fit(log, y)
    with pytest.raises(ValueError, match="unknown"):
        fitted.transform(new)
    assert InteractionSequenceEncoder().fit(log, y).transform(new)[0, -7] == 1
    with pytest.raises(ValueError, match="binary"):
        InteractionSequenceEncoder().fit(log, np.arange(len(log)))
    assert clone(enc).get_params() == enc.get_params()
    pickle.loads(pickle.dumps(fitted))


def test_load_movielens_interactions():
    from sklearn_iclr26.datasets import load_movielens_interactions

    data = load_movielens_interactions()
    assert len(data.train) + len(data.test) == 100_004
    assert set(data.train["click"].unique()) == {0, 1}
    last_train = data.train.groupby("user")["timestamp"].max()
    first_test = data.test.groupby("user")["timestamp"].min()
    common = last_train.index.intersection(first_test.index)
    assert np.all(first_test[common] >= last_train[common])
    frac = len(data.test) / (len(data.train) + len(data.test))
    assert 0.18 < frac < 0.22


def test_stage_start_mean_is_noise_free_and_seed_free():
    clf, X, _ = _fit(stage_start="mean")
    noisy, _, _ = _fit()
    other = pickle.loads(pickle.dumps(clf))
    other._noise_seed += 1  # no predict-time noise reaches the output
    np.testing.assert_array_equal(other.predict_proba(X), clf.predict_proba(X))
    assert not np.allclose(noisy.predict_proba(X), clf.predict_proba(X))
