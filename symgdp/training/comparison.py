r"""dp_accounting's own float64 PLD beside the certified bracket (``dpsgd(compare=True)``):
its pessimistic connect-the-dots :math:`\varepsilon(\delta)` on the same grid, with no error
bound; a comparison, never a bound."""

from __future__ import annotations

from typing import Any

__all__ = ["eps_pld"]


def eps_pld(phases: Any, disc: float, delta: float, rel: str, k: int = 1,
            weights: Any = None) -> float:
    """dp_accounting's own pessimistic PLD (FFT, float64) epsilon, for comparison (for
    ``k`` examples per user its mixture of Gaussians with binomial weights)."""
    from dp_accounting import NeighboringRelation

    from symgdp.pld.curves import pld_module

    P = pld_module()
    nr = (NeighboringRelation.ADD_OR_REMOVE_ONE if rel == "add_remove"
          else NeighboringRelation.REPLACE_ONE)
    total: Any = None  # a dp_accounting PLD (untyped); phases is never empty
    for q, s, t in phases:
        if k != 1 or weights is not None:
            from symgdp.training.userlevel import binomial_weights

            w = list(binomial_weights(k, q)) if weights is None else list(weights)
            one = P.from_mixture_gaussian_mechanism(
                s, [float(j) for j in range(k + 1)], w, value_discretization_interval=disc)
        else:
            one = P.from_gaussian_mechanism(s, sensitivity=1.0,
                                            value_discretization_interval=disc,
                                            sampling_prob=q, use_connect_dots=True,
                                            neighboring_relation=nr)
        part = one.self_compose(t) if t > 1 else one
        total = part if total is None else total.compose(part)
    return float(total.get_epsilon_for_delta(delta))
