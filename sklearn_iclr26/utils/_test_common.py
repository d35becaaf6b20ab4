"""Private test-instance generator for the common scikit-learn checks.

Every public estimator found by :func:`~sklearn_iclr26.utils.discovery.all_estimators`
is checked. Test-friendly parameters and the checks expected to fail (each with
its reason) are declared next to the estimators, in the optional module
``sklearn_iclr26/<subpackage>/_test_instances.py``, which defines

* ``TEST_PARAMS``: ``{class name: [dict of parameters, ...]}``, one instance per
  dict (default: one instance with default parameters);
* ``EXPECTED_FAILED_CHECKS``: ``{class name: callable(estimator) -> {check name:
  reason}}``.

So a new estimator is covered by ``tests/test_common.py`` just by being exported;
its subpackage says how to build it quickly and what is known to fail, and why.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import pkgutil
from importlib import import_module
from pathlib import Path

from sklearn.base import clone

from sklearn_iclr26.utils.discovery import all_estimators

__all__ = ["get_expected_failed_checks", "yield_test_instances"]


def _registries():
    params, failures = {}, {}
    root = Path(__file__).parent.parent
    for info in pkgutil.iter_modules([str(root)]):
        if not info.ispkg:
            continue
        try:
            module = import_module(f"sklearn_iclr26.{info.name}._test_instances")
        except ModuleNotFoundError as exc:
            if exc.name != f"sklearn_iclr26.{info.name}._test_instances":
                raise
            continue
        params.update(getattr(module, "TEST_PARAMS", {}))
        failures.update(getattr(module, "EXPECTED_FAILED_CHECKS", {}))
    return params, failures


def yield_test_instances():
    """Yield one or more test-friendly instances of every public estimator."""
    params, _ = _registries()
    for name, cls in all_estimators():
        for kwargs in params.get(name, [{}]):
            yield clone(cls(**kwargs))


def get_expected_failed_checks(estimator):
    """Checks known to fail for ``estimator``, with the reason for each."""
    _, failures = _registries()
    entry = failures.get(type(estimator).__name__)
    if entry is None:
        return {}
    return dict(entry(estimator)) if callable(entry) else dict(entry)
