"""Discovery of the public estimators of the package, as ``sklearn.utils.discovery``."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import inspect
import pkgutil
from importlib import import_module
from operator import itemgetter
from pathlib import Path

from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClusterMixin,
    RegressorMixin,
    TransformerMixin,
)

__all__ = ["all_displays", "all_estimators", "all_functions"]

_MODULES_TO_IGNORE = {"tests", "utils", "demo"}


def _walk_public_classes(predicate):
    root = str(Path(__file__).parent.parent)
    found = []
    for _, module_name, _ in pkgutil.walk_packages(
        path=[root], prefix="sklearn_iclr26."
    ):
        parts = module_name.split(".")
        if any(p in _MODULES_TO_IGNORE or p.startswith("_") for p in parts[1:-1]):
            continue
        if parts[1] in _MODULES_TO_IGNORE:
            continue
        module = import_module(module_name)
        for name, obj in inspect.getmembers(module, inspect.isclass):
            if (
                not name.startswith("_")
                and obj.__module__.startswith("sklearn_iclr26")
                and predicate(obj)
            ):
                found.append((name, obj))
    return sorted(set(found), key=itemgetter(0))


def all_estimators(type_filter=None):
    """List the public estimators of ``sklearn_iclr26``.

    Parameters
    ----------
    type_filter : {"classifier", "regressor", "transformer", "cluster"} or list \
            of those, default=None
        Return only estimators of these kinds; ``None`` returns all.

    Returns
    -------
    estimators : list of (name, class)
        Sorted by name.

    Examples
    --------
    >>> from sklearn_iclr26.utils.discovery import all_estimators
    >>> names = [name for name, _ in all_estimators()]
    >>> "SOCOPClassifier" in names
    True
    """

    def is_estimator(cls):
        return (
            issubclass(cls, BaseEstimator)
            and not inspect.isabstract(cls)
            and not cls.__name__.startswith("Base")
            # skorch NeuralNet subclasses (a family's training net, e.g.
            # PredictiveCodingNet) are the engine's, not public estimators
            and not any(c.__module__.startswith("skorch") for c in cls.__mro__)
        )

    estimators = _walk_public_classes(is_estimator)
    if type_filter is None:
        return estimators
    filters = [type_filter] if isinstance(type_filter, str) else list(type_filter)
    mixins = {
        "classifier": ClassifierMixin,
        "regressor": RegressorMixin,
        "transformer": TransformerMixin,
        "cluster": ClusterMixin,
    }
    unknown = set(filters) - set(mixins)
    if unknown:
        raise ValueError(
            f"type_filter must be among {sorted(mixins)} or None, "
            f"got {sorted(unknown)}."
        )
    return [
        (name, cls)
        for name, cls in estimators
        if any(issubclass(cls, mixins[f]) for f in filters)
    ]


def all_displays():
    """List the public display classes (names ending in ``Display``).

    Returns
    -------
    displays : list of (name, class)
        Sorted by name.
    """
    return _walk_public_classes(lambda cls: cls.__name__.endswith("Display"))


def all_functions():
    """List the public functions of the public subpackages.

    Returns
    -------
    functions : list of (name, function)
        Sorted by name.
    """
    root = str(Path(__file__).parent.parent)
    found = []
    for _, module_name, _ in pkgutil.walk_packages(
        path=[root], prefix="sklearn_iclr26."
    ):
        parts = module_name.split(".")
        if any(p in _MODULES_TO_IGNORE or p.startswith("_") for p in parts[1:]):
            continue
        module = import_module(module_name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                found.append((name, obj))
    return sorted(set(found), key=itemgetter(0))
