"""A syntax tree as text that is the same on every Python version (the code hash's input,
:mod:`pipeline_lib.plumbing.codehash`)."""
from __future__ import annotations

import ast

# fields that later Python versions added to a node, which an older version's tree lacks: written only when
# they hold something (Python 3.12's type parameters of a def or class: empty unless `def f[T]()` is used)
_ADDED_FIELDS = frozenset({"type_params"})


# the fields that are required yet may hold None (``None`` as a literal): written, as 3.11 writes them
_VALUE_FIELDS = {"Constant": ("value",), "MatchSingleton": ("value",)}


def canonical_dump(node) -> str:
    """A syntax tree as text that is the same on every Python version for the same source: Python 3.11's
    ``ast.dump(node)`` (the fields in order as ``name=value``; an optional field that is None, or a missing
    one, left out; an empty list written ``[]``), except that a field later versions added (:data:`_ADDED_FIELDS`) is left out
    when empty and a JoinedStr's adjacent string constants are written as one. ``ast.dump`` itself differs:
    3.12 prints ``type_params=[]`` for every def and class, 3.13 leaves every empty list out."""
    if isinstance(node, ast.AST):
        fields = []
        values = _joined_values(node) if isinstance(node, ast.JoinedStr) else None
        for name in node._fields:
            value = values if name == "values" and values is not None else getattr(node, name, None)
            if (value is None and name not in _VALUE_FIELDS.get(type(node).__name__, ())) or (
                    name in _ADDED_FIELDS and not value):
                continue
            fields.append(f"{name}={canonical_dump(value)}")
        return f"{type(node).__name__}({', '.join(fields)})"
    if isinstance(node, list):
        return "[" + ", ".join(canonical_dump(x) for x in node) + "]"
    return repr(node)


def _joined_values(node: ast.JoinedStr) -> list:
    """An f-string's parts with adjacent string constants joined and empty ones dropped (the parsers of 3.11
    and 3.12 split the literal text of some f-strings differently)."""
    out: list = []
    for v in node.values:
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            if not v.value:
                continue
            if out and isinstance(out[-1], ast.Constant) and isinstance(out[-1].value, str):
                out[-1] = ast.Constant(out[-1].value + v.value)
                continue
            v = ast.Constant(v.value)  # no `kind`: 3.11's f-string constants have none
        out.append(v)
    return out
