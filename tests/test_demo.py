"""``python -m sklearn_iclr26.demo`` (``make demo``) has a row for every method.

The 19 methods are those of the package's ICLR 2026 papers (README's estimator
table); each must have at least one row with a computed value next to its
baseline. The full demo takes about 40 s of CPU on one thread, so the test that runs
it is marked slow; it runs with an empty data home, as in a fresh clone.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sklearn_iclr26.demo import collect_demos

METHODS = [
    "CCO",
    "CVQR",
    "Prism",
    "SAE concept identifiability",
    "NDX",
    "RLP heads",
    "Wasserstein-geodesic CATE",
    "OPTIMA",
    "PMATIC",
    "SOCOP",
    "Top-k L2D",
    "Meta-PCN",
    "FW-TSW",
    "MoMa",
    "CSG",
    "Resampling limits",
    "iFusion",
    "MultiPPI",
    "ConNAS",
]

COLUMNS = ["method", "estimator", "dataset", "metric", "value", "baseline"]

FAMILIES = [
    "causal",
    "compression",
    "conformal",
    "decomposition",
    "deferral",
    "ensemble",
    "inference",
    "label_noise",
    "memorization",
    "nas",
    "neural_network",
    "ot",
]


def test_method_list_has_19_distinct_methods():
    assert len(set(METHODS)) == len(METHODS) == 19


def test_every_family_contributes_a_demo_module():
    modules = collect_demos()
    families = {m.__name__.split(".")[1] for m in modules}
    assert families == set(FAMILIES)
    assert all(callable(m.run_demo) for m in modules)


@pytest.mark.slow
def test_demo_has_a_row_per_method(tmp_path):
    script = (
        "import json, sys\n"
        "from sklearn_iclr26.demo import main\n"
        "rows = main()\n"
        "sys.stderr.write('ROWS=' + json.dumps(rows) + '\\n')\n"
    )
    env = dict(
        os.environ,
        OMP_NUM_THREADS="1",
        SKLEARN_ICLR26_DATA=str(tmp_path),  # an empty data home
        PYTHONPATH=str(Path(__file__).parent.parent),  # this checkout's package
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        cwd=tmp_path,  # nothing is read relative to the working directory
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    line = next(line for line in result.stderr.splitlines() if line.startswith("ROWS="))
    rows = json.loads(line[len("ROWS=") :])
    for row in rows:
        assert all(row.get(c) not in (None, "") for c in COLUMNS), row
        for key in ("value", "baseline_value"):
            assert isinstance(row[key], float) and math.isfinite(row[key]), row
    by_method = {}
    for row in rows:
        by_method.setdefault(row["method"], []).append(row)
    missing = [m for m in METHODS if m not in by_method]
    assert not missing, f"no demo row for {missing}"
    unknown = set(by_method) - set(METHODS) - {"TorchMLP (infrastructure)"}
    assert not unknown, f"rows with an unlisted method name: {unknown}"
    # the printed table has one line per row, each starting with its method
    table = result.stdout.splitlines()
    assert table[0].split()[0] == "method"
    assert len(table) == 2 + len(rows)
    for line, row in zip(table[2:], rows):
        assert line.startswith(row["method"])
