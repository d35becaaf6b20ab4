"""``import sklearn_iclr26`` loads no family; the families load on first use.

The top package re-exports every family's public estimators and displays
through a PEP 562 ``__getattr__`` over one name map
(``sklearn_iclr26._FAMILY_EXPORTS``). The import checks run in fresh
interpreters, since this test process has imported every family long before.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import importlib
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import sklearn_iclr26
from sklearn_iclr26.utils.discovery import all_displays, all_estimators

ROOT = Path(__file__).parents[1]


def run_fresh(code):
    """Run ``code`` in a fresh interpreter that imports this checkout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [env.get("PYTHONPATH")])]
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


TOP_IMPORT_IS_LIGHT = """
import sys
import sklearn_iclr26
loaded = sorted(m for m in sys.modules if m.startswith("sklearn"))
assert loaded == ["sklearn_iclr26"], loaded  # no family, not even scikit-learn
from sklearn_iclr26 import SOCOPClassifier
families = {m.split(".")[1] for m in sys.modules if m.startswith("sklearn_iclr26.")}
# the conformal family and the foundation it may import, nothing else
assert families <= {"conformal", "metrics", "utils", "datasets"}, families
assert "sklearn.ensemble" not in sys.modules  # the causal family's import
print("ok")
"""

EVERY_NAME_IMPORTS = """
import sklearn_iclr26
names = list(sklearn_iclr26.__all__)
namespace = {}
exec("from sklearn_iclr26 import *", namespace)
assert set(names) <= set(namespace), set(names) - set(namespace)
for name in names:
    exec(f"from sklearn_iclr26 import {name}", {})
assert set(names) <= set(dir(sklearn_iclr26))
print("ok")
"""


@pytest.mark.parametrize(
    "code",
    [TOP_IMPORT_IS_LIGHT, EVERY_NAME_IMPORTS],
    ids=["top_import_is_light", "every_name_imports"],
)
def test_lazy_top_package(code):
    result = run_fresh(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok")


def test_name_map_is_every_familys_public_estimators_and_displays():
    # A family that adds a public estimator or display to its ``__all__``
    # must add it to the top package's map too (and to nothing else).
    public = {name for name, _ in all_estimators()} | {
        name for name, _ in all_displays()
    }
    expected = {}
    for family in sklearn_iclr26._SUBPACKAGES:
        module = importlib.import_module(f"sklearn_iclr26.{family}")
        for name in module.__all__:
            if name in public:
                expected[name] = family
    packages = {
        m.name
        for m in pkgutil.iter_modules(sklearn_iclr26.__path__)
        if m.ispkg and not m.name.startswith("_")
    }
    assert set(sklearn_iclr26._SUBPACKAGES) == packages
    assert sklearn_iclr26._NAME_TO_FAMILY == expected
    assert sorted(sklearn_iclr26.__all__) == sorted([*expected, "__version__"])
    for name, family in expected.items():
        module = importlib.import_module(f"sklearn_iclr26.{family}")
        assert getattr(sklearn_iclr26, name) is getattr(module, name)


def test_unknown_attribute_raises():
    with pytest.raises(AttributeError, match="no attribute 'NotAnEstimator'"):
        sklearn_iclr26.NotAnEstimator  # noqa: B018
    assert sklearn_iclr26.conformal.__name__ == "sklearn_iclr26.conformal"
