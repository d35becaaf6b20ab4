"""The one docstring mechanism for shared parameter and attribute texts.

A docstring names a shared text by a placeholder on a line of its own,
``%(name)s`` (imbalanced-learn's and pandas' spelling), and
:class:`Substitution` (a class decorator) or :func:`substitute` replaces it
with the text, re-indented to the placeholder's indentation. Nothing else in
the docstring is touched: no ``str.format``, so doctests keep their literal
``{`` and ``}`` and ``%`` signs, with no escapes. A text may be a callable
``text(cls) -> str``, for a text that depends on the class (its defaults).

A non-torch family base applies the same substitution to its subclasses from
``__init_subclass__`` (``substitute(cls.__dict__["__doc__"], cls, **TEXTS)``);
a torch family base only declares ``_doc_texts = {name: text}``, which the
torch base's ``__init_subclass__`` fills before its own texts. Either way an
estimator's docstring only names the placeholder.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import re
import textwrap

__all__ = ["Substitution", "substitute"]

_PLACEHOLDER = re.compile(r"^([ \t]*)%\((\w+)\)s[ \t]*$", re.MULTILINE)


def substitute(doc, cls=None, **texts):
    """``doc`` with each ``%(name)s`` line of ``texts`` replaced by its text.

    Placeholders of names not in ``texts`` are left for another substitution
    (a base class's); the text is dedented, then indented as the placeholder.
    """
    if not doc:
        return doc

    def replace(match):
        indent, name = match.group(1), match.group(2)
        if name not in texts:
            return match.group(0)
        text = texts[name]
        if callable(text):
            text = text(cls)
        text = textwrap.dedent(text).strip("\n")
        return "\n".join(indent + line if line else line for line in text.split("\n"))

    return _PLACEHOLDER.sub(replace, doc)


class Substitution:
    """Class or function decorator: fill the ``%(name)s`` placeholders of the docstring.

    Parameters
    ----------
    **texts : str or callable
        The shared texts by placeholder name; a callable gets the decorated
        object and returns the text.

    Examples
    --------
    >>> from sklearn_iclr26.utils._docstrings import Substitution
    >>> @Substitution(level="confidence_level : float, default=0.9")
    ... def f():
    ...     '''Parameters
    ...     ----------
    ...     %(level)s
    ...     '''
    >>> print(f.__doc__.splitlines()[2].strip())
    confidence_level : float, default=0.9
    """

    def __init__(self, **texts):
        self.texts = texts

    def __call__(self, obj):
        obj.__doc__ = substitute(obj.__doc__, obj, **self.texts)
        return obj
