#!/usr/bin/env bash
# The oldest supported scikit-learn: scikit-learn's common estimator checks
# (tests/test_common.py, tests/test_default_params.py), not the whole suite,
# in a second virtual environment, .venv-oldest, with the floor of
# pyproject.toml's scikit-learn pin (its latest patch release). Called by
# .ci/run; runs alone as `.ci/oldest_sklearn.sh` from the repository root
# (further arguments go to pytest, e.g. `-k SplitConformalClassifier`).
set -euo pipefail
cd "$(dirname "$0")/.."

export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
export PIP_DISABLE_PIP_VERSION_CHECK=1
start=$SECONDS
oldest="$(python3 .ci/sklearn_floor.py pyproject.toml)"
rm -rf .venv-oldest
python3 -m venv .venv-oldest
# torch first, exactly this spec (a local CPU wheel; any other spec pulls CUDA)
.venv-oldest/bin/python -m pip install -q torch==2.13.0
# the package with the oldest scikit-learn, and what the two test files use
# (econml: CausalForestRegressor grows its forest)
.venv-oldest/bin/python -m pip install -q "scikit-learn==${oldest}.*" -e . \
  pytest pytest-xdist pandas econml
.venv-oldest/bin/python - "$oldest" <<'PY'
import sys

import sklearn

installed = ".".join(sklearn.__version__.split(".")[:2])
if installed != sys.argv[1]:
    sys.exit(f"scikit-learn {sklearn.__version__} installed, {sys.argv[1]} wanted")
print(f"the oldest supported scikit-learn: {sklearn.__version__}")
PY
.venv-oldest/bin/python -m pytest -n "${TEST_WORKERS:-2}" -p no:cacheprovider \
  tests/test_common.py tests/test_default_params.py "$@"
echo "oldest scikit-learn step: $((SECONDS - start)) s"
