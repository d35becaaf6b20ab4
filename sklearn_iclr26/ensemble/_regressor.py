"""Adaptive module composition for regression (MoMa)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.base import RegressorMixin, _fit_context
from sklearn.linear_model import RidgeCV
from sklearn.utils.validation import validate_data

from sklearn_iclr26.ensemble._base import BaseAdaptiveComposition
from sklearn_iclr26.utils._torch import fit_or_restore

__all__ = ["AdaptiveCompositionRegressor"]


class AdaptiveCompositionRegressor(RegressorMixin, BaseAdaptiveComposition):
    """Compose a hub of task modules for a new regression task (MoMa's AMC).

    Adaptive module composition (Wang et al., "MoMa", ICLR 2026), as the
    official code does it:

    1. **proxy**: each module of ``hub`` embeds the downstream training set (a
       random subset of at most ``proxy_samples`` rows, drawn with
       ``random_state``); leave-one-out kNN label propagation on those
       embeddings (cosine affinity ``exp(cos / temperature)``, the
       ``n_neighbors`` nearest neighbours, the diagonal removed) predicts each
       row's target from its neighbours': the module's proxy prediction;
    2. **weights**: least squares of the target on the proxy predictions with
       weights on the probability simplex (:func:`simplex_least_squares`,
       exact), which selects a sparse set of modules;
    3. **merge**: ``merge="weights"`` averages the hidden-layer parameters of
       the selected torch modules with those weights (they must share one
       initialisation), adds a new output layer and fine-tunes the whole
       network for ``max_iter`` epochs; ``merge="predictions"`` fits a new
       linear head (``RidgeCV``) on each selected module's
       embedding and averages the heads' predictions with the weights.

    Parameters
    ----------
    hub : ModuleHub
        Fitted source-task modules. Required: ``fit`` raises a ``ValueError``
        without it.
    n_neighbors : int, default=5
        Neighbours of the kNN proxy.
    temperature : float, default=0.2
        Temperature of the affinity ``exp(cos / temperature)``.
    proxy_samples : int, default=800
        At most this many downstream rows (a random subset) for the proxy and
        the weight solve (the official code's QUOTA).
    max_modules : int, default=None
        Keep at most this many modules (largest weights, then re-solved on that
        support); ``None`` keeps what the simplex solution selects.
    weights : {"proxy", "uniform"} or array-like of shape (n_modules,), \
            default="proxy"
        ``"proxy"`` solves for the weights (AMC); ``"uniform"`` weighs every
        module equally (the "soup" baseline); an array fixes the weights (hub
        order; normalised to sum to one), e.g. for a random-selection baseline.
    merge : {"weights", "predictions"}, default=None
        ``None`` means ``"weights"`` when every module is a torch MLP of the
        package, else ``"predictions"``.
    max_iter : int, default=200
        Fine-tune epochs (``merge="weights"``).
    learning_rate_init : float, default=1e-2
        Adam learning rate of the fine-tune.
    batch_size : int or None, default=None
        Fine-tune mini-batch size; ``None`` means full batch.
    alpha : float, default=0.0
        L2 penalty (weight decay) of the fine-tune.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the fine-tuned network.
    device : str, default="cpu"
        torch device.
    n_jobs : int or None, default=None
        torch threads; ``None`` means 1.
    random_state : int, RandomState instance or None, default=None
        Seeds the proxy subsample, the new head and the fine-tune.
    verbose : int, default=0
        If positive, print the proxy errors, weights and fine-tune losses.

    Attributes
    ----------
    module_names_ : ndarray of str
        Hub module names, in hub order.
    module_weights_ : ndarray of shape (n_modules,)
        Composition weights (zero for unselected or dropped modules).
    proxy_errors_ : ndarray of shape (n_modules,)
        Mean absolute error of each module's proxy predictions (NaN: dropped).
    selected_modules_ : ndarray of str
        Modules with positive weight.
    proxy_indices_ : ndarray of int
        Downstream rows used by the proxy.
    merge_ : str
        The merge mode used.
    net_ : skorch.NeuralNet
        Fine-tuned merged network (``merge_ == "weights"``).
    heads_ : list of estimators
        One head per selected module (``merge_ == "predictions"``).
    n_iter_ : int
        Fine-tune epochs run (``merge_ == "weights"``), or the largest number of
        solver iterations of the heads (``merge_ == "predictions"``; 1 for the
        closed-form ridge).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit. Defined only when `X` has feature
        names that are all strings.

    See Also
    --------
    ModuleHub : The hub of modules.
    AdaptiveCompositionClassifier : The classification counterpart.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.ensemble import AdaptiveCompositionRegressor, ModuleHub
    >>> from sklearn_iclr26.neural_network import TorchMLPRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(80, 4))
    >>> hub = ModuleHub(TorchMLPRegressor((16,), max_iter=30), random_state=0)
    >>> hub = hub.add_task("sum", X, X.sum(1)).add_task("sq", X, X[:, 0] ** 2)
    >>> reg = AdaptiveCompositionRegressor(hub, max_iter=20, random_state=0)
    >>> reg = reg.fit(X, X.sum(1) + 0.5 * X[:, 0] ** 2)
    >>> float(reg.module_weights_.sum())
    1.0
    >>> reg.predict(X[:2]).shape
    (2,)
    """

    def _validate_targets(self, X, y):
        X_checked, y = validate_data(
            self, X, y, y_numeric=True, multi_output=True, dtype="numeric"
        )
        y = np.asarray(y, dtype=np.float64)
        self._y_ndim = y.ndim
        Y = y.reshape(len(y), -1)
        self._y_mean = Y.mean(axis=0)
        std = Y.std(axis=0)
        self._y_scale = np.where(std > 0, std, 1.0)
        X_mod = X if hasattr(X, "columns") else X_checked
        return X_mod, Y, (Y - self._y_mean) / self._y_scale

    def _n_outputs(self):
        return self._y_mean.shape[0]

    def _proxy_error(self, proxy, target):
        return float(np.mean(np.abs(proxy - target)))

    def _finetune_spec(self, n_outputs):
        from torch import nn

        return nn.MSELoss, {"reduction": "none"}

    def _make_head(self):
        # no per-feature scaling: a hidden unit active on a handful of training
        # rows would get a tiny scale and blow up on test rows
        return RidgeCV(alphas=np.logspace(-3, 4, 15))

    @staticmethod
    def _head_output(head, embedding):
        return np.asarray(head.predict(embedding), dtype=np.float64).reshape(
            len(embedding), -1
        )

    @fit_or_restore
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Compute the proxy, solve the weights, merge and fine-tune.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Downstream inputs (handed to the hub's modules).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Downstream target.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit(X, y)

    def predict(self, X):
        """Predict the downstream target.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        # both the fine-tuned network and the heads predict the standardised
        # target
        out = self._raw_output(X) * self._y_scale + self._y_mean
        return out.ravel() if self._y_ndim == 1 else out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
