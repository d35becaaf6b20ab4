"""Scorers of the inference family: none registered, on purpose.

:class:`~sklearn_iclr26.inference.MultiPPIMeanEstimator` estimates one
population quantity (a mean or a contrast of the gold measurement) from all
rows at once, with a confidence interval; it has no ``predict`` and nothing
held out to score. Cross-validating it would estimate the same quantity on
subsets. Its settings are chosen by validity and variance: the allocation is
optimal in closed form (:func:`~sklearn_iclr26.inference.multippi_allocate`),
and the interval's width ``stderr_`` is reported by every fit, but choosing the
setting with the narrowest interval *on the data being analysed* would bias
the interval's coverage (a selection the interval does not account for);
choose on a pilot sample or fix the setting in advance.
:class:`~sklearn_iclr26.inference.ResamplingUtilityEstimator` fits a model of
resampling under an imperfect verifier to observed outcome counts and
returns the accuracy ceiling and the optimal number of samples: there is no
prediction to score either.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

SCORERS = {}
