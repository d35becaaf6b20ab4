"""The noise correctors on dask collections with LightGBM's dask model.

On a ``LocalCluster`` with two worker *processes*: the rows are generated on
the workers by a function that refuses to run in the test's own (driver)
process, so a fit that gathered ``X`` to the driver fails. The transition
matrix, the flags and the scores equal the in-memory computation from the
same out-of-fold probabilities (the fold models and folds the fit used,
applied to the rows in memory); the forward objective the cluster trained
with is the in-memory backend's; the lazy outputs equal the in-memory
methods of the fitted model. Skipped without dask and distributed.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.label_noise import (
    ClassConditionalNoiseCorrector,
    InstanceNoiseCorrector,
)
from sklearn_iclr26.label_noise._common import init_score
from sklearn_iclr26.label_noise._dask import (
    block_folds,
    out_of_fold_block,
    top_fraction_blocks,
)
from sklearn_iclr26.label_noise._instance import margin_rho, observed_label_terms
from sklearn_iclr26.label_noise._label_issues import (
    issues_and_scores,
    mislabel_posterior,
    top_fraction,
)
from sklearn_iclr26.label_noise._lgbm_objective import NoiseCorrectedObjective
from sklearn_iclr26.label_noise._transition import (
    confident_joint_transition_matrix,
    implied_flip_rate,
    shrink_to_diagonally_dominant,
)

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")
lightgbm = pytest.importorskip("lightgbm")

pytestmark = [
    pytest.mark.filterwarnings("ignore:Parameter n_jobs will be ignored"),
    pytest.mark.filterwarnings("ignore:Found 'n_estimators' in params"),
]

DRIVER = os.getpid()
N_FEATURES = 5
CHUNK = 300
N_BLOCKS = 4
COEF = np.linspace(-1.0, 1.0, N_FEATURES)


# ``client``: tests/conftest.py (two worker processes)


def _rows(block_id, n_classes, driver_ok):
    """Block ``block_id``: features, clean labels, labels with 20 % flips."""
    if not driver_ok and os.getpid() == DRIVER:
        raise AssertionError("the rows were computed on the driver")
    rng = np.random.default_rng([n_classes, block_id])
    X = rng.normal(size=(CHUNK, N_FEATURES))
    score = X @ COEF + 0.3 * rng.normal(size=CHUNK)
    if n_classes == 2:
        clean = (score > 0).astype(np.int64)
    else:
        clean = np.digitize(score, [-0.5, 0.5])
    flip = rng.uniform(size=CHUNK) < 0.2
    other = (clean + rng.integers(1, n_classes, size=CHUNK)) % n_classes
    return X, clean, np.where(flip, other, clean)


def _dask_rows(n_classes):
    def X_block(block_info=None):
        block = block_info[None]["chunk-location"][0]
        return _rows(block, n_classes, driver_ok=False)[0]

    def y_block(block_info=None):
        block = block_info[None]["chunk-location"][0]
        return _rows(block, n_classes, driver_ok=False)[2]

    X = da.map_blocks(
        X_block, chunks=((CHUNK,) * N_BLOCKS, (N_FEATURES,)), dtype=np.float64
    )
    y = da.map_blocks(y_block, chunks=((CHUNK,) * N_BLOCKS,), dtype=np.int64)
    return X, y


def _memory_rows(n_classes):
    parts = [_rows(b, n_classes, driver_ok=True) for b in range(N_BLOCKS)]
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))


def _dask_model(**params):
    return lightgbm.DaskLGBMClassifier(
        **{"n_estimators": 10, "num_leaves": 7, "verbose": -1, **params}
    )


def _memory_out_of_fold(corrector, X, y):
    """The fit's out-of-fold probabilities, recomputed in memory."""
    n_splits = len(corrector._fold_models)
    folds = np.concatenate(
        [
            block_folds(
                y[b * CHUNK : (b + 1) * CHUNK], corrector._fold_seed, b, n_splits
            )
            for b in range(N_BLOCKS)
        ]
    )
    n_classes = len(corrector.classes_)
    return out_of_fold_block(corrector._fold_models, X, folds, n_classes), folds


# the 3-class estimate is shrunk towards the identity (with this warning):
# the comparison covers the shrinkage too
@pytest.mark.filterwarnings("ignore:The estimated flip rate")
@pytest.mark.parametrize("n_classes", [2, 3])
def test_fit_by_blocks_never_gathers_X_and_equals_in_memory(client, n_classes):
    X_dask, y_dask = _dask_rows(n_classes)
    X, _, y = _memory_rows(n_classes)
    corrector = ClassConditionalNoiseCorrector(_dask_model(), cv=3, random_state=0).fit(
        X_dask, y_dask
    )
    assert corrector.method_ == "forward"
    np.testing.assert_array_equal(corrector.classes_, np.arange(n_classes))

    proba, folds = _memory_out_of_fold(corrector, X, y)
    # the folds are stratified by label within each block
    for b in range(N_BLOCKS):
        rows = slice(b * CHUNK, (b + 1) * CHUNK)
        for label in range(n_classes):
            sizes = np.bincount(folds[rows][y[rows] == label], minlength=3)
            assert sizes.max() - sizes.min() <= 1
    # the confident joint of the same out-of-fold probabilities, in memory
    expected, _ = shrink_to_diagonally_dominant(
        confident_joint_transition_matrix(proba, y)
    )
    np.testing.assert_allclose(
        corrector.transition_matrix_, expected, rtol=1e-12, atol=1e-14
    )
    assert corrector.oof_disagreement_ == np.mean(proba.argmax(axis=1) != y)
    mask, scores = issues_and_scores(y, proba, "confident_learning")
    assert isinstance(corrector.label_issues_, da.Array)  # lazy
    assert isinstance(corrector.mislabel_scores_, da.Array)
    np.testing.assert_array_equal(corrector.label_issues_.compute(), mask)
    np.testing.assert_allclose(
        corrector.mislabel_scores_.compute(), scores, rtol=0, atol=1e-15
    )
    assert mask.any()
    # the replicates need the out-of-fold probabilities, left on the cluster
    with pytest.raises(ValueError, match="fit in memory"):
        corrector.transition_matrix_samples()

    predicted = corrector.predict_proba(X_dask)
    assert isinstance(predicted, da.Array)
    np.testing.assert_array_equal(predicted.compute(), corrector.predict_proba(X))
    np.testing.assert_array_equal(
        corrector.predict(X_dask).compute(), corrector.predict(X)
    )
    # a refit: LightGBM's distributed training depends on which worker holds
    # which block, so compare with the refit's own flags
    flags = corrector.find_label_issues(X_dask, y_dask)
    assert isinstance(flags, da.Array)
    np.testing.assert_array_equal(flags.compute(), corrector.label_issues_.compute())


def _weights(X):
    return 1.0 + 2.0 * (X[:, 1] > 0)


def test_sample_weight_by_blocks_equals_in_memory(client):
    X_dask, y_dask = _dask_rows(2)
    X, _, y = _memory_rows(2)
    w_dask = X_dask.map_blocks(lambda b: _weights(b), drop_axis=1, dtype=float)
    corrector = ClassConditionalNoiseCorrector(_dask_model(), cv=3, random_state=0).fit(
        X_dask, y_dask, sample_weight=w_dask
    )
    w = _weights(X)
    proba, _ = _memory_out_of_fold(corrector, X, y)
    expected, _ = shrink_to_diagonally_dominant(
        confident_joint_transition_matrix(proba, y, w)
    )
    unweighted, _ = shrink_to_diagonally_dominant(
        confident_joint_transition_matrix(proba, y)
    )
    assert not np.allclose(expected, unweighted, rtol=1e-6)  # the weights count
    np.testing.assert_allclose(
        corrector.transition_matrix_, expected, rtol=1e-12, atol=1e-14
    )
    np.testing.assert_allclose(
        corrector.oof_disagreement_,
        np.average(proba.argmax(axis=1) != y, weights=w),
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        corrector.init_score_, init_score(y, w), rtol=1e-12, atol=1e-15
    )
    # the flags follow the in-memory rule, which reads no weights
    mask, _ = issues_and_scores(y, proba, "confident_learning")
    np.testing.assert_array_equal(corrector.label_issues_.compute(), mask)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_forward_fit_uses_the_in_memory_objective(client, n_classes):
    dd = pytest.importorskip("dask.dataframe")
    X, _, y = _memory_rows(n_classes)
    names = [f"f{j}" for j in range(N_FEATURES)]
    frame = pd.DataFrame(X, columns=names)
    ddf = dd.from_pandas(frame, npartitions=N_BLOCKS)
    labels = dd.from_pandas(pd.Series(np.asarray(["a", "b", "c"])[y]), npartitions=4)
    T = np.full((n_classes, n_classes), 0.2 / (n_classes - 1))
    np.fill_diagonal(T, 0.8)
    corrector = ClassConditionalNoiseCorrector(
        _dask_model(), transition_matrix=T, cv=2, random_state=0
    ).fit(ddf, labels)
    memory = ClassConditionalNoiseCorrector(
        lightgbm.LGBMClassifier(n_estimators=2, verbose=-1),
        transition_matrix=T,
        cv=2,
        random_state=0,
    ).fit(frame, np.asarray(["a", "b", "c"])[y])
    np.testing.assert_array_equal(corrector.classes_, memory.classes_)
    assert list(corrector.feature_names_in_) == names
    assert np.isnan(corrector.oof_disagreement_)
    np.testing.assert_array_equal(corrector.transition_matrix_, T)
    np.testing.assert_allclose(corrector.init_score_, memory.init_score_, rtol=1e-14)
    # the objective the workers trained with: the in-memory backend's gradient
    dask_objective = corrector.estimator_.get_params()["objective"]
    memory_objective = memory.estimator_.get_params()["objective"]
    rng = np.random.default_rng(0)
    raw = rng.normal(size=(50, n_classes) if n_classes > 2 else 50)
    codes = rng.integers(n_classes, size=50)
    for got, want in zip(
        dask_objective(codes, raw, None), memory_objective(codes, raw, None)
    ):
        np.testing.assert_array_equal(got, want)
    # and the booster was trained by it: the raw scores move away from the
    # offset (a constant model would not), and the local model predicts
    raw_train = corrector.estimator_.predict(frame, raw_score=True)
    assert np.ptp(raw_train, axis=0).min() > 0
    predicted = corrector.predict(ddf)
    assert isinstance(predicted, da.Array)
    np.testing.assert_array_equal(predicted.compute(), corrector.predict(frame))


def test_block_fit_refusals(client):
    X_dask, y_dask = _dask_rows(2)
    X, _, y = _memory_rows(2)
    with pytest.raises(ValueError, match="method='backward'"):
        ClassConditionalNoiseCorrector(_dask_model(), method="backward").fit(
            X_dask, y_dask
        )
    with pytest.raises(ValueError, match="transition_estimate='anchor'"):
        ClassConditionalNoiseCorrector(_dask_model(), transition_estimate="anchor").fit(
            X_dask, y_dask
        )
    with pytest.raises(ValueError, match="a Pipeline around"):
        ClassConditionalNoiseCorrector(
            make_pipeline(StandardScaler(), _dask_model())
        ).fit(X_dask, y_dask)
    with pytest.raises(ValueError, match="sample_weight as a dask collection"):
        ClassConditionalNoiseCorrector(_dask_model()).fit(
            X_dask, y_dask, sample_weight=np.ones(X.shape[0])
        )
    with pytest.raises(ValueError, match="DaskLGBMClassifier"):
        ClassConditionalNoiseCorrector(
            lightgbm.LGBMClassifier(n_estimators=5, verbose=-1)
        ).fit(X_dask, y_dask)
    with pytest.raises(ValueError, match=r"needs X and y as dask collections"):
        ClassConditionalNoiseCorrector(_dask_model()).fit(X, y)
    with pytest.raises(ValueError, match="DaskLGBMClassifier"):
        InstanceNoiseCorrector(lightgbm.LGBMClassifier(n_estimators=5, verbose=-1)).fit(
            X_dask, y_dask
        )
    with pytest.raises(ValueError, match="objective=None"):
        ClassConditionalNoiseCorrector(_dask_model(objective="multiclass")).fit(
            X_dask, y_dask
        )
    # ranking the flags needs them all in one process
    corrector = ClassConditionalNoiseCorrector(_dask_model(), random_state=0)
    with pytest.raises(ValueError, match="return_indices_ranked_by"):
        corrector.find_label_issues(
            X_dask, y_dask, return_indices_ranked_by="self_confidence"
        )


# InstanceNoiseCorrector: the default noise model (rho="margin", LightGBM
# objective) on the cluster. Its warnings on these small, noisy fits (few
# rounds, a high noise rate, under-training) are not what is tested here.
@pytest.mark.filterwarnings("ignore:Multi-class targets with")
@pytest.mark.filterwarnings("ignore:noise_rate_=")
@pytest.mark.filterwarnings("ignore:label_issues_ flags")
@pytest.mark.filterwarnings("ignore:The corrected model contradicts")
@pytest.mark.parametrize(
    "n_classes, cv, weighted, frame",
    [
        (2, 3, False, False),
        (3, 3, False, False),
        (2, None, True, False),
        (2, 2, False, True),
    ],
)
def test_instance_fit_by_blocks_never_gathers_X_and_equals_in_memory(
    client, n_classes, cv, weighted, frame
):
    X_dask, y_dask = _dask_rows(n_classes)
    X, _, y = _memory_rows(n_classes)
    if frame:  # a dask DataFrame and Series, partitioned as the arrays
        dd = pytest.importorskip("dask.dataframe")
        names = [f"f{j}" for j in range(N_FEATURES)]
        X_dask = dd.from_dask_array(X_dask, columns=names)
        y_dask = dd.from_dask_array(y_dask)
        X = pd.DataFrame(X, columns=names)
    w, fit_params = None, {}
    if weighted:
        w = _weights(X)
        fit_params["sample_weight"] = X_dask.map_blocks(
            lambda b: _weights(b), drop_axis=1, dtype=float
        )
    corrector = InstanceNoiseCorrector(_dask_model(), cv=cv, random_state=0).fit(
        X_dask, y_dask, **fit_params
    )
    assert corrector.strategy_ == "objective"
    n_problems = 1 if n_classes == 2 else n_classes
    assert len(corrector.estimators_) == n_problems
    np.testing.assert_array_equal(corrector.classes_, np.arange(n_classes))
    # each sub-problem trained on the workers with the in-memory objective
    # and init_score (the logit of the weighted label mean)
    expected_objective = corrector._loss_spec().lightgbm_objective(10, 2)
    for k, (est, offset) in enumerate(
        zip(corrector.estimators_, corrector.init_scores_)
    ):
        objective = est.get_params()["objective"]
        assert isinstance(objective, NoiseCorrectedObjective)
        assert repr(objective) == repr(expected_objective)
        y_bin = y if n_classes == 2 else (y == k).astype(int)
        np.testing.assert_allclose(offset, init_score(y_bin, w), rtol=1e-12)

    # the fitted model's raw scores, in memory, and the in-memory functions
    raws = [
        est.predict(X, raw_score=True) + offset
        for est, offset in zip(corrector.estimators_, corrector.init_scores_)
    ]
    rhos = [margin_rho(raw, 2.0, "logistic") for raw in raws]
    fitted, rho, log_odds_wrong = observed_label_terms(raws, rhos, y)
    assert all(np.ptp(raw) > 0 for raw in raws)  # trained, not constant
    # the noise rate: the confident joint of the same probabilities in memory
    if cv is None:
        proba = fitted
    else:
        proba, _ = _memory_out_of_fold(corrector, X, y)
    T = confident_joint_transition_matrix(proba, y, w)
    np.testing.assert_allclose(
        corrector.noise_rate_, implied_flip_rate(T, y, w), rtol=1e-12
    )
    np.testing.assert_allclose(
        corrector.oof_disagreement_,
        np.average(proba.argmax(axis=1) != y, weights=w),
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        corrector.train_disagreement_,
        np.average(fitted.argmax(axis=1) != y, weights=w),
        rtol=1e-12,
    )
    # lazy per-row outputs, equal to the in-memory functions
    for name in ("rho_", "mislabel_scores_", "label_issues_"):
        assert isinstance(getattr(corrector, name), da.Array)
    np.testing.assert_array_equal(corrector.rho_.compute(), rho)
    scores = corrector.mislabel_scores_.compute()
    np.testing.assert_array_equal(
        scores, mislabel_posterior(log_odds_wrong, corrector.noise_rate_)
    )
    flags = corrector.label_issues_.compute()
    np.testing.assert_array_equal(flags, top_fraction(scores, corrector.noise_rate_))
    assert flags.sum() == round(corrector.noise_rate_ * len(y)) > 0

    predicted = corrector.predict_proba(X_dask)
    assert isinstance(predicted, da.Array)
    np.testing.assert_array_equal(predicted.compute(), corrector.predict_proba(X))
    np.testing.assert_array_equal(
        corrector.predict(X_dask).compute(), corrector.predict(X)
    )


def test_objective_round_counter_is_per_worker(client, tmp_path):
    # LightGBM's distributed training: each worker calls its own copy of the
    # objective once per boosting round on its own rows, so the warm-up
    # counter of NoiseCorrectedObjective counts rounds on every worker
    class CountingObjective(NoiseCorrectedObjective):
        """Writes, at each call, the process and its copy's round counter."""

        # local to the test: plain pickle refuses it, so dask sends it by
        # value (cloudpickle) to the workers, which cannot import this module

        def __init__(self, *, path=None, **params):
            super().__init__(**params)
            self.path = path

        def __call__(self, y_true, y_pred, weight):
            grad, hess = super().__call__(y_true, y_pred, weight)
            with open(self.path, "a") as f:
                f.write(f"{os.getpid()} {self.n_calls_} {len(y_true)}\n")
            return grad, hess

    X_dask, y_dask = _dask_rows(2)
    path = tmp_path / "calls.txt"
    objective = CountingObjective(path=str(path), warmup=2)
    _dask_model(n_estimators=6).set_params(objective=objective).fit(X_dask, y_dask)
    calls = np.loadtxt(path, dtype=np.int64, ndmin=2)
    pids = np.unique(calls[:, 0])
    assert DRIVER not in pids
    assert calls[:, 2].sum() == 6 * N_BLOCKS * CHUNK  # every row, every round
    for pid in pids:
        np.testing.assert_array_equal(calls[calls[:, 0] == pid, 1], np.arange(1, 7))
    assert not hasattr(objective, "n_calls_")  # the driver's copy never ran


@pytest.mark.parametrize("frame", [False, True])
def test_top_fraction_blocks_equals_top_fraction_with_ties(frame):
    # heavy ties across blocks of unequal sizes: the ties go in row order
    rng = np.random.default_rng(0)
    scores = np.round(rng.uniform(size=103), 1)
    lazy = da.from_array(scores, chunks=(10, 40, 3, 50))
    if frame:
        dd = pytest.importorskip("dask.dataframe")
        lazy = dd.from_pandas(pd.Series(scores), npartitions=5).to_dask_array()
    for rate in (0.0, 0.004, 0.13, 0.5, 0.77, 0.999, 1.0):
        mask = top_fraction_blocks(lazy, rate, len(scores))
        assert isinstance(mask, da.Array)
        np.testing.assert_array_equal(
            mask.compute(scheduler="sync"), top_fraction(scores, rate)
        )


def test_instance_block_fit_refusals(client):
    X_dask, y_dask = _dask_rows(2)
    X, _, y = _memory_rows(2)
    for params, match in [
        ({"rho": "cluster"}, "rho='cluster'"),
        ({"rho": lambda X, y: np.zeros(len(y))}, "rho=a callable"),
        ({"strategy": "reweight"}, "strategy='reweight'"),
        ({"cv": KFold(3)}, "cv as an int"),
    ]:
        with pytest.raises(ValueError, match=match):
            InstanceNoiseCorrector(_dask_model(), **params).fit(X_dask, y_dask)
    with pytest.raises(ValueError, match="a Pipeline around"):
        InstanceNoiseCorrector(make_pipeline(StandardScaler(), _dask_model())).fit(
            X_dask, y_dask
        )
    with pytest.raises(ValueError, match="sample_weight as a dask collection"):
        InstanceNoiseCorrector(_dask_model()).fit(
            X_dask, y_dask, sample_weight=np.ones(X.shape[0])
        )
    with pytest.raises(ValueError, match=r"needs X and y as dask collections"):
        InstanceNoiseCorrector(_dask_model()).fit(X, y)
    with pytest.raises(ValueError, match="DaskLGBMClassifier"):
        InstanceNoiseCorrector().fit(X_dask, y_dask)
