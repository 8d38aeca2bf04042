"""Helpers shared by the parser tests (test_parsing.py, test_fuzz.py); not a test file.

The tests import it as ``parsing_helpers`` (pytest puts ``tests/`` on ``sys.path``, the
folder having no ``__init__.py``).
"""

from __future__ import annotations

import sys
import types


def is_dynamic_code(source: object) -> bool:
    """Source text, or code compiled from text rather than loaded from a module file.

    Importing a module (SymPy imports some lazily) runs ``exec`` on the module's code
    object; that is not user input and is not counted.  ``source`` is the first argument
    of the eval/exec call being inspected, made from the spy two frames down: call this
    directly from the wrapper that replaces ``eval``/``exec``, so that frame 2 is the
    caller of ``eval``/``exec``.
    """
    if not (isinstance(source, (str, bytes)) or (
            isinstance(source, types.CodeType) and source.co_filename.startswith("<"))):
        return False
    # SymPy compiles its polynomial monomial arithmetic from its own templates
    # ("def monomial_mul(A, B): ..."), and some of its modules, imported lazily, sympify
    # constant strings while they load; neither ever contains user text.
    #
    # SymPy's nsimplify (reached from its own zero test, Expr.equals, while it evaluates a
    # comparison) sympifies the string mpmath.identify formats from a number, such as
    # "(5**(138/833))/(2**(110/833))": digits SymPy made, never user text; the parser
    # under test never calls nsimplify itself.
    frame = sys._getframe(2)
    if frame.f_code.co_filename.replace("\\", "/").endswith("sympy/polys/monomials.py"):
        return False
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith("<frozen importlib"):
            return False
        if code.co_name == "nsimplify" and code.co_filename.replace("\\", "/").endswith(
                "sympy/simplify/simplify.py"):
            return False
        frame = frame.f_back
    return True
