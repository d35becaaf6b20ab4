"""Shared fixtures: where the multi-output data of ``../shared/data`` lives."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parent.parent


def _find_multioutput_home():
    candidates = []
    if os.environ.get("SKLEARN_ICLR26_DATA"):
        home = Path(os.environ["SKLEARN_ICLR26_DATA"])
        candidates += [home / "multioutput", home]
    candidates.append(_REPO.parent / "shared" / "data" / "multioutput")
    for candidate in candidates:
        if (candidate / "rf1.arff").is_file():
            return candidate
    return None


@pytest.fixture(scope="session")
def multioutput_data_home():
    """Folder with the larger multi-output files (rf1, scm20d, bio, wq...)."""
    home = _find_multioutput_home()
    if home is None:
        pytest.skip(
            "the multi-output data folder (../shared/data/multioutput or "
            "$SKLEARN_ICLR26_DATA) is not present"
        )
    return home
