"""Class-conditional correction on dask collections with LightGBM's dask estimator.

:class:`~sklearn_iclr26.label_noise.ClassConditionalNoiseCorrector` with
``estimator=lightgbm.DaskLGBMClassifier(...)`` and a dask array or DataFrame
``X`` (``y`` a row-aligned dask array or Series) fits without gathering ``X``
to the driver:

1. the labels' classes and counts come back (one small array per block);
2. every row gets a cross-validation fold from a generator seeded by
   ``(seed, block index)``, stratified by label within its block
   (:func:`block_folds`), so the folds are a deterministic function of
   ``random_state`` and the partition;
3. each fold's model is a ``DaskLGBMClassifier`` fitted on the cluster on the
   other folds' rows; its booster comes back (``to_local()``);
4. two passes over the blocks, on the workers, with the fold models: the
   per-class sums of the out-of-fold self-confidence (the thresholds of the
   confident joint) and the disagreement count, then the ``K x K``
   confident-joint counts; the driver turns them into ``T`` with the
   in-memory functions of ``_transition.py`` (the same arithmetic, summed
   block by block);
5. the forward-corrected model is a ``DaskLGBMClassifier`` fitted on the
   cluster with the package's forward objective (each worker evaluates it on
   its own rows) and the ``init_score`` of the label counts; its booster
   becomes ``estimator_``.

``mislabel_scores_`` and ``label_issues_`` are lazy dask arrays, each block's
out-of-fold probabilities recomputed on the workers when they are computed.

:class:`~sklearn_iclr26.label_noise.InstanceNoiseCorrector` (``rho="margin"``,
the corrected objective) shares steps 1 to 4 (:func:`_prepare`,
:func:`_fold_models`, :func:`_confident_joint_blocks`; with ``cv=None`` the
passes read the fitted model's in-sample probabilities) and fits each binary
sub-problem on the cluster with the corrected objective, which computes each
row's flip rate from its own raw score on the worker that holds it
(:func:`fit_instance_blocks`); its flags are the exact top fraction of the
lazy scores (:func:`top_fraction_blocks`).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numbers

import numpy as np
from scipy.special import logit
from sklearn.base import clone
from sklearn.utils.multiclass import check_classification_targets

from sklearn_iclr26.label_noise._backends import ForwardLossSpec, LightGBMBackend
from sklearn_iclr26.label_noise._common import (
    ovr_proba,
    proba_from_raw,
    split_pipeline,
    validate_meta_X,
)
from sklearn_iclr26.label_noise._label_issues import (
    confident_off_diagonal,
    mislabel_posterior,
    prediction_close_to_label,
)
from sklearn_iclr26.label_noise._transition import (
    confident_joint_counts,
    transition_from_confident_joint,
)
from sklearn_iclr26.utils._blockwise import (
    gather_blocks,
    is_dask_collection,
    lazy_blocks,
)
from sklearn_iclr26.utils._random import seed_from_random_state
from sklearn_iclr26.utils._sklearn_compat import _safe_indexing
from sklearn_iclr26.utils._verbose import log_progress

__all__ = [
    "block_folds",
    "fit_class_conditional_blocks",
    "fit_instance_blocks",
    "is_dask_lightgbm",
    "top_fraction_blocks",
]


def _is_dask_model(estimator):
    # LightGBM's dask estimators are subclasses of lightgbm.dask._DaskLGBMModel;
    # read the class's module so that nothing is imported for the check
    return any(c.__module__ == "lightgbm.dask" for c in type(estimator).__mro__)


def is_dask_lightgbm(estimator):
    """Whether ``estimator`` (or a Pipeline's final step) is a LightGBM dask model."""
    return _is_dask_model(split_pipeline(estimator)[2])


def _refuse(name, what, instead):
    raise ValueError(
        f"{name} fits on dask collections block by block (with "
        f"estimator=lightgbm.DaskLGBMClassifier(...)) only without {what}; "
        f"{instead}"
    )


def _is_frame(X):
    return hasattr(X, "npartitions") and not hasattr(X, "chunks")


def _check_inputs(corrector, estimator, X, y, sample_weight):
    name = type(corrector).__name__
    compute = "compute X and y (X.compute()) to fit in memory with LGBMClassifier."
    if not is_dask_lightgbm(estimator):
        raise ValueError(
            f"{name}.fit got a dask collection, and fits on one without gathering "
            "it only with estimator=lightgbm.DaskLGBMClassifier(...) (trained on "
            f"the cluster); {type(estimator).__name__} would need the rows in one "
            f"process: {compute}"
        )
    head, _, final = split_pipeline(estimator)
    from lightgbm import DaskLGBMClassifier

    if not isinstance(final, DaskLGBMClassifier):
        raise TypeError(
            f"{name} needs a classifier: pass lightgbm.DaskLGBMClassifier, got "
            f"{type(final).__name__}."
        )
    if head is not None:
        _refuse(
            name,
            "a Pipeline around the DaskLGBMClassifier",
            "preprocess the dask collection first (e.g. with map_partitions) and "
            "pass the DaskLGBMClassifier itself.",
        )
    if not is_dask_collection(X) or not is_dask_collection(y):
        raise ValueError(
            f"{name} with a DaskLGBMClassifier needs X and y as dask collections "
            "(a dask array or DataFrame, and a row-aligned dask array or Series); "
            "for in-memory data use lightgbm.LGBMClassifier."
        )
    if sample_weight is not None and not is_dask_collection(sample_weight):
        raise ValueError(
            f"{name} on dask collections needs sample_weight as a dask collection "
            "partitioned like X (or None)."
        )
    if getattr(corrector, "method", "forward") == "backward":
        _refuse(
            name,
            "method='backward' (it stacks one copy of X per class)",
            "use method='forward' (or 'auto').",
        )
    if getattr(corrector, "transition_estimate", None) == "anchor":
        _refuse(
            name,
            "transition_estimate='anchor' (a quantile over all the rows)",
            "use transition_estimate='confident_joint' or pass transition_matrix.",
        )
    rho = getattr(corrector, "rho", "margin")
    if not (isinstance(rho, str) and rho == "margin"):
        _refuse(
            name,
            f"rho={'a callable' if callable(rho) else repr(rho)} (offline flip "
            "rates: one number per training row, held by the objective, which "
            "the distributed training does not carry to the workers)",
            "use rho='margin' (the default), or compute X and y to fit in memory.",
        )
    if getattr(corrector, "strategy", "auto") == "reweight":
        _refuse(
            name,
            "strategy='reweight' (it stacks two copies of X)",
            "use strategy='auto' or 'objective' (the corrected loss as "
            "LightGBM objective, evaluated on the workers).",
        )
    cv = getattr(corrector, "cv", 3)
    if cv is not None and not isinstance(cv, numbers.Integral):
        _refuse(
            name,
            f"a cross-validation object as cv (got {type(cv).__name__}; its "
            "splits index all the rows)",
            "pass cv as an int (folds stratified by label within each block) or "
            "None (in-sample probabilities).",
        )
    objective = final.get_params().get("objective")
    if objective not in (None, "binary"):
        raise ValueError(
            "The DaskLGBMClassifier must keep objective=None (or 'binary'): the "
            f"corrector sets its own objective, got objective={objective!r}."
        )


def _empty_rows(X):
    if _is_frame(X):
        return X._meta
    if X.ndim != 2:
        raise ValueError(
            f"Expected a 2D dask array for X, got {X.ndim}D of shape {X.shape}."
        )
    return np.empty((0, X.shape[1]), dtype=X.dtype)


def _aligned_labels(X, y, name="y"):
    """``y`` (or another row-aligned vector) 1-D, partitioned like ``X``."""
    if _is_frame(y) and getattr(y, "ndim", 1) == 2:
        if len(y.columns) != 1:
            raise ValueError(f"{name} must be one column.")
        y = y[y.columns[0]]
    if _is_frame(X):
        if not _is_frame(y) or y.npartitions != X.npartitions:
            raise ValueError(
                f"X is a dask DataFrame: pass {name} as a dask Series with the same "
                "partitions (e.g. a column of the same DataFrame)."
            )
        return y
    if _is_frame(y):
        y = y.to_dask_array(lengths=True)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {y.shape}.")
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError(
            "X has unknown row chunks: call X.compute_chunk_sizes() first."
        )
    if any(np.isnan(c) for c in y.chunks[0]):
        y = y.compute_chunk_sizes()
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: "
            f"[{X.shape[0]}, {y.shape[0]}]"
        )
    return y.rechunk({0: X.chunks[0]})


def _map_rows(func, first, *others, dtype, tail=()):
    """``func(block_index, first_block, *other_blocks)`` per block, lazily.

    A pandas Series out for DataFrames (``tail=()``), a dask array for arrays.
    """
    if _is_frame(first):
        import pandas as pd

        def part(s, *rest, partition_info=None):
            out = func(partition_info["number"], np.asarray(s), *rest)
            return pd.Series(out, index=s.index)

        return first.map_partitions(
            part, *others, meta=pd.Series(dtype=dtype), align_dataframes=False
        )

    def block(b, *rest, block_id=None):
        return func(block_id[0], b, *rest)

    if tail:
        return first.map_blocks(
            block,
            *others,
            dtype=dtype,
            new_axis=1,
            chunks=(first.chunks[0], tail),
        )
    return first.map_blocks(block, *others, dtype=dtype)


def block_folds(y_block, seed, block_index, n_splits):
    """The fold of each row of one block: stratified by label within the block.

    For each label, a random permutation (from a generator seeded by ``(seed,
    block_index)``) of ``0, 1, ..., n_rows - 1`` modulo ``n_splits``.
    """
    rng = np.random.default_rng([seed, block_index])
    y_block = np.asarray(y_block)
    folds = np.empty(y_block.shape[0], dtype=np.int8)
    for label in np.unique(y_block):
        rows = np.flatnonzero(y_block == label)
        folds[rows] = rng.permutation(rows.shape[0]) % n_splits
    return folds


def _select(collection, folds, keep):
    """The rows of ``collection`` whose fold satisfies ``keep`` (lazily)."""
    if _is_frame(collection):
        return collection.map_partitions(
            lambda part, f: part[keep(np.asarray(f))],
            folds,
            align_dataframes=False,
        )
    return collection[keep(folds)]


def out_of_fold_block(models, X_block, folds_block, n_classes):
    """Each row's probabilities from the model that did not see its fold."""
    folds_block = np.asarray(folds_block)
    proba = np.empty((folds_block.shape[0], n_classes))
    for k, model in enumerate(models):
        rows = np.flatnonzero(folds_block == k)
        if rows.size:
            proba[rows] = model.predict_proba(_safe_indexing(X_block, rows))
    return proba


def _init_scores(y_enc, init, n_classes):
    """The ``init_score`` collection, one value (or row) per row of ``y``."""
    if n_classes == 2:
        return _map_rows(
            lambda i, b: np.full(b.shape[0], init), y_enc, dtype=np.float64
        )
    if _is_frame(y_enc):
        import pandas as pd

        columns = list(range(n_classes))

        def part(s):
            return pd.DataFrame(
                np.tile(init, (len(s), 1)), index=s.index, columns=columns
            )

        meta = pd.DataFrame({c: pd.Series(dtype=np.float64) for c in columns})
        return y_enc.map_partitions(part, meta=meta)
    return _map_rows(
        lambda i, b: np.tile(init, (b.shape[0], 1)),
        y_enc,
        dtype=np.float64,
        tail=(n_classes,),
    )


def _progress(corrector, what):
    def report(done, total):
        step = max(1, total // 10)
        if done == total or done % step == 0:
            log_progress(corrector, f"{what}: {done}/{total} blocks on the workers")

    return report


def _weights(w_block, n):
    return np.ones(n) if w_block is None else np.asarray(w_block, dtype=np.float64)


def _prepare(corrector, estimator, X, y, sample_weight):
    """Checks, ``n_features_in_``, ``classes_`` and the labels' block-wise counts.

    Returns the label codes (lazy, partitioned like ``X``), the aligned
    weights (or None), the count and the total weight of each class.
    """
    _check_inputs(corrector, estimator, X, y, sample_weight)
    validate_meta_X(corrector, _empty_rows(X), reset=True)
    y = _aligned_labels(X, y)
    w = sample_weight
    if w is not None:
        w = _aligned_labels(X, w, "sample_weight")

    # pass 0 (labels and weights only): the classes, their counts and weights
    def label_counts(y_block, w_block):
        labels, inverse, n = np.unique(
            np.asarray(y_block), return_inverse=True, return_counts=True
        )
        weights = _weights(w_block, inverse.shape[0])
        if weights.size and not (np.all(np.isfinite(weights)) and weights.min() >= 0):
            raise ValueError("sample_weight must be finite and non-negative.")
        return labels, n, np.bincount(inverse.ravel(), weights, labels.shape[0])

    parts = gather_blocks(label_counts, y, w)
    classes = np.unique(np.concatenate([p[0] for p in parts]))
    check_classification_targets(classes)
    counts = np.zeros(classes.shape[0], dtype=np.int64)
    weighted = np.zeros(classes.shape[0])
    for labels, n, total in parts:
        counts[np.searchsorted(classes, labels)] += n
        weighted[np.searchsorted(classes, labels)] += total
    corrector.classes_ = classes
    n_classes = classes.shape[0]
    if np.sum(weighted > 0) < 2:
        raise ValueError(
            f"{type(corrector).__name__} needs samples of at least 2 classes in the "
            "data (with positive sample_weight), but the data contains only one "
            "class."
        )
    log_progress(
        corrector, f"{int(counts.sum())} rows of {n_classes} classes on the cluster"
    )
    y_enc = _map_rows(
        lambda i, b: np.searchsorted(classes, b).astype(np.int32),
        y,
        dtype=np.int32,
    )
    return y_enc, w, counts, weighted


def _fold_models(corrector, estimator, X, y_enc, w, counts, cv, rng):
    """``(models, folds)``: the block-wise folds and each fold's model.

    Each model is a clone of ``estimator`` fitted on the cluster on the other
    folds' rows, brought back as a local model.
    """
    n_classes = counts.shape[0]
    n_splits = int(min(cv, counts.min()))
    if n_splits < 2:
        raise ValueError(
            f"The smallest class has {int(counts.min())} rows: the out-of-fold "
            "probabilities need at least 2 per class."
        )
    seed = seed_from_random_state(rng)
    corrector._fold_seed = seed
    folds = _map_rows(
        lambda i, b: block_folds(b, seed, i, n_splits), y_enc, dtype=np.int8
    )
    models = []
    for k in range(n_splits):
        log_progress(corrector, f"fold {k + 1}/{n_splits}: fitting on the cluster")

        def train(collection, k=k):
            if collection is None:
                return None
            return _select(collection, folds, lambda f: f != k)

        model = clone(estimator).fit(
            train(X), train(y_enc), **({} if w is None else {"sample_weight": train(w)})
        )
        local = model.to_local()
        if len(local.classes_) != n_classes:
            raise ValueError(
                f"The model of fold {k} saw {len(local.classes_)} of the "
                f"{n_classes} classes: every worker needs rows of every class."
            )
        models.append(local)
    corrector._fold_models = models
    return models, folds


def _confident_joint_blocks(corrector, proba_of, X, y_enc, folds, w, weighted, counts):
    """The confident joint of block-wise probabilities, in two passes.

    ``proba_of(X_block, folds_block)`` gives a block's probabilities on the
    workers (out-of-fold with the fold models). Pass 1 brings back the
    per-class sums of the self-confidence (the thresholds; weighted for the
    joint as in memory, unweighted for the flags) and the weighted
    disagreement; pass 2 the ``K x K`` counts. Returns ``(C, thresholds,
    flag_thresholds, disagreement)``.
    """
    n_classes = counts.shape[0]

    def sums(X_block, y_block, f_block, w_block):
        y_block = np.asarray(y_block)
        weights = _weights(w_block, y_block.shape[0])
        proba = proba_of(X_block, f_block)
        own = proba[np.arange(y_block.shape[0]), y_block]
        return (
            np.bincount(y_block, weights=weights * own, minlength=n_classes),
            np.bincount(y_block, weights=own, minlength=n_classes),
            float(np.sum(weights[proba.argmax(axis=1) != y_block])),
        )

    parts = gather_blocks(
        sums, X, y_enc, folds, w, progress=_progress(corrector, "thresholds")
    )
    thresholds = np.sum([p[0] for p in parts], axis=0) / np.maximum(weighted, 1e-300)
    flag_thresholds = np.sum([p[1] for p in parts], axis=0) / counts
    disagreement = sum(p[2] for p in parts) / weighted.sum()

    def joint(X_block, y_block, f_block, w_block):
        y_block = np.asarray(y_block)
        proba = proba_of(X_block, f_block)
        weights = None if w_block is None else _weights(w_block, y_block.shape[0])
        return confident_joint_counts(proba, y_block, thresholds, weights)

    C = np.sum(
        gather_blocks(
            joint, X, y_enc, folds, w, progress=_progress(corrector, "confident joint")
        ),
        axis=0,
    )
    return C, thresholds, flag_thresholds, float(disagreement)


def fit_class_conditional_blocks(corrector, estimator, X, y, sample_weight, rng):
    """``fit`` of :class:`ClassConditionalNoiseCorrector` on dask collections."""
    y_enc, w, counts, weighted = _prepare(corrector, estimator, X, y, sample_weight)
    n_classes = counts.shape[0]
    n_samples = int(counts.sum())
    T_given = (
        None
        if corrector.transition_matrix is None
        else corrector._given_transition(n_classes)
    )
    models, folds = _fold_models(
        corrector, estimator, X, y_enc, w, counts, corrector.cv, rng
    )
    n_splits = len(models)

    def oof(X_block, f_block):
        return out_of_fold_block(models, X_block, f_block, n_classes)

    C, _, flag_thresholds, disagreement = _confident_joint_blocks(
        corrector, oof, X, y_enc, folds, w, weighted, counts
    )
    corrector._confident_joint = C
    corrector.method_ = "forward"
    if T_given is None:
        corrector.oof_disagreement_ = float(disagreement)
        T = transition_from_confident_joint(C, weighted, weighted.sum() / n_samples)
        implied = float(np.dot(weighted / weighted.sum(), 1.0 - np.diag(T)))
        T = corrector._review_transition(T, disagreement, implied, counts, n_splits)
    else:
        corrector.oof_disagreement_ = float("nan")
        T = T_given
    corrector.transition_matrix_ = T

    # the lazy flags and scores: out-of-fold probabilities again, per block
    def issues(X_block, y_block, f_block):
        y_block = np.asarray(y_block)
        proba = out_of_fold_block(models, X_block, f_block, n_classes)
        confident = confident_off_diagonal(y_block, proba, flag_thresholds)
        return confident & ~prediction_close_to_label(y_block, proba)

    def scores(X_block, y_block, f_block):
        y_block = np.asarray(y_block)
        proba = out_of_fold_block(models, X_block, f_block, n_classes)
        return 1.0 - proba[np.arange(y_block.shape[0]), y_block]

    corrector.label_issues_ = lazy_blocks(issues, X, y_enc, folds, dtype=bool)
    corrector.mislabel_scores_ = lazy_blocks(scores, X, y_enc, folds)
    corrector._issue_proba = corrector._issue_labels = None

    # the forward-corrected fit, on the cluster
    prior = weighted / weighted.sum()
    if n_classes > 2:
        init = np.log(np.maximum(prior, 1e-6))
    else:
        init = float(logit(np.clip(prior[1], 1e-6, 1 - 1e-6)))
    n_rounds = estimator.get_params()["n_estimators"]
    objective = ForwardLossSpec(T).lightgbm_objective(n_rounds, n_classes)
    log_progress(corrector, "forward correction: fitting on the cluster")
    fitted = (
        clone(estimator)
        .set_params(objective=objective)
        .fit(
            X,
            y_enc,
            sample_weight=w,
            init_score=_init_scores(y_enc, init, n_classes),
        )
    )
    corrector.estimator_ = fitted.to_local()
    corrector.init_score_ = init
    corrector._backend = LightGBMBackend(corrector.estimator_)
    log_progress(corrector, "forward correction fitted (DaskLGBMClassifier)")


def top_fraction_blocks(scores, rate, n_samples):
    """:func:`top_fraction` of a lazy dask array of scores, exactly, lazily.

    The ``k = round(rate * n_samples)`` highest scores with ties in row order,
    as the in-memory rule (a stable sort of the negated scores). Only scores
    travel, never ``X``: the ``k``-th largest score ``s_k`` comes from
    ``dask.array.topk`` (of the smaller side: the ``n - k + 1`` smallest when
    ``k > n / 2``), reduced on the workers, one number back; then one small
    pair per block, the number of scores above ``s_k`` and equal to it.
    A row is flagged when its score exceeds ``s_k``, or equals it and is among
    the first ``k - #{above}`` such rows in row order (each block's share of
    the ties from the counts of the blocks before it). The scores are
    persisted on the workers while ``s_k`` and the counts are computed (one
    float per row), then released; the mask recomputes them per block.
    """
    import dask
    import dask.array as da

    n_flag = min(round(float(rate) * n_samples), n_samples)
    if n_flag == 0:
        return scores.map_blocks(lambda s: np.zeros(s.shape, dtype=bool), dtype=bool)
    held = scores.persist()
    if 2 * n_flag <= n_samples:
        kth = da.topk(held, n_flag).min()
    else:  # the k-th largest is the (n - k + 1)-th smallest
        kth = -da.topk(-held, n_samples - n_flag + 1).min()
    kth = float(kth.compute())

    def count(s):
        return int(np.sum(s > kth)), int(np.sum(s == kth))

    parts = dask.compute(*[dask.delayed(count)(b) for b in held.to_delayed().ravel()])
    del held
    left = n_flag - sum(p[0] for p in parts)
    quotas = []
    for _, equal in parts:
        quotas.append(min(equal, max(left, 0)))
        left -= quotas[-1]
    quotas = np.asarray(quotas, dtype=np.int64)

    def flag(s, block_id=None):
        tie = s == kth
        return (s > kth) | (tie & (np.cumsum(tie) <= quotas[block_id[0]]))

    return scores.map_blocks(flag, dtype=bool)


def fit_instance_blocks(corrector, estimator, X, y, sample_weight, rng):
    """``fit`` of :class:`InstanceNoiseCorrector` on dask collections.

    The default noise model only (``rho="margin"``, the corrected loss as
    LightGBM objective): each binary sub-problem (one, or one per class
    one-vs-rest) is a ``DaskLGBMClassifier`` fitted on the cluster with the
    in-memory backend's objective and ``init_score``; the objective computes
    each row's flip rate from its own raw score, so each worker evaluates it
    on its own rows. ``noise_rate_`` comes from the block-wise confident
    joint of the out-of-fold probabilities (``cv`` folds, as the
    class-conditional path) or of the fitted model's in-sample ones
    (``cv=None``); ``train_disagreement_`` from one pass; ``rho_``,
    ``mislabel_scores_`` and ``label_issues_`` are lazy.
    """
    from sklearn_iclr26.label_noise._instance import (
        margin_rho,
        observed_label_terms,
    )

    y_enc, w, counts, weighted = _prepare(corrector, estimator, X, y, sample_weight)
    n_classes = counts.shape[0]
    n_samples = int(counts.sum())
    corrector.strategy_ = "objective"
    n_rounds = estimator.get_params()["n_estimators"]
    if n_classes > 2:
        corrector._warn_few_rounds(n_rounds)

    # the corrected fits, on the cluster: one per binary sub-problem
    binary = n_classes == 2
    estimators, offsets = [], []
    for k in range(1 if binary else n_classes):
        prefix = f"sub-problem {k + 1}/{1 if binary else n_classes}: "
        positive = 1 if binary else k
        y_bin = (
            y_enc
            if binary
            else _map_rows(
                lambda i, b, k=k: (np.asarray(b) == k).astype(np.int32),
                y_enc,
                dtype=np.int32,
            )
        )
        # logit of the weighted label mean, as the in-memory init_score
        mean = weighted[positive] / weighted.sum()
        init = float(logit(np.clip(mean, 1e-6, 1 - 1e-6)))
        objective = corrector._loss_spec().lightgbm_objective(n_rounds, 2)
        log_progress(corrector, f"{prefix}corrected fit on the cluster")
        fitted = (
            clone(estimator)
            .set_params(objective=objective)
            .fit(X, y_bin, sample_weight=w, init_score=_init_scores(y_bin, init, 2))
        )
        estimators.append(fitted.to_local())
        offsets.append(init)
    corrector.estimators_ = estimators
    corrector.init_scores_ = np.asarray(offsets, dtype=np.float64)
    if binary:
        corrector.estimator_ = estimators[0]
        corrector.init_score_ = float(corrector.init_scores_[0])
    backend = LightGBMBackend(estimators[0])
    corrector._backend = backend
    offsets = corrector.init_scores_
    beta, phi = corrector.beta, corrector.phi

    def raws_of(X_block):
        return [
            backend.raw_score(est, X_block, offset)
            for est, offset in zip(estimators, offsets)
        ]

    def terms(X_block, y_block):
        raws = raws_of(X_block)
        rhos = [margin_rho(raw, beta, phi) for raw in raws]
        return observed_label_terms(raws, rhos, np.asarray(y_block))

    def fitted_proba(X_block, f_block=None):
        raws = raws_of(X_block)
        if binary:
            return proba_from_raw(raws[0])
        return ovr_proba(np.column_stack(raws))

    # the noise rate: the confident joint, out-of-fold (or in-sample)
    if corrector.cv is None:
        folds, proba_of = None, fitted_proba
    else:
        models, folds = _fold_models(
            corrector, estimator, X, y_enc, w, counts, corrector.cv, rng
        )

        def proba_of(X_block, f_block):
            return out_of_fold_block(models, X_block, f_block, n_classes)

    C, _, _, disagreement = _confident_joint_blocks(
        corrector, proba_of, X, y_enc, folds, w, weighted, counts
    )
    T = transition_from_confident_joint(C, weighted, weighted.sum() / n_samples)
    corrector._confident_joint = C
    corrector.noise_rate_ = float(np.dot(weighted / weighted.sum(), 1.0 - np.diag(T)))
    corrector.oof_disagreement_ = disagreement

    # the corrected model's in-sample disagreement with the labels
    def wrong(X_block, y_block, w_block):
        y_block = np.asarray(y_block)
        contradicted = fitted_proba(X_block).argmax(axis=1) != y_block
        return float(np.sum(_weights(w_block, y_block.shape[0])[contradicted]))

    parts = gather_blocks(
        wrong, X, y_enc, w, progress=_progress(corrector, "train disagreement")
    )
    corrector.train_disagreement_ = float(sum(parts) / weighted.sum())
    corrector._warn_underfit(backend.name)

    rate = corrector.noise_rate_

    def scores(X_block, y_block):
        return mislabel_posterior(terms(X_block, y_block)[2], rate)

    corrector.rho_ = lazy_blocks(lambda Xb, yb: terms(Xb, yb)[1], X, y_enc)
    corrector.mislabel_scores_ = lazy_blocks(scores, X, y_enc)
    log_progress(corrector, "label_issues_: the top fraction of the scores")
    corrector.label_issues_ = top_fraction_blocks(
        corrector.mislabel_scores_, rate, n_samples
    )
    corrector._issue_proba = corrector._issue_labels = None
    n_flag = min(round(rate * n_samples), n_samples)
    corrector._review_flags(n_flag / n_samples)
