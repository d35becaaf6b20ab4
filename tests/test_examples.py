"""Every gallery example runs (quick mode, Agg backend), so examples cannot rot.

Each ``examples/plot_*.py`` runs in a fresh process with
``SKLEARN_ICLR26_QUICK=1`` (examples shrink data or epochs when it is set) and
matplotlib's non-interactive backend; its wall time is printed (see the
``--durations`` report of the test run).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("plot_*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path):
    env = dict(os.environ, MPLBACKEND="Agg", SKLEARN_ICLR26_QUICK="1")
    result = subprocess.run(
        [sys.executable, path.name],
        check=False,
        cwd=path.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-4000:]
