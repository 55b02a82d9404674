"""The claims' declaration files (``<source>.yaml`` beside this module: what each source says, quoted, and the rule
that scores it; ``own.yaml`` for the project's own), read and checked once per process, and the claims a user's
figure module declares itself (``CLAIMS``)."""
from __future__ import annotations

import functools
from pathlib import Path

import yaml

from ..caveats import check_caveat
from ..claims import ClaimError, check_declaration_file, check_declared, from_plugin
from ..plumbing.registry import PluginError, plugins, report_category

# libyaml's safe loader where PyYAML was built with it: the declarations are read at every DAG build and in every
# figure job (0.03 s against 0.2 s for the pure-Python loader)
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DECLARATIONS = Path(__file__).resolve().parent  # one YAML file per source, own.yaml for the project's own claims
OWN = "own"


@functools.lru_cache(maxsize=None)
def declaration_files() -> dict[str, dict]:
    """Source key -> its declaration file (``source``, ``claims``, ``results``), checked
    (:func:`pipeline_lib.claims.check_declaration_file`, and each caveat's placeholders:
    :func:`pipeline_lib.caveats.check_caveat`); the sources in file-name order, ``own`` last."""
    paths = sorted(DECLARATIONS.glob("*.yaml"), key=lambda p: (p.stem == OWN, p.stem))
    figures = set(plugins("figure"))
    out = {}
    for path in paths:
        doc = yaml.load(path.read_text(), Loader=_YAML_LOADER)
        try:
            check_declaration_file(str(path), doc, own=path.stem == OWN, figures=figures)
        except ClaimError as exc:
            raise PluginError(str(exc)) from None
        for c in doc["claims"]:
            for text in c.get("caveats", []):
                if why := check_caveat(text, figures):
                    raise PluginError(f"{path}: claim {c['id']!r}: caveat {text[:60]!r}...: {why}")
        out[path.stem] = doc
    for key, doc in out.items():
        for c in doc["claims"]:
            if key == OWN and c["extends"] not in (*out, "none"):
                raise PluginError(f"{DECLARATIONS / 'own.yaml'}: claim {c['id']!r} extends {c['extends']!r}, which has "
                                  f"no declaration file; allowed: {', '.join(k for k in out if k != OWN)}, none")
    return out


def ledger_group(decl: dict) -> str:
    """The row of the ledger's counts a claim belongs to: a source's own statements, its authors' released
    code, or the project's own claims (by the source they extend)."""
    docs = declaration_files()
    if decl["origin"] in ("source", "authors_code"):
        title = docs[decl["source_key"]]["source"].get("short") or docs[decl["source_key"]]["source"]["title"]
        return f"{title}: " + ("the source's own statements" if decl["origin"] == "source" else
                                "its authors' released code")
    ext = decl.get("extends", "none")
    if decl["origin"] == "diagnostic":
        return "The project's own: diagnostics of the workflow"
    if ext in docs and ext != OWN:
        return f"The project's own: extending {docs[ext]['source'].get('short') or docs[ext]['source']['title']}"
    return "The project's own: across sources"


@functools.lru_cache(maxsize=None)
def declared_claims() -> dict[str, dict]:
    """Claim id -> its declaration, with ``source_key``, ``group`` (:func:`ledger_group`) and ``paper`` (its
    figure's report category) added: the declaration files' claims, then those a figure module declares itself
    (a user's own figure, :func:`pipeline_lib.claims.from_plugin`). An id declared twice is an error naming both."""
    out: dict[str, dict] = {}

    def put(decl: dict, key: str, where: str) -> None:
        if decl["id"] in out:
            raise PluginError(f"{where}: claim {decl['id']!r} is also declared for figure {out[decl['id']]['figure']!r}")
        full = {**decl, "source_key": key, "paper": report_category(decl["figure"])}
        out[decl["id"]] = {**full, "group": ledger_group(full)}

    for key, doc in declaration_files().items():
        for c in doc["claims"]:
            put(c, key, str(DECLARATIONS / f"{key}.yaml"))
    for fig, plug in plugins("figure").items():
        try:
            check_declared(f"{plug.path} (figure {fig!r})", plug.get("CLAIMS", []))
        except ClaimError as exc:
            raise PluginError(str(exc)) from None
        for c in plug.get("CLAIMS", []):
            put(from_plugin(c, fig), OWN, str(plug.path))
    return out


def figure_claims(figure: str) -> list[str]:
    """The ids of the claims a figure scores, in declaration order."""
    return [cid for cid, c in declared_claims().items() if c["figure"] == figure]
