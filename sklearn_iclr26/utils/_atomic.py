"""The one fit-atomicity policy: every fit of the package is all or nothing.

:func:`atomic_fit` decorates every method that changes an estimator's fitted
state (``fit`` of every family base and stand-alone estimator,
``calibrate``, the torch base's protected ``_fit_with_criterion``):

* **All or nothing.** The method runs on a new attribute dictionary: the
  configuration alone (constructor parameters, metadata requests, output
  configuration: everything a previous fit did not set), or, when the fit
  continues the previous one (``warm_start=True``, ``partial_fit``,
  ``keep_fitted=True``), a shallow copy of the whole state (so such a fit
  replaces fitted attributes, never mutates them in place; the torch
  engine deep-copies the net it trains further). On success that dictionary
  stays; on any exception or ``KeyboardInterrupt`` the previous dictionary,
  never touched, is put back with one attribute store
  (``self.__dict__ = previous``), so the estimator is exactly its previous
  state: unfitted after a failed first fit, the previous fit after a failed
  refit. The exception reaches the caller. The names of the attributes a fit
  set are recorded (``_fitted_attributes``), so the next fit starts from the
  configuration only and no attribute of an older fit survives a refit.
* **Ctrl-C is never lost.** In the main thread, SIGINT goes through one
  handler while a fit runs (:func:`user_interrupts`, also used around every
  skorch training call): it calls the previous handler
  (``signal.default_int_handler`` raises ``KeyboardInterrupt``) and records
  the interrupt, so a fit that returns normally after a child swallowed it
  (skorch's training loop) raises ``KeyboardInterrupt`` and is rolled back.
  scikit-learn's ``MLPClassifier``/``MLPRegressor`` catch it and warn
  "Training interrupted by user."; that warning is an error inside a fit, and
  becomes ``KeyboardInterrupt``, so a meta-estimator never calibrates a
  half-trained child.
* **The switch itself cannot be interrupted.** A SIGINT that arrives while
  the policy's own code runs (the commit, the restore and their bookkeeping)
  is deferred: it is raised at the next step boundary inside the
  transaction (and the fit rolls back), or delivered again once the
  transaction has ended. A SIGINT during an import (the first ``import
  torch`` runs inside the first fit and takes seconds; an interrupt there
  leaves a partially initialised torch that breaks every later fit) is
  deferred until the import has finished.

A nested call on the same estimator (``fit`` calling its own ``calibrate``)
runs inside the outer transaction. Fits in other threads are atomic too (no
signal handling there: Python runs signal handlers in the main thread only).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import _thread
import contextlib
import functools
import signal
import sys
import threading
import time
import warnings

__all__ = ["atomic_fit", "scoped_params", "user_interrupts"]

# the names of the attributes the last committed fit set (its fitted state);
# every other instance attribute is configuration, carried over untouched
_RECORD = "_fitted_attributes"

# scikit-learn's MLP swallows KeyboardInterrupt and warns this instead
_SWALLOWED_INTERRUPT = "Training interrupted by user"

_MISSING = object()


class _NamedError(ValueError):
    """An error :func:`atomic_fit` re-raises as a ``ValueError`` naming the
    estimator (the torch engine's divergence errors)."""


# ------------------------------------------------------ transactions state

_LOCAL = threading.local()


def _transactions():
    """``{id(estimator): overrides}`` of the transactions open in this thread."""
    open_ = getattr(_LOCAL, "open", None)
    if open_ is None:
        open_ = _LOCAL.open = {}
    return open_


# ------------------------------------------------------------ SIGINT guard

# the main thread's record (signal handlers run there only)
_GUARD = {
    "depth": 0,
    "interrupted": False,
    "pending": False,
    "previous": None,
    "installed": False,
    "watching": False,
}


def _importing():
    """Specs of the modules being imported right now (any thread)."""
    specs = []
    for module in list(sys.modules.values()):
        spec = getattr(module, "__spec__", None)
        if getattr(spec, "_initializing", False):
            specs.append(spec)
    return specs


def _deliver_after(specs):
    """Deliver a deferred SIGINT once the imports ``specs`` have finished."""
    if _GUARD["watching"]:
        return
    _GUARD["watching"] = True

    def watch():
        try:
            while any(getattr(spec, "_initializing", False) for spec in specs):
                time.sleep(0.005)
        finally:
            _GUARD["watching"] = False
        _thread.interrupt_main(signal.SIGINT)

    threading.Thread(target=watch, name="sklearn_iclr26-sigint", daemon=True).start()


def _handler(signum, frame):
    """The SIGINT handler of the main thread while a fit or a training runs."""
    if frame is not None and frame.f_code in _CRITICAL:
        # the policy's own commit/restore: raised at its next step boundary,
        # or delivered again once the transaction has ended
        _GUARD["pending"] = True
        return
    specs = _importing()
    if specs:
        # a module half imported stays broken for the whole process
        _deliver_after(specs)
        return
    previous = _GUARD["previous"]
    try:
        if previous is None:
            raise KeyboardInterrupt
        previous(signum, frame)
    except KeyboardInterrupt:
        _GUARD["interrupted"] = True
        raise


def _enter_guard():
    """Install the handler (main thread, outermost block); ``True`` if here."""
    if threading.current_thread() is not threading.main_thread():
        return False
    state = _GUARD
    if state["depth"] == 0:
        previous = signal.getsignal(signal.SIGINT)
        state.update(interrupted=False, pending=False, installed=False)
        if callable(previous):
            state["previous"] = previous
            signal.signal(signal.SIGINT, _handler)
            state["installed"] = True
    state["depth"] += 1
    return True


def _exit_guard(entered):
    """Uninstall the handler when the outermost block ends."""
    if not entered:
        return
    state = _GUARD
    state["depth"] -= 1
    if state["depth"] == 0:
        pending = state["pending"]
        state.update(interrupted=False, pending=False)
        if state["installed"]:
            signal.signal(signal.SIGINT, state["previous"])
            state.update(installed=False, previous=None)
            if pending:
                # deferred after the last step boundary: deliver it now, to
                # the caller's handler, outside the (finished) fit
                _thread.interrupt_main(signal.SIGINT)


def _raise_pending():
    """Raise a SIGINT deferred during the policy's own code."""
    if _GUARD["pending"] and threading.current_thread() is threading.main_thread():
        _GUARD["pending"] = False
        _GUARD["interrupted"] = True
        raise KeyboardInterrupt


def _raise_swallowed():
    """Raise a user's Ctrl-C that a child caught and turned into a return."""
    if _GUARD["interrupted"] and threading.current_thread() is threading.main_thread():
        raise KeyboardInterrupt


@contextlib.contextmanager
def user_interrupts():
    """Re-raise a user's Ctrl-C that a training loop swallowed.

    In the main thread, while the block runs, SIGINT goes through the
    policy's handler: it calls the previous handler
    (``signal.default_int_handler`` raises ``KeyboardInterrupt``, which ends
    skorch's loop as before) and records that the user interrupted. When the
    block ends normally after such an interrupt, ``KeyboardInterrupt`` is
    raised. Early stops (``_StopTraining``, skorch's ``EarlyStopping``) raise
    ``KeyboardInterrupt`` without a signal, so they still end training
    normally. Nested blocks (and fits) share the outermost one's handler and
    record; the previous handler is restored when the outermost block exits.
    An ignored SIGINT (``SIG_IGN``) stays ignored. In other threads (where
    Python never runs signal handlers) the block does nothing.
    """
    entered = _enter_guard()
    try:
        yield
        _raise_pending()
        _raise_swallowed()
    finally:
        _exit_guard(entered)


# ------------------------------------------------------------------ policy


def _fitted_names(estimator, attributes):
    """Names in ``attributes`` that a previous fit set."""
    recorded = set(attributes.get(_RECORD, ()))
    get_names = getattr(type(estimator), "_get_param_names", None)
    params = set(get_names()) if get_names is not None else set()
    for key in attributes:
        # estimators fitted before the record existed: scikit-learn's rule
        if key.endswith("_") and not key.startswith("__") and key not in params:
            recorded.add(key)
    return recorded


def _is_swallowed_interrupt(exc):
    return isinstance(exc, Warning) and _SWALLOWED_INTERRUPT in str(exc)


def _translated(estimator, exc):
    """The exception the caller sees instead of ``exc`` (``None``: ``exc``)."""
    if _GUARD["pending"] and threading.current_thread() is threading.main_thread():
        # a Ctrl-C deferred during the restore: the fit is already failing
        _GUARD["pending"] = False
        if not isinstance(exc, KeyboardInterrupt):
            return KeyboardInterrupt()
    if _is_swallowed_interrupt(exc):
        return KeyboardInterrupt(
            f"{type(estimator).__name__}: a child's training was interrupted "
            "by the user (scikit-learn caught the KeyboardInterrupt)."
        )
    if isinstance(exc, _NamedError):
        return ValueError(f"{type(estimator).__name__}: {exc}")
    return None


def _run(method, self, args, kwargs, keep_fitted, check):
    open_ = _transactions()
    key = id(self)
    if key in open_:
        # a nested call on the same estimator: the outer transaction covers it
        return method(self, *args, **kwargs)
    previous = self.__dict__
    entered = _enter_guard()
    outermost_main = entered and _GUARD["depth"] == 1
    overrides = {}
    open_[key] = overrides
    try:
        with warnings.catch_warnings() if outermost_main else contextlib.nullcontext():
            if outermost_main:
                warnings.filterwarnings("error", message=_SWALLOWED_INTERRUPT)
            try:
                _raise_pending()
                fitted = _fitted_names(self, previous)
                continues = (
                    keep_fitted
                    or method.__name__ == "partial_fit"
                    or bool(getattr(self, "warm_start", False))
                )
                work = dict(previous)
                config = set(work) - fitted - {_RECORD}
                if not continues:
                    for name in fitted:
                        work.pop(name, None)
                work.pop(_RECORD, None)
                self.__dict__ = work
                result = method(self, *args, **kwargs)
                _raise_pending()
                if check is not None:
                    check(self, *args, **kwargs)
                _raise_pending()
                _raise_swallowed()
                # commit: the configuration as it was, the record of this fit
                for name, value in overrides.items():
                    if value is _MISSING:
                        work.pop(name, None)
                    else:
                        work[name] = value
                names = []
                for name in work:
                    if name not in config:
                        names.append(name)
                names.sort()
                work[_RECORD] = tuple(names)
                _raise_pending()
            except BaseException as exc:
                self.__dict__ = previous
                new = _translated(self, exc)
                if new is None:
                    raise
                raise new from exc
        return result
    finally:
        del open_[key]
        _exit_guard(entered)


def atomic_fit(method=None, *, keep_fitted=False, check=None):
    """Decorate a method that changes fitted state: all or nothing.

    Use as ``@atomic_fit`` (above ``@_fit_context``) on ``fit``,
    ``partial_fit``, ``calibrate`` and any method that sets fitted
    attributes; see the module docstring for the guarantees.

    Parameters
    ----------
    method : callable
        The method.
    keep_fitted : bool, default=False
        Start from the fitted state (a re-calibration that keeps the fitted
        model) instead of the configuration alone. ``partial_fit`` and a
        ``fit`` with ``warm_start=True`` always do.
    check : callable, default=None
        ``check(self, *args, **kwargs)`` runs after the method, inside the
        transaction (the torch regressors' divergence check); an exception
        there rolls the fit back.

    Returns
    -------
    wrapper : callable
        The decorated method.
    """
    if method is None:
        return functools.partial(atomic_fit, keep_fitted=keep_fitted, check=check)

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        return _run(method, self, args, kwargs, keep_fitted, check)

    return wrapper


def scoped_params(owner, /, **params):
    """Set parameters of ``owner`` for its open transaction only.

    Inside an :func:`atomic_fit` method: the parameters take ``params``'
    values while the method runs, and their own values again once it ends
    (``calibrate`` fits with ``estimator=FrozenEstimator(estimator)``; the
    user's ``estimator`` stays).
    """
    overrides = _transactions()[id(owner)]
    for name, value in params.items():
        overrides.setdefault(name, vars(owner).get(name, _MISSING))
        setattr(owner, name, value)


def _code_objects(*functions):
    codes = set()
    stack = [f.__code__ for f in functions]
    while stack:
        code = stack.pop()
        codes.add(code)
        stack.extend(c for c in code.co_consts if hasattr(c, "co_code"))
    return frozenset(codes)


# the policy's own code: a SIGINT handled while it runs is deferred
_CRITICAL = _code_objects(_run, _exit_guard, _enter_guard)
