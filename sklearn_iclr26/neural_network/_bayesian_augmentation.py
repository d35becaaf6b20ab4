"""OPTIMA-style Bayesian data augmentation: the shared part.

:class:`BaseBayesianAugmentation` holds the augmentation parameters, the
module (an MLP behind a learned augmenter) and the ELBO loss; the training
parameters, the engine call and the training record are the torch base's
(:mod:`sklearn_iclr26.utils._torch_estimator`).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_iclr26.utils._columns import check_disjoint, resolve_columns
from sklearn_iclr26.utils._random import seed_from_random_state
from sklearn_iclr26.utils._sklearn_compat import Hidden, Interval, StrOptions
from sklearn_iclr26.utils._torch import forward_module
from sklearn_iclr26.utils._torch_estimator import (
    DTYPES,
    BaseTorchEstimator,
)
from sklearn_iclr26.utils._torch_mlp import _ACTIVATIONS
from sklearn_iclr26.utils._validation import check_hidden_layer_sizes, store_params
from sklearn_iclr26.utils._warnings import warn_user

_AUGMENTERS = ("none", "gaussian", "mixup", "dropout")
_DEFAULT_STRENGTH = {"none": 0.0, "gaussian": 0.1, "mixup": 0.2, "dropout": 0.1}


_PARAMETERS_DOC = """hidden_layer_sizes : array-like of int, default=(32,)
    Width of each hidden layer of the MLP.
activation : {"relu", "tanh", "gelu"}, default="relu"
    Hidden-layer non-linearity.
augmenter : {"gaussian", "mixup", "dropout", "none"}, default="gaussian"
    Augmentation whose strength is learned: additive Gaussian noise with
    one scale per feature (in units of the feature's training std),
    mixup with a learned Beta concentration, or feature dropout with a
    learned rate (relaxed Bernoulli masks); ``"none"`` trains the plain
    MLP.
init_strength : float or None, default=None
    Initial strength, also the centre of the prior: noise scale
    (default 0.1), mixup concentration (0.2) or dropout rate (0.1).
prior_scale : float, default=2.0
    Std of the Gaussian prior on the unconstrained parameter ``rho``
    (``strength = softplus(rho)``, or ``sigmoid(rho)`` for dropout).
q_init_std : float, default=0.1
    Initial std of the Gaussian posterior ``q(rho)``; 0 makes ``rho`` a
    point estimate (then ``kl_weight`` must be 0).
kl_weight : float, default=1.0
    Weight of ``KL(q || p)`` in the objective; 0 drops the prior.
kl_scale : {"n_samples", "batch"}, default="n_samples"
    The KL is divided by the number of training rows (a per-example
    ELBO) or by the batch size (the authors' ImageNet script, which
    weights the prior ``n_samples / batch_size`` times more).
likelihood : {"avg_loglik", "avg_func"}, default="avg_loglik"
    Data term over the ``n_aug_samples`` copies: the mean of the
    log-likelihoods (a Jensen bound), or the log of the mean likelihood.
n_aug_samples : int, default=1
    Augmented copies of each row per step (and at predict time with
    ``aug_at_predict``).
aug_at_predict : bool, default=False
    Average the predictions over ``n_aug_samples`` augmentations drawn
    from the posterior (seeded by ``random_state``); by default the
    network predicts on clean inputs.
learn_augmentation : bool, default=True
    Learn the augmentation's posterior; with ``False`` and
    ``q_init_std=0`` the augmentation has the fixed strength
    ``init_strength`` (fixed-augmentation baseline).
augmenter_learning_rate_ratio : float, default=10.0
    Learning rate of the augmenter's parameters relative to
    ``learning_rate_init`` (their own optimizer group, without weight
    decay).
augmenter_lr_ratio : float, default="deprecated"
    Deprecated spelling of ``augmenter_learning_rate_ratio``: a value given
    here is used, after a ``FutureWarning``. It will be removed in a future
    release.
strength_reward : float, default=0.0
    Augerino's regulariser: subtracts ``strength_reward *
    ||strength||`` from the objective (Augerino-style baseline:
    ``kl_weight=0, q_init_std=0, strength_reward=0.01,
    aug_at_predict=True, n_aug_samples=4``).
categorical_blocks : list of list of int or str, default=None
    One-hot column blocks that get relaxed categorical swap noise, each
    a list of column positions or, when ``X`` is a DataFrame with string
    column names, of feature names (e.g. the ``get_feature_names_out``
    of a ``OneHotEncoder``). Blocks must be disjoint, have at least two
    columns and be one-hot in the training ``X`` (0/1, exactly one 1 per
    row); otherwise ``fit`` raises a ``ValueError`` (a ``TypeError``
    for entries that are neither positions nor names). Per block, a swap
    probability ``p_b = sigmoid(rho_b)`` is learned with the same
    Gaussian posterior and prior as the other augmentation parameters
    (``q_init_std``, ``prior_scale``, ``learn_augmentation``); each
    row's block is redrawn from ``(1 - p_b) x_b + p_b pi_b`` (keep its
    category, or swap in one drawn from the training frequencies
    ``pi_b``) by Gumbel-softmax at ``swap_temperature``, a relaxed
    one-hot through which the data term differentiates ``p_b``. The
    ``"gaussian"`` and ``"dropout"`` augmenters then act on the other
    columns only; with ``augmenter="none"`` only the swaps are learned.
    Off at predict time unless ``aug_at_predict=True``. ``None`` (or an
    empty list): no swap noise.
init_swap_proba : float, default=0.1
    Initial swap probability of every block, also the centre of its
    prior (``logit(init_swap_proba)``); must be in (0, 1) unless the
    augmentation is fixed (``learn_augmentation=False, q_init_std=0``).
swap_temperature : float, default=0.5
    Gumbel-softmax temperature of the swapped blocks: small values give
    nearly one-hot draws (and higher-variance gradients), large values
    smooth them toward the mixture's probabilities.
mixup_draw : {"rsample", "sample"}, default="rsample"
    How mixup draws its Beta weight ``lam ~ Beta(alpha, alpha)``:
    reparameterised (``Beta.rsample``, the paper's ELBO: the data term
    moves ``alpha``), or without a gradient (``Beta.sample``, as the
    authors' ImageNet script does: ``alpha`` then moves only through the
    KL, so its posterior relaxes toward the prior). Used by
    ``augmenter="mixup"`` only.
alpha : float, default=0.0
    L2 penalty (Adam ``weight_decay``) of the network's weights (the
    point-mass posterior of the weights); the augmenter has none."""

_ATTRIBUTES_DOC = """n_features_in_ : int
    Number of features seen during fit.
feature_names_in_ : ndarray of shape (`n_features_in_`,)
    Names of features seen during fit. Defined only when `X` has feature
    names that are all strings.
augmentation_posterior_ : dict
    ``"strength"``: the strength at the posterior mean (per feature for
    the Gaussian augmenter); for a learned augmenter also ``"mean"`` and
    ``"std"`` of ``q(rho)``, ``"prior_mean"`` and ``"prior_scale"``
    (with ``categorical_blocks``, the strength of the non-categorical
    columns only). With ``categorical_blocks`` also ``"swap_proba"``,
    the swap probability of each block at the posterior mean, and, when
    learned, ``"swap_mean"``, ``"swap_std"`` and ``"swap_prior_mean"``
    of ``q(rho_b)`` (logit scale).
categorical_blocks_ : list of ndarray of int
    Column positions of each one-hot block (empty without
    ``categorical_blocks``).
elbo_history_ : ndarray of shape (n_iter_,)
    ``-loss_curve_``: the per-sample ELBO estimate per epoch (with
    ``kl_weight=1``, ``kl_scale="n_samples"``; up to the Gaussian
    constant for the regressor); ``loss_curve_`` is the mean training
    objective (negative ELBO per sample). ``net_.module_.augmenter`` and
    ``net_.module_.mlp`` are the parts of the fitted net.
%(training_attributes)s"""


class BaseBayesianAugmentation(BaseTorchEstimator):
    """Hyperparameters and training of the Bayesian-augmentation networks."""

    #: shared docstring texts, filled by the torch base before its own
    _doc_texts = {
        "augmentation_parameters": _PARAMETERS_DOC,
        "augmentation_attributes": _ATTRIBUTES_DOC,
    }

    _parameter_constraints: dict = {
        **BaseTorchEstimator._parameter_constraints,
        "hidden_layer_sizes": ["array-like"],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "augmenter": [StrOptions(set(_AUGMENTERS))],
        "init_strength": [Interval(Real, 0, None, closed="left"), None],
        "prior_scale": [Interval(Real, 0, None, closed="neither")],
        "q_init_std": [Interval(Real, 0, None, closed="left")],
        "kl_weight": [Interval(Real, 0, None, closed="left")],
        "kl_scale": [StrOptions({"n_samples", "batch"})],
        "likelihood": [StrOptions({"avg_loglik", "avg_func"})],
        "n_aug_samples": [Interval(Integral, 1, None, closed="left")],
        "aug_at_predict": ["boolean"],
        "learn_augmentation": ["boolean"],
        "augmenter_learning_rate_ratio": [Interval(Real, 0, None, closed="neither")],
        # deprecated spelling, kept one release (doc/changes.rst)
        "augmenter_lr_ratio": [
            Interval(Real, 0, None, closed="neither"),
            Hidden(StrOptions({"deprecated"})),
        ],
        "strength_reward": [Interval(Real, 0, None, closed="left")],
        "categorical_blocks": [list, tuple, None],
        "init_swap_proba": [Interval(Real, 0, 1, closed="left")],
        "swap_temperature": [Interval(Real, 0, None, closed="neither")],
        "mixup_draw": [StrOptions({"rsample", "sample"})],
    }

    # the ELBO is the method: no other criterion replaces it
    _accepts_criterion = False

    def __init__(
        self,
        hidden_layer_sizes=(32,),
        *,
        activation="relu",
        augmenter="gaussian",
        init_strength=None,
        prior_scale=2.0,
        q_init_std=0.1,
        kl_weight=1.0,
        kl_scale="n_samples",
        likelihood="avg_loglik",
        n_aug_samples=1,
        aug_at_predict=False,
        learn_augmentation=True,
        augmenter_learning_rate_ratio=10.0,
        augmenter_lr_ratio="deprecated",
        strength_reward=0.0,
        categorical_blocks=None,
        init_swap_proba=0.1,
        swap_temperature=0.5,
        mixup_draw="rsample",
        alpha=0.0,
        batch_size=None,
        learning_rate_init=1e-2,
        max_iter=200,
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

    def _strength0(self):
        s = _DEFAULT_STRENGTH[self.augmenter]
        if self.init_strength is not None:
            s = float(self.init_strength)
        if self.augmenter == "dropout" and not 0 < s < 1 and not self._fixed():
            raise ValueError(
                f"init_strength of the dropout augmenter is a rate in (0, 1), got {s}."
            )
        if self.augmenter in ("gaussian", "mixup") and s <= 0 and not self._fixed():
            raise ValueError(
                "init_strength must be positive for a learned augmenter (its "
                "unconstrained parameter is softplus^-1(init_strength)); use "
                "learn_augmentation=False, q_init_std=0 for a fixed strength of "
                f"0, got {s}."
            )
        return s

    def _fixed(self):
        return not self.learn_augmentation and self.q_init_std == 0

    def _check_settings(self):
        if self.augmenter == "none" and not self.categorical_blocks:
            return
        if self.q_init_std == 0 and self.kl_weight > 0 and not self._fixed():
            raise ValueError(
                "q_init_std=0 makes the augmentation parameter a point estimate, "
                "whose KL to the Gaussian prior is infinite: set kl_weight=0 "
                "(e.g. the Augerino-style baseline) or q_init_std > 0."
            )
        if self.aug_at_predict and self.augmenter == "mixup":
            raise ValueError(
                "aug_at_predict=True is not defined for the mixup augmenter "
                "(mixing needs a second training row); use 'gaussian' or "
                "'dropout'."
            )

    def _resolve_blocks(self, X, sample_weight):
        """Column indices and category frequencies of the one-hot blocks.

        Blocks are lists of column positions or, when ``X`` had string
        feature names at fit, of feature names (resolved by
        :func:`~sklearn_iclr26.utils._columns.resolve_columns`); they must be
        disjoint, hold at least two columns and be one-hot in ``X`` (0/1, one
        1 per row).
        """
        if not self.categorical_blocks:
            return [], []
        n_features = X.shape[1]
        blocks, resolved = [], {}
        for b, block in enumerate(self.categorical_blocks):
            if isinstance(block, str) or not hasattr(block, "__len__"):
                raise ValueError(
                    "categorical_blocks must be a list of blocks, each a list of "
                    f"column indices or feature names; block {b} is {block!r}."
                )
            if len(block) < 2:
                raise ValueError(
                    f"Each categorical block needs at least 2 columns; block {b} "
                    f"has {len(block)}."
                )
            what = f"categorical block {b}"
            cols = resolve_columns(block, self, n_features, what)
            resolved[what] = cols
            check_disjoint(resolved)  # before the one-hot check: the clearer error
            sub = X[:, cols]
            if not np.all((sub == 0) | (sub == 1)) or not np.all(sub.sum(1) == 1):
                raise ValueError(
                    f"categorical block {b} (columns {cols}) is not one-hot in X: "
                    "every value must be 0 or 1 with exactly one 1 per row (e.g. "
                    "OneHotEncoder(drop=None) output, without scaling)."
                )
            blocks.append(cols)
        frequencies = [
            np.average(X[:, cols], axis=0, weights=sample_weight).tolist()
            for cols in blocks
        ]
        return blocks, frequencies

    def _augmenter_ratio(self):
        """``augmenter_learning_rate_ratio``, or the deprecated spelling's value."""
        if isinstance(self.augmenter_lr_ratio, str):  # "deprecated": not given
            return self.augmenter_learning_rate_ratio
        warn_user(
            "augmenter_lr_ratio was renamed augmenter_learning_rate_ratio and "
            "will be removed in a future release; its value is used (it "
            "overrides augmenter_learning_rate_ratio).",
            FutureWarning,
        )
        return self.augmenter_lr_ratio

    def _training_options(self, X, y):
        self._check_settings()
        # the KL term is divided by the number of rows given to fit
        self._n_train = X.shape[0]
        return {
            # the augmenter's own optimizer group, without weight decay
            "optimizer_param_groups": [
                (
                    "augmenter.*",
                    {
                        "lr": self._augmenter_ratio() * self.learning_rate_init,
                        "weight_decay": 0.0,
                    },
                )
            ]
        }

    def _module_spec(self, X, n_outputs, sample_weight=None):
        from sklearn_iclr26.neural_network._bayesian_augmentation_modules import (
            AugmentedMLPModule,
        )

        strength = self._strength0()
        # C order: a DataFrame's (F-ordered) values give the same statistics
        # to the last bit as the equivalent array
        X = np.ascontiguousarray(X)
        blocks, frequencies = self._resolve_blocks(X, sample_weight)
        swap_p0 = float(self.init_swap_proba)
        if blocks and not self._fixed() and swap_p0 <= 0:
            raise ValueError(
                "init_swap_proba must be in (0, 1) for learned swap noise (its "
                "unconstrained parameter is logit(init_swap_proba)); use "
                "learn_augmentation=False, q_init_std=0 for no swaps, got "
                f"{swap_p0}."
            )
        scale = X.std(axis=0)
        return AugmentedMLPModule, {
            "n_features": X.shape[1],
            "n_outputs": n_outputs,
            "hidden_layer_sizes": check_hidden_layer_sizes(self.hidden_layer_sizes),
            "activation": self.activation,
            "augmenter": self.augmenter,
            "init_strength": strength,
            "q_init_std": float(self.q_init_std),
            "learn_augmentation": bool(self.learn_augmentation),
            "prior_scale": float(self.prior_scale),
            "n_aug_samples": int(self.n_aug_samples),
            "feature_scale": np.where(scale > 0, scale, 1.0),
            "categorical_blocks": blocks,
            "category_frequencies": frequencies,
            "init_swap_proba": swap_p0,
            "swap_temperature": float(self.swap_temperature),
            "mixup_draw": self.mixup_draw,
        }

    def _criterion_spec(self, n_outputs):
        from sklearn_iclr26.neural_network._bayesian_augmentation_modules import (
            AugmentedLoss,
        )

        return AugmentedLoss, {
            "classification": is_classifier(self),
            "likelihood": self.likelihood,
            "n_aug_samples": int(self.n_aug_samples),
            "kl_weight": float(self.kl_weight),
            "kl_scale": self.kl_scale,
            "n_train": self._n_train,
            "strength_reward": float(self.strength_reward),
        }

    def _after_training(self, X, y):
        import torch

        module = self.net_.module_
        blocks = self._fitted_module_spec[1]["categorical_blocks"]
        self.categorical_blocks_ = [np.asarray(c, dtype=np.intp) for c in blocks]
        self.elbo_history_ = -np.asarray(self.loss_curve_)
        aug = module.augmenter
        with torch.no_grad():
            posterior = {"strength": aug.strength().cpu().numpy().astype(float)}
            if aug.q_mean is not None:
                posterior["mean"] = aug.q_mean.cpu().numpy().astype(float)
                posterior["std"] = (
                    aug.q_log_std.exp().cpu().numpy().astype(float)
                    if aug.q_log_std is not None
                    else np.zeros_like(posterior["mean"])
                )
                posterior["prior_mean"] = aug.prior_mean.cpu().numpy().astype(float)
                posterior["prior_scale"] = float(self.prior_scale)
            swap = module.swap
            if swap is not None:
                posterior["swap_proba"] = swap.proba().cpu().numpy().astype(float)
                if swap.q_mean is not None:
                    posterior["swap_mean"] = swap.q_mean.cpu().numpy().astype(float)
                    posterior["swap_std"] = (
                        swap.q_log_std.exp().cpu().numpy().astype(float)
                        if swap.q_log_std is not None
                        else np.zeros_like(posterior["swap_mean"])
                    )
                    posterior["swap_prior_mean"] = (
                        swap.prior_mean.cpu().numpy().astype(float)
                    )
        self.augmentation_posterior_ = posterior

    def _raw_decision(self, X):
        check_is_fitted(self)
        module = self.net_.module_
        if not self.aug_at_predict or (
            self.augmenter == "none" and module.swap is None
        ):
            return self._forward(X)
        X = validate_data(self, X, reset=False, dtype=DTYPES)
        # augmentations drawn up front (seeded), batched with X: the result
        # does not depend on the row batching
        rng = np.random.RandomState(seed_from_random_state(self.random_state))
        k = int(self.n_aug_samples)
        n_aug = X.shape[1] if module.continuous is None else len(module.continuous)
        dim = n_aug if self.augmenter == "gaussian" else 1
        eps_rho = rng.standard_normal((X.shape[0], k, dim))
        if self.augmenter == "gaussian":
            noise = rng.standard_normal((X.shape[0], k, n_aug))
        else:
            noise = rng.uniform(size=(X.shape[0], k, n_aug))
        aux = {"eps_rho": eps_rho, "noise": noise}
        if module.swap is not None:
            aux["eps_swap"] = rng.standard_normal((X.shape[0], k, module.swap.n_blocks))
            aux["uniform"] = rng.uniform(size=(X.shape[0], k, len(module.swap.columns)))
        classification = is_classifier(self)

        def func(module, xb, eps_rho, noise, eps_swap=None, uniform=None):
            return module.predict_augmented(
                xb, eps_rho, noise, eps_swap, uniform, classification
            )

        return forward_module(
            self.net_,
            X,
            aux=aux,
            dtype=self.dtype,
            n_jobs=self.n_jobs,
            func=func,
        )
