"""The shared training parameters close every torch estimator's signature.

The 15 parameters of ``TRAINING_CONSTRAINTS`` (the torch base's) are the
keyword-only tail of each torch estimator's ``__init__``, after the
estimator's own parameters and in one order, and the class docstring
documents them in that order (the base moves a docstring's own entry of a
shared parameter to its signature position).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import inspect
import re

import pytest

from sklearn_iclr26.utils._torch_estimator import (
    TRAINING_CONSTRAINTS,
    BaseTorchEstimator,
)
from sklearn_iclr26.utils.discovery import all_estimators

TORCH = sorted(
    (name, cls) for name, cls in all_estimators() if issubclass(cls, BaseTorchEstimator)
)
SHARED = list(TRAINING_CONSTRAINTS)


def test_there_are_torch_estimators():
    assert len(TORCH) >= 19


@pytest.mark.parametrize("name, cls", TORCH, ids=[n for n, _ in TORCH])
def test_shared_parameters_are_the_keyword_only_tail_in_one_order(name, cls):
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    names = [p.name for p in parameters]
    assert names[-len(SHARED) :] == SHARED, names
    tail = parameters[-len(SHARED) :]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in tail)


@pytest.mark.parametrize("name, cls", TORCH, ids=[n for n, _ in TORCH])
def test_docstring_documents_the_shared_parameters_in_signature_order(name, cls):
    section = cls.__doc__.split("Parameters\n")[1].split("Attributes\n")[0]
    documented = [
        n for n in re.findall(r"^    (\w+) :", section, re.MULTILINE) if n in SHARED
    ]
    assert documented == SHARED
