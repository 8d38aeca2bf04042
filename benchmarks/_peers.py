r"""The peer accountants of ``bench_compose.py``, run in their OWN virtual environment.

Peers are never dependencies of symgdp: they are installed apart, e.g.::

    python -m venv /tmp/peers && /tmp/peers/bin/pip install prv-accountant autodp

and ``bench_compose.py --peers /tmp/peers/bin/python`` runs this file with that
interpreter (it imports neither symgdp nor anything of the repository).  One task name on
the command line; one JSON object on stdout: per peer, its answer and wall time, or the
error it raised.

Tasks:

* ``laplace200`` -- ε at δ = 1e-6 of 200-fold Laplace(ε₀ = 0.2);
* ``mixed`` -- ε at δ = 1e-6 of Gaussian(μ = 0.3) x10, Laplace(0.1) x20, randomized
  response(0.2) x30, Gaussian(μ = 1) x5;
* ``dpsgd`` -- ε at δ = 1e-5 of DP-SGD (q, σ, T) = (0.01, 1, 1000);
* ``schedule`` -- ε at δ = 1e-5 of the 3-phase DP-SGD schedule of ``bench_compose.py``;
* ``calibrate EPS`` -- the noise multiplier for (q, T) = (0.01, 1000) at (EPS, 1e-5).
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable
from typing import Any


def _timed(fn: Callable[[], Any]) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        value = fn()
    except Exception as exc:  # a peer's failure is a result, not a crash of the run
        return {"error": f"{type(exc).__name__}: {exc}"[:200],
                "seconds": time.perf_counter() - t0}
    return {"value": value, "seconds": time.perf_counter() - t0}


def _prv(prvs: list[Any], counts: list[int], delta: float) -> list[float]:
    from prv_accountant import PRVAccountant

    acc = PRVAccountant(prvs=prvs, max_self_compositions=counts, eps_error=1e-2,
                        delta_error=delta / 1000)
    return [float(x) for x in acc.compute_epsilon(delta=delta, num_self_compositions=counts)]


def laplace200() -> dict[str, Any]:
    from autodp.mechanism_zoo import LaplaceMechanism
    from autodp.transformer_zoo import Composition
    from prv_accountant import LaplaceMechanism as PrvLaplace

    return {
        "prv_accountant": _timed(lambda: _prv([PrvLaplace(0.2)], [200], 1e-6)),
        "autodp": _timed(lambda: float(
            Composition()([LaplaceMechanism(b=5.0)], [200]).get_approxDP(1e-6))),
    }


def mixed() -> dict[str, Any]:
    from autodp.mechanism_zoo import GaussianMechanism, LaplaceMechanism, RandresponseMechanism
    from autodp.transformer_zoo import Composition
    from prv_accountant import GaussianMechanism as G
    from prv_accountant import LaplaceMechanism as L
    from prv_accountant import PureDPMechanism as RR

    p = math.exp(0.2) / (1 + math.exp(0.2))  # randomized response with eps0 = 0.2

    def auto() -> float:
        mechs = [GaussianMechanism(sigma=1 / 0.3), LaplaceMechanism(b=10.0),
                 RandresponseMechanism(p=p), GaussianMechanism(sigma=1.0, name="G1")]
        return float(Composition()(mechs, [10, 20, 30, 5]).get_approxDP(1e-6))

    return {
        "prv_accountant": _timed(lambda: _prv([G(1 / 0.3), L(0.1), RR(0.2), G(1.0)],
                                              [10, 20, 30, 5], 1e-6)),
        "autodp": _timed(auto),
    }


def dpsgd() -> dict[str, Any]:
    from autodp.mechanism_zoo import NoisySGD_Mechanism
    from prv_accountant import PoissonSubsampledGaussianMechanism as S

    return {
        "prv_accountant": _timed(lambda: _prv([S(0.01, 1.0)], [1000], 1e-5)),
        "autodp": _timed(lambda: float(
            NoisySGD_Mechanism(0.01, 1.0, 1000).get_approxDP(1e-5))),
    }


SCHEDULE = [(0.005, 1.0, 200), (0.01, 1.0, 600), (0.02, 1.5, 200)]  # bench_compose's


def schedule() -> dict[str, Any]:
    from autodp.mechanism_zoo import NoisySGD_Mechanism
    from autodp.transformer_zoo import Composition
    from prv_accountant import PoissonSubsampledGaussianMechanism as S

    def auto() -> float:
        mechs = [NoisySGD_Mechanism(q, s, t, name=f"phase{i}")
                 for i, (q, s, t) in enumerate(SCHEDULE)]
        return float(Composition()(mechs, [1] * len(mechs)).get_approxDP(1e-5))

    return {
        "prv_accountant": _timed(lambda: _prv([S(q, s) for q, s, _ in SCHEDULE],
                                              [t for _, _, t in SCHEDULE], 1e-5)),
        "autodp": _timed(auto),
    }


def calibrate(eps: float) -> dict[str, Any]:
    from prv_accountant.dpsgd import find_noise_multiplier

    return {"prv_accountant": _timed(lambda: float(find_noise_multiplier(
        0.01, 1000, eps, 1e-5, eps_error=0.01)))}


def main() -> int:
    task = sys.argv[1]
    if task == "calibrate":
        out = calibrate(float(sys.argv[2]))
    else:
        out = {"laplace200": laplace200, "mixed": mixed, "dpsgd": dpsgd,
               "schedule": schedule}[task]()
    import importlib.metadata as md

    out["versions"] = {n: md.version(n) for n in ("prv-accountant", "autodp")}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
