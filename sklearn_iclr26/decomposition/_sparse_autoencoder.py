"""Sparse autoencoder transformer (TopK, BatchTopK, L1; optional low-rank term)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._sklearn_compat import Interval, StrOptions, _fit_context
from sklearn_iclr26.utils._torch import forward_module
from sklearn_iclr26.utils._torch_estimator import DTYPES, BaseTorchEstimator
from sklearn_iclr26.utils._validation import store_params

__all__ = ["SparseAutoencoder"]


def _encode(module, X, **aux):
    return module.encode(X)


def _decode(module, Z, **aux):
    return module.decode(Z)


def _sparse(module, X, **aux):
    return module.sparse_code(X)


def _low_rank(module, X, **aux):
    return module.low_rank_code(X)


def _relu_pre(module, X, **aux):
    return module.pre_activations(X).clamp_min(0)


class SparseAutoencoder(
    ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseTorchEstimator
):
    """Sparse autoencoder with unit-norm decoder atoms (torch, through skorch).

    Learns an overcomplete dictionary ``components_`` (unit-norm rows, as
    scikit-learn's :class:`~sklearn.decomposition.DictionaryLearning`) and an
    encoder giving sparse codes: ``z = sparsify(W_enc (x - b) + c)``,
    ``x_hat = z @ components_ + b``. The sparsity is

    * ``"topk"``: the ``k = n_nonzero_coefs`` largest pre-activations of each
      row (then a ReLU when ``positive_codes``), so every code has at most
      ``k`` non-zeros (exactly ``k`` with ``positive_codes=False``);
    * ``"batchtopk"``: during training the ``k * batch`` largest activations of
      a batch; at inference a single threshold ``activation_threshold_`` (the
      mean over training batches of the smallest kept activation), so rows may
      use more or fewer than ``k`` features;
    * ``"l1"``: ReLU codes with an L1 penalty of weight ``l1_weight``;
    * ``"lp"``: ReLU codes with an adaptive L_p penalty (``0 < p =
      lp_exponent <= 1``, weight ``l1_weight``): iteratively reweighted L1,
      each code entry weighted by ``p (|s| + 1e-3)^(p - 1)`` from the current
      codes at every step (the majorisation-minimisation step of the L_p
      quasi-norm), so small activations are driven to zero harder and large
      ones shrunk less than under L1; ``lp_exponent=1`` is exactly ``"l1"``.
      With ``lp_schedule="anneal"``, the p-annealing SAE (a baseline of Liu et
      al.; dictionary_learning's ``PAnnealTrainer``): ``p`` goes linearly
      from 1 to ``lp_exponent`` in 10 steps spread evenly over the
      ``max_iter`` epochs, and at each change the penalty's coefficient
      (starting at ``l1_weight``) is multiplied by the ratio of the mean
      ``||s||_p^p`` to the mean ``||s||_{p_next}^{p_next}`` of the last 10
      training batches' codes.

    The decoder atoms are renormalised to unit norm after every optimizer step
    (a skorch callback of the one training engine), so the sparsity penalty
    cannot be evaded by scaling.

    ``encoder="matching_pursuit"`` replaces the linear encoder by the MP-SAE
    of Costa et al. (2025), "From Flat to Hierarchical: Extracting Sparse
    Representations with Matching Pursuit": ``k`` greedy matching-pursuit
    steps over the decoder's own atoms (start from the residual ``x - b``;
    each step adds the correlation ``<r, d_j>`` of the most correlated atom
    to its code and removes ``<r, d_j> d_j`` from the residual), trained end
    to end by backpropagation through the unrolled pursuit (the atom
    selection itself is not differentiated). There is no encoder matrix:
    the codes are those of matching pursuit with ``components_``, so they can
    select atoms a linear encoder plus TopK cannot separate (correlated or
    exactly sparse structure), at ``k`` products-worth of work per row. Codes
    have at most ``k`` non-zeros (an atom picked twice accumulates).

    ``structured_rank`` adds the "structured SAE"
    of Liu et al. (ICLR 2026): a low-rank code ``R = (x - b) A B`` added to the
    sparse code, with a nuclear-norm penalty (weight ``nuclear_weight``) on
    its batch matrix; with ``sparsity="lp"`` this is the paper's objective
    (reconstruction + adaptive L_p sparsity on the sparse code + nuclear norm
    on the low-rank code).

    Parameters
    ----------
    n_components : int, default=None
        Dictionary size; ``None`` means ``4 * n_features``.
    sparsity : {"topk", "batchtopk", "l1", "lp"}, default="topk"
        Sparsity mechanism. The paper's structured SAE is
        ``sparsity="lp"`` with ``structured_rank``. Must be ``"topk"`` with
        ``encoder="matching_pursuit"`` (the pursuit's ``n_nonzero_coefs``
        steps are its sparsity).
    encoder : {"linear", "matching_pursuit"}, default="linear"
        ``"linear"``: ``sparsify(W_enc (x - b) + c)``. ``"matching_pursuit"``:
        ``n_nonzero_coefs`` matching-pursuit steps over the unit-norm decoder atoms
        (MP-SAE); selection by the largest correlation with the residual
        (``positive_codes=True``, negative steps add 0) or the largest
        absolute correlation (``positive_codes=False``). Not combinable
        with ``structured_rank``.
    n_nonzero_coefs : int, default=None
        Active features per row, the ``k`` of TopK and BatchTopK (the number
        of pursuit steps with ``encoder="matching_pursuit"``); ``None`` means
        ``max(1, n_components // 4)``. Must not exceed ``n_components``.
    positive_codes : bool, default=True
        Apply a ReLU after the TopK selection (codes non-negative); with
        ``encoder="matching_pursuit"``, select by signed correlation and
        keep the codes non-negative.
    l1_weight : float, default=1e-3
        Weight of the L1 (``sparsity="l1"``) or adaptive L_p (``"lp"``)
        penalty on the sparse codes; ignored by TopK and BatchTopK.
    lp_exponent : float, default=0.5
        Exponent ``p`` in ``(0, 1]`` of the adaptive L_p penalty
        (``sparsity="lp"``; ignored otherwise); with
        ``lp_schedule="anneal"``, the final exponent.
    lp_schedule : {"constant", "anneal"}, default="constant"
        ``"constant"``: ``p = lp_exponent`` throughout. ``"anneal"``:
        p-annealing from 1 to ``lp_exponent`` with the adaptive coefficient
        (above); requires ``sparsity="lp"``.
    structured_rank : int, default=None
        Rank of the low-rank code; ``None`` for a plain SAE.
    nuclear_weight : float, default=1e-3
        Weight of the nuclear-norm penalty on the low-rank code (with
        ``structured_rank``).
    batch_size : int or None, default=256
        Mini-batch size, clipped to ``n_samples``; ``None`` means full batch
        (also the batch of BatchTopK's selection and threshold).
    alpha : float, default=0.0
        L2 penalty (the optimizer's weight decay) on every parameter; the
        sparsity penalties are ``l1_weight`` and ``nuclear_weight``.
    %(training_parameters)s

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Decoder atoms (unit-norm rows).
    n_components_ : int
        Dictionary size used.
    n_nonzero_coefs_ : int
        Active features per row used (TopK / BatchTopK / pursuit steps).
    activation_threshold_ : float
        Inference activation threshold of BatchTopK (0 for the other modes).
    dead_features_ : ndarray of bool of shape (n_components,)
        Features that are zero on every training row.
    reconstruction_error_ : float
        Mean over training rows of ``||x - x_hat||^2`` after training.
    lp_schedule_ : list of tuple
        With ``lp_schedule="anneal"``: ``(epoch, p, coefficient)`` at each
        change of ``p``; empty otherwise.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.
    %(training_attributes)s

    See Also
    --------
    sklearn.decomposition.MiniBatchDictionaryLearning : Dictionary learning
        with sparse coding by optimisation.
    sklearn_iclr26.metrics.concept_identifiability_score : Score codes against
        concept log-posteriors.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.decomposition import SparseAutoencoder
    >>> X = np.random.RandomState(0).normal(size=(200, 8))
    >>> sae = SparseAutoencoder(n_components=16, n_nonzero_coefs=3, max_iter=5,
    ...                         random_state=0)
    >>> codes = sae.fit_transform(X)
    >>> codes.shape, int((codes != 0).sum(axis=1).max()) <= 3
    ((200, 16), True)
    >>> np.allclose(np.linalg.norm(sae.components_, axis=1), 1.0)
    True
    >>> mp = SparseAutoencoder(
    ...     n_components=16, n_nonzero_coefs=3, encoder="matching_pursuit",
    ...     max_iter=5, random_state=0,
    ... ).fit(X)
    >>> int((mp.transform(X) != 0).sum(axis=1).max()) <= 3
    True
    """

    _parameter_constraints: dict = {
        **BaseTorchEstimator._parameter_constraints,
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "sparsity": [StrOptions({"topk", "batchtopk", "l1", "lp"})],
        "encoder": [StrOptions({"linear", "matching_pursuit"})],
        "n_nonzero_coefs": [Interval(Integral, 1, None, closed="left"), None],
        "positive_codes": ["boolean"],
        "l1_weight": [Interval(Real, 0, None, closed="left")],
        "lp_exponent": [Interval(Real, 0, 1, closed="right")],
        "lp_schedule": [StrOptions({"constant", "anneal"})],
        "structured_rank": [Interval(Integral, 1, None, closed="left"), None],
        "nuclear_weight": [Interval(Real, 0, None, closed="left")],
    }

    #: the reconstruction and sparsity loss is the method
    _accepts_criterion = False

    def __init__(
        self,
        n_components=None,
        *,
        sparsity="topk",
        encoder="linear",
        n_nonzero_coefs=None,
        positive_codes=True,
        l1_weight=1e-3,
        lp_exponent=0.5,
        lp_schedule="constant",
        structured_rank=None,
        nuclear_weight=1e-3,
        alpha=0.0,
        batch_size=256,
        learning_rate_init=1e-3,
        max_iter=50,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-4,
        warm_start=False,
        callbacks=None,
        dtype="float64",
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    @atomic_fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Train the autoencoder.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X = validate_data(self, X, dtype=DTYPES)
        n_features = X.shape[1]
        n_components = (
            4 * n_features if self.n_components is None else self.n_components
        )
        k = (
            max(1, n_components // 4)
            if self.n_nonzero_coefs is None
            else self.n_nonzero_coefs
        )
        if k > n_components:
            raise ValueError(
                f"n_nonzero_coefs={k} must not exceed n_components={n_components} "
                "(it would keep more features than exist)."
            )
        if self.encoder == "matching_pursuit":
            if self.sparsity != "topk":
                raise ValueError(
                    'encoder="matching_pursuit" requires sparsity="topk" (its '
                    "n_nonzero_coefs pursuit steps are the sparsity); got "
                    f"sparsity={self.sparsity!r}."
                )
            if self.structured_rank is not None:
                raise ValueError(
                    'encoder="matching_pursuit" does not support structured_rank '
                    f"(got structured_rank={self.structured_rank}); use "
                    'encoder="linear" for the structured SAE.'
                )
        if self.lp_schedule == "anneal" and self.sparsity != "lp":
            raise ValueError(
                'lp_schedule="anneal" requires sparsity="lp"; got '
                f"sparsity={self.sparsity!r}."
            )
        if self.structured_rank is not None and self.structured_rank > min(
            n_features, n_components
        ):
            raise ValueError(
                f"structured_rank={self.structured_rank} must not exceed "
                f"min(n_features, n_components) = {min(n_features, n_components)}."
            )
        self.n_components_ = n_components
        self.n_nonzero_coefs_ = k
        X64 = np.asarray(X, dtype=np.float64)
        # the target of the reconstruction loss is the input itself
        return self._train(X64, X64, n_features)

    def _module_spec(self, X, n_outputs, sample_weight=None):
        from sklearn_iclr26.decomposition._sae_modules import SAEModule

        return SAEModule, {
            "n_features": X.shape[1],
            "n_components": self.n_components_,
            "sparsity": self.sparsity,
            "k": self.n_nonzero_coefs_,
            "positive_codes": self.positive_codes,
            "structured_rank": self.structured_rank,
            "data_mean": X.mean(axis=0),
            "lp_exponent": self.lp_exponent,
            "encoder": self.encoder,
        }

    def _criterion_spec(self, n_outputs):
        from sklearn_iclr26.decomposition._sae_modules import SAELoss

        return SAELoss, {
            "l1_weight": self.l1_weight if self.sparsity in ("l1", "lp") else 0.0,
            "nuclear_weight": self.nuclear_weight if self.structured_rank else 0.0,
        }

    def _training_options(self, X, y):
        from sklearn_iclr26.decomposition._sae_modules import (
            LpAnnealing,
            UnitNormDecoder,
        )

        callbacks = [("unit_norm_decoder", UnitNormDecoder())]
        if self.lp_schedule == "anneal":
            callbacks.append(
                (
                    "lp_annealing",
                    LpAnnealing(self.lp_exponent, self.l1_weight, self.max_iter),
                )
            )
        return {"callbacks": callbacks}

    def _after_training(self, X, y):
        self.lp_schedule_ = []
        if self.lp_schedule == "anneal":
            cb = dict(self.net_.callbacks_)["lp_annealing"]
            self.lp_schedule_ = list(cb.history_)
        self.activation_threshold_ = 0.0
        if self.sparsity == "batchtopk":
            self.activation_threshold_ = self._batchtopk_threshold(X)
            self.net_.module_.threshold.fill_(self.activation_threshold_)
        W = self.net_.module_.W_dec.detach().cpu().numpy().astype(np.float64)
        self.components_ = W
        codes = self._apply(X, _encode)
        self.dead_features_ = ~np.any(codes != 0, axis=0)
        recon = self._apply(codes, _decode)
        self.reconstruction_error_ = float(np.mean(np.sum((X - recon) ** 2, axis=1)))

    def _batchtopk_threshold(self, X):
        # mean over training-size batches of the smallest kept activation
        acts = self._apply(X, _relu_pre)
        batch = len(X) if self.batch_size is None else self.batch_size
        batch = max(1, min(batch, len(X)))
        mins = []
        for start in range(0, len(X), batch):
            flat = acts[start : start + batch].ravel()
            n_keep = min(
                self.n_nonzero_coefs_ * (min(start + batch, len(X)) - start),
                flat.size,
            )
            kept = np.partition(flat, flat.size - n_keep)[flat.size - n_keep :]
            kept = kept[kept > 0]
            if kept.size:
                mins.append(kept.min())
        return float(np.mean(mins)) if mins else 0.0

    def _apply(self, X, func):
        """``func`` of the module over row batches (inputs or codes)."""
        return forward_module(
            self.net_,
            X,
            dtype=self.dtype,
            n_jobs=self.n_jobs,
            func=func,
            row_bytes=8 * 16 * (X.shape[1] + self.n_components_),
        )

    def transform(self, X):
        """Sparse codes (plus the low-rank code with ``structured_rank``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data.

        Returns
        -------
        codes : ndarray of shape (n_samples, n_components)
            The sparse codes of the rows.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=DTYPES)
        return self._apply(np.asarray(X, dtype=np.float64), _encode)

    def transform_parts(self, X):
        """The sparse code and the low-rank code separately.

        ``transform`` returns their sum. With ``structured_rank`` the low-rank
        code is dense, so a score of ``transform``'s codes mixes the sparse
        dictionary features with a dense rank-``structured_rank`` projection;
        score the sparse part alone to evaluate the SAE's features.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data.

        Returns
        -------
        sparse : ndarray of shape (n_samples, n_components)
            The sparse codes.
        low_rank : ndarray of shape (n_samples, n_components)
            The low-rank codes (zeros without ``structured_rank``).
        """
        check_is_fitted(self)
        X = np.asarray(validate_data(self, X, reset=False, dtype=DTYPES), np.float64)
        sparse = self._apply(X, _sparse)
        if not self.structured_rank:
            return sparse, np.zeros_like(sparse)
        return sparse, self._apply(X, _low_rank)

    def inverse_transform(self, X):
        """Decode codes back to the data space.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Codes.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            The codes decoded back to the data space.
        """
        check_is_fitted(self)
        Z = check_array(X, dtype=DTYPES)
        if Z.shape[1] != self.n_components_:
            raise ValueError(
                f"X has {Z.shape[1]} columns; the codes have {self.n_components_}."
            )
        return self._apply(np.asarray(Z, dtype=np.float64), _decode)

    @property
    def _n_features_out(self):
        return self.n_components_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags
