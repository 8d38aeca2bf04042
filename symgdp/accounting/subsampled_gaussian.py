r"""The Poisson-subsampled Gaussian as a composed item, and compositions made of nothing
else answered by the DP-SGD engine.

:class:`SubsampledGaussian` is one step of :func:`symgdp.compose` with the exact dominating
pair of its relation.  :func:`engine_phases` recognises a composition whose every step is a
Gaussian or a Poisson-subsampled Gaussian -- a :class:`SubsampledGaussian`, or a
:class:`~symgdp.profile.Profile` that is exactly ``gaussian(...)`` or
``gaussian(...).subsample(q)`` (:func:`symgdp.mechanisms.subsampled_gaussian_parameters`,
which reads the expression, not the metadata alone) -- and returns its DP-SGD schedule;
:func:`engine_bracket` then answers it with :func:`symgdp.dpsgd` (the certified engine: its
adaptive tail cuts hold the fine grid that the general composition's support estimate
cannot afford after many steps).

**Why the engine's pairs hold for a subsampled Gaussian profile.**  A mechanism whose
profile is :math:`\delta_\mu` is :math:`\mu`-GDP, so by Blackwell's theorem (Blackwell 1953;
Dong, Roth & Su 2022, Thm 2.10) its pair is a post-processing of :math:`(N(0, 1), N(\mu,
1))`; Poisson subsampling commutes with post-processing (the mixture of the processed pair
is the processed mixture), so the subsampled mechanism is dominated, in each direction of
add/remove, by the subsampled Gaussian's remove pair :math:`((1-q)N(0,\sigma^2) +
qN(1,\sigma^2), N(0,\sigma^2))` and its swap, :math:`\sigma = 1/\mu`, and adaptive
composition composes dominating pairs (Zhu, Dong & Wang 2022: the dominating pairs of
Poisson subsampling under add/remove, and their composition).  That is exactly DP-SGD's
add/remove accounting.  The pair is attained by the Gaussian mechanism itself, so the
engine's floor is a floor of that mechanism (for another mechanism with the same profile it
bounds what the profile can prove, as every ``mu_floor`` of a profile does).  ``q`` and
``sigma`` are read as floats: the route is taken only when rounding them up and down gives
the same floats (else the general route answers).
"""

from __future__ import annotations

import math
from typing import Any

from symgdp.errors import DomainError
from symgdp.pld.onestep import StepPMFs

__all__ = ["NEIGHBOURING", "SubsampledGaussian", "engine_phases", "engine_bracket"]

#: the neighbouring relations :func:`symgdp.compose` accounts
NEIGHBOURING = ("add_remove", "replace_one")


class SubsampledGaussian:
    r"""The Poisson-subsampled Gaussian mechanism (rate ``q``, noise multiplier ``sigma``
    relative to the clipping norm 1 of each record's contribution) under ``neighbouring``:
    one step with the exact dominating pair of the relation
    (:func:`symgdp.training.engine.one_step_pmfs`).  ``"add_remove"``: the remove pair
    :math:`((1-q)N(0,\sigma^2) + qN(1,\sigma^2), N(0,\sigma^2))` and its swap, asymmetric;
    ``"replace_one"``: :math:`((1-q)N(0,\sigma^2) + qN(1,\sigma^2), (1-q)N(0,\sigma^2) +
    qN(-1,\sigma^2))`, symmetric (at :math:`q = 1` the Gaussian of sensitivity 2).

    Example:
        >>> SubsampledGaussian(0.5, 2.0, neighbouring="replace_one")
        SubsampledGaussian(q=0.5, sigma=2, replace_one)
    """

    def __init__(self, q: float, sigma: float, neighbouring: str = "add_remove") -> None:
        q, sigma = float(q), float(sigma)
        if not (0 < q <= 1):
            raise DomainError(f"the sampling rate must lie in (0, 1], got {q!r}")
        if not (math.isfinite(sigma) and sigma > 0):
            raise DomainError(f"sigma must be a finite number > 0, got {sigma!r}")
        if neighbouring not in NEIGHBOURING:
            raise DomainError(f"neighbouring must be one of {NEIGHBOURING}, "
                              f"got {neighbouring!r}")
        self.q, self.sigma, self.neighbouring = q, sigma, neighbouring
        self.name = f"SubsampledGaussian(q={q:g}, sigma={sigma:g}, {neighbouring})"

    def __repr__(self) -> str:
        return self.name

    def step(self, disc: float, bits: int, tail: float) -> StepPMFs:
        from symgdp.training.engine import one_step_pmfs

        st = one_step_pmfs(self.q, self.sigma, disc, tail, bits, self.neighbouring)
        if self.neighbouring == "replace_one":  # one direction: the pair is symmetric
            rem = st.directions[0]
            return StepPMFs(rem, rem, st.optimistic, 0.0, symmetric=True)
        rem, add = st.directions
        return StepPMFs(rem, add, st.optimistic, 0.0, symmetric=False)

    def kinks(self) -> tuple[float, ...]:
        return ()


def engine_phases(steps: list[tuple[Any, str, Any, Any, int]], neighbouring: str
                  ) -> list[tuple[float, float, int]] | None:
    """The DP-SGD schedule of a composition, or ``None`` when a step is not a (subsampled)
    Gaussian the engine accounts exactly, or no step is subsampled.

    ``steps``: ``(object, kind, (q, sigma) rounded down/up, the same rounded up/down,
    count)`` per composed step (``kind`` ``"subsampled_gaussian"`` or ``"profile"``).
    """
    phases: list[tuple[float, float, int]] = []
    for obj, kind, low, up, count in steps:
        if kind == "subsampled_gaussian":
            if obj.neighbouring != neighbouring:
                return None
            phases.append((obj.q, obj.sigma, count))
        elif kind == "profile" and low is not None and low == up \
                and neighbouring == "add_remove":
            phases.append((low[0], low[1], count))
        else:
            return None
    if all(q >= 1.0 for q, _, _ in phases):
        return None  # every step a plain Gaussian: the closed form answers
    return phases


class _Source:
    """The engine's certified upper profile as a composition's numeric source."""

    kind = "DP-SGD"
    certified = True
    proved_values = True

    def __init__(self, upper: Any) -> None:
        self._upper = upper

    def log_delta(self, eps: Any) -> Any:
        return self._upper.log_delta(eps)

    def __call__(self, eps: Any) -> Any:
        return self._upper(eps)

    def _mp_log(self, e: float) -> float:
        return float(self._upper.log_delta(float(e)))


class _Lower:
    """The engine's proved lower profile, as a composition's lower side."""

    def __init__(self, result: Any) -> None:
        self._result = result

    def lower_delta(self, eps: Any) -> Any:
        return self._result.delta_lower(eps)


def engine_bracket(phases: list[tuple[float, float, int]], neighbouring: str, fp: float,
                   tol: float, discretization: float | None = None
                   ) -> tuple[Any, dict[str, Any], Any, str, float]:
    """``(upper source, bracket, lower side, note, grid)`` of the schedule, from
    :func:`symgdp.dpsgd` (the pieces of a :class:`~symgdp.accounting.certified.Composition`;
    ``discretization``, when given, is the engine's grid).
    """
    from symgdp.training.dpsgd import dpsgd

    grid: dict[str, Any] = {} if discretization is None else {
        "value_discretization_interval": float(discretization)}
    r = dpsgd(schedule=phases, neighbouring=neighbouring,  # type: ignore[arg-type]
              failure_prob=fp, tol=tol, **grid)
    bracket = {"mu_upper": r.mu_upper, "mu_lower": r.surrogate_lower,
               "mu_floor": r.mu_floor, "eps_h": r.eps_h, "failure_prob": r.failure_prob,
               "measurement": r.measurement}
    shown = ", ".join(f"({q:g}, {s:g}, {t})" for q, s, t in phases)
    note = (f"every step a Gaussian or a Poisson-subsampled Gaussian: answered by the DP-SGD "
            f"engine (symgdp.dpsgd(schedule=[{shown}]), {neighbouring}, grid "
            f"{r.discretization:g}), its pairs dominating every mechanism with these "
            "profiles (module symgdp.accounting.subsampled_gaussian)")
    return _Source(r.profile), bracket, _Lower(r), note, r.discretization
