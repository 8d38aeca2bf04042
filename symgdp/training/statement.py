r"""A privacy statement for DP-SGD that a paper or a model card can cite: the certified
:math:`(\varepsilon, \delta)` and :math:`\mu` under each sampling assumption, each line
naming its assumption and its neighbouring relation (:meth:`DPSGDResult.statement
<symgdp.training.dpsgd.DPSGDResult.statement>`, ``symgdp dpsgd --statement``).

Given the data set size :math:`n`, the batch size :math:`b`, the noise multiplier and the
epochs :math:`E` (or the steps :math:`T`; :math:`T = E\lceil n/b\rceil`), the statement
lists, as tensorflow/privacy's privacy statement does, the same training run under

* Poisson sampling with :math:`q = b/n` (the assumption of most accountants; also
  under replace-one, beside the fixed-size batches, when the run is add/remove);
* fixed-size batches drawn without replacement (replace-one: the relation it is analysed
  under);
* shuffled epochs, each record once per epoch (no tight analysis exists: the proved
  bound without amplification, and the certified max-statistic
  lower bound of Chua, Ghazi, Kamath et al. 2024 as the floor,
  :mod:`symgdp.training.allocation_floor`);
* random allocation, each record in exactly one of the :math:`\lceil n/b\rceil` steps of
  an epoch (the same floor; under add/remove the amplified upper bound of
  :mod:`symgdp.training.allocation_upper`).

Every number is certified (a proved upper bound; where a bracket is shown it contains the
mechanism's own :math:`\mu`); a scheme whose relation has no analysis says so on its line.

For a user-level run (``examples_per_user=k > 1``: each user contributes :math:`k`
examples, add/remove of one *user*, :mod:`symgdp.training.userlevel`) the statement
begins with the user-level Poisson line, then states the same run at record level as
above, and ends with a line saying that the other sampling assumptions are not analysed at
user level here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PrivacyStatement", "build_statement"]

_REL = {"add_remove": "add/remove one record", "replace_one": "replace one record"}


@dataclass(frozen=True)
class PrivacyStatement:
    """The lines of a privacy statement and the results behind them (by scheme name)."""

    lines: tuple[str, ...]
    results: dict[str, Any] = field(default_factory=dict, compare=False)

    def __str__(self) -> str:
        return "\n".join(self.lines)


def _mu_text(r: Any) -> str:
    from symgdp.numerics.decimals import format_bracket, format_upper

    if not math.isnan(r.mu_floor):
        lo, up = format_bracket(r.mu_floor, r.mu_upper)
        if r.tight:
            return f"mu in [{lo}, {up}]"
        # shuffle, random allocation: the bound without amplification (or the amplified
        # one, allocation_upper) and Chua et al.'s certified max-statistic floor
        # (symgdp.training.allocation_floor)
        upper = ("upper amplified (the pair of one epoch, certified)"
                 if getattr(r, "amplification", "") else "upper without amplification")
        return (f"mu in [{lo}, {up}] (a proved bracket, not tight: {upper}, floor the "
                "max-statistic lower bound of Chua et al. 2024)")
    return f"mu <= {format_upper(r.mu_upper)} (a proved bound, not tight)"


def line_for(r: Any) -> str:
    """One line: the assumption, the relation, the certified (eps, delta) and mu."""
    from symgdp.numerics.decimals import format_upper

    p = r.sampling_params or {}
    k = getattr(r, "examples_per_user", 1)
    if k != 1:
        rate = (f"q = {r.q:.6g}" if len(r.schedule) == 1 else "the phases' q: "
                + ", ".join(f"(q {q:g}, sigma {s:g}, {t} steps)" for q, s, t in r.schedule))
        return (f"Poisson sampling at user level, {k} examples per user (each sampled "
                f"independently with {rate}, clipped to norm 1), T = {r.steps} steps, "
                + (f"sigma = {r.sigma:g}, " if len(r.schedule) == 1 else "")
                + f"neighbouring: add/remove one user (all {k} examples): "
                f"({format_upper(r.eps_certified, 4)}, {r.delta:g})-DP; {_mu_text(r)} "
                f"(mu-GDP for eps in [0, {format_upper(r.eps_h, 4)}], failure probability "
                f"{format_upper(r.failure_prob, 2)})")
    if r.sampling == "poisson" and len(r.schedule) != 1:  # phases: no single q, sigma
        phases = ", ".join(f"(q {q:g}, sigma {s:g}, {t} steps)" for q, s, t in r.schedule)
        return (f"Poisson sampling in phases {phases}, T = {r.steps} steps, neighbouring: "
                f"{_REL[r.neighbouring]}: ({format_upper(r.eps_certified, 4)}, "
                f"{r.delta:g})-DP; {_mu_text(r)} (mu-GDP for eps in "
                f"[0, {format_upper(r.eps_h, 4)}], failure probability "
                f"{format_upper(r.failure_prob, 2)})")
    if r.sampling == "poisson":
        what = f"Poisson sampling, q = {r.q:.6g}, T = {r.steps} steps"
    elif r.sampling == "without_replacement":
        what = (f"fixed-size batches of {p.get('batch_size')} of {p.get('dataset_size')} "
                f"drawn without replacement, T = {r.steps} steps")
    elif r.sampling == "shuffle":
        what = (f"shuffled epochs (batches of {p.get('batch_size')} of "
                f"{p.get('dataset_size')}), {p.get('epochs')} epochs, each record once per "
                "epoch, no amplification")
    elif r.sampling == "random_allocation":
        what = (f"random allocation, each record in one of {p.get('steps')} steps per "
                f"epoch, {p.get('epochs', 1)} epochs, "
                + ("amplified" if getattr(r, "amplification", "") else "no amplification"))
    else:
        what = (f"Poisson sampling (q = {r.q:.6g}) truncated to {p.get('max_batch_size')} "
                f"records, T = {r.steps} steps")
    return (f"{what}, sigma = {r.sigma:g}, neighbouring: {_REL[r.neighbouring]}: "
            f"({format_upper(r.eps_certified, 4)}, {r.delta:g})-DP; {_mu_text(r)} "
            f"(mu-GDP for eps in [0, {format_upper(r.eps_h, 4)}], failure probability "
            f"{format_upper(r.failure_prob, 2)})")


def build_statement(run: Callable[..., Any], r: Any) -> PrivacyStatement:
    """The statement for the run of the result ``r``: its own line, and when the data set
    and batch sizes are known the other sampling assumptions (``run`` is
    :func:`symgdp.dpsgd`, with ``r``'s delta, failure probability, grid)."""
    p = dict(r.sampling_params or {})
    n, b = p.get("dataset_size"), p.get("batch_size")
    auto = getattr(r, "grid_rule", "given") != "given"  # each run chooses its own grid
    opts = dict(delta=r.delta, failure_prob=min(max(r.failure_prob, 1e-10), 0.5),
                value_discretization_interval=None if auto else r.discretization,
                tol=None if auto else getattr(r.measurement, "tol", 1e-4), rdp_only=False)
    k = getattr(r, "examples_per_user", 1)
    if k != 1:  # the user-level line, then the same run at record level
        if n is not None and b is not None:
            rec = run(sampling="poisson", dataset_size=n, batch_size=b, sigma=r.sigma,
                      steps=r.steps, neighbouring="add_remove", **opts)
        else:
            rec = run(schedule=list(r.schedule), neighbouring="add_remove", **opts)
        base = build_statement(run, rec)
        return PrivacyStatement(
            (line_for(r), *base.lines,
             f"user level ({k} examples per user) under fixed-size batches, shuffled epochs "
             "or random allocation: not analysed here; not stated"),
            {"poisson_user": r, **base.results})
    if r.sampling not in ("poisson", "without_replacement", "shuffle") or n is None \
            or b is None or r.sampling == "poisson" and len(r.schedule) != 1:
        return PrivacyStatement((line_for(r),
                                 "(give dataset_size and batch_size for the statement "
                                 "under the other sampling assumptions)"),
                                {r.sampling: r})
    per = math.ceil(n / b)
    epochs = p.get("epochs")
    steps = r.steps
    if epochs is None:
        epochs = steps / per
    rel = r.neighbouring
    results: dict[str, Any] = {r.sampling: r}

    def get(name: str, **kw: Any) -> Any:
        if name not in results:
            results[name] = run(sampling=name, **kw, **opts)
        return results[name]

    lines = []
    lines.append(line_for(get("poisson", dataset_size=n, batch_size=b, sigma=r.sigma,
                              steps=steps, neighbouring=rel)))
    if rel == "add_remove":  # beside fixed-size batches: Poisson under their relation
        results["poisson_replace_one"] = run(sampling="poisson", dataset_size=n,
                                             batch_size=b, sigma=r.sigma, steps=steps,
                                             neighbouring="replace_one", **opts)
        lines.append(line_for(results["poisson_replace_one"]))
    lines.append(line_for(get("without_replacement", dataset_size=n, batch_size=b,
                              sigma=r.sigma, steps=steps, neighbouring="replace_one"))
                 + ("" if rel == "replace_one" else
                    " [no analysis of fixed-size batches under add/remove: replace-one]"))
    if float(epochs).is_integer():
        e = int(epochs)
        lines.append(line_for(get("shuffle", dataset_size=n, batch_size=b, sigma=r.sigma,
                                  epochs=e, neighbouring=rel)))
        lines.append(line_for(get("random_allocation", sigma=r.sigma, steps=per, epochs=e,
                                  neighbouring=rel)))
    else:
        lines.append(f"shuffled epochs and random allocation: T = {steps} is not a whole "
                     f"number of epochs of {per} steps; not stated")
    return PrivacyStatement(tuple(lines), results)
