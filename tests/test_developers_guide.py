"""The guide's example torch estimator is real code that passes the checks.

The ``code-block:: python`` blocks under "Torch estimators" in
``doc/developers.rst`` whose first line names a package file
(``# sklearn_iclr26/.../_x.py``) are extracted and installed as those modules
(in ``sys.modules``, not on disk), then run through scikit-learn's
``check_estimator`` and the package's torch contracts
(``tests/test_torch_common.py``), so the guide cannot drift from the base. In
a fresh interpreter, importing the example estimator's module (with the
package) must leave torch unimported, as the guide promises.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
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


def _example_sources():
    """``{dotted module name: source}`` of the guide's example files."""
    text = GUIDE.read_text()
    section = text[text.index("\nTorch estimators\n") :]
    blocks = re.findall(r"\.\. code-block:: python\n\n((?:    .*\n|\n)+)", section)
    sources = {}
    for block in blocks:
        code = textwrap.dedent(block)
        match = re.match(r"# (sklearn_iclr26/\S+)\.py\n", code)
        if match:
            sources[match.group(1).replace("/", ".")] = code
    assert len(sources) == 2, f"expected the estimator and its modules: {sources}"
    return sources


#: serves the guide's modules to the import system (in this process and, as
#: source, in the fresh interpreter of the torch-import test): each runs when
#: it is first imported, as a file of the package would
INSTALL = """
import importlib.abc, importlib.util, sys

class _GuideModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, sources, path):
        self.sources, self.path = sources, path

    def find_spec(self, name, path=None, target=None):
        if name in self.sources:
            return importlib.util.spec_from_loader(name, self, origin=self.path)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        code = compile(self.sources[module.__name__], self.path, "exec")
        exec(code, module.__dict__)

def install(sources, path):
    sys.meta_path.insert(0, _GuideModules(sources, path))
"""


def _example_module():
    namespace = {}
    exec(INSTALL, namespace)  # noqa: S102 (our code)
    sources = _example_sources()
    namespace["install"](sources, str(GUIDE))
    (name,) = (n for n in sources if not n.endswith("_modules"))
    return importlib.import_module(name)


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


def test_example_module_does_not_import_torch():
    # a fresh interpreter: this process imported torch long ago
    code = (
        INSTALL
        + f"install({_example_sources()!r}, {str(GUIDE)!r})\n"
        + f"import {ESTIMATOR.__module__} as example\n"
        + "assert 'torch' not in sys.modules, 'the guide example imports torch'\n"
        + "est = example.TorchLogisticRegression\n"
        + "est(max_iter=2).fit([[0.0], [1.0], [2.0]], [0, 1, 1])\n"
        + "assert 'torch' in sys.modules  # the check can see torch\n"
        + "print('ok')\n"
    )
    env = dict(os.environ)
    root = str(Path(__file__).parents[1])
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_example_docstring_example_runs():
    # the Examples section imports the class from its family, as it will be
    import doctest

    import sklearn_iclr26.neural_network as family

    family.TorchLogisticRegression = ESTIMATOR
    try:
        finder = doctest.DocTestFinder()
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        for test in finder.find(ESTIMATOR, ESTIMATOR.__name__):
            runner.run(test)
        assert runner.summarize(verbose=False).failed == 0
        assert runner.summarize(verbose=False).attempted > 0
    finally:
        del family.TorchLogisticRegression
