"""Every quote of the three sources' declarations is the source's own words: each claim's and each result row's
``quote`` is found in the source's text (``../shared/sources/``, skipped where a checkout has none beside it).

The project's own claims that extend a source are checked against it too. The sources are text extracted from PDFs
and slides, so the comparison forgives what extraction does and nothing
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
LINK = r"\[([^\]]*)\]\(#[^)]*\)"  # a link inside the document: its text stays
NEAR = 3000  # characters between the two sides of a break at most (a figure, its caption, a page's foot)


def norm(text: str) -> str:
    """Lower-case words and numbers only, with links, HTML tags and dropped LaTeX commands removed."""
    s = unicodedata.normalize("NFKC", text).lower()
    s = re.sub(LINK, r"\1", s)
    s = re.sub(r"<[^>]*>", " ", s).replace("\\times", " x ")  # HTML tags: <sup>, <span id=...>
    s = re.sub(rf"\\({DROPPED})(?![a-z])", " ", s)
    return " ".join(re.sub(r"[^a-z0-9]+", " ", s).split())


class Source(str):
    """A source's text, normalised line by line (:func:`norm`), with where each of its lines ends."""
    ends: set[int]

    def __new__(cls, raw: str):
        lines = [n for n in (norm(line) for line in raw.splitlines()) if n]
        text = super().__new__(cls, " ".join(lines))
        text.ends, at = set(), -1
        for line in lines:
            at += len(line) + 1
            text.ends.add(at)
        return text


def found(piece: str, text: Source) -> bool:
    """``piece`` is in ``text``, whole or broken once: its first part (MIN_PIECE+ chars) ends a line of the source
    (a page or a figure cut the sentence there) and the rest (MIN_PIECE+ chars) follows within NEAR characters."""
    q = norm(piece)
    if q in text:
        return True
    for cut in range(MIN_PIECE, len(q) - MIN_PIECE + 1):  # each break point, while the first part is found
        head, rest = q[:cut].strip(), q[cut:].strip()
        if head not in text:
            return False  # nor is any longer first part
        at = text.find(head)
        while at >= 0:
            end = at + len(head)
            if end in text.ends and text.find(rest, end, end + NEAR + len(rest)) >= 0:
                return True
            at = text.find(head, at + 1)
    return False


def pieces(quote: str) -> list[str]:
    """The quote split at its elisions and bracketed insertions (a link's bracket is the source's own text)."""
    quote = re.sub(LINK, r"\1", quote)
    return [p for p in re.split(r"\s*(?:\.\.\.|…|\[[^\]]*\])\s*", quote) if norm(p)]


def _quoted(key: str) -> list[tuple[str, str]]:
    """(where, quote) of the source's own declarations and of the project's own claims that extend it."""
    read = lambda name: yaml.safe_load((REPO / "pipeline_lib" / "declarations" / f"{name}.yaml").read_text())  # noqa: E731
    doc, own = read(key), read("own")
    rows = [row for part in ("claims", "results") for row in doc.get(part) or []]
    rows += [row for row in own["claims"] if row.get("extends") == key]
    return [(row.get("id") or f"results: {row['landmark']}", row["quote"]) for row in rows
            if row.get("quote") and " | " not in row["quote"] and row.get("origin") != "authors_code"]


@pytest.mark.skipif(not SOURCES.is_dir(), reason="no ../shared/sources beside this checkout")
@pytest.mark.parametrize("key", sorted(FILES))
def test_every_quote_is_the_sources_own_words(key):
    text = Source((SOURCES / FILES[key]).read_text())
    quoted = _quoted(key)
    assert len(quoted) > 50, key
    missing = [(where, p) for where, q in quoted for p in pieces(q) if not found(p, text)]
    assert not missing, f"quotes not found in {SOURCES / FILES[key]}: {missing}"


def test_the_comparison_forgives_extraction_and_nothing_else():
    text = Source("Figure [2](#page-1-0) illustrates how $\\theta_{2\\to 4}$ generalizes to the $12<sup>4</sup>$ data."
                  " Meanwhile, the updates\n\n![](img.png)\n\nFig. 3: a caption.\n\ntend to push the right scores.")
    assert found("Figure 2 illustrates how theta_2->4 generalizes to the 12^4 data.", text)
    assert found("Meanwhile, the updates tend to push the right scores.", text)  # a figure breaks it once
    assert not found("Meanwhile, the updates tend to push the wrong scores.", text)  # a changed word
    assert not found("Figure 2 illustrates how theta_2->4 generalises to the 12^4 data.", text)  # one letter
    assert not found("the right scores. Meanwhile, the updates tend to push", text)  # broken twice
    assert not found("illustrates how theta_2->4 tend to push the right scores", text)  # joined mid-line
    assert pieces("first ... then [sic] last") == ["first", "then", "last"]
