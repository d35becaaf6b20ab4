"""Sphinx configuration of the sklearn-iclr26 documentation."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MPLBACKEND", "Agg")

import sklearn_iclr26

project = "sklearn-iclr26"
author = "The sklearn-iclr26 developers"
copyright = "2026, The sklearn-iclr26 developers"
version = release = sklearn_iclr26.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

autosummary_generate = True
autodoc_default_options = {"members": True}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
templates_path = ["_templates"]
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py"]
default_role = "literal"

html_theme = "pydata_sphinx_theme"
html_title = "sklearn-iclr26"
html_theme_options = {"navigation_with_keys": False}

intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable", None),
    "sklearn": ("https://scikit-learn.org/stable", None),
}
# intersphinx inventories are fetched over the network; offline builds skip them
if os.environ.get("SPHINX_OFFLINE", "1") == "1":
    intersphinx_mapping = {}

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "plot_gallery": os.environ.get("SPHINX_GALLERY_PLOT", "True"),
    "doc_module": ("sklearn_iclr26",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"sklearn_iclr26": None},
}
