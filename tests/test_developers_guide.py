"""The guide's example torch estimator is real code that passes the checks.

The ``code-block:: python`` under "Torch estimators" in
``doc/developers.rst`` is extracted, executed as a module and run through
scikit-learn's ``check_estimator`` and the package's torch contracts
(``tests/test_torch_common.py``), so the guide cannot drift from the base.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import importlib.util
import re
import sys
import textwrap
import types
from pathlib import Path

import pytest
from sklearn.utils.estimator_checks import check_estimator

GUIDE = Path(__file__).parents[1] / "doc" / "developers.rst"


def _load_contracts():
    path = Path(__file__).with_name("test_torch_common.py")
    spec = importlib.util.spec_from_file_location("_torch_contracts", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


contracts = _load_contracts()


def _example_module():
    text = GUIDE.read_text()
    section = text[text.index("\nTorch estimators\n") :]
    match = re.search(r"\.\. code-block:: python\n\n((?:    .*\n|\n)+)", section)
    assert match, "no python code block in the Torch estimators section"
    code = textwrap.dedent(match.group(1))
    module = types.ModuleType("_developers_guide_example")
    sys.modules[module.__name__] = module  # so that fitted estimators pickle
    exec(compile(code, str(GUIDE), "exec"), module.__dict__)  # noqa: S102 (our doc)
    return module


EXAMPLE = _example_module()
ESTIMATOR = EXAMPLE.TorchLogisticRegression


def test_example_passes_check_estimator():
    check_estimator(ESTIMATOR(max_iter=30))


def test_example_passes_check_estimator_with_default_parameters():
    check_estimator(ESTIMATOR())


def test_example_docstring_has_the_shared_entries_with_real_defaults():
    doc = ESTIMATOR.__doc__
    assert "%(" not in doc
    assert "learning_rate_init : float, default=0.05" in doc
    assert "loss_curve_ : list of float" in doc


@pytest.mark.parametrize(
    "contract",
    [
        contracts.test_loss_curve_has_one_finite_value_per_epoch,
        contracts.test_early_stopping_stops_and_keeps_the_best_epoch,
        contracts.test_early_stopping_runs_to_max_iter_while_improving,
        contracts.test_callbacks_reach_the_net_and_the_parameter_is_not_modified,
        contracts.test_warm_start_continues_training,
        contracts.test_fixed_random_state_is_bit_identical,
        contracts.test_verbose_lines_start_with_the_public_class_name,
    ],
    ids=lambda f: f.__name__.removeprefix("test_"),
)
def test_example_meets_the_torch_contracts(contract, monkeypatch, capsys):
    monkeypatch.setitem(contracts.TORCH_ESTIMATORS, ESTIMATOR.__name__, ESTIMATOR())
    if "verbose" in contract.__name__:
        contract(ESTIMATOR.__name__, capsys)
    else:
        contract(ESTIMATOR.__name__)
