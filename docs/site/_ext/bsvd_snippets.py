"""Code snippets on the site: which run in CI, and the list of them all.

A fenced block of the Markdown may carry one marker after its language,
which GitHub ignores and the site shows as the block's caption:

    ```sh skip=gpu
    build/bsvd run batch.npy -o out/ --devices all
    ```

Every other block in a language that scripts/docs-snippets.py runs
(python, sh, bash, c, cpp) is run by it; a block in any other language
needs a marker too (the build warns), and blocks without a language (text,
diagrams, program output) are not code. After the build the list of every
literal block of every page -- its page, line, language, marker and text,
and for literalinclude the file it shows -- is written to snippets.json in
the output folder's parent (build/docs/snippets.json).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.util import logging

logger = logging.getLogger(__name__)

# marker -> the caption the site shows
SKIP = {
    "gpu": "needs an NVIDIA GPU; CI has none",
    "torch": "needs PyTorch, which CI does not install",
    "ci": "CI runs this itself (scripts/test.sh)",
    "install": "installs software or changes the machine",
    "mpi": "needs MPI ranks on several slots or hosts",
    "fragment": "an excerpt or a signature, not a whole program",
    "slow": "takes minutes on the CI machine; CI runs it through ctest",
    "writes": "rewrites files of the repository",
}
RUN = {"python", "sh", "bash", "c", "cpp"}
TEXT = {"none", "text", ""}

_FENCE = re.compile(r"^(?P<ind>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<lang>[\w+-]+)[ \t]+skip=(?P<why>[\w-]+)[ \t]*$",
                    re.M)


# docname -> {line of the fence: marker}, from source-read to doctree-read
# (both run in the process that reads the page). The source is left as it
# is, so that line numbers stay those of the file.
_MARKERS: dict[str, dict[int, str]] = {}


def _source_read(app, docname, source):
    """Notes the line of every fence ```LANG skip=WHY."""
    found = {}
    for m in _FENCE.finditer(source[0]):
        why = m.group("why")
        line = source[0].count("\n", 0, m.start()) + 1
        if why not in SKIP:
            logger.warning("unknown snippet marker skip=%s (known: %s)", why, ", ".join(SKIP),
                           location=(docname, line))
            continue
        found[line] = why
    _MARKERS[docname] = found


def _mark(node, why, doctree):
    """The block gets the marker as its class and a caption that says why
    it is not run, as a code-block with :caption: would have."""
    node["classes"] += ["bsvd-skip", f"bsvd-skip-{why}"]
    text = f"Not run by CI: {SKIP[why]}"
    wrapper = nodes.container("", literal_block=True, classes=["literal-block-wrapper", "bsvd-skip"])
    wrapper.source, wrapper.line = node.source, node.line
    wrapper += nodes.caption(text, "", nodes.Text(text))
    doctree.set_id(wrapper)  # the caption's permalink
    node.replace_self(wrapper)
    wrapper += node


def _marker(node):
    for c in node.get("classes", []) + (node.parent.get("classes", []) if node.parent else []):
        if c.startswith("bsvd-skip-"):
            return c[len("bsvd-skip-"):]
    return None


def _indented(node, cache):
    """Whether a block of a Markdown page is an indented code block (its
    first line is not a fence), which has no language to say what it is."""
    src = node.source or ""
    if node.get("source") or not src.endswith(".md") or not node.line:  # literalinclude: a file
        return False
    if src not in cache:
        cache[src] = Path(src).read_text().splitlines()
    lines = cache[src]
    i = node.line - 1
    return 0 <= i < len(lines) and not lines[i].lstrip().startswith(("```", "~~~", ":::"))


def _doctree_read(app, doctree):
    docname = app.env.docname
    markers = _MARKERS.pop(docname, {})
    cache: dict[str, list[str]] = {}
    for node in list(doctree.findall(nodes.literal_block)):
        if "bsvd-header-doc" in node.get("classes", []):
            continue
        if node.line in markers and not node.get("source"):
            _mark(node, markers.pop(node.line), doctree)
            continue
        lang = node.get("language", "") or ""
        if lang in TEXT and _indented(node, cache):
            logger.warning("an indented code block: fence it with its language (```sh) so that "
                           "scripts/docs-snippets.py runs it, or without one if it is output",
                           location=node)
            continue
        if lang in TEXT or lang in RUN:
            continue
        logger.warning("a %s block: scripts/docs-snippets.py cannot run it; mark it "
                       "(```%s skip=fragment|gpu|...)", lang, lang, location=node)
    for line, why in markers.items():
        logger.warning("skip=%s marks no code block here", why, location=(docname, line))


def _build_finished(app, exc):
    if exc is not None or app.builder.format != "html":
        return
    env = app.env
    root = Path(app.srcdir)
    out = []
    for docname in sorted(env.found_docs):
        doctree = env.get_doctree(docname)
        docsrc = str(Path(env.doc2path(docname)).resolve())
        for node in doctree.findall(nodes.literal_block):
            lang = node.get("language", "") or ""
            src = node.get("source") or docsrc
            include = None
            if str(Path(src).resolve()) != docsrc and Path(src).exists():
                include = str(Path(src).resolve().relative_to(root.resolve()))
            out.append({
                "doc": docname,
                "file": str(Path(docsrc).relative_to(root.resolve())),
                "line": node.line,
                "language": lang,
                "skip": _marker(node),
                "header_doc": "bsvd-header-doc" in node.get("classes", []),
                "include": include,
                "text": node.astext(),
            })
    dest = Path(app.outdir).parent / "snippets.json"
    dest.write_text(json.dumps(out, indent=1))
    logger.info("bsvd-snippets: %d literal blocks listed in %s", len(out), dest)


def setup(app):
    app.connect("source-read", _source_read)
    app.connect("doctree-read", _doctree_read)
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
