"""``symgdp convert``: mu <-> (eps, delta), rounded the safe way, same error contract.

Reference: ``tests/reference.py`` (log delta_mu(eps) from Phi(a) - e^eps Phi(b) with
mpmath.erfc at 40 digits, independent of symgdp).  Every printed answer is checked to be on
the safe side of the truth -- eps and delta not below it, mu not above it, because
delta_mu(eps) decreases in eps and increases in mu (theory §3) -- and within a relative
1e-8 of it (the answer has 10 significant digits).
"""

from __future__ import annotations

import io
import json

import mpmath
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from references import ref_log_delta

from symgdp.cli.main import main

TIGHT = mpmath.mpf("1e-8")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["convert", *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def rows(*argv: str) -> list[dict]:
    code, out, err = run(*argv, "--json")
    assert code == 0 and err == "", err
    return json.loads(out)["rows"]


def mp(x) -> mpmath.mpf:
    return mpmath.mpf(x) if not isinstance(x, str) or x != "inf" else mpmath.inf


def log_of(delta_text: str) -> mpmath.mpf:
    """log delta of "1e-5" or "exp(-3.5)" (the two forms the tests pass)."""
    with mpmath.workdps(60):
        if delta_text.startswith("exp("):
            return mpmath.mpf(delta_text[4:-1])
        return mpmath.log(mpmath.mpf(delta_text))


def check_eps(mu: str, delta: str, eps) -> None:
    """eps is an upper bound of the eps with delta_mu(eps) = delta, and a tight one."""
    L = log_of(delta)
    e = mp(eps)
    assert ref_log_delta(e, mu) <= L
    if e > 0:
        assert ref_log_delta(e * (1 - TIGHT), mu) > L


def check_mu(eps: str, delta: str, mu) -> None:
    """mu is a lower bound of mu_GDP(eps, delta), and a tight one."""
    L = log_of(delta)
    m = mp(mu)
    assert m > 0 and ref_log_delta(eps, m) <= L
    assert ref_log_delta(eps, m * (1 + TIGHT)) > L


@pytest.mark.parametrize("mu", ["0.1", "1", "2.5", "30"])
@pytest.mark.parametrize("delta", ["0.3", "1e-5", "1e-12", "1e-300", "1e-500"])
def test_eps_at_delta_is_a_tight_upper_bound(mu, delta):
    (row,) = rows("--mu", mu, "--delta", delta)
    check_eps(mu, delta, row["eps"])


@pytest.mark.parametrize("eps", ["0", "0.01", "1", "7.5", "40"])
@pytest.mark.parametrize("delta", ["0.9", "1e-5", "1e-40", "1e-500"])
def test_mu_at_eps_delta_is_a_tight_lower_bound(eps, delta):
    (row,) = rows("--eps", eps, "--delta", delta)
    check_mu(eps, delta, row["mu"])


@pytest.mark.parametrize("mu,eps", [("1", "1"), ("0.5", "3"), ("1", "40"), ("1", "100"),
                                    ("4", "0"), ("0.05", "2")])
def test_delta_at_eps_is_an_upper_bound_never_zero(mu, eps):
    (row,) = rows("--mu", mu, "--eps", eps)
    ref = ref_log_delta(eps, mu)
    assert mp(row["log_delta"]) >= ref and mp(row["log_delta"]) - ref <= abs(ref) * TIGHT
    delta = row["delta"]
    assert delta != 0
    with mpmath.workdps(60):
        assert mpmath.log(mpmath.mpf(delta)) >= ref
        assert mpmath.log(mpmath.mpf(delta)) - ref <= TIGHT
    if ref < -745:  # below float64's smallest subnormal: the exact text, not 0.0
        assert isinstance(delta, str) and "e-" in delta


@settings(max_examples=40, deadline=None)
@given(mu=st.floats(1e-3, 50), log_delta=st.floats(-900, -1e-3))
@example(mu=1.0, log_delta=-0.96)  # delta just below delta_1(0) = 0.38292...: eps tiny
@example(mu=1e-3, log_delta=-1e-3)
@example(mu=50.0, log_delta=-900.0)
def test_eps_round_trip_is_safe_everywhere(mu, log_delta):
    delta = f"exp({log_delta!r})"
    (row,) = rows("--mu", repr(mu), "--delta", delta)
    check_eps(repr(mu), delta, row["eps"])


def test_edges_have_their_documented_answers():
    # delta = 0 needs eps = inf (mu > 0) and gives mu = 0; delta = 1 gives mu = inf and
    # eps = 0; mu = 0 is perfectly private; delta >= delta_mu(0) is met at eps = 0
    # (delta_1(0) = erf(1/(2 sqrt 2)) = 0.3829...)
    r = rows("--mu", "0,1", "--delta", "0,1,0.5")
    assert [(x["mu"], x["delta"], x["eps"]) for x in r] == [
        (0.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.5, 0.0),
        (1.0, 0.0, "inf"), (1.0, 1.0, 0.0), (1.0, 0.5, 0.0)]
    r = rows("--eps", "2", "--delta", "0,1")
    assert [x["mu"] for x in r] == [0.0, "inf"]
    (r,) = rows("--mu", "0", "--eps", "1")
    assert r["delta"] == 0.0 and r["log_delta"] == "-inf"


def test_lists_give_every_combination_in_order():
    r = rows("--mu", "0.5,1,2", "--eps", "1,2")
    assert [(x["mu"], x["eps"]) for x in r] == [(0.5, 1.0), (0.5, 2.0), (1.0, 1.0),
                                                (1.0, 2.0), (2.0, 1.0), (2.0, 2.0)]
    for x in r:
        assert mp(x["log_delta"]) >= ref_log_delta(x["eps"], x["mu"])


def test_expressions_and_text_output():
    # exp(-800) underflows float64; sqrt(2) is parsed safely
    code, out, err = run("--mu", "sqrt(2)", "--delta", "exp(-800)")
    assert code == 0 and err == ""
    header, row, note = out.strip().splitlines()
    assert header.split() == ["mu", "delta", "eps"]
    mu_text, delta_text, eps_text = row.split()
    assert (mu_text, delta_text) == ("sqrt(2)", "exp(-800)")
    with mpmath.workdps(60):
        e, m = mpmath.mpf(eps_text), mpmath.sqrt(2)
        assert ref_log_delta(e, m) <= -800 < ref_log_delta(e * (1 - TIGHT), m)
    assert "rounded up" in note


@pytest.mark.parametrize("argv,fragment", [
    (["--mu", "1"], "exactly two of --mu, --eps, --delta (got --mu)"),
    (["--mu", "1", "--eps", "1", "--delta", "0.1"], "exactly two"),
    ([], "got none"),
    (["--mu", "-1", "--eps", "1"], "--mu '-1': must be a finite number >= 0"),
    (["--mu", "1", "--delta", "2"], "--delta '2': must lie in [0, 1]"),
    (["--mu", "1", "--delta", "1e-5,,1e-6"], "empty entry"),
    (["--mu", "1", "--delta", "abc"], "--delta 'abc'"),
    (["--mu", "inf", "--delta", "0.1"], "--mu 'inf'"),
    (["--mu", "nan", "--delta", "0.1"], "--mu 'nan'"),
    (["--mu", "__import__('os')", "--delta", "0.1"], "__import__"),
    (["--mu", "1", "--delta", "0.1", "--bogus"], "unrecognized arguments"),
    (["--mu", "1e400", "--eps", "1"], "--mu '1e400': must be 0 or lie in [1e-8, 1e4]"),
    (["--mu", "2**-2000", "--eps", "1"], "must be 0 or lie in"),
    (["--eps", "1e9", "--delta", "0.1"], "--eps '1e9': must be 0 or lie in [1e-12, 1e8]"),
])
def test_bad_input_is_one_line_and_exit_2(argv, fragment):
    code, out, err = run(*argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("symgdp: error: ")
    assert fragment in err, err


def test_a_float64_answer_on_the_wrong_side_is_never_printed(monkeypatch):
    """If float64 erred by more than the 1e-9 widening, the 40-digit root is used instead:
    simulated by a float64 eps 1e-6 too small and a mu 1e-6 too large."""
    from symgdp.gaussian import vectorised as gaussian

    eps_gdp, mu_gdp = gaussian.eps_gdp, gaussian.mu_gdp
    monkeypatch.setattr(gaussian, "eps_gdp", lambda *a, **k: eps_gdp(*a, **k) * (1 - 1e-6))
    monkeypatch.setattr(gaussian, "mu_gdp", lambda *a, **k: mu_gdp(*a, **k) * (1 + 1e-6))
    (row,) = rows("--mu", "1.5", "--delta", "1e-7")
    check_eps("1.5", "1e-7", row["eps"])
    (row,) = rows("--eps", "3", "--delta", "1e-7")
    check_mu("3", "1e-7", row["mu"])


@pytest.mark.parametrize("mu,eps", [("1e-8", "1e-12"), ("1e-8", "1e8"), ("1e4", "1e-12"),
                                    ("1e4", "1e8"), ("50", "1e3")])
def test_corners_of_the_accepted_range(mu, eps):
    """The ends of the accepted ranges (mu in [1e-8, 1e4], eps in [1e-12, 1e8]) give valid
    answers in all three directions, also where delta is within 1e-5428685 of 1."""
    (row,) = rows("--mu", mu, "--eps", eps)
    assert mp(row["log_delta"]) >= ref_log_delta(eps, mu)
    for delta in ("1e-500", "0.999999999"):
        (row,) = rows("--mu", mu, "--delta", delta)
        if row["eps"] != 0:
            assert ref_log_delta(mp(row["eps"]), mu) <= log_of(delta)
        (row,) = rows("--eps", eps, "--delta", delta)
        assert ref_log_delta(eps, mp(row["mu"])) <= log_of(delta)
