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

* ``"first-order"`` (the default, :mod:`symgdp.firstorder`): a branch-and-bound over
  intervals in which each interval is closed by the better of the bound above and a
  first-order bound -- :math:`\sup_{[x,y]} G \le \mu^+` proved from
  :math:`\log\delta_A - \log\delta_{\mu^+} \le 0` with the SymPy derivative of the
  profile in ball arithmetic -- and every interval is *proved* non-increasing there (a
  profile that rises anywhere, even in a spike between grid points, is refused).  A
  flat GDPT no longer forces intervals of width ``tol``.  A profile that is the Gaussian
  profile :math:`\delta_\mu` itself (in any spelling) is recognised by an exact symbolic
  identity: its GDPT is the constant :math:`\mu`.  One whose :math:`\mu` was a Float
  (``eps/30.0`` stored as ``0.0333333333333333*eps``) is :math:`\delta_\mu` only up to
  that rounding; its bracket :math:`[\mu, \mu + \Delta]` comes from a perturbation
  bound (:math:`\Delta \approx 10^{-14}`), since a search would need
  :math:`\log\delta` to about :math:`\varphi(\mu/2)\,\mathrm{tol}` where
  :math:`\delta \approx 1`.  Without a ball evaluation of the
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
evaluation): every bound is proved in ball arithmetic (:mod:`symgdp.interval`) with the
profile evaluated from its SymPy expression and its parameter values taken exactly.

Float mode (``certify=False``): with the first-order search every leaf bound is still
re-proved in ball arithmetic, and the lower bound rests on the best point's value
recomputed at 30 digits.  Otherwise (zeroth-order search, staircase) the float bracket is
finalised by re-checking every bound it rests on with the *forward* map
:math:`\mu \mapsto \log\delta_\mu`: ``log δ_A(x) ≤ log δ_upper(y)`` on every leaf (in
float64 with a slack of ``_LOG_SLACK`` times :math:`|\log\delta|`, and in ball arithmetic
where that check fails or :math:`\delta` is within 0.001 of 1), with the float profile
values trusted to ``_PROFILE_SLACK`` where the expression has no subtraction (any
subtraction, also of a constant, sends values below 1e-100 to high precision) and spot
checked at 30 digits on the values the bracket hinges on.  Profile values within 1e-6 of
1 are always recomputed in high precision (float64 rounds :math:`1 - 10^{-17}` to 1).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field, fields
from typing import Any

import mpmath
import numpy as np
from flint import arb, ctx
import sympy

from .errors import (
    ConvergenceError,
    DomainError,
    PrecisionError,
    ProfileError,
    SymgdpError,
    SymgdpWarning,
)
from .formatting import format_bracket, format_log_upper, head_caveat, latex_text
from .gaussian import delta_mu, log_delta_mu, mu_gdp
from .interval import (ArbUnsupported, delta_mu_arb, log_delta_mu_arb, log_delta_mu_upper,
                       profile_arb, prove)

__all__ = ["Measurement", "measure", "gdpt", "METHODS"]

#: accepted values of ``method=`` and the name each one is recorded under
METHODS = {"auto": "first-order", "first-order": "first-order",
           "branch-and-bound": "branch-and-bound", "bnb": "branch-and-bound",
           "staircase": "staircase"}

# Relative slack on log delta_mu in the float re-check: the largest relative error of
# gaussian.log_delta_mu against 40-digit mpmath over 1500 random points spanning
# eps in [1e-6, 2000], mu in [3e-4, 100] was 3.4e-13 (at mu ~ 5e-4); ten times that.
_LOG_SLACK = 4e-12
# Above this log delta (delta > 0.999) the float check is not trusted: ball arithmetic.
_NEAR_ONE = -1e-3
# Above this log delta a float64 profile value is recomputed in high precision.
_NEAR_ONE_PROFILE = -1e-6
# Trusted accuracy of float64 profile values: |error of log delta| <= _PROFILE_SLACK
# + _PROFILE_SLACK_LOG*|log delta| (a relative error in delta, plus one in log delta where
# the profile is evaluated in log space; the latter moves mu by only ~5e-13*mu in the tail);
# verified at 30 digits on the values the bracket hinges on (_spot_check).
_PROFILE_SLACK = 1e-13
_PROFILE_SLACK_LOG = 1e-12
# Reserve kept between the search's raw gap and tol for the outward nudges.
_MARGIN_FLOAT = 1e-11
_MARGIN_CERT = 1e-13
#: smallest tol honoured in float64 (finer needs certify=True) and in certified mode
MIN_TOL_FLOAT = 1e-9
MIN_TOL_CERTIFIED = 1e-12
_SQRT_8PI = math.sqrt(8.0 * math.pi)
_DEFAULT_BUDGET = 2_000_000


@dataclass(frozen=True, slots=True)
class Measurement:
    r"""Guaranteed bracket on :math:`\sup_{[0,\varepsilon_h]} G`.

    Attributes:
        lower: guaranteed lower bound on the supremum of the GDPT over ``[0, eps_h]``.
        upper: guaranteed upper bound; the mechanism is ``(eps_h, upper)``-head GDP, and
            ``upper``-GDP outright when ``covers_tail``.
        eps_h: end of the measured head.
        tol: requested bracket width (``upper - lower <= tol``).
        covers_tail: the profile is exactly 0 from some :math:`\varepsilon \le` ``eps_h`` on
            (proved by an exact evaluation, not a float underflow).
        mu_tail: :math:`\sqrt{\lim G^2}` from the symbolic identification (``inf`` when not
            GDP, ``nan`` when unknown, 0 when ``covers_tail``).
        failure_prob: :math:`\delta_{upper}(\varepsilon_h)`, what the tail beyond ``eps_h``
            can cost (0 when ``covers_tail``); may underflow to 0.0.
        log_failure_prob: its natural logarithm (finite where the float underflows).
        refined: the refined profile (theory §2) was measured.
        method: ``"first-order"``, ``"branch-and-bound"`` or ``"staircase"``.
        certified: every bound was proved in ball arithmetic.
        evaluations: profile values that steered the search (float64, or in a certified
            first-order search the midpoints of point balls; see ``measure``).
        argmax: :math:`\varepsilon` of the best point value (where ``lower`` was found).
        seconds: wall time of the whole measurement.
        certify_evaluations: ball-arithmetic profile evaluations (0 unless certified).
        notes: remarks on how the result was obtained.
        cover: the leaf intervals as rows ``(x, y, U)`` with ``U`` the float upper bound of
            :math:`G` on ``[x, y]`` (for plots; ``None`` for the staircase).
        profile: the profile that was measured (refined or as given).
    """

    lower: float
    upper: float
    eps_h: float
    tol: float
    covers_tail: bool
    mu_tail: float
    failure_prob: float
    log_failure_prob: float
    refined: bool
    method: str
    certified: bool
    evaluations: int
    argmax: float
    seconds: float = field(default=math.nan, compare=False)
    certify_evaluations: int = 0
    notes: tuple[str, ...] = ()
    cover: Any = field(default=None, compare=False, repr=False)
    profile: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if math.isnan(self.lower) or math.isnan(self.upper) or self.lower > self.upper:
            raise DomainError(f"invalid bracket [{self.lower!r}, {self.upper!r}]")
        if self.lower < 0:
            raise DomainError(f"lower must be >= 0, got {self.lower!r}")
        if not self.tol > 0:
            raise DomainError(f"tol must be > 0, got {self.tol!r}")
        if self.method not in ("first-order", "branch-and-bound", "staircase"):
            raise DomainError(f"unknown method {self.method!r}")

    @property
    def width(self) -> float:
        """``upper - lower`` (0 for an infinite bracket)."""
        return 0.0 if self.lower == self.upper else self.upper - self.lower

    def __contains__(self, mu: float) -> bool:
        return self.lower <= mu <= self.upper

    def _bracket_text(self) -> tuple[str, str, str]:
        # rounded outwards (lower down, upper and failure probability up): the printed
        # statement stays true
        lo, up = format_bracket(self.lower, self.upper)
        return lo, up, format_log_upper(self.log_failure_prob)

    def headline_caveat(self) -> str | None:
        r"""What must be said before the bracket: why ``upper`` is not the mechanism's
        :math:`\mu` (tail limit above it or infinite, maximum at ``eps_h``), else ``None``."""
        return head_caveat(lower=self.lower, upper=self.upper, eps_h=self.eps_h,
                           argmax=self.argmax, mu_tail=self.mu_tail,
                           covers_tail=self.covers_tail)

    def __repr__(self) -> str:
        # the caveat first; a failure probability that underflows is shown from its log,
        # rounded up, never as 0.0
        parts = [] if self.headline_caveat() is None else \
            [f"caveat={self.headline_caveat()!r}"]
        for f in fields(self):
            if not f.repr:
                continue
            value = getattr(self, f.name)
            if f.name == "failure_prob" and value == 0 and self.log_failure_prob > -math.inf:
                value = f"<= {format_log_upper(self.log_failure_prob)}"
            parts.append(f"{f.name}={value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def __str__(self) -> str:
        how = "certified" if self.certified else "float64"
        lo, up, fp = self._bracket_text()
        head = (f"sup G on [0, {self.eps_h:g}] in [{lo}, {up}] "
                f"({self.method}, {how}, {self.evaluations} evaluations)")
        caveat = self.headline_caveat()
        head = head if caveat is None else f"CAUTION: {caveat}.  {head}"
        if self.covers_tail:
            return head + f"; the profile is 0 beyond eps_h: {up}-GDP"
        return head + f"; head GDP, tail failure probability <= {fp}"

    def _repr_markdown_(self) -> str:
        return str(self)

    def _repr_latex_(self) -> str:
        lo, up, _ = self._bracket_text()
        how = r"\text{certified}" if self.certified else r"\text{float64}"
        caveat = self.headline_caveat()
        # Jupyter renders with MathJax, whose \text takes no nested math: words stay words
        s = "" if caveat is None else \
            rf"$\text{{Caution: {latex_text(caveat, symbols=False)}}}$ "
        s += (rf"$\sup_{{\varepsilon \in [0, {self.eps_h:g}]}} G(\varepsilon) \in [{lo}, {up}]"
              rf"\quad ({how})")
        if self.covers_tail:
            return s + rf",\quad {up}\text{{-GDP}}$"
        fp = format_log_upper(self.log_failure_prob, latex=True)
        return s + rf",\quad \delta_{{\mu}}({self.eps_h:g}) \le {fp}$"


# ---------------------------------------------------------------------------------------
# helpers


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


class _Counted:
    """``log_delta`` of a profile that counts evaluations and rejects NaN."""

    def __init__(self, profile: Any) -> None:
        self.profile = profile
        self.count = 0

    def __call__(self, x: np.ndarray) -> np.ndarray:
        self.count += int(np.size(x))
        y = np.asarray(self.profile.log_delta(x), dtype=np.float64).reshape(np.shape(x))
        if np.any(np.isnan(y)):
            raise ProfileError(f"the profile is NaN at eps={x[np.isnan(y)].flat[0]!r}")
        near = y > _NEAR_ONE_PROFILE
        if np.any(near) and hasattr(self.profile, "_mp_log"):
            # delta within 1e-6 of 1: float64 keeps few digits of 1 - delta (and rounds
            # 1 - 1e-17 to 1, i.e. mu = inf); resolve these in high precision
            flat = y.reshape(-1)
            for i in np.flatnonzero(near.reshape(-1)).tolist():
                flat[i] = self.profile._mp_log(float(np.asarray(x).reshape(-1)[i]))
        return y


class _BallSteered(_Counted):
    """``log_delta`` steering a certified first-order search: the midpoints of the
    first-order machinery's point balls (cached there, and reused by the proofs), with
    the float evaluator (built only if needed) where a ball is undecided or not accurate
    to float64.  Every bound of a certified bracket is proved in ball arithmetic
    afterwards, so these values only choose where the search looks; they spare a
    profile the preparation of its float evaluator (a sweep point's largest cost)."""

    def __init__(self, profile: Any, fo: Any) -> None:
        super().__init__(profile)
        self.fo = fo

    def __call__(self, x: np.ndarray) -> np.ndarray:
        flat = np.asarray(x, dtype=np.float64).reshape(-1)
        out = np.empty(flat.size)
        todo = []
        for i, xi in enumerate(flat.tolist()):
            v = self.fo.log_delta(xi)
            if v.is_finite():
                m, r = float(v.mid()), float(v.rad())
                if r <= 4e-16 * abs(m) + 1e-300:
                    out[i] = min(m, 0.0)
                    continue
            elif bool(v.is_exact() and not v.is_finite() and v < 0):
                out[i] = -math.inf  # an exact zero of the profile
                continue
            todo.append(i)
        self.count += flat.size - len(todo)
        if todo:
            out[todo] = super().__call__(flat[todo])
        return out.reshape(np.shape(x))


@dataclass
class _Search:
    lower: float
    argmax: float
    upper: float
    leaf_a: np.ndarray  # leaves cover [0, eps_h]: upper bound mu_gdp(b, log_delta=la)
    leaf_b: np.ndarray
    leaf_la: np.ndarray
    leaf_u: np.ndarray
    notes: list[str]
    # per leaf, a proved bound tau with delta <= delta(a) e^tau on [a, b] (None: all 0)
    leaf_rise: np.ndarray | None = None


def _margin(certify: bool, upper: float) -> float:
    if not math.isfinite(upper):
        return 0.0
    return (_MARGIN_CERT if certify else _MARGIN_FLOAT) * (1.0 + upper)


# ---------------------------------------------------------------------------------------
# branch-and-bound


def _branch_and_bound(ld: _Counted, eps_h: float, tol: float, certify: bool,
                      max_evaluations: int, initial: int) -> _Search:
    x = np.linspace(0.0, eps_h, initial + 1)
    lx = ld(x)
    g = mu_gdp(x, log_delta=lx)
    i = int(np.argmax(g))
    best, arg = float(g[i]), float(x[i])
    a, b, la = x[:-1], x[1:], lx[:-1]
    u = mu_gdp(b, log_delta=la)
    pool: list[tuple[np.ndarray, ...]] = []
    history: list[int] = []
    warned = False
    while True:
        if math.isinf(best):  # delta = 1 somewhere: no finite mu
            break
        up = max(best, float(u.max())) if u.size else best
        target = tol - 2.0 * _margin(certify, up)
        if target <= 0.5 * tol:
            raise PrecisionError(
                f"tol={tol!r} is too fine for mu ~ {up:.6g} in "
                f"{'ball' if certify else 'float64'} arithmetic"
                + ("" if certify else "; pass certify=True"))
        if up - best <= target:
            break
        pruned = u <= best
        if np.any(pruned):
            pool.append((a[pruned], b[pruned], la[pruned], u[pruned]))
        split = u > best + target
        keep = ~pruned & ~split
        m = 0.5 * (a[split] + b[split])
        if np.any((m <= a[split]) | (m >= b[split])):
            raise PrecisionError(
                f"the bracket [{best!r}, {up!r}] cannot be narrowed to tol={tol!r}: an "
                f"interval at eps~{float(a[split][0])!r} is down to one float64 ulp "
                "(a jump of the profile there?)")
        history.append(int(np.count_nonzero(split)))
        if len(history) >= 5 and all(h1 >= 1.8 * h0 for h0, h1 in
                                     zip(history[-4:-1], history[-3:], strict=True)):
            # nothing is being pruned: a flat GDPT (e.g. the Gaussian mechanism's own
            # profile).  There an interval still needs about (U - best)/target children,
            # so the total is predictable: give up now rather than after the budget.
            need = float(np.sum(np.minimum((u[split] - best) / target, 1e15)))
            if need / _EVALS_PER_SECOND > 60 and ld.count + need <= max_evaluations \
                    and not warned:
                warned = True
                warnings.warn(
                    f"the branch-and-bound measurement of a flat GDPT needs about {need:.3g} "
                    f"more profile evaluations (about {need / _EVALS_PER_SECOND:.0f} s); "
                    "method='auto' is usually far faster", SymgdpWarning, stacklevel=4)
            if ld.count + need > max_evaluations:
                raise ConvergenceError(
                    f"branch-and-bound stopped at the bracket [{best:.10g}, {up:.10g}] after "
                    f"{ld.count} profile evaluations: the GDPT is flat and about {need:.2g} "
                    f"more are needed (max_evaluations={max_evaluations}; a flat GDPT "
                    "needs up to 1.25*eps_h/tol): raise tol or lower eps_h")
        if ld.count + m.size > max_evaluations:
            raise ConvergenceError(
                f"branch-and-bound stopped at the bracket [{best:.10g}, {up:.10g}] after "
                f"{ld.count} profile evaluations (max_evaluations={max_evaluations}); a flat "
                "GDPT needs about 1.25*eps_h/tol of them: raise tol or lower eps_h")
        lm = ld(m)
        asp, bsp, lasp = a[split], b[split], la[split]
        # one vectorised inversion for the new point values and both children's bounds
        k = m.size
        mus = mu_gdp(np.concatenate([m, m, bsp]), log_delta=np.concatenate([lm, lasp, lm]))
        gm = mus[:k]
        if k:
            j = int(np.argmax(gm))
            if gm[j] > best:
                best, arg = float(gm[j]), float(m[j])
        a = np.concatenate([a[keep], asp, m])
        b = np.concatenate([b[keep], m, bsp])
        la = np.concatenate([la[keep], lasp, lm])
        u = np.concatenate([u[keep], mus[k:]])
    pool.append((a, b, la, u))
    cols = [np.concatenate(c) for c in zip(*pool, strict=True)]
    up = max(best, float(cols[3].max())) if cols[3].size else best
    return _Search(best, arg, up, *cols, notes=[])


# ---------------------------------------------------------------------------------------
# the first-order search


@dataclass
class _FirstOrderLeaves:
    """Leaves closed by the first-order test: sup G <= bound on [a, b], proved in balls."""

    a: list[float] = field(default_factory=list)
    b: list[float] = field(default_factory=list)
    bound: float = 0.0


def _first_order_search(ld: _Counted, fo: Any, eps_h: float, tol: float, certify: bool,
                        max_evaluations: int, initial: int,
                        progress: Any) -> tuple[_Search, _FirstOrderLeaves]:
    """Branch-and-bound in which every leaf is proved non-increasing in ball arithmetic
    and closed by the better of the zeroth-order bound and the first-order test."""
    if hasattr(fo, "use_series") and not callable(getattr(ld.profile, "first_order", None)):
        # the high-order Taylor test, built on first need (not for a profile with its own
        # exact first-order pieces, e.g. the k-fold composition)
        fo.use_series(ld.profile)
    grid = np.linspace(0.0, eps_h, initial + 1)
    cuts = [c for c in getattr(fo, "branch_points", ()) if 0.0 < c < eps_h]
    x = np.union1d(grid, np.asarray(cuts, dtype=np.float64))
    lx = ld(x)
    g = mu_gdp(x, log_delta=lx)
    i = int(np.argmax(g))
    best, arg = float(g[i]), float(x[i])
    pa, pb, pla = x[:-1].tolist(), x[1:].tolist(), lx[:-1].tolist()
    zero: list[tuple[float, float, float]] = []
    first = _FirstOrderLeaves()
    target = tol - 2.0 * _margin(certify, best + tol)
    # intervals the sweep failed to prove, with the mu+ tried: not tried again below it
    failed: dict[tuple[float, float], float] = {}
    if not cuts and target > 0.5 * tol and math.isfinite(best):
        pa, pb, pla = _close_blocks(fo, ld, pa, pb, pla, best + 0.9 * target, first,
                                    failed)
    rounds = 0
    started, warned = time.perf_counter(), False
    while pa and not math.isinf(best):
        rounds += 1
        if not warned and time.perf_counter() - started > _WARN_AFTER_SECONDS:
            warned = True
            warnings.warn(
                f"the first-order search has run {_WARN_AFTER_SECONDS:g} s with "
                f"{len(pa)} intervals still open near mu ~ {best:.6g}: it may take minutes "
                f"(eps_h={eps_h!r}, tol={tol!r}); raise tol or lower eps_h",
                SymgdpWarning, stacklevel=4)
        target = tol - 2.0 * _margin(certify, best + tol)
        if target <= 0.5 * tol:
            raise PrecisionError(
                f"tol={tol!r} is too fine for mu ~ {best:.6g} in "
                f"{'ball' if certify else 'float64'} arithmetic"
                + ("" if certify else "; pass certify=True"))
        mu_plus = best + 0.9 * target
        u = mu_gdp(np.asarray(pb), log_delta=np.asarray(pla))
        sa, sb, sla = [], [], []
        for k, (a, b, la) in enumerate(zip(pa, pb, pla, strict=True)):
            uk = float(u[k])
            closed = False
            if uk <= mu_plus:
                r = fo.rise(a, b)
                if r is not None:
                    # sup delta on [a, b] <= delta(a) e^tau + add: the zeroth-order bound
                    # uses that inflated value
                    zero.append((a, b, _inflated(la, *r), r))
                    closed = True
            elif failed.get((a, b), -math.inf) < mu_plus and fo.prove_below(a, b, mu_plus):
                if fo.rise(a, b) is not None:
                    first.a.append(a)
                    first.b.append(b)
                    first.bound = max(first.bound, mu_plus)
                    closed = True
            if not closed:
                sa.append(a)
                sb.append(b)
                sla.append(la)
        if not sa:
            break
        a_, b_ = np.asarray(sa), np.asarray(sb)
        m = 0.5 * (a_ + b_)
        stuck = (m <= a_) | (m >= b_)
        if np.any(stuck):
            j = int(np.flatnonzero(stuck)[0])
            _stuck_error(fo, float(a_[j]), float(b_[j]), best, tol)
        if ld.count + m.size > max_evaluations:
            raise ConvergenceError(
                f"the first-order search stopped at the bracket [{best:.10g}, "
                f"{max(best, first.bound, float(u.max())):.10g}] after {ld.count} profile "
                f"evaluations (max_evaluations={max_evaluations}): raise tol or lower eps_h")
        lm = ld(m)
        gm = mu_gdp(m, log_delta=lm)
        j = int(np.argmax(gm))
        if gm[j] > best:
            best, arg = float(gm[j]), float(m[j])
        # a point value above its left neighbour's is a rise, unless within float noise:
        # confirm in ball arithmetic and refuse
        prev = np.asarray(sla)
        with np.errstate(invalid="ignore"):
            rose = np.isfinite(lm) & (lm > prev + 1e-9 * (1 + np.abs(lm)))
        for jj in np.flatnonzero(rose).tolist():
            _refuse_rise(fo, float(a_[jj]), float(m[jj]))
        pa = sa + m.tolist()
        pb = m.tolist() + sb
        pla = sla + lm.tolist()
        if progress is not None and rounds % 4 == 0:
            progress(ld.count, max(first.bound, float(u.max())) - best)
    za = np.asarray([z[0] for z in zero])
    zb = np.asarray([z[1] for z in zero])
    zla = np.asarray([z[2] for z in zero])
    zrise = np.asarray([z[3] for z in zero], dtype=np.float64).reshape(-1, 2)
    zu = mu_gdp(zb, log_delta=zla) if za.size else np.empty(0)
    up = max(best, first.bound, float(zu.max()) if zu.size else 0.0)
    s = _Search(best, arg, up, za, zb, zla, zu,
                notes=[f"first-order search: {len(first.a)} intervals closed by the "
                       f"first-order test, {za.size} by the zeroth-order bound; every one "
                       "proved non-increasing in ball arithmetic"], leaf_rise=zrise)
    return s, first


#: the sweep of _close_blocks: consecutive failures after which it hands the rest of a
#: cell to the bisection (also once its width is below the cell's over 2 to this power)
_SWEEP_FAILS = 6
#: the sweep's width after a proof: times the growth of the distance from 0 (at most
#: _SWEEP_GROW), times _SWEEP_GROW again before the first failure and _SWEEP_DRIFT after
#: it, and at most 0.9 times the smallest ratio of width to distance not proved, which
#: grows by _SWEEP_FORGET at each proof
_SWEEP_GROW, _SWEEP_DRIFT, _SWEEP_FORGET = 1.5, 1.08, 1.02


def _close_blocks(fo: Any, ld: _Counted, pa: list[float], pb: list[float],
                  pla: list[float], mu_plus: float, first: _FirstOrderLeaves,
                  failed: dict[tuple[float, float], float] | None = None
                  ) -> tuple[list[float], list[float], list[float]]:
    """Before the first round: every stretch of consecutive initial cells that the
    zeroth-order bound cannot close is swept from left to right by the first-order test
    with an adaptive width, as an ODE solver adapts its step (see _sweep); each interval
    proved is one leaf, each one not proved is noted in ``failed`` (with ``mu_plus``).
    The returned cells and the leaves added to ``first`` cover the given cells exactly."""
    failed = {} if failed is None else failed
    u = mu_gdp(np.asarray(pb), log_delta=np.asarray(pla))
    open_ = (u > mu_plus).tolist()
    sa: list[float] = []
    sb: list[float] = []
    sla: list[float] = []
    n, i = len(pa), 0
    while i < n:
        if not open_[i]:
            sa.append(pa[i])
            sb.append(pb[i])
            sla.append(pla[i])
            i += 1
            continue
        j = i
        while j < n and open_[j]:
            j += 1
        _sweep(fo, ld, pa[i:j], pb[i:j], pla[i:j], mu_plus, first, sa, sb, sla, failed)
        i = j
    return sa, sb, sla


def _sweep(fo: Any, ld: _Counted, pa: list[float], pb: list[float], pla: list[float],
           mu_plus: float, first: _FirstOrderLeaves, sa: list[float], sb: list[float],
           sla: list[float], failed: dict[tuple[float, float], float]) -> None:
    """The sweep of _close_blocks over the consecutive cells ``pa``/``pb``, from the
    left, with the first cell's width (a quarter of it from 0, where the provable width
    does not scale with the distance).  After a proof the width grows with the distance from 0 (on a flat, nearly
    Gaussian GDPT the tests prove intervals of about a fixed fraction of it; by at most
    ``_SWEEP_GROW``) and by ``_SWEEP_GROW`` more until the first failure, by
    ``_SWEEP_DRIFT`` after it, never above 0.9 times the smallest ratio of width to
    distance not proved (slowly forgotten); after a failure it is halved (the tests
    have the old midpoint's values at hand).  After ``_SWEEP_FAILS`` failures in a row,
    or once the width is far below the cell's, the rest of the cell goes on to the
    bisection (split at the sweep's position, whose value is evaluated) and the sweep
    resumes at the next cell, with no memory of the failures.  Only the cost depends on
    these choices: every leaf is proved."""
    end = pb[-1]
    k = 0  # the cell holding the sweep's position x
    x, w = pa[0], (pb[0] - pa[0]) * (0.25 if pa[0] == 0 else 1.0)
    fails = 0
    bad = math.inf  # the smallest ratio of width to distance from 0 not proved
    while k < len(pa):
        y = x + w
        if y >= end or end - y < 0.25 * w:
            y = end
        if fo.prove_below(x, y, mu_plus) and fo.rise(x, y, depth=1) is not None:
            first.a.append(x)
            first.b.append(y)
            first.bound = max(first.bound, mu_plus)
            fails = 0
            bad *= _SWEEP_FORGET
            # as fast as _SWEEP_GROW until the first failure, then slowly
            drift = _SWEEP_GROW if math.isinf(bad) else _SWEEP_DRIFT
            w = (y - x) * (min(y / x, _SWEEP_GROW) if x > 0 else _SWEEP_GROW) * drift
            w = min(w, 0.9 * bad * y)
            x = y
            while k < len(pa) and pb[k] <= x:
                k += 1
            continue
        fails += 1
        failed[(x, y)] = mu_plus
        if x > 0:
            bad = min(bad, (y - x) / x)
        w = 0.5 * (y - x)  # the new end is the old midpoint, whose values are cached
        if (fails < _SWEEP_FAILS and x < x + w < y
                and w * 2.0 ** _SWEEP_FAILS >= pb[k] - pa[k]):
            continue
        # give up on the rest of this cell: the bisection takes it
        la = pla[k] if x == pa[k] else float(ld(np.array([x]))[0])
        sa.append(x)
        sb.append(pb[k])
        sla.append(la)
        k += 1
        if k < len(pa):
            x, fails = pa[k], 0
            w = min(pb[k] - pa[k], 0.9 * bad * x)
            bad = math.inf  # a stretch given up is no guide to the next one


def _inflated(la: float, tau: float, add: float) -> float:
    """An upper bound on log(e^(la + tau) + add), rounded up."""
    if not tau and not add:
        return la
    v = la + tau
    if add:
        v = float(np.logaddexp(v, math.log(add)))
    return min(math.nextafter(math.nextafter(v, math.inf), math.inf), 0.0)


def _refuse_rise(fo: Any, a: float, m: float) -> None:
    da, dm = fo.delta(a), fo.delta(m)
    if bool(dm > da) and bool(da < 1):
        raise ProfileError(
            f"the profile increases between eps={a!r} and eps={m!r} "
            f"(delta = {da.str(6, radius=False)} -> {dm.str(6, radius=False)}): not a "
            "privacy profile")


def _stuck_error(fo: Any, a: float, b: float, best: float, tol: float) -> None:
    if fo.rising_at(a) or fo.rising_at(b):
        raise ProfileError(f"the profile increases near eps={a!r}: not a privacy profile")
    if not fo.nonincreasing(a, b):
        raise ProfileError(
            f"cannot prove the profile non-increasing on [{a!r}, {b!r}] even at float64 "
            "resolution (a rise, a jump or a cancellation there?)")
    raise PrecisionError(
        f"the bracket near {best!r} cannot be narrowed to tol={tol!r}: an interval at "
        f"eps~{a!r} is down to one float64 ulp (a jump of the profile there?)")


# ---------------------------------------------------------------------------------------
# the published staircase (theory §6)


def _staircase(ld: _Counted, eps_h: float, tol: float, seed: int,
               max_evaluations: int, chunk: int = 1 << 18) -> _Search:
    n = max(1, math.ceil(_SQRT_8PI * eps_h / tol))
    if n + 2 > max_evaluations:
        raise ConvergenceError(
            f"the staircase needs n+2 = {n + 2} profile evaluations for eps_h={eps_h!r}, "
            f"tol={tol!r} (max_evaluations={max_evaluations})")
    step = eps_h / n
    rng = np.random.default_rng(seed)
    up, lo, arg = 0.0, 0.0, 0.0
    root_finds = 0
    # steps i = 0..n cover [x_i, x_{i+1}] with x_i = i*D; visited block by block in random
    # block order and in random order inside a block, as the algorithm shuffles its steps
    starts = np.arange(0, n + 1, chunk)
    rng.shuffle(starts)
    for s in starts:
        e = min(s + chunk, n + 1)
        pts = np.arange(s, e + 1, dtype=np.float64) * step
        lp = ld(pts)
        xl, xr, l_left, l_right = pts[:-1], pts[1:], lp[:-1], lp[1:]
        order = rng.permutation(e - s)
        # upper steps mu_gdp(x_{i+1}, delta(x_i)): a step beats the running bound U iff
        # delta(x_i) > delta_U(x_{i+1}), a forward evaluation; root-find only the records
        cand = order[l_left[order] > log_delta_mu(xr[order], up)]
        while cand.size:
            j = cand[0]
            v = float(mu_gdp(xr[j], log_delta=l_left[j]))
            root_finds += 1
            up = max(up, v)
            if math.isinf(up):
                break
            rest = cand[1:]
            cand = rest[l_left[rest] > log_delta_mu(xr[rest], up)]
        # lower steps mu_gdp(x_i, delta(x_{i+1}))
        cand = order[l_right[order] > log_delta_mu(xl[order], lo)]
        while cand.size:
            j = cand[0]
            v = float(mu_gdp(xl[j], log_delta=l_right[j]))
            root_finds += 1
            if v > lo:
                lo, arg = v, float(xl[j])
            if math.isinf(lo):
                break
            rest = cand[1:]
            cand = rest[l_right[rest] > log_delta_mu(xl[rest], lo)]
    empty = np.empty(0)
    return _Search(lo, arg, up, empty, empty, empty, empty,
                   notes=[f"staircase: n={n} steps of width {step:.3g}, "
                          f"{root_finds} root-finds"])


def _cover_below(ld: _Counted, eps_h: float, cap: float, max_evaluations: int,
                 initial: int = 64) -> tuple[np.ndarray, ...]:
    """Leaves covering [0, eps_h] whose float upper bounds are all <= cap (for certifying a
    bracket found by another method)."""
    x = np.linspace(0.0, eps_h, initial + 1)
    lx = ld(x)
    a, b, la = x[:-1], x[1:], lx[:-1]
    u = mu_gdp(b, log_delta=la)
    done: list[tuple[np.ndarray, ...]] = []
    while True:
        ok = u <= cap
        done.append((a[ok], b[ok], la[ok], u[ok]))
        if np.all(ok):
            break
        a, b, la = a[~ok], b[~ok], la[~ok]
        m = 0.5 * (a + b)
        if np.any((m <= a) | (m >= b)) or ld.count + m.size > max_evaluations:
            raise PrecisionError(
                f"could not cover [0, {eps_h!r}] by intervals whose bound stays below "
                f"{cap!r} (stuck near eps={float(a[0])!r})")
        lm = ld(m)
        a, b, la = np.concatenate([a, m]), np.concatenate([m, b]), np.concatenate([la, lm])
        u = mu_gdp(b, log_delta=la)
    return tuple(np.concatenate(c) for c in zip(*done, strict=True))


# ---------------------------------------------------------------------------------------
# finalising the bracket


def _profile_slack(L: Any) -> Any:
    return _PROFILE_SLACK + _PROFILE_SLACK_LOG * np.abs(L)


def _slack(L: np.ndarray) -> np.ndarray:
    return _LOG_SLACK * np.abs(L) + 1e-300


def _log_le_arb(la: float, y: float, mu: float) -> bool:
    """Prove la <= log delta_mu(y) in ball arithmetic (la an exact float)."""
    if la == -math.inf:
        return True

    def check() -> bool | None:
        g = log_delta_mu_arb(y, mu)
        r = arb(la)
        return True if r <= g else (False if r > g else None)

    return prove(check) is True


def _float_upper(s: _Search) -> float:
    """Smallest outward nudge of s.upper such that log delta(x) <= log delta_upper(y) holds
    on every leaf [x, y]: in float64 with a slack where log_delta_mu is accurate, and in
    ball arithmetic where that check fails or delta_upper(y) is near 1 (there float64
    log_delta_mu loses relative accuracy in log delta)."""
    up = s.upper
    if math.isinf(up):
        return up
    la, b = s.leaf_la, s.leaf_b
    # float profile values are trusted to _PROFILE_SLACK (checked where it matters)
    fin = np.isfinite(la)
    la = np.where(fin, np.minimum(la + _profile_slack(np.where(fin, la, 0.0)), 0.0), la)
    bump = 1e-13 * (1.0 + up)
    for _ in range(60):
        lm = log_delta_mu(b, up)
        doubt = ~((la <= lm - _slack(lm)) & (lm <= _NEAR_ONE))
        idx = np.flatnonzero(doubt)
        bad = [i for i in idx.tolist() if not _log_le_arb(float(la[i]), float(b[i]), up)]
        if not bad:
            return up
        la, b = la[bad], b[bad]
        up += bump
        bump *= 1.25
    raise PrecisionError(f"the float upper bound near {s.upper!r} could not be confirmed "
                         "in float64; use certify=True")


def _float_lower(s: _Search, ld_arg: float) -> float:
    """Largest inward nudge of s.lower with log delta_lower(x*) <= ld_arg, proved in ball
    arithmetic; ld_arg is a 30-digit (or slack-reduced float) value of log delta(x*)."""
    lo = s.lower
    if lo <= 0 or math.isinf(lo):
        return max(lo, 0.0)
    bump = 1e-13 * (1.0 + lo)
    x = s.argmax
    for _ in range(200):

        def check(lo: float = lo) -> bool | None:
            g, r = log_delta_mu_arb(x, lo), arb(ld_arg)
            return True if g <= r else (False if g > r else None)

        if prove(check):
            return lo
        lo -= bump
        bump *= 1.25
        if lo <= 0:
            return 0.0
    raise PrecisionError(f"the float lower bound near {s.lower!r} could not be confirmed")


def _spot_check(profile: Any, s: _Search, ld: _Counted, count: int = 24) -> float | None:
    """Compare the float profile values the bracket hinges on (the best point and the
    left ends of the leaves with the largest bounds) with a high-precision evaluation;
    return that log delta at the best point (``None`` without ``profile.mp``).

    The float search trusts float64 profile values to ``_PROFILE_SLACK``; an expression
    that cancels or underflows badly somewhere would silently move the bracket.  This
    cheap check catches that where it matters and refuses instead.
    """
    if not hasattr(profile, "mp"):
        return None
    xs = [s.argmax]
    if s.leaf_u.size and count:
        top = np.argsort(s.leaf_u)[-count:]
        xs += s.leaf_a[top].tolist()
    xs = sorted(set(xs))
    lf = ld(np.asarray(xs))
    at_best = None
    for x, l_float in zip(xs, lf.tolist(), strict=True):
        if hasattr(profile, "_mp_log"):
            # mpmath with precision raised until two evaluations agree (a value that
            # cancels to 0 is not taken as 0 unless provably so)
            l_ref = profile._mp_log(float(x))
        else:
            v = profile.mp(x, dps=30)
            with mpmath.workdps(30):
                l_ref = float(mpmath.log(min(v, mpmath.mpf(1)))) if v > 0 else -math.inf
        if l_ref == -math.inf:
            ok = l_float == -math.inf
        else:
            ok = abs(l_float - l_ref) <= _profile_slack(l_ref)
        if not ok:
            raise PrecisionError(
                f"the profile's float64 evaluation is inaccurate at eps={x!r}: "
                f"log delta = {l_float!r}, but {l_ref!r} in high precision; rewrite the "
                "expression (cancellation/underflow), lower eps_h, or use certify=True")
        if x == s.argmax:
            # SymPy may have rounded constants such as exp(0.2) to 53 bits in the
            # expression evaluated here: the 30-digit value is the profile to _profile_slack
            at_best = l_ref - _profile_slack(l_ref) if l_ref > -math.inf else l_ref
    return at_best


def _to_float_up(v: arb) -> float:
    f = float(v.upper())
    return f if arb(f) >= v.upper() else math.nextafter(f, math.inf)


class _Certifier:
    """Proves the float bracket in ball arithmetic, nudging it outward where needed."""

    def __init__(self, profile: Any) -> None:
        try:
            self.f = profile_arb(profile)
        except ArbUnsupported as exc:
            raise PrecisionError(f"cannot certify: {exc}") from exc
        except AttributeError as exc:
            raise PrecisionError("cannot certify a profile without a SymPy expression "
                                 f"({type(profile).__name__})") from exc
        self.cache: dict[tuple[float, int], arb] = {}
        self.count = 0

    def delta(self, x: float, prec: int) -> arb:
        key = (x, prec)
        v = self.cache.get(key)
        if v is None:
            v = self.f(x)
            self.count += 1
            if v < 0:
                raise ProfileError(f"the profile is negative at eps={x!r} (ball {v.str(5)})")
            # a NaN ball (overflow at this precision) decides nothing: higher precision or
            # a nudge follows, and a bound that stays unproved is reported as such
            self.cache[key] = v
        return v

    def _leaf_ok(self, x: float, y: float, mu: float, tau: float = 0.0,
                 add: float = 0.0) -> bool:
        def check() -> bool | None:
            d = self.delta(x, ctx.prec)
            if d.is_exact() and d.is_zero() and not add:
                return True
            if tau:
                d = d * arb(tau).exp()
            if add:
                d = d + arb(add)
            g = delta_mu_arb(y, mu)
            if d <= g:
                return True
            if d > g:
                return False
            return None

        return prove(check) is True

    def upper(self, a: np.ndarray, b: np.ndarray, up: float,
              rise: np.ndarray | None = None) -> float:
        if math.isinf(up):
            return up
        rises = rise.tolist() if rise is not None else [(0.0, 0.0)] * len(a)
        pending = list(zip(a.tolist(), b.tolist(), rises, strict=True))
        bump = max(abs(up), 1e-300) * 2.0**-50
        for _ in range(45):
            pending = [(x, y, r) for x, y, r in pending if not self._leaf_ok(x, y, up, *r)]
            if not pending:
                return up
            up += bump
            bump *= 4.0
        x, y, _ = pending[0]
        raise PrecisionError(f"could not prove G <= {up!r} on [{x!r}, {y!r}]")

    def lower(self, x: float, lo: float) -> float:
        if math.isinf(lo):
            ok = prove(lambda: self.delta(x, ctx.prec) >= 1 or None)
            if ok:
                return lo
            raise PrecisionError(f"could not prove delta({x!r}) = 1, i.e. G = inf there")
        bump = max(abs(lo), 1e-300) * 2.0**-50
        for _ in range(45):
            if lo <= 0:
                return 0.0

            def check(lo: float = lo) -> bool | None:
                d, g = self.delta(x, ctx.prec), delta_mu_arb(x, lo)
                return True if g <= d else (False if g > d else None)

            if prove(check):
                return lo
            lo -= bump
            bump *= 4.0
        raise PrecisionError(f"could not prove G({x!r}) >= {lo!r}")

    def zero_at(self, x: float) -> bool | None:
        try:
            d = self.delta(x, 64)
        except ProfileError:
            return None
        return bool(d.is_exact() and d.is_zero())


def _exactly_zero(profile: Any, x: float) -> bool:
    """delta(x) == 0 exactly (a ball of radius 0 at 0), hence 0 on [x, inf)."""
    try:
        f = profile_arb(profile)
    except (ArbUnsupported, AttributeError, SymgdpError):
        return False
    with ctx.workprec(64):
        d = f(x)
    return bool(d.is_exact() and d.is_zero())


# ---------------------------------------------------------------------------------------


def _refined(profile: Any, refine: bool, notes: list[str],
             timeout: float | None) -> tuple[Any, bool]:
    if not refine:
        return profile, False
    if not hasattr(profile, "refine"):
        notes.append(f"{type(profile).__name__} has no refine(): measured as given")
        return profile, False
    return profile.refine(timeout=timeout), True


def _mu_tail(profile: Any, covers_tail: bool, identify: bool, notes: list[str],
             timeout: float | None) -> float:
    if covers_tail:
        return 0.0  # an eventually-zero profile has tail limit 0 (theory §5)
    if not identify:
        return math.nan
    if not hasattr(profile, "identify"):
        notes.append("no identify(): mu_tail unknown")
        return math.nan
    try:
        return float(profile.identify(timeout=timeout).mu_tail)
    except SymgdpError as exc:
        notes.append(f"identification failed ({type(exc).__name__}: {exc}); mu_tail unknown")
        return math.nan


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
        ref = _spot_check(p, s, _Counted(p), count=0 if proved else 24)
        if ref is None:
            ld_arg = float(ld(np.array([s.argmax]))[0])
            ld.count -= 1
            ref = ld_arg - _profile_slack(ld_arg)
        lower = _float_lower(s, ref)
        if proved:
            # the profile has a ball evaluation: every leaf's float value is re-proved in
            # ball arithmetic (no float64 profile value is trusted for the upper bound)
            upper = _Certifier(p).upper(s.leaf_a, s.leaf_b, s.upper, s.leaf_rise)
        else:
            upper = _float_upper(s)
        lfp = float(log_delta_mu(eps_h, upper))
    return s, lower, upper, lfp, cover


def _gaussian_identity(expr: Any, var: Any) -> Any:
    """The SymPy ``mu`` with ``expr`` identically equal to the GDP profile delta_mu (in
    any spelling: Phi, erfc or erf), or ``None``.  Exact symbolic identity only."""
    import sympy

    e = expr.replace(lambda u: isinstance(u, sympy.erf), lambda u: 1 - sympy.erfc(u.args[0]))
    atoms = [a for a in e.atoms(sympy.erfc) if var in a.free_symbols]
    if len(atoms) != 2:
        return None
    mus = []
    for a in atoms:
        c1 = sympy.diff(a.args[0], var)
        if var in c1.free_symbols or c1.is_zero:
            return None
        mus.append(sympy.simplify(1 / (sympy.sqrt(2) * sympy.Abs(c1))))
    mu = mus[0]
    if sympy.simplify(mus[1] - mu) != 0:
        return None
    r = sympy.sqrt(2)
    ref = (sympy.erfc((var / mu - mu / 2) / r)
           - sympy.exp(var) * sympy.erfc((var / mu + mu / 2) / r)) / 2
    diff = sympy.expand(e - ref)
    if diff != 0 and sympy.simplify(diff) != 0:
        return None
    return mu


# (expr, var) -> the mu of _gaussian_identity: the identity is decided on the expression
# with its parameters symbolic, so every value of a sweep or calibration shares it.  Only
# completed answers are kept (a timeout may succeed with a larger budget).  The key
# ("near", expr, var) holds the (alpha, beta) of _near_gaussian_form.
_IDENTITY: dict[tuple[Any, Any], Any] = {}
_IDENTITY_MAX = 64


def _gaussian_identity_once(expr: Any, var: Any, timeout: float | None) -> Any:
    """``_gaussian_identity(expr, var)`` in a bounded call, once per expression."""
    from ._bounded import run_bounded

    key = (expr, var)
    if key not in _IDENTITY:
        mu = run_bounded(_gaussian_identity, expr, var, timeout=timeout)
        if len(_IDENTITY) >= _IDENTITY_MAX:
            _IDENTITY.pop(next(iter(_IDENTITY)))
        _IDENTITY[key] = mu
    return _IDENTITY[key]


def _recognised_gaussian(p: Any, timeout: float | None) -> float | None:
    """mu when the profile (parameters symbolic, values exact) is delta_mu itself."""
    import sympy

    from .errors import AnalysisTimeout

    if not hasattr(p, "expr") or p.expr.has(sympy.Float):
        return None  # a 15-digit constant is not the exact Gaussian profile
    if not p.expr.has(sympy.erf, sympy.erfc):
        return None  # _gaussian_identity needs erfc atoms: no child process for that
    try:
        mu = _gaussian_identity_once(p.expr, p.var, timeout)
    except (AnalysisTimeout, SymgdpError, TypeError, ValueError, AttributeError):
        return None
    if mu is None:
        return None
    # Float values as the exact rationals they store: substituted as Floats, SymPy would
    # evaluate mu in 53-bit arithmetic (3/(2*1.4999999999999998) -> 1.0, below the true
    # mu), and the "certified" bracket would be that rounding
    exact = {s: v.xreplace({f: sympy.Rational(f) for f in v.atoms(sympy.Float)})
             for s, v in p.values.items()}
    mu = mu.xreplace(exact)
    if mu.free_symbols or not mu.is_positive:
        return None
    return mu


def _linear_erfc(atom: Any, var: Any) -> tuple[Any, Any] | None:
    """(alpha, beta) with the argument of ``atom`` = alpha * var + beta (exact), or None."""
    arg = atom.args[0]
    alpha = sympy.diff(arg, var)
    if var in alpha.free_symbols or alpha.free_symbols:
        return None
    beta = arg.subs(var, 0)
    if beta.free_symbols or sympy.expand(arg - alpha * var - beta) != 0:
        return None
    return alpha, beta


def _near_gaussian_form(expr: Any, var: Any) -> tuple[Any, Any] | None:
    r"""(alpha, beta), exact, when ``expr`` is :math:`\tfrac12\operatorname{erfc}(\alpha
    \varepsilon - \beta) - \tfrac12 e^{\varepsilon}\operatorname{erfc}(\alpha\varepsilon
    + \beta)` with :math:`\alpha, \beta > 0` (its Float constants read as the exact
    binary values they store); else None.  :math:`\delta_\mu` is the case
    :math:`4\alpha\beta = 1`; a Float spelling of :math:`\mu` (``eps/30.0`` stored as
    ``0.0333333333333333*eps``) misses it by a rounding."""
    e = expr.xreplace({f: sympy.Rational(f) for f in expr.atoms(sympy.Float)})
    e = e.replace(lambda u: isinstance(u, sympy.erf), lambda u: 1 - sympy.erfc(u.args[0]))
    # erfc(w) = 2 - erfc(-w): every argument increasing in var (the Phi and erf spellings)
    flip = {}
    for a in e.atoms(sympy.erfc):
        slope = sympy.diff(a.args[0], var)
        if not slope.free_symbols and slope.is_negative:
            flip[a] = 2 - sympy.erfc(sympy.expand(-a.args[0]))
    e = sympy.expand(e.xreplace(flip))
    atoms = [a for a in e.atoms(sympy.erfc) if var in a.free_symbols]
    if len(atoms) != 2:
        return None
    forms = {}
    for a in atoms:
        lin = _linear_erfc(a, var)
        if lin is None:
            return None
        forms[a] = lin
    (a1, (al1, be1)), (a2, (al2, be2)) = sorted(forms.items(), key=lambda t: bool(
        (t[1][1]).is_positive))
    if not (sympy.simplify(al1 - al2) == 0 and sympy.simplify(be1 + be2) == 0
            and al1.is_positive and be2.is_positive):
        return None
    u, v = sympy.Dummy("u"), sympy.Dummy("v")
    rest = e.xreplace({a1: u, a2: v}) - (u / 2 - sympy.exp(var) * v / 2)
    if sympy.expand(rest) != 0:
        return None
    return al1, be2


def _near_gaussian_bracket(p: Any, eps_h: float, tol: float, timeout: float | None,
                           refuse: bool = False) -> tuple[float, float, arb, arb] | None:
    r"""A proved bracket ``(lower, upper, mu, kappa)`` on the head GDP parameter of a profile
    of the form of :func:`_near_gaussian_form`, or None.

    With :math:`\mu = 2\sqrt2\,\beta` and :math:`\kappa = 4\alpha\beta`, the profile is
    :math:`A(\varepsilon) = \delta_\mu(\kappa\varepsilon) + (e^{\kappa\varepsilon} -
    e^{\varepsilon})\Phi(b(\kappa\varepsilon))` (:math:`a, b = \mp\varepsilon/\mu \pm
    \ldots` of theory §3).  :math:`A(0) = \delta_\mu(0)`, so :math:`G_A(0) = \mu` is a lower
    bound.  For the upper bound, with :math:`e^{\varepsilon}\Phi(b) = \varphi(a)\,
    \Phi(b)/\varphi(b) \le \sqrt{\pi/2}\,\varphi(a)` (Mills' ratio, :math:`b \le 0`):
    for :math:`\kappa \ge 1`, :math:`A - \delta_\mu \le \sqrt{\pi/2}\,(e^{(\kappa-1)
    \varepsilon_h} - 1)\,\varphi(a)`; for :math:`\kappa < 1`, :math:`A \le
    \delta_\mu(\kappa\varepsilon)` and :math:`A - \delta_\mu \le \sqrt{\pi/2}\,(1 -
    \kappa)\varepsilon_h\,e^{d\,a_{\max}}\varphi(a)` with :math:`d = (1-\kappa)
    \varepsilon_h/\mu`, :math:`a_{\max} = \mu/2 + \varepsilon_h/\mu \ge |a|`.  Since
    :math:`\partial_\mu\delta_\mu = \varphi(a)`, :math:`\delta_{\mu+\Delta} - \delta_\mu
    \ge \Delta\,\varphi(a)\,e^{-d_a(a_{\max} + d_a)}` with :math:`d_a = \Delta(1/2 +
    \varepsilon_h/\mu^2)`.  So :math:`A \le \delta_{\mu+\Delta}` on the head when
    :math:`\Delta` is twice the excess bound and :math:`d_a(a_{\max} + d_a) \le \log 2`.

    With ``refuse``, a profile of that form with :math:`|\kappa - 1| \le 0.01` whose bound
    is wider than ``tol`` and whose GDPT near its top needs :math:`\log\delta` to better
    than :math:`10^{-20}`
    (:math:`\varphi(\mu/2)\,\mathrm{tol}`, where :math:`\delta \approx 1`) is
    refused with a :class:`PrecisionError`: the search would run for minutes.
    """
    from ._bounded import run_bounded
    from .errors import AnalysisTimeout

    if not hasattr(p, "expr") or not p.expr.has(sympy.Float) or p.expr.free_symbols - {
            p.var} or not p.expr.has(sympy.erf, sympy.erfc):
        return None
    key = ("near", p.expr, p.var)
    if key not in _IDENTITY:
        try:
            form = run_bounded(_near_gaussian_form, p.expr, p.var, timeout=timeout)
        except (AnalysisTimeout, SymgdpError, TypeError, ValueError, AttributeError):
            return None  # not kept: a larger budget may succeed
        if len(_IDENTITY) >= _IDENTITY_MAX:
            _IDENTITY.pop(next(iter(_IDENTITY)))
        _IDENTITY[key] = form
    form = _IDENTITY[key]
    if form is None:
        return None
    from .interval import lambdify_arb

    with ctx.workprec(256):
        x = sympy.Dummy()
        alpha, beta = (lambdify_arb(v, x)(0) for v in form)
        mu = 2 * arb(2).sqrt() * beta
        kappa = 4 * alpha * beta
        h = arb(eps_h)
        amax = mu / 2 + h / mu
        # |kappa - 1| <= k; expm1(k h) e^(k h amax / mu) bounds both cases' factors
        k = arb(abs(kappa - 1).upper())
        excess = (arb.pi() / 2).sqrt() * (k * h).expm1() * (k * h * amax / mu).exp()
        gap = 2 * arb(excess.upper())
        da = gap * (arb(1) / 2 + h / (mu * mu))
        fits = bool(mu > 0 and gap.is_finite() and da * (amax + da) <= arb(2).log())
        if fits:
            lower, upper = _to_float_down(mu), _to_float_up(mu + gap)
            fits = upper - lower <= tol
        # the resolution in log delta the search needs near eps = 0: phi(mu/2) tol
        need = (-(mu * mu) / 8).exp() / (2 * arb.pi()).sqrt() * tol
        # 1 - delta_mu(0) = erfc(mu / (2 sqrt 2))
        below_one = (mu / (2 * arb(2).sqrt())).erfc() if bool(mu > 0) else arb(1)
    if fits:
        return lower, upper, mu, kappa
    # refused only where the factor is near 1 (the GDPT then stays within about
    # |kappa - 1| mu of mu over a long stretch where delta is about 1); farther from 1
    # the search resolves G (e.g. kappa = 1.1 or 2 at mu = 30)
    if refuse and bool(mu > 0) and bool(need < arb("1e-20")) and bool(k <= arb("0.01")):
        raise PrecisionError(
            f"the profile is delta_mu with mu = {mu.str(10, radius=False)} except that "
            f"eps/mu carries the factor {kappa.str(12, radius=False)}: its GDPT is flat "
            f"near mu where delta is within {float(below_one.upper()):.1e} "
            f"of 1, and bounding it to tol={tol!r} needs log delta to about "
            f"{float(need.upper()):.1e}, beyond what the search resolves (it would run for "
            "minutes); if mu was meant exactly, write it as an Integer/Rational or use "
            "mechanisms.gaussian(mu)")
    return None


def _near_gaussian_measurement(profile: Any, p: Any, near: tuple, eps_h: float,
                               tol: float, refined: bool, notes: list[str],
                               identify: bool, timeout: float | None, t0: float,
                               certify: bool | None) -> Measurement:
    """The bracket of :func:`_near_gaussian_bracket` as a Measurement (proved in ball
    arithmetic; ``certified`` says False only when float mode was asked for)."""
    lower, upper, mu, kappa = near
    notes.append(
        f"the profile is delta_mu with mu = {mu.str(17, radius=False)} up to the rounding "
        f"of its constants (eps/mu stored with the factor {kappa.str(20, radius=False)}): "
        "its GDPT is mu at eps = 0 and at most mu plus a proved excess on the head "
        "(a perturbation bound, no search)")
    return _searchless_measurement(profile, p, lower, upper, eps_h, tol, refined, notes,
                                   identify, timeout, t0, certified=certify is not False)


def _searchless_measurement(profile: Any, p: Any, lower: float, upper: float,
                            eps_h: float, tol: float, refined: bool, notes: list[str],
                            identify: bool, timeout: float | None,
                            t0: float, certified: bool = True) -> Measurement:
    """A Measurement of a proved bracket found without a search (a Gaussian profile):
    the failure probability is that of delta_upper at eps_h, which bounds the profile."""
    with ctx.workprec(128):
        lfp = log_delta_mu_upper(eps_h, upper)
    mu_tail = _mu_tail(profile, False, identify, notes, timeout)
    fp = math.nextafter(max(math.exp(lfp), float(delta_mu(eps_h, upper))), math.inf)
    return Measurement(
        lower=lower, upper=upper, eps_h=eps_h, tol=tol, covers_tail=False, mu_tail=mu_tail,
        failure_prob=fp, log_failure_prob=lfp, refined=refined, method="first-order",
        certified=certified, evaluations=0, argmax=0.0, seconds=time.perf_counter() - t0,
        certify_evaluations=0, notes=tuple(notes), cover=None, profile=p)


def _to_float_down(v: arb) -> float:
    f = float(v.lower())
    return f if arb(f) <= v.lower() else math.nextafter(f, -math.inf)


def _gaussian_measurement(profile: Any, p: Any, mu: Any, eps_h: float, tol: float,
                          refined: bool, notes: list[str], identify: bool,
                          timeout: float | None, t0: float) -> Measurement:
    """The bracket of a profile that is delta_mu itself: its GDPT is the constant mu."""
    import sympy

    from .interval import lambdify_arb

    with ctx.workprec(128):
        m = lambdify_arb(mu, sympy.Dummy())(0)  # exact numbers enter as exact balls
        lower, upper = _to_float_down(m), _to_float_up(m)
    notes.append(f"the profile is the Gaussian profile delta_mu with mu = {mu} (an exact "
                 "symbolic identity): its GDPT is constant")
    return _searchless_measurement(profile, p, lower, upper, eps_h, tol, refined, notes,
                                   identify, timeout, t0)


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
    from .firstorder import prefetch_series

    try:
        prefetch_series(p)
    except (TypeError, ValueError, AttributeError):
        return  # only a head start: _log_series prepares it on need as before


def _first_order_for(p: Any, timeout: float | None, notes: list[str]) -> Any:
    """The first-order machinery for ``p``, or ``None`` (with a note) without a ball
    evaluation of the profile and its derivative."""
    from .firstorder import FirstOrder

    own = getattr(p, "first_order", None)  # a profile with its own (e.g. exact pieces)
    if callable(own) and (fo := own(timeout=timeout)) is not None:
        return fo
    if not hasattr(p, "bound_expr"):
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


# a first-order search still open after this many seconds warns that it may be long
_WARN_AFTER_SECONDS = 15.0

# evaluations per second of the zeroth-order searches, measured on the development
# machine (a few million float64 profile values per second): for the cost warning
_EVALS_PER_SECOND = 3e6


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
            return sympy.sstr(f, full_prec=False)
    return None

def measure(
    profile: Any,
    eps_h: float = 100.0,
    tol: float = 1e-6,
    *,
    refine: bool = True,
    method: str = "auto",
    certify: bool | None = None,
    max_evaluations: int | None = None,
    seed: int = 0,
    initial_intervals: int = 64,
    identify: bool = True,
    timeout: float | None = None,
    progress: Any = None,
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
            ``None`` uses ``symgdp._bounded.DEFAULT_TIMEOUT``.
        progress: ``None``; a callable ``progress(evaluations, gap)`` called now and then
            during the search; or ``True`` for a tqdm bar on stderr.

    Returns:
        A :class:`Measurement`.

    Raises:
        DomainError: ``eps_h`` or ``tol`` out of range.
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
    notes: list[str] = []
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
    if how == "first-order" and hasattr(profile, "require_bound"):
        profile.require_bound()
        mu_exact = _recognised_gaussian(profile, timeout)
        if mu_exact is not None:
            # delta_mu is a privacy profile and tight: validation and refinement (which
            # returns it unchanged) are not needed
            return _gaussian_measurement(profile, profile, mu_exact, eps_h, tol,
                                         bool(refine), notes, identify, timeout, t0)
        # the bracket of a rounded delta_mu holds for the function as it is (no
        # monotonicity needed): no validation when it is measured unrefined
        near = None if refine else _near_gaussian_bracket(profile, eps_h, tol, timeout)
        if near is not None:
            return _near_gaussian_measurement(profile, profile, near, eps_h, tol, False,
                                              notes, identify, timeout, t0, certify)
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
            return _gaussian_measurement(profile, p, mu_exact, eps_h, tol, refined, notes,
                                         identify, timeout, t0)
    if how == "first-order":
        # unrefined, a bracket that fits was taken before validation; here the check
        # may refuse a hopeless search (after validation, so a non-profile is named so)
        near = _near_gaussian_bracket(p, eps_h, tol, timeout, refuse=True)
        if near is not None:
            return _near_gaussian_measurement(profile, p, near, eps_h, tol, refined, notes,
                                              identify, timeout, t0, certify)
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
    return Measurement(
        lower=lower, upper=upper, eps_h=eps_h, tol=tol, covers_tail=covers_tail,
        mu_tail=mu_tail, failure_prob=fp, log_failure_prob=lfp, refined=refined,
        method=how, certified=bool(certify), evaluations=evaluations, argmax=s.argmax,
        seconds=time.perf_counter() - t0, certify_evaluations=cert_evals,
        notes=tuple(notes), cover=cover, profile=p)
