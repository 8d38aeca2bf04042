r"""Finalising a bracket: outward rounding in float mode, and certification in balls.

Certification (:class:`_Certifier`) proves every bound of the bracket in ball arithmetic
(:mod:`symgdp.evaluation.interval`) with the profile evaluated from its SymPy expression and its
parameter values taken exactly, nudging the bracket outward where needed.

Float mode (``certify=False``): with the first-order search every leaf bound is still
re-proved in ball arithmetic, and the lower bound rests on the best point's value
recomputed at 30 digits.  Otherwise (zeroth-order search, staircase) the float bracket is
finalised by re-checking every bound it rests on with the *forward* map
:math:`\mu \mapsto \log\delta_\mu`: ``log δ_A(x) ≤ log δ_upper(y)`` on every leaf (in
float64 with a slack of ``_LOG_SLACK`` times :math:`|\log\delta|`, and in ball arithmetic
where that check fails or :math:`\delta` is within 0.001 of 1), with the float profile
values trusted to ``_PROFILE_SLACK`` where the expression has no subtraction (any
subtraction, also of a constant, sends values below 1e-100 to high precision) and spot
checked at 30 digits on the values the bracket hinges on (``_spot_check``).  Profile
values within 1e-6 of 1 are always recomputed in high precision (float64 rounds
:math:`1 - 10^{-17}` to 1).
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
from flint import arb, ctx

from symgdp.errors import PrecisionError, ProfileError, SymgdpError
from symgdp.evaluation.interval import (
    ArbUnsupported,
    delta_mu_arb,
    log_delta_mu_arb,
    profile_arb,
    prove,
)
from symgdp.gaussian.vectorised import log_delta_mu
from symgdp.measurement.result import check_time_limit
from symgdp.measurement.search import _Counted, _Search

# Relative slack on log delta_mu in the float re-check: the largest relative error of
# gaussian.log_delta_mu against 40-digit mpmath over 1500 random points spanning
# eps in [1e-6, 2000], mu in [3e-4, 100] was 3.4e-13 (at mu ~ 5e-4); ten times that.
_LOG_SLACK = 4e-12
# Above this log delta (delta > 0.999) the float check is not trusted: ball arithmetic.
_NEAR_ONE = -1e-3
# Trusted accuracy of float64 profile values: |error of log delta| <= _PROFILE_SLACK
# + _PROFILE_SLACK_LOG*|log delta| (a relative error in delta, plus one in log delta where
# the profile is evaluated in log space; the latter moves mu by only ~5e-13*mu in the tail);
# verified at 30 digits on the values the bracket hinges on (_spot_check).
_PROFILE_SLACK = 1e-13
_PROFILE_SLACK_LOG = 1e-12


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


def _float_upper(s: _Search, proved_values: bool = False) -> float:
    """Smallest outward nudge of s.upper such that log delta(x) <= log delta_upper(y) holds
    on every leaf [x, y]: in float64 with a slack where log_delta_mu is accurate, and in
    ball arithmetic where that check fails or delta_upper(y) is near 1 (there float64
    log_delta_mu loses relative accuracy in log delta).

    ``proved_values``: the leaf values are themselves proved upper bounds (a numeric
    source's ``log_delta``, e.g. a certified composition), so no float64 profile slack is
    added.  That slack (absolute 1e-13 in log delta) would otherwise dominate where delta
    is within 1e-7 of 1 and log delta_mu moves by only ~phi(mu/2) per unit of mu."""
    up = s.upper
    if math.isinf(up):
        return up
    la, b = s.leaf_la, s.leaf_b
    if not proved_values:
        # float profile values are trusted to _PROFILE_SLACK (checked where it matters)
        fin = np.isfinite(la)
        la = np.where(fin, np.minimum(la + _profile_slack(np.where(fin, la, 0.0)), 0.0), la)
    bump = 1e-13 * (1.0 + up)
    for _ in range(60):
        lm = log_delta_mu(b, up, rounding="down")  # a lower bound: la <= lm proves it
        doubt = ~((la <= lm - _slack(lm)) & (lm <= _NEAR_ONE))
        idx = np.flatnonzero(doubt)
        bad = [i for i in idx.tolist() if not _log_le_arb(float(la[i]), float(b[i]), up)]
        if not bad:
            return up
        la, b = la[bad], b[bad]
        up += bump
        bump *= 1.25
    raise PrecisionError(f"the float upper bound near {s.upper!r} could not be confirmed "
                         "in float64" + ("" if proved_values else "; use certify=True"))


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
            check_time_limit()
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


