"""Adaptive module composition for regression (MoMa)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.linear_model import RidgeCV
from sklearn.utils.validation import validate_data

from sklearn_iclr26.ensemble._base import BaseAdaptiveComposition
from sklearn_iclr26.utils._atomic import atomic_fit
from sklearn_iclr26.utils._sklearn_compat import _fit_context
from sklearn_iclr26.utils._torch import check_regression_fit
from sklearn_iclr26.utils._torch_estimator import TorchRegressorMixin

__all__ = ["AdaptiveCompositionRegressor"]


class AdaptiveCompositionRegressor(TorchRegressorMixin, BaseAdaptiveComposition):
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

    The target is standardised (both the fine-tuned network and the heads
    predict the standardised target). The training parameters
    (``max_iter``, ``learning_rate_init``, ``early_stopping``...) are those
    of the fine-tune of the merged network (``merge="weights"``);
    ``random_state`` also seeds the proxy subsample.

    Parameters
    ----------
    %(composition_parameters)s
    %(training_parameters)s

    Attributes
    ----------
    proxy_errors_ : ndarray of shape (n_modules,)
        Mean absolute error of each module's proxy predictions (NaN: dropped).
    %(composition_attributes)s

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
        X_mod = X if hasattr(X, "columns") else X_checked
        Y = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
        return X_mod, Y, self._standardize_targets(y, None)

    def _n_outputs(self):
        return self._y_mean.shape[0]

    def _proxy_error(self, proxy, target):
        return float(np.mean(np.abs(proxy - target)))

    def _make_head(self):
        # no per-feature scaling: a hidden unit active on a handful of training
        # rows would get a tiny scale and blow up on test rows
        return RidgeCV(alphas=np.logspace(-3, 4, 15))

    def _head_output(self, head, embedding):
        return np.asarray(head.predict(embedding), dtype=np.float64).reshape(
            len(embedding), -1
        )

    @atomic_fit(check=check_regression_fit)
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
