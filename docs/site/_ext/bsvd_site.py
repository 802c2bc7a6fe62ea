"""The repository as a site: links, the gallery, the Python API check.

- Links. The Markdown of the repository links to files and folders by
  relative paths, so that they work on GitHub. MyST resolves links to pages
  and copies linked files; this extension resolves the rest: a link to a
  folder goes to a copy of it with a file list (_repo/<folder>/index.html),
  and a page that is not on the site to its stand-in (bsvd_doc_aliases,
  e.g. README -> the site's home page).
- The gallery: ```{bsvd-gallery} examples``` lists every entry of the
  folder -- a folder (its README.md's title and first paragraph, its
  pictures, its files) or a single program (its docstring or first
  comment) -- so that a new example appears without editing the site.
- The Python API: every name of bsvd.__all__ and of bsvd.torch's public
  functions must be documented (by autodoc), and every parameter of each
  function named in its docstring.
"""
from __future__ import annotations

import ast
import html
import inspect
import os
import posixpath
import re
import shutil
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

IMAGES = (".png", ".svg", ".jpg", ".gif")


# ---------------------------------------------------------------- links


def _repo_dir(env, refdoc, target):
    """The repository folder a relative link of refdoc names, or None."""
    path = target.split("#", 1)[0]
    if not path or "://" in path:
        return None
    _, abs_path = env.relfn2path(path, refdoc)
    p = Path(abs_path)
    if not p.is_dir():
        return None
    try:
        return p.resolve().relative_to(Path(env.srcdir).resolve()).as_posix()
    except ValueError:
        return None


class RepoLinks(SphinxPostTransform):
    default_priority = 5  # before MyST's resolver (9), which would warn

    def run(self, **kwargs):
        env = self.env
        aliases = self.config.bsvd_doc_aliases
        for node in list(self.document.findall(addnodes.pending_xref)):
            if node.get("reftype") != "myst":
                continue
            if node.get("refdomain") == "doc":
                target = node["reftarget"]
                if target not in env.all_docs and target in aliases:
                    node["reftarget"] = aliases[target]
                continue
            rel = _repo_dir(env, node.get("refdoc", env.docname), node["reftarget"])
            if rel is None:
                continue
            here = posixpath.dirname(self.app.builder.get_target_uri(node.get("refdoc", env.docname)))
            uri = posixpath.relpath(f"_repo/{rel}/index.html", here or ".")
            ref = nodes.reference("", "", internal=False, refuri=uri)
            inner = node[0].deepcopy() if len(node) else nodes.literal(rel, rel)
            if not inner.astext():
                inner = nodes.literal(rel + "/", rel + "/")
            ref += inner
            node.replace_self(ref)


def _copy_dirs(app, exc):
    """Each linked folder, copied with an index.html per level."""
    if exc is not None or app.builder.format != "html":
        return
    env = app.env
    dirs = set()
    for docname in env.found_docs:
        for node in env.get_doctree(docname).findall(addnodes.pending_xref):
            if node.get("reftype") == "myst" and node.get("refdomain") != "doc":
                rel = _repo_dir(env, node.get("refdoc", docname), node["reftarget"])
                if rel:
                    dirs.add(rel)
    root = Path(app.srcdir)
    out = Path(app.outdir) / "_repo"
    for rel in sorted(dirs):
        for here, subdirs, files in os.walk(root / rel):
            subdirs[:] = sorted(d for d in subdirs if not d.startswith((".", "__")))
            r = Path(here).relative_to(root)
            (out / r).mkdir(parents=True, exist_ok=True)
            for f in files:
                shutil.copy2(Path(here) / f, out / r / f)
            rows = "".join(f'<li><a href="{html.escape(d)}/index.html">{html.escape(d)}/</a></li>'
                           for d in subdirs)
            rows += "".join(f'<li><a href="{html.escape(f)}">{html.escape(f)}</a></li>'
                            for f in sorted(files))
            title = html.escape(r.as_posix() + "/")
            (out / r / "index.html").write_text(
                f"<!doctype html><meta charset=utf-8><title>{title}</title>"
                f"<h1>{title}</h1><p>Files of the bsvd repository, copied as they are."
                f"</p><ul>{rows}</ul>\n")


# ---------------------------------------------------------------- gallery


def _readme_summary(path: Path):
    text = path.read_text()
    title = None
    paras, cur = [], []
    in_fence = False
    for ln in text.splitlines():
        if ln.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            if cur:
                paras.append(" ".join(cur))
                cur = []
            continue
        if in_fence:
            continue
        if title is None and ln.startswith("# "):
            title = ln[2:].strip()
            continue
        if ln.startswith("#"):
            if cur:
                paras.append(" ".join(cur))
                cur = []
            continue
        if ln.strip():
            cur.append(ln.strip())
        elif cur:
            paras.append(" ".join(cur))
            cur = []
    if cur:
        paras.append(" ".join(cur))
    return title, (paras[0] if paras else "")


def _program_summary(path: Path):
    text = path.read_text(errors="replace")
    if path.suffix == ".py":
        try:
            doc = ast.get_docstring(ast.parse(text)) or ""
        except SyntaxError:
            doc = ""
    else:
        m = re.match(r"\s*(/\*(.*?)\*/|((//[^\n]*\n)+))", text, re.S)
        doc = ""
        if m:
            doc = re.sub(r"^\s*(\*|//) ?", "", m.group(2) or m.group(3), flags=re.M)
    first = doc.strip().split("\n\n")[0]
    return " ".join(first.split())


def _md_escape(s: str) -> str:
    return s.replace("<", "&lt;")


class GalleryDirective(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self):
        folder = Path(self.env.srcdir) / self.arguments[0]
        here = Path(self.env.doc2path(self.env.docname)).parent
        self.env.note_dependency(str(folder))
        md = []
        toc = []

        def rel(p: Path) -> str:
            return os.path.relpath(p, here).replace(os.sep, "/")

        for entry in sorted(folder.iterdir()):
            if entry.name.startswith((".", "_")) or entry.name in ("CMakeLists.txt", "README.md"):
                continue
            if entry.is_dir():
                readme = entry / "README.md"
                title, summary = (_readme_summary(readme) if readme.exists() else (None, ""))
                files = sorted(p for p in entry.rglob("*") if p.is_file()
                               and not any(part.startswith((".", "__", "build")) for part in p.relative_to(entry).parts))
                if not summary:
                    progs = [p for p in files if p.suffix in (".py", ".c", ".cpp", ".cu")]
                    summary = _program_summary(progs[0]) if progs else ""
                md.append(f"## {title or 'examples/' + entry.name}\n")
                if readme.exists():
                    toc.append(rel(readme)[: -len(".md")])
                    md.append(f"{_md_escape(summary)} ([more]({rel(readme)}))\n")
                elif summary:
                    md.append(_md_escape(summary) + "\n")
                for img in [p for p in files if p.suffix in IMAGES]:
                    md.append(f"![{img.stem}]({rel(img)})\n")
                listed = [p for p in files if p.suffix not in IMAGES and p.name != "README.md"]
                if listed:
                    md.append("Files: " + " · ".join(f"[`{p.relative_to(folder).as_posix()}`]({rel(p)})"
                                                     for p in listed) + "\n")
            elif entry.is_file():
                md.append(f"## {entry.name}\n")
                summary = _program_summary(entry)
                if summary:
                    md.append(_md_escape(summary) + "\n")
                md.append(f"File: [`{entry.name}`]({rel(entry)})\n")
        if toc:
            md += ["```{toctree}", ":hidden:", ""] + toc + ["```", ""]
        node = nodes.container(classes=["bsvd-gallery"])
        text = "\n".join(md)
        self.state.nested_parse(StringList(text.splitlines(), source=str(folder)), self.content_offset, node)
        return node.children


# ---------------------------------------------------------------- Python API


def _check_python(app, env):
    if not app.config.bsvd_python_modules:
        return
    import importlib

    from sphinx.ext.autodoc.mock import mock

    py = env.get_domain("py")
    objects = set(py.objects)
    for modname, names in app.config.bsvd_python_modules.items():
        try:
            with mock(app.config.autodoc_mock_imports):  # as autodoc imports it
                mod = importlib.import_module(modname)
        except ImportError as e:
            logger.warning("bsvd-python: cannot import %s: %s", modname, e)
            continue
        names = list(getattr(mod, "__all__", [])) if names == "__all__" else names
        for name in names:
            if name.startswith("__"):
                continue
            full = f"{modname}.{name}"
            if full not in objects:
                logger.warning("bsvd-python: %s is not documented", full)
                continue
            obj = getattr(mod, name)
            if inspect.isfunction(obj):
                doc = inspect.getdoc(obj) or ""
                for p in inspect.signature(obj).parameters.values():
                    if p.name in ("self",):
                        continue
                    if p.kind == p.VAR_KEYWORD and re.search(r"\boptions?\b", doc, re.I):
                        continue  # "Options as svd()": the keywords of another function
                    if not re.search(r"(?<![\w])\**%s(?![\w])" % re.escape(p.name), doc):
                        logger.warning("bsvd-python: %s: the docstring does not describe "
                                       "the parameter %s", full, p.name)


_RST_SPECIAL = re.compile(r"([\\*`|])")


def _plain_docstring(app, what, name, obj, options, lines):
    """The package's docstrings are plain text, not reStructuredText: its
    paragraphs become paragraphs (the characters reST gives a meaning
    escaped) and its indented runs -- signatures, tables, formulas -- text
    blocks shown as they are."""
    if not name.startswith("bsvd"):
        return
    out: list[str] = []
    para: list[str] = []
    block: list[str] = []

    def flush_para():
        if para:
            text = " ".join(ln.strip() for ln in para)
            text = _RST_SPECIAL.sub(r"\\\1", text)
            text = re.sub(r"(\w)_(?=\W|$)", r"\1\\_", text)  # name_ is a reference in reST
            out.extend([text, ""])
            para.clear()

    def flush_block():
        if block:
            while block and not block[-1].strip():
                block.pop()
            if any(re.search(r"\bbsvd\.\w+\(|^\s*import ", ln) for ln in block):
                # calls quoted from the docstring: code, but an excerpt
                from bsvd_snippets import SKIP

                out.extend([".. code-block:: python", "   :class: bsvd-skip bsvd-skip-fragment",
                            f"   :caption: Not run by CI: {SKIP['fragment']}", ""])
            else:
                out.extend([".. code-block:: none", ""])
            out.extend(["   " + ln for ln in block] + [""])
            block.clear()

    prev_blank = True
    for ln in lines:
        if ln.startswith((" ", "\t")) and ln.strip():
            if not block and para and not prev_blank:
                # a line with indented continuation lines ("info    int32: ...")
                block.extend(para)
                para.clear()
            elif not block:
                flush_para()
            block.append(ln)
        elif not ln.strip():
            if block:
                block.append("")
            else:
                flush_para()
        else:
            if block and not prev_blank:
                block.append(ln)  # still the same run ("info ... \n   cont.\nsweeps ...")
                prev_blank = False
                continue
            flush_block()
            para.append(ln)
        prev_blank = not ln.strip()
    flush_para()
    flush_block()
    lines[:] = out


def setup(app):
    app.connect("autodoc-process-docstring", _plain_docstring)
    app.add_config_value("bsvd_doc_aliases", {}, "env")
    app.add_config_value("bsvd_python_modules", {}, "env")
    app.add_post_transform(RepoLinks)
    app.add_directive("bsvd-gallery", GalleryDirective)
    app.connect("build-finished", _copy_dirs)
    app.connect("env-check-consistency", _check_python)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
