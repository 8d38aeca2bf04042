"""The least noise multiplier proved to meet a privacy target for DP-SGD (Poisson
sampling): :func:`symgdp.dpsgd_sigma`, a monotone search over certified
:func:`symgdp.dpsgd` runs."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from symgdp.contracts import Neighbouring
from symgdp.errors import DomainError
from symgdp.training.dpsgd import _RELATION_TEXT, DPSGDResult, dpsgd
from symgdp.training.engine import check_neighbouring, check_phase

__all__ = ["dpsgd_sigma", "SigmaResult"]


# -- calibration: the least noise that meets a target --------------------------------------
@dataclass(frozen=True)
class SigmaResult:
    r"""The smallest noise multiplier proved to meet a target, with the proof that
    slightly less noise does not.

    Attributes:
        value: a noise multiplier whose certified bound meets the target
            (``bound_at_value``: the certified ``mu_upper``, or ``eps_certified`` at the
            target's delta).
        sigma_below: a noise multiplier proved to miss the target (``floor_below``: the
            proven ``mu_floor`` above ``target_mu``, or the proven lower bound on
            :math:`\delta(\varepsilon)` above the target's delta); as the true
            :math:`\mu` only grows when the noise falls (less noise is a
            post-processing-free worsening), every :math:`\sigma \le` ``sigma_below``
            misses it.  ``within_rel``: ``sigma_below >= value * (1 - rel)``, so the
            smallest valid :math:`\sigma` lies in ``(sigma_below, value]``.
        q, steps, target_mu, target, failure_prob, neighbouring, rel: the question.
        result: the :class:`DPSGDResult` at ``value``.
        evaluations: certified DP-SGD runs made; seconds: wall time.
        examples_per_user: ``k`` (1: record level; else the target is user-level).
    """

    value: float
    sigma_below: float
    bound_at_value: float
    floor_below: float
    within_rel: bool
    q: float
    steps: int
    target_mu: float | None
    target: tuple[float, float] | None
    failure_prob: float
    neighbouring: Neighbouring
    rel: float
    result: Any = field(default=None, compare=False, repr=False)
    evaluations: int = 0
    seconds: float = field(default=math.nan, compare=False)
    examples_per_user: int = 1

    def __float__(self) -> float:
        """The noise multiplier proved to meet the target (``value``)."""
        return float(self.value)

    def __str__(self) -> str:
        from symgdp.numerics.decimals import format_lower, format_upper

        what = (f"mu <= {self.target_mu:g}" if self.target is None  # exactly one is set
                else f"({self.target[0]:g}, {self.target[1]:g})-DP")
        who = (_RELATION_TEXT[self.neighbouring] if self.examples_per_user == 1 else
               f"add/remove one user ({self.examples_per_user} examples per user)")
        return (f"sigma = {format_upper(self.value)} meets {what} for DP-SGD q={self.q:g}, "
                f"T={self.steps} (neighbouring: {who}); "
                f"sigma <= {format_lower(self.sigma_below)} is proved to miss it")


def _sigma_guess(q: float, steps: int, mu: float) -> float:
    """The sigma whose CLT approximation is mu (below the needed sigma, usually)."""
    return 1.0 / math.sqrt(math.log1p(mu * mu / (q * q * steps)))


def dpsgd_sigma(q: float, steps: int, target_mu: float | None = None, *,
                target: tuple[float, float] | None = None, failure_prob: float = 1e-10,
                neighbouring: Neighbouring = "add_remove", rel: float = 1e-3,
                value_discretization_interval: float = 1e-4,
                coarse_discretization: float = 1e-3, tol: float = 1e-4,
                max_evaluations: int = 40, examples_per_user: int = 1) -> SigmaResult:
    r"""The smallest noise multiplier proved to meet a privacy target for DP-SGD.

    ``target_mu``: the certified ``mu_upper`` (head ending at ``failure_prob``) is at most
    it; ``target=(eps, delta)``: the certified :math:`\varepsilon` at ``delta`` is at most
    ``eps``.  A monotone search in :math:`\sigma` (coarse certified grids first, then the
    fine one), stopped when the :math:`\sigma` proved to meet the target and the
    :math:`\sigma` proved to miss it are within ``rel``.  The returned ``value`` always
    carries its own certified bound (never a :math:`\sigma` whose bound misses the
    target).  With ``examples_per_user=k`` the target is user-level (add/remove one user
    and their ``k`` examples: :func:`symgdp.dpsgd`'s mixture-of-Gaussians pair).

    Example:
        >>> s = dpsgd_sigma(0.1, 20, target_mu=1.0, rel=1e-2,
        ...                 value_discretization_interval=1e-3)
        >>> s.result.mu_upper <= 1.0 and s.within_rel and s.sigma_below < s.value
        True
    """
    from symgdp.training.userlevel import check_examples_per_user

    t0 = time.perf_counter()
    q, _, steps = check_phase(q, 1.0, steps)
    rel_name = check_neighbouring(neighbouring)
    k = check_examples_per_user(examples_per_user)
    if (target_mu is None) == (target is None):
        raise DomainError("give exactly one of target_mu= or target=(eps, delta)")
    rr = float(rel)
    if not (0 < rr < 0.5):
        raise DomainError(f"rel must lie in (0, 0.5), got {rel!r}")
    fp = float(failure_prob)
    if not (0 < fp < 1):
        raise DomainError(f"failure_prob must lie in (0, 1), got {failure_prob!r}")
    if target_mu is not None:
        tm = float(target_mu)
        if not (math.isfinite(tm) and tm > 0):
            raise DomainError(f"target_mu must be a finite number > 0, got {target_mu!r}")
        te, td = math.nan, 1e-5
        guess = k * _sigma_guess(q, steps, tm)
    else:
        if target is None or isinstance(target, (str, bytes)) or not hasattr(target, "__len__") \
                or len(target) != 2:
            raise DomainError(f"target must be a pair (eps, delta), got {target!r}")
        te, td = float(target[0]), float(target[1])
        if not (math.isfinite(te) and te > 0):
            raise DomainError(f"the target epsilon must be a finite number > 0, got "
                              f"{target[0]!r}")
        if not (0 < td < 1):
            raise DomainError(f"the target delta must lie in (0, 1), got {target[1]!r}")
        fp = min(fp, td / 10.0)
        tm = math.nan
        guess = k * _sigma_guess(q, steps, max(te / 4.0, 0.05))
    runs = [0]

    def run(sigma: float, disc: float, tol_: float) -> DPSGDResult:
        runs[0] += 1
        if runs[0] > max_evaluations:
            raise DomainError(f"no calibration within max_evaluations={max_evaluations}")
        return dpsgd(q, sigma, steps, neighbouring=rel_name, failure_prob=fp, delta=td,
                     tol=tol_, value_discretization_interval=disc, rdp_only=False,
                     examples_per_user=k)

    def score(r: DPSGDResult) -> float:
        return r.mu_upper if target_mu is not None else r.eps_certified

    def verdict(r: DPSGDResult) -> int:
        """+1: proved to meet; -1: proved to miss; 0: neither."""
        if target_mu is not None:
            return 1 if r.mu_upper <= tm else (-1 if r.mu_floor > tm else 0)
        if r.eps_certified <= te:
            return 1
        return -1 if float(r.delta_lower(te)) > td else 0

    goal = tm if target_mu is not None else te
    lo: tuple[float, DPSGDResult] | None = None
    hi: tuple[float, DPSGDResult] | None = None
    pts: list[tuple[float, float]] = []  # (log sigma, log score) for the slope

    def record(s: float, r: DPSGDResult) -> int:
        nonlocal lo, hi
        v = verdict(r)
        if score(r) > 0 and math.isfinite(score(r)):
            pts.append((math.log(s), math.log(score(r))))
        if v > 0 and (hi is None or s < hi[0] or (
                s == hi[0] and r.discretization < hi[1].discretization)):
            hi = (s, r)
        if v < 0 and (lo is None or s > lo[0]):
            lo = (s, r)
        return v

    cd = max(float(coarse_discretization), float(value_discretization_interval))
    fine = float(value_discretization_interval)

    def slope_of(points: list[tuple[float, float]]) -> float:
        """d log score / d log sigma from the two latest distinct points (-1.5 else)."""
        for i in range(len(points) - 1, 0, -1):
            (x1, y1), (x2, y2) = points[i], points[i - 1]
            if abs(x1 - x2) > 1e-9:
                sl = (y1 - y2) / (x1 - x2)
                return sl if sl < -1e-3 else -1.5
        return -1.5

    def predict(points: list[tuple[float, float]], slope: float) -> float:
        x, y = points[-1]
        return math.exp(x + (math.log(goal) - y) / slope)

    # coarse stage: secant steps in log sigma on the coarse certified bound
    s = guess
    for _ in range(8):
        record(s, run(s, cd, 1e-3))
        nxt = predict(pts, slope_of(pts))
        nxt = min(max(nxt, s / 4), s * 4)
        if abs(math.log(nxt / s)) < 2e-3:
            break
        s = nxt
    coarse_slope = slope_of(pts)
    # proofs on both sides, still on the coarse grid; each try moves further out (a
    # sigma that neither meets nor provably misses the target must not be retried)
    while hi is None:
        s = max(s, lo[0] if lo is not None else s) * 1.1
        record(s, run(s, cd, 1e-3))
    s = hi[0]
    while lo is None:
        s = s / 1.1
        record(s, run(s, cd, 1e-3))
    # fine stage: predicted from the fine bound with the coarse slope; then the proof that
    # a sigma just below misses
    first, unsure = True, 0
    while lo[0] < hi[0] * (1 - rr) and unsure < 2:
        if first:  # the coarse bound is a little above the fine one: start just below
            cand, first = predict(pts, coarse_slope) * (1 - rr / 2), False
        else:
            star = predict(pts, coarse_slope)
            if hi[1].discretization == fine and hi[0] <= star * (1 + rr / 2):
                cand = hi[0] * (1 - rr)       # try to prove the miss right below
            else:
                cand = star * (1 + rr / 4)    # try to prove a meet right above
        if not (lo[0] < cand < hi[0]):
            cand = max(hi[0] * (1 - rr), math.sqrt(lo[0] * hi[0]))
        unsure = unsure + 1 if record(cand, run(cand, fine, tol)) == 0 else 0
    if hi[1].discretization != fine:  # the value's bound on the requested grid
        record(hi[0], run(hi[0], fine, tol))
    floor_below = (lo[1].mu_floor if target_mu is not None
                   else float(lo[1].delta_lower(te)))
    return SigmaResult(
        value=hi[0], sigma_below=lo[0], bound_at_value=score(hi[1]), floor_below=floor_below,
        within_rel=lo[0] >= hi[0] * (1 - rr), q=q, steps=steps,
        target_mu=tm if target_mu is not None else None,
        target=(te, td) if target_mu is None else None, failure_prob=fp,
        neighbouring=rel_name, rel=rr, result=hi[1], evaluations=runs[0],
        seconds=time.perf_counter() - t0, examples_per_user=k)
