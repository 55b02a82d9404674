"""Every quote of the three sources' declarations is the source's own words: each claim's and each result row's
``quote`` is found in the source's text (``../shared/sources/``, skipped where a checkout has none beside it).

The sources are text extracted from PDFs and slides, so the comparison forgives what extraction does and nothing
else: case, punctuation and spacing; math written as text (``theta_{2->4}`` for ``\\theta_{2\\to 4}``,
``12^4`` for ``12<sup>4</sup>``); links (``Figure [2](#page-1-0)``); and one break inside the quote where a figure
or a page interrupts the sentence (both pieces at least 12 characters). Elisions (``...``) and bracketed insertions
split a quote into pieces, each checked alone. Table rows (cells joined by `` | ``) and quotes of the authors'
code (origin ``authors_code``, whose landmark names the repository file) are not in these texts and are skipped."""
import re
import unicodedata

import pytest
import yaml

from conftest import REPO

SOURCES = REPO.parent / "shared" / "sources"
FILES = {"circuits": "circuits-paper.md", "eureka": "eureka-paper.md", "tian": "tian-talk.md"}
# LaTeX commands that a quote writes as nothing (or as punctuation, which the comparison drops)
DROPPED = "mathbb|mathbf|mathrm|mathcal|text|operatorname|leq|geq|le|ge|simeq|approx|to|rightarrow|cdot|left|right"
MIN_PIECE = 12  # characters on each side of a break


def norm(text: str) -> str:
    """Lower-case words and numbers only, with links, superscript tags and dropped LaTeX commands removed."""
    s = unicodedata.normalize("NFKC", text).lower()
    s = re.sub(r"\[([^\]]*)\]\(#[^)]*\)", r"\1", s)
    s = re.sub(r"</?su[pb]>", " ", s).replace("\\times", " x ")
    s = re.sub(rf"\\({DROPPED})(?![a-z])", " ", s)
    return " ".join(re.sub(r"[^a-z0-9]+", " ", s).split())


def found(piece: str, text: str) -> bool:
    """``piece`` is in ``text`` (both normalised), whole or broken once into two pieces of MIN_PIECE+ chars."""
    q = norm(piece)
    if q in text:
        return True
    lo, hi = 0, len(q)  # the longest prefix found (a prefix of a found prefix is found)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if q[:mid] in text else (lo, mid - 1)
    rest = q[lo:].strip()
    return lo >= MIN_PIECE and len(rest) >= MIN_PIECE and rest in text


def pieces(quote: str) -> list[str]:
    return [p for p in re.split(r"\s*(?:\.\.\.|…|\[[^\]]*\])\s*", quote) if norm(p)]


def _quoted(key: str) -> list[tuple[str, str]]:
    doc = yaml.safe_load((REPO / "pipeline_lib" / "declarations" / f"{key}.yaml").read_text())
    return [(row.get("id") or f"results: {row['landmark']}", row["quote"])
            for part in ("claims", "results") for row in doc.get(part) or []
            if row.get("quote") and " | " not in row["quote"] and row.get("origin") != "authors_code"]


@pytest.mark.skipif(not SOURCES.is_dir(), reason="no ../shared/sources beside this checkout")
@pytest.mark.parametrize("key", sorted(FILES))
def test_every_quote_is_the_sources_own_words(key):
    text = norm((SOURCES / FILES[key]).read_text())
    quoted = _quoted(key)
    assert len(quoted) > 50, key
    missing = [(where, p) for where, q in quoted for p in pieces(q) if not found(p, text)]
    assert not missing, f"quotes not found in {SOURCES / FILES[key]}: {missing}"


def test_the_comparison_forgives_extraction_and_nothing_else():
    text = norm("Figure [2](#page-1-0) illustrates how $\\theta_{2\\to 4}$ generalizes to the $12<sup>4</sup>$ data."
                " Meanwhile, the updates\n\n![](img.png)\n\nFig. 3: a caption.\n\ntend to push the right scores.")
    assert found("Figure 2 illustrates how theta_2->4 generalizes to the 12^4 data.", text)
    assert found("Meanwhile, the updates tend to push the right scores.", text)  # a figure breaks it once
    assert not found("Meanwhile, the updates tend to push the wrong scores.", text)  # a changed word
    assert not found("Figure 2 illustrates how theta_2->4 generalises to the 12^4 data.", text)  # one letter
    assert not found("the right scores. Meanwhile, the updates tend to push", text)  # broken twice
    assert pieces("first ... then [sic] last") == ["first", "then", "last"]
