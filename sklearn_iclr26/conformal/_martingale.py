"""A conformal test martingale over a stream of p-values (Simple Jumper).

Vovk, Gammerman and Shafer, *Algorithmic Learning in a Random World* (2nd
ed., 2022), Algorithm 8.1; crepes' ``martingales.SimpleJumper`` with its
``EpsilonBettingFunction``, and MAPIE's ``OnlineMartingaleTest``
(``"jumper_martingale"``, epsilons -1, 0, 1) compute the same martingale
(tests/test_conformal_predictive.py).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Real

import numpy as np

from sklearn_iclr26.utils._validation import check_confidence_level

__all__ = ["ExchangeabilityMartingale"]


class ExchangeabilityMartingale:
    """Online test of exchangeability: a Simple Jumper conformal martingale.

    Each expert ``e`` (one per ``epsilon``) bets ``1 + epsilon (p - 1/2)`` on
    every p-value; after each bet a fraction ``jump`` of the total wealth is
    redistributed evenly over the experts (so the test follows a change of
    regime). The martingale ``M_t`` is the total wealth, ``M_0 = 1``.

    **Guarantee** (Ville's inequality): if the p-values are independent and
    uniform on (0, 1), which holds for the smoothed online p-values of an
    exchangeable stream (:func:`online_p_values`), ``M`` is a
    non-negative martingale and ``P(sup_t M_t >= 1 / (1 - confidence_level))
    <= 1 - confidence_level``: the test rejects exchangeability, over the
    whole (unbounded) stream, with a false-alarm probability at most
    ``1 - confidence_level``. p-values computed against one fixed
    calibration set (``predict_p`` of a fitted conformal estimator) are
    uniform on average over that set but dependent through it: feed
    :func:`online_p_values` of the true labels' conformity scores with the
    estimator's ``calibration_scores_`` as reference for the guarantee.

    Not a scikit-learn estimator (it takes p-values, not ``X``): a stateful
    monitor with :meth:`partial_fit`, as crepes' and MAPIE's martingales.

    Parameters
    ----------
    epsilons : sequence of float, default=(-1, -0.5, 0, 0.5, 1)
        The experts' betting slopes, each in (-2, 2) (negative: betting on
        small p-values, i.e. strange new rows).
    jump : float, default=0.01
        Fraction of the wealth redistributed after each step, in [0, 1).
    confidence_level : float, default=0.99
        The test rejects once ``M_t >= 1 / (1 - confidence_level)``.

    Attributes
    ----------
    martingale_ : ndarray of shape (n_seen_,)
        ``M_t`` after each p-value (``inf`` past float range: see
        ``log_martingale_``).
    log_martingale_ : ndarray of shape (n_seen_,)
        Natural log of ``M_t``, computed without overflow.
    threshold_ : float
        ``1 / (1 - confidence_level)``.
    n_seen_ : int
        p-values processed.
    rejection_index_ : int or None
        Index of the first p-value at which ``M_t >= threshold_`` (``None``
        while exchangeability is not rejected).

    See Also
    --------
    online_p_values : Valid p-values of a stream of conformity scores.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_iclr26.conformal import ExchangeabilityMartingale
    >>> rng = np.random.RandomState(0)
    >>> test = ExchangeabilityMartingale(confidence_level=0.99)
    >>> test = test.partial_fit(rng.uniform(size=500))
    >>> test.rejected_
    False
    >>> test = test.partial_fit(rng.uniform(0, 0.2, size=100))  # a shift
    >>> test.rejected_, int(test.rejection_index_)
    (True, 529)
    """

    def __init__(
        self, *, epsilons=(-1, -0.5, 0, 0.5, 1), jump=0.01, confidence_level=0.99
    ):
        self.epsilons = epsilons
        self.jump = jump
        self.confidence_level = confidence_level

    def get_params(self, deep=True):
        """Parameters of the test.

        Parameters
        ----------
        deep : bool, default=True
            Unused (no nested objects).

        Returns
        -------
        params : dict
            The constructor's parameters.
        """
        return {
            "epsilons": self.epsilons,
            "jump": self.jump,
            "confidence_level": self.confidence_level,
        }

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    def _check_params(self):
        eps = np.asarray(self.epsilons, dtype=np.float64).ravel()
        if eps.size == 0 or np.any(~((eps > -2) & (eps < 2))):
            raise ValueError(
                "epsilons must be a non-empty sequence in (-2, 2), got "
                f"{self.epsilons!r}."
            )
        if not isinstance(self.jump, Real) or not 0 <= self.jump < 1:
            raise ValueError(f"jump must be a float in [0, 1), got {self.jump!r}.")
        level = check_confidence_level(self.confidence_level)
        return eps, float(self.jump), level

    def reset(self):
        """Forget the stream: back to ``M_0 = 1``.

        Returns
        -------
        self : object
            The reset test.
        """
        eps, _, level = self._check_params()
        self._eps = eps
        # wealth = exp(_log_scale) * _weights, renormalized each step
        self._weights = np.full(eps.shape[0], 1.0 / eps.shape[0])
        self._log_scale = 0.0
        self.log_martingale_ = np.empty(0)
        self.martingale_ = np.empty(0)
        self.threshold_ = 1.0 / (1.0 - level)
        self.n_seen_ = 0
        self.rejection_index_ = None
        return self

    def partial_fit(self, p_values):
        """Bet on a batch of p-values, in stream order.

        Parameters
        ----------
        p_values : float or array-like of shape (n_values,)
            p-values in [0, 1] (e.g. :func:`online_p_values`, or the
            smoothed ``predict_p`` / ``predict_cdf`` of the true labels).

        Returns
        -------
        self : object
            The updated test.
        """
        if not hasattr(self, "n_seen_"):
            self.reset()
        else:
            self._check_params()
        p = np.asarray(p_values, dtype=np.float64).ravel()
        if np.any(~((p >= 0) & (p <= 1))):
            raise ValueError("p_values must lie in [0, 1] (and not be NaN).")
        eps, jump = self._eps, float(self.jump)
        w, log_scale = self._weights.copy(), self._log_scale
        logs = np.empty(p.shape[0])
        for t, value in enumerate(p):
            # every bet is positive: |epsilon| < 2 and |p - 1/2| <= 1/2
            w *= 1.0 + eps * (value - 0.5)
            total = w.sum()
            log_scale += np.log(total)
            logs[t] = log_scale
            w = w / total
            w = (1.0 - jump) * w + jump / w.shape[0]
        self._weights, self._log_scale = w, log_scale
        first = self.n_seen_
        self.log_martingale_ = np.r_[self.log_martingale_, logs]
        with np.errstate(over="ignore"):
            self.martingale_ = np.exp(self.log_martingale_)
        self.n_seen_ += p.shape[0]
        if self.rejection_index_ is None:
            hit = np.flatnonzero(logs >= np.log(self.threshold_) - 1e-12)
            if hit.size:
                self.rejection_index_ = first + int(hit[0])
        return self

    @property
    def rejected_(self):
        """Whether ``M_t`` has reached ``threshold_`` (exchangeability rejected)."""
        return self.rejection_index_ is not None

    @property
    def max_martingale_(self):
        """``max_t M_t`` so far (1 before any p-value)."""
        if not len(self.martingale_):
            return 1.0
        return float(np.max(self.martingale_))
