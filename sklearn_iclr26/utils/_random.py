"""Seeds: one int from a ``random_state``, and seeding of child estimators.

Every estimator of the package derives the seeds it hands on (to torch, to a
data split, to a child estimator) through these two functions, so that a
fixed ``random_state`` gives bit-identical results.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils.validation import check_random_state

__all__ = ["seed_from_random_state", "set_child_random_state"]


def seed_from_random_state(random_state):
    """One int seed drawn from a ``random_state`` (int, RandomState or None).

    A ``RandomState`` instance advances by one draw, so successive calls give
    successive (different) seeds.
    """
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def set_child_random_state(estimator, random_state):
    """Seed every ``random_state`` parameter of a (cloned) child estimator.

    Only parameters that are ``None`` are set (a seed the user gave to the
    child is kept), nested ones too (``pipeline`` steps, ``estimator__``
    children), each from one draw of ``random_state``, in sorted parameter
    order. A child without such a parameter is returned unchanged.

    Parameters
    ----------
    estimator : estimator instance
        A freshly cloned child; modified in place.
    random_state : int, RandomState instance or None
        Source of the seeds; ``None`` leaves the child as it is.

    Returns
    -------
    estimator : estimator instance
        The same object.
    """
    if random_state is None or not hasattr(estimator, "get_params"):
        return estimator
    rng = check_random_state(random_state)
    to_set = {}
    for key, value in sorted(estimator.get_params(deep=True).items()):
        if (key == "random_state" or key.endswith("__random_state")) and value is None:
            to_set[key] = int(rng.randint(np.iinfo(np.int32).max))
    if to_set:
        estimator.set_params(**to_set)
    return estimator
