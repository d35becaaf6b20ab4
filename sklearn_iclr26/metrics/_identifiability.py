"""Concept identifiability of learned features (Liu et al., ICLR 2026)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.utils import Bunch, check_array

from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = [
    "concept_identifiability_score",
    "counterfactual_identifiability_check",
    "linear_identifiability_check",
]


def _abs_corr(A, B):
    """|Pearson| between the columns of A (n x p) and B (n x q); 0 for constants."""
    Ac = A - A.mean(axis=0)
    Bc = B - B.mean(axis=0)
    sa = np.sqrt((Ac**2).sum(axis=0))
    sb = np.sqrt((Bc**2).sum(axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        R = (Ac.T @ Bc) / np.outer(sa, sb)
    R[~np.isfinite(R)] = 0.0
    return np.abs(R)


def _match(R, matching):
    """Feature index per target: one-to-one (Hungarian) or best feature each."""
    n_targets = R.shape[1]
    if matching == "max":
        return R.argmax(axis=0)
    rows, cols = linear_sum_assignment(-R)
    feature = np.full(n_targets, -1)
    feature[cols] = rows
    return feature


def _probe_logits(representations, labels, cv, random_state):
    """Out-of-fold log-odds of a logistic probe for each binary concept."""
    columns = []
    for k in range(labels.shape[1]):
        folds = StratifiedKFold(cv, shuffle=True, random_state=random_state)
        columns.append(
            cross_val_predict(
                LogisticRegression(max_iter=1000),
                representations,
                labels[:, k],
                cv=folds,
                method="decision_function",
            )
        )
    return np.column_stack(columns)


@validate_params(
    {
        "codes": ["array-like"],
        "concept_labels": ["array-like"],
        "representations": ["array-like", None],
        "log_posteriors": ["array-like", None],
        "matching": [StrOptions({"hungarian", "max"})],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "return_details": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def concept_identifiability_score(
    codes,
    concept_labels,
    *,
    representations=None,
    log_posteriors=None,
    matching="hungarian",
    cv=5,
    random_state=None,
    return_details=False,
):
    """How well learned features recover concept log-posteriors.

    The sparse-autoencoder evaluation of Liu et al. (ICLR 2026): a
    representation is, up to an affine map, the vector of log-posteriors of the
    latent concepts, so a good feature of an SAE (or any code) correlates with
    one concept's log-posterior. For each binary concept ``k`` the target
    ``t_k`` is

    * the true log-odds ``log_posteriors[:, k]`` when given (simulation), else
    * the out-of-fold logit of a logistic probe of ``concept_labels[:, k]`` on
      ``representations`` (cross-fitted, ``cv`` folds: in-sample logits would
      overstate the bound).

    Features are matched to targets by absolute Pearson correlation,
    one-to-one (``"hungarian"``, :func:`scipy.optimize.linear_sum_assignment`)
    or each target taking its best feature (``"max"``, features may repeat).
    The score is the mean matched |corr|.

    The probe bound: with ``log_posteriors`` and ``representations``, the mean
    |corr| of the probe logits with the true log-odds; with
    ``representations`` only, the mean |corr| of the probe logits with the
    labels, and the codes are then also scored against the labels
    (``label_score``); ``ratio`` divides the comparable score by the bound.

    Parameters
    ----------
    codes : array-like of shape (n_samples, n_features)
        Learned features (e.g. ``SparseAutoencoder.transform``).
    concept_labels : array-like of shape (n_samples, n_concepts)
        Binary concept labels (two classes per column).
    representations : array-like of shape (n_samples, n_dims), default=None
        Representations the codes came from; the probes are trained on them.
    log_posteriors : array-like of shape (n_samples, n_concepts), default=None
        True log-odds ``log p(c_k=1|x) - log p(c_k=0|x)`` (simulation).
    matching : {"hungarian", "max"}, default="hungarian"
        Feature-to-concept matching.
    cv : int, default=5
        Folds of the cross-fitted probes.
    random_state : int, RandomState instance or None, default=None
        Fold shuffling of the probes.
    return_details : bool, default=False
        Return a :class:`~sklearn.utils.Bunch` instead of the score.

    Returns
    -------
    score : float or Bunch
        Mean matched |corr|. With ``return_details``: ``score``,
        ``per_concept``, ``matched_features`` (feature index per concept),
        ``correlations`` (features x concepts), ``matching``, ``targets``
        (the log-posterior estimates used), ``bound``, ``label_score`` and
        ``ratio`` (NaN where not defined).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import concept_identifiability_score
    >>> rng = np.random.RandomState(0)
    >>> log_odds = rng.normal(size=(300, 2))
    >>> proba = 1 / (1 + np.exp(-log_odds))
    >>> labels = (rng.uniform(size=(300, 2)) < proba).astype(int)
    >>> noise = rng.normal(size=300)
    >>> codes = np.column_stack([noise, 3 * log_odds[:, 1], log_odds[:, 0]])
    >>> round(concept_identifiability_score(codes, labels, log_posteriors=log_odds), 6)
    1.0
    """
    Z = check_array(codes, dtype=np.float64)
    C = check_array(concept_labels, dtype=None, ensure_2d=False)
    if C.ndim == 1:
        C = C.reshape(-1, 1)
    n = Z.shape[0]
    others = {"concept_labels": C}
    if representations is not None:
        representations = check_array(representations, dtype=np.float64)
        others["representations"] = representations
    if log_posteriors is not None:
        log_posteriors = check_array(log_posteriors, dtype=np.float64, ensure_2d=False)
        if log_posteriors.ndim == 1:
            log_posteriors = log_posteriors.reshape(-1, 1)
        others["log_posteriors"] = log_posteriors
    for name, arr in others.items():
        if arr.shape[0] != n:
            raise ValueError(
                f"codes has {n} rows but {name} has {arr.shape[0]}; the rows must "
                "match."
            )
    labels = np.empty(C.shape, dtype=np.int64)
    for k in range(C.shape[1]):
        values = np.unique(C[:, k])
        if values.shape[0] != 2:
            raise ValueError(
                f"Concept {k} has {values.shape[0]} distinct label(s); each concept "
                "needs exactly two classes (binary concepts; encode a multi-valued "
                "concept one-vs-rest)."
            )
        labels[:, k] = C[:, k] == values[1]
    if log_posteriors is not None and log_posteriors.shape[1] != C.shape[1]:
        raise ValueError(
            f"log_posteriors has {log_posteriors.shape[1]} columns for "
            f"{C.shape[1]} concepts."
        )
    if log_posteriors is None and representations is None:
        raise ValueError(
            "Give `representations` (to fit the probes) or `log_posteriors` "
            "(the true log-odds)."
        )
    probe = (
        _probe_logits(representations, labels, cv, random_state)
        if representations is not None
        else None
    )
    targets = log_posteriors if log_posteriors is not None else probe
    R = _abs_corr(Z, targets)
    matched = _match(R, matching)
    per_concept = np.array([R[f, k] if f >= 0 else 0.0 for k, f in enumerate(matched)])
    score = float(per_concept.mean())
    bound = label_score = ratio = np.nan
    if probe is not None and log_posteriors is not None:
        bound = float(np.mean(np.diag(_abs_corr(probe, log_posteriors))))
        ratio = score / bound if bound > 0 else np.nan
    elif probe is not None:
        bound = float(np.mean(np.diag(_abs_corr(probe, labels.astype(float)))))
        R_labels = _abs_corr(Z, labels.astype(float))
        m = _match(R_labels, matching)
        label_score = float(
            np.mean([R_labels[f, k] if f >= 0 else 0.0 for k, f in enumerate(m)])
        )
        ratio = label_score / bound if bound > 0 else np.nan
    if not return_details:
        return score
    return Bunch(
        score=score,
        per_concept=per_concept,
        matched_features=matched,
        correlations=R,
        matching=matching,
        targets=targets,
        bound=bound,
        label_score=label_score,
        ratio=ratio,
    )


@validate_params(
    {
        "representations": ["array-like"],
        "log_posteriors": ["array-like"],
        "cv": [Interval(Integral, 2, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def linear_identifiability_check(representations, log_posteriors, *, cv=5):
    """Test whether representations are affine in the concept log-posteriors.

    Theorem 3.1 of Liu et al. (ICLR 2026): next-token representations satisfy
    ``f(x) ~ A [log p(c_i | x)]_i + b``. This regresses every representation
    dimension on the log-posteriors (ordinary least squares with intercept) and
    reports the R^2 (out-of-fold with ``cv`` folds, else in-sample).

    Parameters
    ----------
    representations : array-like of shape (n_samples, n_dims)
        Learned representations.
    log_posteriors : array-like of shape (n_samples, n_concept_values)
        Log-posteriors of the latent concepts (e.g. ``log_posteriors`` of
        :func:`~sklearn_iclr26.datasets.make_latent_concepts`).
    cv : int or None, default=5
        Folds of the out-of-fold prediction; ``None`` fits in-sample.

    Returns
    -------
    result : Bunch
        ``r2`` (variance-weighted over dimensions), ``r2_per_dimension``,
        ``coef`` (n_dims x n_concept_values) and ``intercept`` of the
        in-sample fit.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import linear_identifiability_check
    >>> rng = np.random.RandomState(0)
    >>> L = rng.normal(size=(200, 3))
    >>> H = L @ rng.normal(size=(3, 5)) + 1.0
    >>> round(linear_identifiability_check(H, L).r2, 6)
    1.0
    """
    H = check_array(representations, dtype=np.float64)
    L = check_array(log_posteriors, dtype=np.float64)
    if H.shape[0] != L.shape[0]:
        raise ValueError(
            f"representations has {H.shape[0]} rows but log_posteriors has "
            f"{L.shape[0]}; the rows must match."
        )
    model = LinearRegression().fit(L, H)
    pred = (
        model.predict(L)
        if cv is None
        else cross_val_predict(LinearRegression(), L, H, cv=cv)
    )
    pred = pred.reshape(H.shape)
    ss_res = ((H - pred) ** 2).sum(axis=0)
    ss_tot = ((H - H.mean(axis=0)) ** 2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_dim = np.where(ss_tot > 0, 1 - ss_res / ss_tot, np.nan)
    r2 = float(1 - ss_res.sum() / ss_tot.sum()) if ss_tot.sum() > 0 else np.nan
    return Bunch(
        r2=r2,
        r2_per_dimension=per_dim,
        coef=np.atleast_2d(model.coef_),
        intercept=np.atleast_1d(model.intercept_),
    )


@validate_params(
    {
        "representations": ["array-like"],
        "counterfactual_representations": ["array-like"],
        "flipped_concepts": ["array-like"],
        "probe_representations": ["array-like"],
        "probe_targets": ["array-like"],
        "probe": [StrOptions({"logistic", "linear"})],
    },
    prefer_skip_nested_validation=True,
)
def counterfactual_identifiability_check(
    representations,
    counterfactual_representations,
    flipped_concepts,
    probe_representations,
    probe_targets,
    *,
    probe="logistic",
):
    """Concept directions from counterfactual pairs against a linear probe.

    The ``A_s W_s ~ I`` test of Liu et al. (ICLR 2026, Corollary of Theorem
    3.1): if representations are an affine function of the concept
    log-posteriors, ``f(x) = A [log p(c | x)] + b``, then

    * the representation change of a counterfactual pair ``(x, x')`` that
      differs only in concept ``k`` (off in ``x``, on in ``x'``) points along
      a fixed concept direction: ``a_k`` = the mean of ``f(x') - f(x)`` over
      the pairs of concept ``k`` (the columns of ``A_s``, n_dims x
      n_concepts);
    * a linear probe ``W_s`` (n_concepts x n_dims) whose row ``k`` reads
      concept ``k``'s log-odds from ``f(x)`` satisfies ``W_s a_j = 0`` for
      ``j != k``: ``W_s A_s`` is diagonal.

    The concept directions are identified up to scale only (a pair moves the
    log-odds by an amount that depends on the pair), so every column of
    ``M = W_s A_s`` is divided by the absolute value of its diagonal entry;
    the reported error is ``||M_normalised - I||_F`` (0 exactly when the
    representations satisfy the linear model and the probe reads it; a
    negative diagonal, a probe pointing against the direction, counts as an
    error of 2 on that entry).

    The probe: ``"logistic"``, one logistic regression per concept on
    ``probe_representations`` with the binary ``probe_targets`` (the paper's
    probe; its logit estimates the log-odds); ``"linear"``, ordinary least
    squares from ``probe_representations`` to continuous ``probe_targets``
    (e.g. the true log-odds in a simulation).

    Parameters
    ----------
    representations : array-like of shape (n_pairs, n_dims)
        ``f(x)`` of each pair's base input (concept off).
    counterfactual_representations : array-like of shape (n_pairs, n_dims)
        ``f(x')`` of each pair's counterfactual (the same input with the
        concept turned on).
    flipped_concepts : array-like of shape (n_pairs,)
        Index in ``[0, n_concepts)`` of the concept each pair flips. Every
        concept needs at least one pair.
    probe_representations : array-like of shape (n_samples, n_dims)
        Training rows of the probe.
    probe_targets : array-like of shape (n_samples, n_concepts)
        Binary concept labels (``probe="logistic"``) or continuous log-odds
        (``probe="linear"``).
    probe : {"logistic", "linear"}, default="logistic"
        Probe family.

    Returns
    -------
    result : Bunch
        ``error`` (``||M_normalised - I||_F``), ``off_diagonal_mass`` (sum of
        ``|off-diagonal|`` over the sum of ``|M_normalised|``), ``matrix``
        (``M_normalised``), ``raw_matrix`` (``W_s A_s``), ``directions``
        (``A_s``, n_dims x n_concepts), ``probe_coef`` (``W_s``) and
        ``n_pairs_per_concept``.

    See Also
    --------
    linear_identifiability_check : Regression of the representations on known
        log-posteriors (Theorem 3.1 directly).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.metrics import counterfactual_identifiability_check
    >>> rng = np.random.RandomState(0)
    >>> A = rng.normal(size=(6, 2))
    >>> L = rng.normal(size=(300, 2))
    >>> H = L @ A.T + 1.0
    >>> flipped = np.arange(40) % 2
    >>> L_cf = L[:40] + 2.0 * np.eye(2)[flipped]
    >>> res = counterfactual_identifiability_check(
    ...     H[:40], L_cf @ A.T + 1.0, flipped, H, L, probe="linear"
    ... )
    >>> round(res.error, 6)
    0.0
    """
    H0 = check_array(representations, dtype=np.float64)
    H1 = check_array(counterfactual_representations, dtype=np.float64)
    P = check_array(probe_representations, dtype=np.float64)
    T = check_array(
        probe_targets, dtype=np.float64 if probe == "linear" else None, ensure_2d=False
    )
    if T.ndim == 1:
        T = T.reshape(-1, 1)
    flipped = np.asarray(flipped_concepts)
    if flipped.ndim != 1 or flipped.shape[0] != H0.shape[0]:
        raise ValueError(
            f"flipped_concepts must have one entry per pair ({H0.shape[0]}), got "
            f"shape {flipped.shape}."
        )
    if H1.shape != H0.shape:
        raise ValueError(
            f"counterfactual_representations has shape {H1.shape}; it must match "
            f"representations {H0.shape} (one counterfactual per pair)."
        )
    if P.shape[1] != H0.shape[1]:
        raise ValueError(
            f"probe_representations has {P.shape[1]} columns; the pairs have "
            f"{H0.shape[1]}."
        )
    if T.shape[0] != P.shape[0]:
        raise ValueError(
            f"probe_representations has {P.shape[0]} rows but probe_targets has "
            f"{T.shape[0]}; the rows must match."
        )
    n_concepts = T.shape[1]
    if not np.issubdtype(flipped.dtype, np.integer) or (
        flipped.size and (flipped.min() < 0 or flipped.max() >= n_concepts)
    ):
        raise ValueError(
            f"flipped_concepts must hold concept indices in [0, {n_concepts})."
        )
    counts = np.bincount(flipped, minlength=n_concepts)
    if np.any(counts == 0):
        raise ValueError(
            f"Concepts {np.flatnonzero(counts == 0).tolist()} have no "
            "counterfactual pair; every concept needs at least one."
        )
    directions = np.column_stack(
        [(H1[flipped == k] - H0[flipped == k]).mean(axis=0) for k in range(n_concepts)]
    )
    if probe == "linear":
        W = np.atleast_2d(LinearRegression().fit(P, T).coef_)
    else:
        rows = []
        for k in range(n_concepts):
            values = np.unique(T[:, k])
            if values.shape[0] != 2:
                raise ValueError(
                    f"Concept {k} has {values.shape[0]} distinct label(s); the "
                    "logistic probe needs exactly two classes per concept."
                )
            rows.append(
                LogisticRegression(max_iter=1000)
                .fit(P, T[:, k] == values[1])
                .coef_.ravel()
            )
        W = np.vstack(rows)
    raw = W @ directions
    diag = np.abs(np.diag(raw))
    if np.any(diag == 0):
        raise ValueError(
            "The probe is orthogonal to a concept direction (zero diagonal of "
            "W_s A_s); the check is undefined."
        )
    M = raw / diag[None, :]
    error = float(np.linalg.norm(M - np.eye(n_concepts)))
    abs_M = np.abs(M)
    off = float((abs_M.sum() - np.trace(abs_M)) / abs_M.sum())
    return Bunch(
        error=error,
        off_diagonal_mass=off,
        matrix=M,
        raw_matrix=raw,
        directions=directions,
        probe_coef=W,
        n_pairs_per_concept=counts,
    )
