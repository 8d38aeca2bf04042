r"""Measuring a profile's GDP parameter with guaranteed error.

The GDP transformation (GDPT) of a privacy profile :math:`\delta_A` is
:math:`G_A(\varepsilon) = \mu_{GDP}(\varepsilon, \delta_A(\varepsilon))`, and the tightest
head-GDP parameter on :math:`[0, \varepsilon_h]` is :math:`\sup_{[0,\varepsilon_h]} G_A`
("Identification, Amplification and Measurement: A bridge to Gaussian Differential
Privacy", NeurIPS 2022; theory §4 and §6).  Everything here rests on one fact:
for a non-increasing profile and :math:`\varepsilon \in [x, y]`,

.. math::

    \mu_{GDP}(x, \delta_A(y)) \;\le\; G_A(\varepsilon) \;\le\; \mu_{GDP}(y, \delta_A(x)),

and every point value :math:`G_A(x)` is a lower bound on the supremum.

Three searches return a bracket ``[lower, upper]`` of width at most ``tol``:

* ``"first-order"`` (the default, :mod:`symgdp.measurement.firstorder`): a
  branch-and-bound over intervals in which each interval is closed by the better of the
  bound above and a first-order bound -- :math:`\sup_{[x,y]} G \le \mu^+` proved from
  :math:`\log\delta_A - \log\delta_{\mu^+} \le 0` with the SymPy derivative of the
  profile in ball arithmetic -- and every interval is *proved* non-increasing there (a
  profile that rises anywhere, even in a spike between grid points, is refused).  A
  flat GDPT no longer forces intervals of width ``tol``.  A profile that is the Gaussian
  profile :math:`\delta_\mu` itself, or that profile up to the rounding of a Float
  :math:`\mu`, is bracketed without a search
  (:mod:`symgdp.measurement.near_gaussian`).  Without a ball evaluation of the
  profile or its derivative the zeroth-order search below is used.
* ``"branch-and-bound"``: the zeroth-order search alone.  Intervals are evaluated in
  vectorised batches, discarded when their upper bound cannot beat the best point value,
  and halved otherwise.  Near a maximum of :math:`G_A` with curvature :math:`c` it needs
  about :math:`1.25\pi/\sqrt{c\,\mathrm{tol}}` evaluations; a flat GDPT (the Gaussian
  mechanism itself) is the worst case, up to :math:`1.25\,\varepsilon_h/\mathrm{tol}`
  evaluations; the search predicts that cost and stops early when it exceeds the budget.
  It rests on the profile being non-increasing, which
  :meth:`~symgdp.profile.Profile.validate` checks symbolically or on a dense grid only.
* ``"staircase"``: the published algorithm -- a uniform grid of
  :math:`n = \lceil\sqrt{8\pi}\,\varepsilon_h/\mathrm{tol}\rceil` steps visited in random
  order, with a root-find only where a step beats the running bound.  Kept for
  reproducibility and as the benchmark baseline.

Certification (``certify=None``, the default, certifies whenever the profile has a ball
evaluation): every bound is proved in ball arithmetic (:mod:`symgdp.evaluation.interval`) with the
profile evaluated from its SymPy expression and its parameter values taken exactly.  Float
mode (``certify=False``) finalises the bracket by re-checking the bounds it rests on
(:mod:`symgdp.measurement.finalise`).

The machinery lives in the wing :mod:`symgdp.measurement` (its rooms are named there);
this module is the entry point: :func:`measure`, :func:`gdpt` and :class:`Measurement`.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from typing import Any, cast

import numpy as np
import sympy

from symgdp.contracts import MeasureMethod
from symgdp.errors import DomainError, PrecisionError, SymgdpError, SymgdpWarning
from symgdp.evaluation.interval import ArbUnsupported, log_delta_mu_upper, profile_arb
from symgdp.gaussian.vectorised import delta_mu, log_delta_mu, mu_gdp
from symgdp.measurement.finalise import (
    _Certifier,
    _exactly_zero,
    _float_lower,
    _float_upper,
    _profile_slack,
    _spot_check,
)
from symgdp.measurement.near_gaussian import (
    _gaussian_measurement,
    _near_gaussian_bracket,
    _near_gaussian_measurement,
    _recognised_gaussian,
    near_gaussian_mu_bound,
)
from symgdp.measurement.result import (
    TRADEOFF_METHOD,
    Measurement,
    MeasurementTimeLimit,
    _mu_tail,
    check_time_limit,
)
from symgdp.measurement.result import time_limit as _time_limit
from symgdp.measurement.search import (
    _EVALS_PER_SECOND,
    _SQRT_8PI,
    _BallSteered,
    _branch_and_bound,
    _Counted,
    _cover_below,
    _first_order_search,
    _Search,
    _staircase,
)
from symgdp.measurement.whole_line.certificate import whole_line

__all__ = ["Measurement", "measure", "gdpt", "METHODS", "MeasurementTimeLimit",
           "DEFAULT_TIME_LIMIT"]

#: accepted values of ``method=`` and the name each one is recorded under
METHODS = {"auto": "first-order", "first-order": "first-order",
           "branch-and-bound": "branch-and-bound", "bnb": "branch-and-bound",
           "staircase": "staircase"}

#: smallest tol honoured in float64 (finer needs certify=True) and in certified mode
MIN_TOL_FLOAT = 1e-9
MIN_TOL_CERTIFIED = 1e-12
#: Largest head end accepted: beyond it the float64 search cannot resolve G (the
#: intervals it must prove are wider than the profile's values can steer), and a head
#: that long only matters for mu above about 1400.
MAX_EPS_H = 1e6
#: Default wall-clock budget of one measurement in seconds (``measure(time_limit=)``);
#: ``None`` means no budget.  The test suite sets it to ``None``.
DEFAULT_TIME_LIMIT: float | None = 300.0
_DEFAULT_BUDGET = 2_000_000


def gdpt(profile: Any, eps: Any) -> Any:
    r"""The GDP transformation :math:`G(\varepsilon) = \mu_{GDP}(\varepsilon,
    \delta(\varepsilon))` of a profile, vectorised and in log space (finite where
    :math:`\delta` underflows float64).

    Args:
        profile: a :class:`~symgdp.profile.Profile` (anything with ``log_delta``).
        eps: :math:`\varepsilon \ge 0`, float or array.

    Example:
        >>> import sympy
        >>> from symgdp import Profile, eps
        >>> p = Profile(sympy.exp(-eps**2))
        >>> round(gdpt(p, 50.0), 5)  # tends to sqrt(1/2) from below (theory §5)
        0.70497
    """
    scalar = np.ndim(eps) == 0
    x = np.asarray(eps, dtype=np.float64)
    out = mu_gdp(x, log_delta=np.asarray(profile.log_delta(x), dtype=np.float64))
    return float(out) if scalar else np.asarray(out)


def _refined(profile: Any, refine: bool, notes: list[str],
             timeout: float | None) -> tuple[Any, bool]:
    if not refine:
        return profile, False
    if not hasattr(profile, "refine"):
        notes.append(f"{type(profile).__name__} has no refine(): measured as given")
        return profile, False
    return profile.refine(timeout=timeout), True


def _search_and_finalise(p: Any, ld: _Counted, how: str, eps_h: float, tol: float,
                         certifier: _Certifier | None, max_evaluations: int, seed: int,
                         initial: int, fo: Any = None, progress: Any = None
                         ) -> tuple[_Search, float, float, float, Any]:
    """One search to ``tol`` and its outward-rounded (or certified) bracket."""
    certify = certifier is not None
    first = None
    if how == "first-order":
        s, first = _first_order_search(ld, fo, eps_h, tol, certify, max_evaluations,
                                       initial, progress)
    elif how == "branch-and-bound":
        s = _branch_and_bound(ld, eps_h, tol, certify, max_evaluations, initial)
    else:
        s = _staircase(ld, eps_h, tol, seed, max_evaluations)
    cover = None
    if how != "staircase":
        la_, lb_, lu_ = s.leaf_a, s.leaf_b, s.leaf_u
        if first is not None and first.a:
            la_ = np.concatenate([la_, first.a])
            lb_ = np.concatenate([lb_, first.b])
            lu_ = np.concatenate([lu_, np.full(len(first.a), first.bound)])
        order = np.argsort(la_, kind="stable")
        cover = np.column_stack([la_[order], lb_[order], lu_[order]])
    elif math.isfinite(s.upper):
        # the staircase's own n steps are too many to re-check one by one; any cover of
        # [0, eps_h] whose bounds stay below the claimed upper proves the same statement
        extra = _Counted(p)
        s.leaf_a, s.leaf_b, s.leaf_la, s.leaf_u = _cover_below(
            extra, eps_h, s.upper, _DEFAULT_BUDGET)
        s.notes.append(f"rounding checked on a cover of {s.leaf_a.size} intervals "
                       f"({extra.count} extra evaluations)")
    if certifier is not None:
        if how == "first-order" and not isinstance(ld, _BallSteered):
            # the search steers by float64 values: refuse early, with the reason, where
            # they are badly off at the best point (the bracket is proved below anyway)
            _spot_check(p, s, _Counted(p), count=0)
        lower = certifier.lower(s.argmax, s.lower)
        upper = certifier.upper(s.leaf_a, s.leaf_b, s.upper, s.leaf_rise)
        lfp = (log_delta_mu_upper(eps_h, upper)
               if math.isfinite(upper) else 0.0)
    else:
        # with a ball evaluation every leaf is re-proved below: only the best point's
        # float value (the lower bound) needs the high-precision check
        proved = fo is not None and how == "first-order"
        # a numeric source, or a profile whose log_delta says it returns proved upper
        # bounds (``proved_values``, e.g. DP-SGD's min of two certified bounds)
        source = getattr(p, "source", None) is not None or \
            getattr(p, "proved_values", False) is True
        ref = None if source else _spot_check(p, s, _Counted(p), count=0 if proved else 24)
        low = getattr(getattr(p, "source", None), "log_delta_lower", None)
        if ref is None and source and callable(low):
            # the lower end needs a LOWER bound on log delta at the best point; a source's
            # log_delta is an upper one (a trade-off curve's conjugate is only bracketed:
            # the upper end put the lower end of G 5e-15 above the truth for f_{1,1e-6})
            ref = float(low(float(s.argmax)))
        if ref is None:
            ld_arg = float(ld(np.array([s.argmax]))[0])
            ld.count -= 1
            # a numeric source's values are the profile measured (no float64 formula to
            # trust to a slack): near delta = 1 that slack alone moved mu by ~1e-6
            ref = ld_arg if source else ld_arg - _profile_slack(ld_arg)
        lower = _float_lower(s, ref)
        if proved and s.lower - lower > 0.25 * tol:
            # float64 cannot resolve the profile there (delta within 1e-16 of 1: its log
            # reads as 0 and the slack then costs far more than tol, e.g. the 1000-fold
            # KOV profile, mu ~ 31): the best point's value is proved in ball arithmetic
            # instead, which only raises the lower bound to what is proved
            lower = max(lower, _Certifier(p).lower(s.argmax, s.lower))
            s.notes.append("lower bound proved in ball arithmetic (float64 cannot resolve "
                           "the profile at the best point)")
        if proved:
            # the profile has a ball evaluation: every leaf's float value is re-proved in
            # ball arithmetic (no float64 profile value is trusted for the upper bound)
            upper = _Certifier(p).upper(s.leaf_a, s.leaf_b, s.upper, s.leaf_rise)
        else:
            # a numeric source's log_delta is a proved upper bound by contract
            upper = _float_upper(s, proved_values=source)
        lfp = float(log_delta_mu(eps_h, upper))
    return s, lower, upper, lfp, cover


def _has_ball_evaluation(p: Any) -> bool:
    try:
        profile_arb(p)
    except (ArbUnsupported, AttributeError, SymgdpError, TypeError, ValueError):
        return False
    return True


def _prefetch_series(p: Any) -> None:
    """Start the symbolic preparation of the high-order test's series form, so that it
    runs on the other core while the first-order machinery derives its own."""
    if callable(getattr(p, "first_order", None)) or not hasattr(p, "bound_expr"):
        return
    from symgdp.measurement.series import prefetch_series

    try:
        prefetch_series(p)
    except (TypeError, ValueError, AttributeError):
        return  # only a head start: _log_series prepares it on need as before


def _first_order_for(p: Any, timeout: float | None, notes: list[str]) -> Any:
    """The first-order machinery for ``p``, or ``None`` (with a note) without a ball
    evaluation of the profile and its derivative."""
    from symgdp.measurement.firstorder import FirstOrder

    own = getattr(p, "first_order", None)  # a profile with its own (e.g. exact pieces)
    if callable(own) and (fo := own(timeout=timeout)) is not None:
        return fo
    if not hasattr(p, "bound_expr"):
        return None
    if getattr(p, "source", None) is not None:
        # a numeric source has proved values, no formula to differentiate: nothing missing
        notes.append("a numeric source (proved values, no derivative): zeroth-order search")
        return None
    try:
        return FirstOrder(p, timeout=timeout)
    except (ArbUnsupported, SymgdpError) as exc:
        notes.append(f"no first-order search ({exc}): zeroth-order search")
        return None
    except (TypeError, ValueError, AttributeError, NotImplementedError) as exc:
        notes.append(f"no derivative in ball arithmetic ({type(exc).__name__}): "
                     "zeroth-order search")
        return None


def _warn_if_slow(how: str, eps_h: float, tol: float) -> None:
    if how != "staircase":
        return  # the branch-and-bound warns when its own prediction turns long
    n = _SQRT_8PI * eps_h / tol
    seconds = n / _EVALS_PER_SECOND
    if seconds > 60:
        warnings.warn(
            f"the {how} measurement with eps_h={eps_h!r}, tol={tol!r} may need up to "
            f"{n:.3g} profile evaluations (about {seconds:.0f} s); method='auto' is "
            "usually far faster", SymgdpWarning, stacklevel=3)


def _tqdm_progress() -> tuple[Any, Any]:
    try:
        from tqdm import tqdm
    except ImportError as exc:  # pragma: no cover - tqdm is a dependency
        raise ImportError("progress=True needs tqdm: pip install tqdm") from exc
    bar = tqdm(total=None, unit="eval", desc="measure", leave=False)

    def update(evaluations: int, gap: float) -> None:
        bar.update(evaluations - bar.n)
        bar.set_postfix_str(f"gap {gap:.3g}")

    return update, bar



def _rounded_constants(profile: Any) -> str | None:
    """The first Float of the profile's own expression beyond the float64 range (one that
    SymPy computed in 53-bit arithmetic, not a float a user could type), or None."""
    expr = getattr(profile, "expr", None)
    if not isinstance(expr, sympy.Basic):
        return None
    for f in expr.atoms(sympy.Float):
        sign, man, exp, bc = f._mpf_
        if man and not -1074 <= exp + bc <= 1024:
            return str(sympy.sstr(f, full_prec=False))
    return None

def measure(
    profile: Any,
    eps_h: float = 100.0,
    tol: float = 1e-6,
    *,
    refine: bool = True,
    method: MeasureMethod = "auto",
    certify: bool | None = None,
    max_evaluations: int | None = None,
    seed: int = 0,
    initial_intervals: int = 64,
    identify: bool = True,
    timeout: float | None = None,
    progress: Any = None,
    time_limit: float | None | str = "default",
) -> Measurement:
    r"""Guaranteed bracket on :math:`\sup_{[0,\varepsilon_h]} G` of a profile's GDPT.

    Args:
        profile: a :class:`~symgdp.profile.Profile` (or any object with a vectorised
            ``log_delta``; certification also needs ``bound_expr`` and ``var``).
        eps_h: end of the head :math:`[0, \varepsilon_h]`.
        tol: guaranteed bracket width, ``upper - lower <= tol``.
        refine: measure ``profile.refine()`` (theory §2; always valid and never worse).
        method: ``"auto"``/``"first-order"`` (the default search), ``"branch-and-bound"``
            (the zeroth-order search alone) or ``"staircase"`` (the published algorithm).
        certify: prove every bound of the bracket in ball arithmetic (``True``); ``None``
            (the default) does so whenever the profile has a ball evaluation (a closed
            form); ``False`` is float mode.  :attr:`Measurement.certified` says which.
        max_evaluations: budget of float profile evaluations (:class:`ConvergenceError`
            beyond it, with the bracket reached); default 2 000 000 for the
            branch-and-bound and unlimited for the staircase.
        seed: seed of the staircase's shuffle.
        initial_intervals: size of the branch-and-bound's first uniform grid.
        identify: run ``profile.identify()`` for ``mu_tail`` (a symbolic, possibly slow
            step); ``False`` leaves ``mu_tail`` as ``nan`` unless ``covers_tail``.
        timeout: time budget in seconds for each symbolic step (refinement, tail limit);
            ``None`` uses ``symgdp.symbolic.budget.DEFAULT_TIMEOUT``.
        progress: ``None``; a callable ``progress(evaluations, gap)`` called now and then
            during the search; or ``True`` for a tqdm bar on stderr.
        time_limit: wall-clock budget of the whole measurement in seconds, checked at
            every batch of profile evaluations: past it :class:`MeasurementTimeLimit` (a
            :class:`PrecisionError`) is raised, claiming nothing.  ``"default"`` is
            :data:`DEFAULT_TIME_LIMIT` (300 s); ``None`` means no budget.

    Returns:
        A :class:`Measurement`.

    Raises:
        DomainError: ``eps_h`` or ``tol`` out of range (``eps_h`` at most
            :data:`MAX_EPS_H`).
        MeasurementTimeLimit: ``time_limit`` spent.
        PrecisionError: ``tol`` below what the arithmetic can guarantee
            (:data:`MIN_TOL_FLOAT`; :data:`MIN_TOL_CERTIFIED` with ``certify=True``), or a
            bound that could not be certified.
        ConvergenceError: ``max_evaluations`` exhausted.
        ProfileError: the profile is proved to rise somewhere in ``[0, eps_h]``, or its
            monotonicity cannot be proved there.

    Warns:
        SymgdpWarning: before a run whose predicted cost exceeds about a minute, when
            a first-order search is still open after 15 seconds, and when the profile
            holds a constant beyond the float64 range (computed by SymPy in 53-bit
            arithmetic before symgdp saw it: the bracket is for the constant as stored).


    Example:
        >>> import sympy
        >>> from symgdp import Profile, eps, mu_from_pure_dp
        >>> e0 = sympy.Integer(1)
        >>> p = Profile(sympy.Max(sympy.exp(e0) - sympy.exp(eps), 0) / (1 + sympy.exp(e0)))
        >>> m = measure(p, eps_h=10, tol=1e-8, refine=False)
        >>> m.lower <= mu_from_pure_dp(1.0) <= m.upper, m.upper - m.lower <= 1e-8
        (True, True)
        >>> m.covers_tail
        True
    """
    t0 = time.perf_counter()
    eps_h, tol = float(eps_h), float(tol)
    if not (math.isfinite(eps_h) and eps_h > 0):
        raise DomainError(f"eps_h must be a finite number > 0, got {eps_h!r}")
    if eps_h > MAX_EPS_H:
        raise DomainError(
            f"eps_h={eps_h!r} is above {MAX_EPS_H:g}: the float64 search cannot resolve G "
            "on a head that long; measure a shorter head (the failure probability "
            "delta_mu(eps_h) bounds what lies beyond it)")
    if not (math.isfinite(tol) and tol > 0):
        raise DomainError(f"tol must be a finite number > 0, got {tol!r}")
    if method not in METHODS:
        raise DomainError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    how = METHODS[method]
    if max_evaluations is None:
        max_evaluations = 2**62 if how == "staircase" else _DEFAULT_BUDGET
    if certify is not None and tol < (MIN_TOL_CERTIFIED if certify else MIN_TOL_FLOAT):
        raise PrecisionError(
            f"tol={tol!r} is below what float64 can guarantee ({MIN_TOL_FLOAT:g}); pass "
            "certify=True" if not certify else
            f"tol={tol!r} is below the certified limit {MIN_TOL_CERTIFIED:g}")
    if time_limit == "default":
        time_limit = DEFAULT_TIME_LIMIT
    if time_limit is not None and not (isinstance(time_limit, (int, float))
                                       and float(time_limit) >= 0):
        raise DomainError(f"time_limit must be a number >= 0 or None, got {time_limit!r}")
    with _time_limit(None if time_limit is None else float(time_limit)):
        try:
            return _measure(profile, eps_h, tol, refine, how, certify, max_evaluations,
                            seed, initial_intervals, identify, timeout, progress, t0)
        except MeasurementTimeLimit:
            raise
        except PrecisionError as exc:
            if certify is not False or not _has_ball_evaluation(
                    profile.refine(timeout=timeout) if refine and hasattr(profile, "refine")
                    else profile):
                raise
            # float64 cannot be trusted for this profile (a value it gets wrong, or outward
            # rounding wider than tol): measure it in ball arithmetic instead, labelled so
            m = _measure(profile, eps_h, tol, refine, how, True, max_evaluations, seed,
                         initial_intervals, identify, timeout, progress, t0)
            return dataclasses.replace(m, notes=m.notes + (
                f"certified: the float64 mode (certify=False) refused ({exc})",))


def _measure(profile: Any, eps_h: float, tol: float, refine: bool, how: str,
             certify: bool | None, max_evaluations: int, seed: int, initial_intervals: int,
             identify: bool, timeout: float | None, progress: Any, t0: float
             ) -> Measurement:
    """The body of :func:`measure`, its arguments checked, under its time limit."""
    notes: list[str] = []
    # a numeric source's caveats (a trade-off curve whose convexity was not proved)
    source_notes = getattr(getattr(profile, "source", None), "notes", None)
    if isinstance(source_notes, tuple):
        notes.extend(str(n) for n in source_notes)
    rounded = _rounded_constants(profile)
    if rounded:
        msg = (f"the constant {rounded} of the profile lies beyond the float64 range, so "
               "SymPy computed it (e.g. exp of a Float, evaluated at the Float's 53-bit "
               "precision) before symgdp saw it: its error against the exact value meant "
               "may be far above 1e-16, and the bracket is for the constant as stored; "
               "write such constants exactly (Integer/Rational, e.g. exp(c - f(eps)) with "
               "c Rational)")
        warnings.warn(msg, SymgdpWarning, stacklevel=3)
        notes.append(msg)
    src = getattr(profile, "source", None)
    if how == "first-order" and callable(getattr(src, "gdp_bracket", None)):
        m = _alpha_route(profile, src, eps_h, tol, refine, notes, identify, timeout, t0)
        if m is not None:
            return m
    if src is not None and callable(getattr(src, "finer", None)) \
            and getattr(src, "tol", 0.0) > tol / 8:
        # the source's gap on log delta must be well inside the bracket asked for on mu
        profile = type(profile).from_source(src.finer(tol / 8), name=profile.name)
    if how == "first-order" and hasattr(profile, "require_bound"):
        profile.require_bound()
        mu_exact = _recognised_gaussian(profile, timeout)
        if mu_exact is not None:
            # delta_mu is a privacy profile and tight: validation and refinement (which
            # returns it unchanged) are not needed
            return _whole_line(_gaussian_measurement(
                profile, profile, mu_exact, eps_h, tol, bool(refine), notes, identify,
                timeout, t0), mu_exact=mu_exact)
        # the bracket of a rounded delta_mu holds for the function as it is (no
        # monotonicity needed): no validation when it is measured unrefined
        near = None if refine else _near_gaussian_bracket(profile, eps_h, tol, timeout)
        if near is not None:
            return _whole_line(_near_gaussian_measurement(
                profile, profile, near, eps_h, tol, False, notes, identify, timeout, t0,
                certify), mu_bound=near_gaussian_mu_bound(near))
    if hasattr(profile, "validate"):
        # a quick symbolic / grid check first; the search then proves monotonicity on
        # every interval it visits (first-order method)
        profile.validate()
    p, refined = _refined(profile, refine, notes, timeout)
    if hasattr(p, "require_bound"):
        p.require_bound()
    if how == "first-order" and refined:
        mu_exact = _recognised_gaussian(p, timeout)
        if mu_exact is not None:
            return _whole_line(_gaussian_measurement(
                profile, p, mu_exact, eps_h, tol, refined, notes, identify, timeout, t0),
                mu_exact=mu_exact)
    if how == "first-order":
        # unrefined, a bracket that fits was taken before validation; here the check
        # may refuse a hopeless search (after validation, so a non-profile is named so)
        near = _near_gaussian_bracket(p, eps_h, tol, timeout, refuse=True)
        if near is not None:
            return _whole_line(_near_gaussian_measurement(
                profile, p, near, eps_h, tol, refined, notes, identify, timeout, t0,
                certify), mu_bound=near_gaussian_mu_bound(near))
    fo = None
    if how == "first-order" or certify is None:
        if how == "first-order":
            _prefetch_series(p)
        fo = _first_order_for(p, timeout, notes)
    if how == "first-order" and fo is None:
        how = "branch-and-bound"
    if certify is None:
        certify = fo is not None or _has_ball_evaluation(p)
        if tol < MIN_TOL_FLOAT and not certify:
            raise PrecisionError(
                f"tol={tol!r} is below what float64 can guarantee ({MIN_TOL_FLOAT:g}) and "
                "this profile has no ball-arithmetic evaluation to certify it")
    steer = certify and fo is not None and how == "first-order"
    ld = _BallSteered(p, fo) if steer else _Counted(p)
    certifier = _Certifier(p) if certify else None
    _warn_if_slow(how, eps_h, tol)
    bar = None
    if progress is True:
        progress, bar = _tqdm_progress()
    search_tol = tol
    try:
        for _attempt in range(4):
            s, lower, upper, lfp, cover = _search_and_finalise(
                p, ld, how, eps_h, search_tol, certifier, max_evaluations, seed,
                initial_intervals, fo, progress or None)
            excess = (upper - lower if upper != lower else 0.0) - tol
            if excess <= 0:
                break
            # the outward nudges took more than the reserved margin (mu large, delta near
            # 1): search again to a bracket narrower by (at least) twice the excess
            search_tol = min(search_tol - 2.0 * excess, 0.9 * search_tol)
            if search_tol < 0.5 * tol:
                break
        else:
            excess = 1.0
    finally:
        if bar is not None:
            bar.close()
    if excess > 0:
        raise PrecisionError(
            f"after outward rounding the bracket [{lower!r}, {upper!r}] is wider than "
            f"tol={tol!r}; use a larger tol" + ("" if certify else " or certify=True"))
    notes.extend(s.notes)
    evaluations = ld.count
    cert_evals = (certifier.count if certifier is not None else 0) + (
        fo.count if fo is not None else 0)
    covers_tail = _exactly_zero(p, eps_h)
    if covers_tail:
        lfp = -math.inf
    mu_tail = _mu_tail(profile, covers_tail, identify, notes, timeout)
    fp = math.exp(lfp) if lfp > -math.inf else 0.0
    if certify and fp > 0:
        # lfp is an upper end; keep the float above the true value too
        fp = math.nextafter(max(fp, float(delta_mu(eps_h, upper))), math.inf)
    m = Measurement(
        lower=lower, upper=upper, eps_h=eps_h, tol=tol, covers_tail=covers_tail,
        mu_tail=mu_tail, failure_prob=fp, log_failure_prob=lfp, refined=refined,
        method=how, certified=bool(certify), evaluations=evaluations, argmax=s.argmax,
        seconds=time.perf_counter() - t0, certify_evaluations=cert_evals,
        notes=tuple(notes), cover=cover, profile=p)
    return _whole_line(m, fo=fo, certifier=certifier)


def _alpha_route(profile: Any, src: Any, eps_h: float, tol: float, refine: bool,
                 notes: list[str], identify: bool, timeout: float | None, t0: float
                 ) -> Measurement | None:
    """A trade-off curve's profile measured in the alpha domain
    (:meth:`~symgdp.notions.tradeoff.TradeoffSource.gdp_bracket`: certified, with the same
    head and failure probability as a search over eps), or ``None`` with a note when that
    route gave up (the search over eps then runs)."""
    b = src.gdp_bracket(eps_h, tol, check=check_time_limit, timeout=timeout)
    if b.upper is None:
        notes.append(f"{TRADEOFF_METHOD}: gave up ({b.reason}); measured over eps")
        return None
    lfp = log_delta_mu_upper(eps_h, b.upper)
    fp = math.nextafter(max(math.exp(lfp), float(delta_mu(eps_h, b.upper))), math.inf) \
        if lfp > -math.inf else 0.0
    mu_tail = _mu_tail(profile, False, identify, notes, timeout)
    m = Measurement(
        lower=b.lower, upper=b.upper, eps_h=eps_h, tol=tol, covers_tail=False,
        mu_tail=mu_tail, failure_prob=fp, log_failure_prob=lfp,
        refined=bool(refine) and hasattr(profile, "refine"), method=TRADEOFF_METHOD,
        certified=True, evaluations=b.points, argmax=b.argmax,
        seconds=time.perf_counter() - t0, certify_evaluations=b.boxes,
        notes=tuple(notes + b.notes), cover=None, profile=profile)
    return _whole_line(m)


# -- the whole-line hook (measurement.whole_line.certificate), apart from the search ------
def _whole_line(m: Measurement, fo: Any = None, mu_exact: Any = None,
                certifier: Any = None, mu_bound: Any = None) -> Measurement:
    """``m`` with its tail proved where possible (``covers_tail``, ``proved_until``).  The
    proof's own test counts bound its work; its wall-clock budget is only a safety net,
    generous (at least 30 s) so that a loaded machine does not change the answer."""
    return cast(Measurement, whole_line(m, fo=fo, mu_exact=mu_exact, certifier=certifier,
                      seconds=max(30.0, 4.0 * float(m.seconds)), mu_bound=mu_bound))
