"""Real consumers of aptitude's outputs, for tests/it to assert on (prints JSON).

    .venv-tests/bin/python tests/consumers/consumers.py gfm FILE.md
        Renders GitHub Flavored Markdown with cmarkgfm (GitHub's cmark-gfm) as GitHub does
        (GFM extensions, raw HTML kept then sanitized, `<pre lang>` code blocks) and reports
        what a reader gets: the elements, what GitHub's sanitizer would strip, the tables,
        the blockquotes and their links, whether <details> are balanced, every link and
        image, and the text outside code blocks (where GitHub would link a @mention).
    .venv-tests/bin/python tests/consumers/consumers.py junit FILE.xml
        Reads JUnit XML with junitparser and reports every case and its results.

The tools are pinned in tests/requirements.txt; scripts/test installs them.
"""

import json
import sys
from html.parser import HTMLParser

# GitHub's HTML sanitizer allowlist for rendered Markdown (the SanitizationFilter of
# github/html-pipeline, as documented there): elements, attributes on every element, and
# the few per-element ones. Written out here, not copied.
ALLOWED_ELEMENTS = set(
    "h1 h2 h3 h4 h5 h6 h7 h8 br b i strong em a pre code img tt div ins del sup sub p "
    "picture ol ul table thead tbody tfoot blockquote dl dt dd kbd q samp var hr ruby rt rp "
    "li tr td th s strike summary details caption figure figcaption abbr bdo cite dfn mark "
    "small source span time wbr input".split()
)
ALLOWED_ANY = set(
    "abbr accept accept-charset accesskey action align alt aria-describedby aria-hidden "
    "aria-label aria-labelledby axis border cellpadding cellspacing char charoff charset "
    "checked clear cols colspan color compact coords datetime dir disabled enctype for frame "
    "headers height hreflang hspace ismap label lang maxlength media method multiple name "
    "nohref noshade nowrap open progress prompt readonly rel rev role rows rowspan rules "
    "scope selected shape size span start summary tabindex target title type usemap valign "
    "value vspace width itemprop".split()
)
ALLOWED_PER_ELEMENT = {
    "a": {"href"},
    "img": {"src", "longdesc"},
    "div": {"itemscope", "itemtype"},
    "blockquote": {"cite"},
    "del": {"cite"},
    "ins": {"cite"},
    "q": {"cite"},
}


class Seen(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements = set()
        self.stripped = []
        self.details_open = 0
        self.details_close = 0
        self.depth = {"blockquote": 0, "table": 0, "summary": 0}
        self.blockquotes = []
        self.tables = []
        self.summaries = []
        self.text = []
        self.links = []
        self.images = []
        self.code_depth = 0
        self.outside_code = []

    def handle_starttag(self, tag, attrs):
        self.elements.add(tag)
        if tag not in ALLOWED_ELEMENTS:
            self.stripped.append(f"<{tag}>")
        for name, _ in attrs:
            if name not in ALLOWED_ANY and name not in ALLOWED_PER_ELEMENT.get(tag, set()):
                self.stripped.append(f"<{tag} {name}>")
        if tag == "details":
            self.details_open += 1
        if tag == "blockquote":
            self.blockquotes.append({"text": "", "links": []})
        if tag == "table":
            self.tables.append({"header": [], "rows": 0})
        if tag == "tr" and self.tables:
            self.tables[-1]["rows"] += 1
        if tag == "summary":
            self.summaries.append("")
        if tag == "a" and self.depth["blockquote"]:
            self.blockquotes[-1]["links"].append(dict(attrs).get("href"))
        if tag == "a":
            self.links.append(dict(attrs).get("href"))
        if tag == "img":
            self.images.append(dict(attrs).get("src"))
        if tag in ("pre", "code"):
            self.code_depth += 1
        if tag in self.depth:
            self.depth[tag] += 1

    def handle_endtag(self, tag):
        if tag == "details":
            self.details_close += 1
        if tag in self.depth:
            self.depth[tag] -= 1
        if tag in ("pre", "code"):
            self.code_depth -= 1

    def handle_data(self, data):
        self.text.append(data)
        if self.code_depth == 0:
            self.outside_code.append(data)
        if self.depth["blockquote"]:
            self.blockquotes[-1]["text"] += data
        if self.depth["summary"]:
            self.summaries[-1] += data


def gfm(path):
    import cmarkgfm
    from cmarkgfm.cmark import Options

    with open(path, encoding="utf-8") as f:
        markdown = f.read()
    html = cmarkgfm.github_flavored_markdown_to_html(
        markdown, options=Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_GITHUB_PRE_LANG
    )
    seen = Seen()
    seen.feed(html)
    seen.close()
    return {
        "elements": sorted(seen.elements),
        "stripped": sorted(set(seen.stripped)),
        "details": [seen.details_open, seen.details_close],
        "tables": seen.tables,
        "blockquotes": seen.blockquotes,
        "summaries": seen.summaries,
        "text": "".join(seen.text),
        "links": seen.links,
        "images": seen.images,
        "outside_code": "".join(seen.outside_code),
    }


def junit(path):
    from junitparser import JUnitXml, TestSuite

    xml = JUnitXml.fromfile(path)
    suites = [xml] if isinstance(xml, TestSuite) else list(xml)
    out = {"tests": xml.tests, "failures": xml.failures, "errors": xml.errors, "cases": []}
    for suite in suites:
        for case in suite:
            out["cases"].append(
                {
                    "suite": suite.name,
                    "name": case.name,
                    "classname": case.classname,
                    "file": case._elem.get("file"),
                    "line": case._elem.get("line"),
                    "results": [
                        {
                            "kind": type(r).__name__,
                            "message": r.message,
                            "text": r.text,
                        }
                        for r in case.result
                    ],
                }
            )
    return out


if __name__ == "__main__":
    command, path = sys.argv[1], sys.argv[2]
    print(json.dumps({"gfm": gfm, "junit": junit}[command](path)))
