"""``import sklearn_iclr26`` and its public subpackages leave torch unimported.

Torch is imported when a torch estimator first builds its module (the module
classes live in lazily imported ``_<name>_modules.py`` files), never at import
time: each check runs in a fresh interpreter, since this test process has
imported torch long before. The guide's example estimator is checked the same
way in ``tests/test_developers_guide.py``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


PUBLIC_SUBPACKAGES = """
import importlib, pkgutil, sys
import sklearn_iclr26
assert "torch" not in sys.modules, "import sklearn_iclr26 imported torch"
names = [
    m.name
    for m in pkgutil.walk_packages(sklearn_iclr26.__path__, "sklearn_iclr26.")
    if not any(part.startswith("_") for part in m.name.split("."))
]
assert len(names) > 10, names
for name in names:
    importlib.import_module(name)
    assert "torch" not in sys.modules, f"import {name} imported torch"
from sklearn_iclr26.neural_network import TorchMLPClassifier
TorchMLPClassifier(max_iter=1).fit([[0.0], [1.0]], [0, 1])
assert "torch" in sys.modules  # the check can see torch
print("ok", len(names))
"""


@pytest.mark.parametrize("code", [PUBLIC_SUBPACKAGES], ids=["public_subpackages"])
def test_importing_the_package_does_not_import_torch(code):
    result = run_fresh(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok")
