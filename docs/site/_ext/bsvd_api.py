"""The C and C++ API reference, read from the public headers.

The headers document every declaration in plain comments (a comment above
a declaration, or after a member on its line) and declare the solver
families through macros (BSVD_DECLARE_GESVJ(s, float, float) ...). This
extension reads them as they are -- nothing in the headers is written for
a documentation tool -- and renders each declaration through Sphinx's own C
and C++ domains, its comment beside it:

    ```{bsvd-header} include/bsvd/bsvd.h
    :match: ^bsvd_[sdcz]gesvj_
    ```

renders the entries of the header one of whose names matches the regular
expression (all entries without :match:), in the order of the header. After
the build, every entry of every header named by a directive must have been
rendered once (a warning names the ones left out), and every function the
built library exports (build/libbsvd.so, when it exists) must be documented.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)


@dataclass
class Member:
    decl: str
    doc: str = ""


@dataclass
class Entry:
    kind: str  # function, functions (a macro family), enum, struct, type, macro
    names: list[str]
    decls: list[str]  # signatures (several for a family)
    doc: str = ""
    members: list[Member] = field(default_factory=list)
    line: int = 0


# ---------------------------------------------------------------- lexing


def _comment_text(raw: str) -> str:
    """The text of a /* */ or // comment, its frame and common indent removed."""
    if raw.startswith("//"):
        lines = [re.sub(r"^\s*// ?", "", ln) for ln in raw.splitlines()]
    else:
        body = raw[2:-2]
        lines = body.splitlines()
        out = []
        for i, ln in enumerate(lines):
            s = re.sub(r"^\s*\* ?", "", ln) if re.match(r"^\s*\*(\s|$)", ln) else ln
            out.append(s if i else s.lstrip())
        lines = out
        indents = [len(ln) - len(ln.lstrip()) for ln in lines[1:] if ln.strip()]
        if indents and not raw.lstrip("/*").startswith("\n"):
            # continuation lines of a comment that starts on its first line
            # ("/* Arguments, in order\n *   strided: ...") keep their
            # indentation relative to the first line; a trailing comment's
            # continuation lines are aligned under its start instead.
            cut = min(indents)
            if all(not ln.lstrip().startswith("*") for ln in body.splitlines()[1:] if ln.strip()):
                lines = [lines[0]] + [ln[cut:] for ln in lines[1:]]
    if lines and re.match(r"-{3,} .* -{3,}$", lines[0].strip()):
        lines.pop(0)  # a section's title line: the page has its own headings
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(ln.rstrip() for ln in lines)


def _strip_comments(code: str) -> str:
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    return re.sub(r"//[^\n]*", " ", code)


def _squash(code: str) -> str:
    return re.sub(r"\s+", " ", _strip_comments(code)).strip()


class _Lines:
    """The header as statements: comments, preprocessor lines and code up to
    ';' (or a balanced brace block), each with its line number and whether a
    blank line precedes it."""

    def __init__(self, text: str):
        self.items = []  # (kind, text, line, blank_before, trailing)
        i, n, line = 0, len(text), 1
        blank = True
        last_code_line = -1
        while i < n:
            c = text[i]
            if c == "\n":
                j = i + 1
                while j < n and text[j] in " \t":
                    j += 1
                if j < n and text[j] == "\n":
                    blank = True
                line += 1
                i += 1
                continue
            if c in " \t":
                i += 1
                continue
            if text.startswith("/*", i) or text.startswith("//", i):
                if text.startswith("/*", i):
                    j = text.index("*/", i) + 2
                else:
                    j = i
                    # consecutive // lines at the same indentation are one comment
                    col = i - text.rfind("\n", 0, i) - 1
                    while True:
                        e = text.find("\n", j)
                        e = n if e < 0 else e
                        k = e + 1
                        m = re.match(r"[ \t]*//", text[k:]) if k < n else None
                        if m and len(m.group(0)) - 2 == col and last_code_line != line:
                            j = k
                            continue
                        j = e
                        break
                raw = text[i:j]
                self.items.append(("comment", raw, line, blank, last_code_line == line))
                line += raw.count("\n")
                blank = False
                i = j
                continue
            if c == "#":
                j = i
                while True:
                    e = text.find("\n", j)
                    e = n if e < 0 else e
                    if text[e - 1] == "\\":
                        j = e + 1
                        continue
                    break
                raw = text[i:e]
                self.items.append(("pre", raw, line, blank, False))
                line += raw.count("\n")
                last_code_line = line
                blank = False
                i = e
                continue
            # a block whose body is read as statements: extern "C", namespace
            m = re.match(r'(extern "C"|namespace \w*)\s*\{|\}', text[i:])
            if m:
                self.items.append(("code", m.group(0), line, blank, False))
                last_code_line = line
                blank = False
                i += m.end()
                continue
            # code: up to ';' at depth 0, or a closing '}' at depth 0 that is
            # not followed by a declarator (a function body)
            j, depth = i, 0
            while j < n:
                ch = text[j]
                if text.startswith("/*", j):
                    j = text.index("*/", j) + 2
                    continue
                if text.startswith("//", j):
                    j = text.find("\n", j)
                    continue
                if ch in "({":
                    depth += 1
                elif ch in ")}":
                    depth -= 1
                    if ch == "}" and depth == 0:
                        rest = text[j + 1:]
                        m = re.match(r"\s*;", rest)
                        if m:
                            j += 1 + m.end()
                            break
                        if not re.match(r"\s*[A-Za-z_]", rest) or re.match(r"\s*(template|inline|//|/\*)", rest):
                            j += 1
                            break
                    if ch == ")" and depth == 0 and re.match(r"[ \t]*(\n|$)", text[j + 1:]) \
                            and re.match(r"[A-Z_]+\(", text[i:]):
                        j += 1  # a macro invocation: BSVD_DECLARE_GESVJ(s, float, float)
                        break
                elif ch == ";" and depth == 0:
                    j += 1
                    break
                j += 1
            raw = text[i:j]
            self.items.append(("code", raw, line, blank, False))
            line += raw.count("\n")
            last_code_line = line
            blank = False
            i = j


# ---------------------------------------------------------------- parsing


def _members(body: str, sep: str) -> list[Member]:
    """The members of an enum (sep ',') or struct (sep ';') body with their
    comments: a comment after a member on its line documents it; a comment
    on lines of its own documents the members that follow it up to the next
    comment."""
    lex = _Lines(body)
    out: list[Member] = []
    pending = ""
    for kind, raw, _line, _blank, trailing in lex.items:
        if kind == "comment":
            if trailing and out:
                out[-1].doc = _comment_text(raw)
                pending = ""
            else:
                pending = _comment_text(raw)
            continue
        if kind != "code":
            continue
        # a code item may hold several members when sep is ','
        parts = [p for p in _strip_comments(raw).split(sep)] if sep == "," else [raw]
        for p in parts:
            d = _squash(p).rstrip(";").strip()
            if d:
                out.append(Member(d, pending))
    return out


def parse_c(text: str) -> tuple[str, list[Entry]]:
    """The leading comment of a C header and its entries."""
    lex = _Lines(text)
    intro = ""
    entries: list[Entry] = []
    macros: dict[str, tuple[list[str], str, str]] = {}  # name -> params, body, doc
    pending = ""
    pending_line = 0
    prev_kind = None
    items = lex.items
    for idx, (kind, raw, line, blank, trailing) in enumerate(items):
        if blank and kind != "comment":
            pending = "" if prev_kind != "comment" else pending
        if kind == "comment":
            t = _comment_text(raw)
            if trailing and entries:
                if entries[-1].doc:
                    entries[-1].doc += "\n" + t
                else:
                    entries[-1].doc = t
            elif not intro and not entries and idx == 0:
                intro = t
            elif re.match(r"\s*-{3,} .* -{3,}", raw.splitlines()[0][2:]):
                # a section: its text documents what follows when nothing
                # else does (Names), else it stands alone (Hyperbolic SVD)
                title = re.match(r"\s*-{3,} (.*?) -{3,}", raw.splitlines()[0][2:]).group(1)
                entries.append(Entry("section", ["section:" + title], [], t, line=line))
                pending = ""
            else:
                pending = (pending + "\n\n" + t) if (pending and prev_kind == "comment" and not blank) else t
                pending_line = line
            prev_kind = "comment"
            continue
        doc = pending if prev_kind == "comment" else ""
        if prev_kind == "comment" and not doc and entries and entries[-1].kind == "section":
            doc = entries.pop().doc
        if kind == "pre":
            m = re.match(r"#\s*define\s+(\w+)\(([^)]*)\)\s*\\?\n?(.*)", raw, re.S)
            if m and m.group(1).startswith("BSVD_DECLARE"):
                body = m.group(3).replace("\\\n", "\n")
                macros[m.group(1)] = ([p.strip() for p in m.group(2).split(",")], body, doc)
            else:
                m = re.match(r"#\s*define\s+(BSVD_\w+)\s+(.+)", raw)
                if m and not m.group(1).startswith("BSVD_BSVD_H"):
                    entries.append(Entry("macro", [m.group(1)], [f"{m.group(1)}"], doc, line=line,
                                         members=[Member(f"{m.group(1)} {m.group(2).strip()}")]))
            pending = ""
            prev_kind = kind
            continue
        code = _squash(raw)
        prev_kind = kind
        pending = ""
        if not code or code.startswith("extern \"C\"") or code == "}":
            continue
        m = re.match(r"(BSVD_DECLARE_\w+)\((.*)\)$", code)
        if m:
            params, body, mdoc = macros[m.group(1)]
            args = [a.strip() for a in m.group(2).split(",")]
            sub = dict(zip(params, args))
            expanded = re.sub(r"\s*##\s*", "\0", body)  # token pasting
            for p, a in sub.items():
                expanded = re.sub(r"\b%s\b" % p, a, expanded)
            expanded = expanded.replace("\0", "")
            decls = [_squash(d) + ";" for d in expanded.split(";") if d.strip()]
            names = [re.search(r"(\w+)\s*\(", d).group(1) for d in decls]
            fam = (m.group(1), sub.get("suffix", ""))
            # one entry per macro (and suffix); its instances join it
            prev = next((e for e in entries if getattr(e, "_family", None) == fam), None)
            if prev is None:
                e = Entry("functions", names, decls, doc or mdoc, line=line)
                e._family = fam  # type: ignore[attr-defined]
                entries.append(e)
            else:
                prev.names += names
                prev.decls += decls
                if doc and doc not in prev.doc:
                    prev.doc = (prev.doc + "\n\n" + doc).strip()
            continue
        m = re.match(r"typedef (enum|struct) (\w+ )?\{(.*)\} (\w+);$", _strip_comments(raw).replace("\n", " ").strip(), re.S)
        if code.startswith("typedef enum") or code.startswith("typedef struct") or \
                re.match(r"enum \w+ \{", code):
            body = raw[raw.index("{") + 1: raw.rindex("}")]
            is_enum = "enum" in code.split("{")[0]
            name = re.search(r"\}\s*(\w+)\s*;", raw)
            name = name.group(1) if name else re.match(r"enum (\w+)", code).group(1)
            mem = _members(body, "," if is_enum else ";")
            if not is_enum:  # "float re, im" declares two members
                split = []
                for mm in mem:
                    mt = re.match(r"(.*?)(\w+)\s*,\s*(.*)$", mm.decl)
                    if mt and "(" not in mm.decl:
                        base = re.match(r"(.*\s)\**\w+$", mt.group(1) + mt.group(2)).group(1)
                        for nm in [mt.group(2)] + [x.strip() for x in mt.group(3).split(",")]:
                            split.append(Member(base + nm, mm.doc))
                    else:
                        split.append(mm)
                mem = split
            names = [name] + ([re.match(r"(\w+)", x.decl).group(1) for x in mem] if is_enum else [])
            entries.append(Entry("enum" if is_enum else "struct", names, [name], doc, mem, line))
            continue
        m = re.match(r"typedef (.+?)(\w+);$", code)
        if m:
            entries.append(Entry("type", [m.group(2)], [code[len("typedef "):-1]], doc, line=line))
            continue
        m = re.match(r"(.+?)\b(\w+)\s*\((.*)\);$", code)
        if m:
            name = m.group(2)
            # several prototypes under one comment form one entry
            last = entries[-1] if entries else None
            if last and last.kind == "function" and not doc and not blank and last.line < line:
                last.names.append(name)
                last.decls.append(code)
                last.line = line
            else:
                entries.append(Entry("function", [name], [code], doc, line=line))
            continue
        logger.warning("bsvd-header: cannot read the declaration at line %d: %s", line, code[:80])
    return intro, entries


def parse_cpp(text: str) -> tuple[str, list[Entry]]:
    """The leading comment of a C++ header and its entries in namespace bsvd."""
    lex = _Lines(text)
    intro = ""
    entries: list[Entry] = []
    pending = ""
    prev_kind = None
    for idx, (kind, raw, line, blank, trailing) in enumerate(lex.items):
        if kind == "comment":
            t = _comment_text(raw)
            if idx == 0:
                intro = t
            elif trailing and entries:
                entries[-1].doc = (entries[-1].doc + "\n" + t).strip()
            else:
                pending = t
            prev_kind = kind
            continue
        doc = pending if prev_kind == "comment" and not blank else ""
        pending = ""
        prev_kind = kind
        if kind == "pre":
            continue
        code = _squash(raw)
        if code.startswith("namespace") or code == "}":
            continue
        head = code.split("{")[0].strip() if "{" in code else code.rstrip(";").strip()
        m = re.match(r"(template <[^{]*?> )?struct (\w+)(<.*>)?( : [\w:<> ]+)?$", head)
        if m and "{" in code:
            body = raw[raw.index("{") + 1: raw.rindex("}")]
            mem = _members(body, ";")
            entries.append(Entry("cpp-struct", [m.group(2) + (m.group(3) or "")], [head], doc, mem, line))
            continue
        m = re.match(r"enum class (\w+)$", head)
        if m:
            body = raw[raw.index("{") + 1: raw.rindex("}")]
            entries.append(Entry("cpp-enum", [m.group(1)], [head], doc, _members(body, ","), line))
            continue
        m = re.match(r"(template <.*?> )?using (\w+) = (.*)$", head)
        if m:
            entries.append(Entry("cpp-type", [m.group(2)], [head], doc, line=line))
            continue
        m = re.match(r"(.+?)\b(\w+)\s*\((.*)\)( const)?$", head)
        if m:
            last = entries[-1] if entries else None
            if last and last.kind == "cpp-function" and not doc and not blank:
                last.names.append(m.group(2))
                last.decls.append(head)
            else:
                entries.append(Entry("cpp-function", [m.group(2)], [head], doc, line=line))
            continue
        logger.warning("bsvd-header: cannot read the C++ declaration at line %d: %s", line, code[:80])
    return intro, entries


# ---------------------------------------------------------------- rendering


def _doc_lines(doc: str, indent: str) -> list[str]:
    """A header comment as a preformatted text block (its line breaks and
    alignment are part of what it says)."""
    if not doc:
        return []
    out = [indent + ".. code-block:: none"]
    if any(re.search(r"\w\(.*\);\s*(//.*)?$", ln) for ln in doc.splitlines()):
        # a comment that quotes calls ("Example: ..."): an excerpt of code
        from bsvd_snippets import SKIP

        out += [indent + "   :class: bsvd-header-doc bsvd-skip bsvd-skip-fragment",
                indent + f"   :caption: From the header; not run by CI: {SKIP['fragment']}", ""]
    else:
        out += [indent + "   :class: bsvd-header-doc", ""]
    out += [(indent + "   " + ln) if ln.strip() else "" for ln in doc.splitlines()]
    return out + [""]


def _c_rst(e: Entry) -> list[str]:
    if e.kind == "section":
        return _doc_lines(e.doc, "")  # the text of a section of the header
    if e.kind in ("function", "functions"):
        out = []
        if e.kind == "functions":
            # one directive per form, its s/d/c/z instances as signatures
            groups: dict[str, list[str]] = {}
            for name, d in zip(e.names, e.decls):
                groups.setdefault(re.sub(r"^bsvd_[sdcz]", "bsvd_?", name), []).append(d)
            out += _doc_lines(e.doc, "")
            for decls in groups.values():
                first = True
                for d in decls:
                    out.append((".. c:function:: " if first else "              ") + d.rstrip(";"))
                    first = False
                out.append("")
            return out
        first = True
        for d in e.decls:
            out.append((".. c:function:: " if first else "              ") + d.rstrip(";"))
            first = False
        return out + [""] + _doc_lines(e.doc, "   ")
    if e.kind == "macro":
        return [f".. c:macro:: {e.names[0]}", "", f"   ``{e.members[0].decl}``", ""] + _doc_lines(e.doc, "   ")
    if e.kind == "type":
        return [f".. c:type:: {e.decls[0]}", ""] + _doc_lines(e.doc, "   ")
    if e.kind in ("enum", "struct"):
        out = [f".. c:{e.kind}:: {e.names[0]}", ""] + _doc_lines(e.doc, "   ")
        for mm in e.members:
            what = "c:enumerator" if e.kind == "enum" else "c:member"
            out += [f"   .. {what}:: {mm.decl}", ""] + _doc_lines(mm.doc, "      ")
        return out
    raise ValueError(e.kind)


def _cpp_rst(e: Entry) -> list[str]:
    if e.kind == "cpp-function":
        out = []
        first = True
        for d in e.decls:
            d = re.sub(r"^inline ", "", d)
            out.append((".. cpp:function:: " if first else "                ") + d)
            first = False
        return out + [""] + _doc_lines(e.doc, "   ")
    if e.kind == "cpp-type":
        return [f".. cpp:type:: {e.decls[0].replace('using ', '', 1)}", ""] + _doc_lines(e.doc, "   ")
    if e.kind == "cpp-enum":
        out = [f".. cpp:enum-class:: {e.names[0]}", ""] + _doc_lines(e.doc, "   ")
        for mm in e.members:
            out += [f"   .. cpp:enumerator:: {mm.decl}", ""] + _doc_lines(mm.doc, "      ")
        return out
    if e.kind == "cpp-struct":
        out = [f".. cpp:struct:: {e.decls[0].replace('struct ', '', 1)}", ""] + _doc_lines(e.doc, "   ")
        for mm in e.members:
            d = mm.decl
            if d.startswith("using "):
                out += [f"   .. cpp:type:: {d[len('using '):]}", ""]
            else:
                for part in _split_declarators(d):
                    out += [f"   .. cpp:member:: {part}", ""] + _doc_lines(mm.doc, "      ")
        return out
    raise ValueError(e.kind)


def _split_declarators(d: str) -> list[str]:
    """'int m = 0, n = 0' -> ['int m = 0', 'int n = 0'] (no templates there)."""
    if "," not in d or "<" in d.split(",")[0] and ">" not in d.split(",")[0]:
        return [d]
    first, *rest = [p.strip() for p in d.split(",")]
    m = re.match(r"(.*?)(\w+(\s*=.*)?)$", first)
    base = m.group(1)
    return [first] + [base + r for r in rest]


# ---------------------------------------------------------------- directive


class HeaderDirective(SphinxDirective):
    required_arguments = 1
    option_spec = {"match": directives.unchanged, "intro": directives.flag}
    has_content = False

    def run(self):
        rel = self.arguments[0]
        path = Path(self.env.srcdir) / rel
        self.env.note_dependency(str(path))
        text = path.read_text()
        cpp = rel.endswith((".hpp", ".cuh"))
        intro, entries = (parse_cpp if cpp else parse_c)(text)
        pat = re.compile(self.options["match"]) if "match" in self.options else None
        lines: list[str] = []
        if "intro" in self.options:
            lines += _doc_lines(intro, "")
        shown = self.env.bsvd_api_shown.setdefault(rel, {})  # type: ignore[attr-defined]
        for e in entries:
            if pat is not None and not any(pat.search(nm) for nm in e.names):
                continue
            key = e.names[0]
            shown.setdefault(key, []).append(self.env.docname)
            lines += (_cpp_rst if cpp else _c_rst)(e)
        if cpp:
            lines = [".. cpp:namespace:: bsvd", ""] + lines + ["", ".. cpp:namespace:: 0", ""]
        node = nodes.container(classes=["bsvd-api"])
        if self.env.doc2path(self.env.docname).suffix == ".md":
            lines = ["````{eval-rst}"] + lines + ["````"]  # MyST parses nested content as Markdown
        self.state.nested_parse(StringList(lines, source=str(path)), self.content_offset, node)
        return node.children


def _entries_of(srcdir: str, rel: str):
    text = (Path(srcdir) / rel).read_text()
    return (parse_cpp if rel.endswith((".hpp", ".cuh")) else parse_c)(text)[1]


def _env_purge(app, env, docname):
    for shown in getattr(env, "bsvd_api_shown", {}).values():
        for key in list(shown):
            shown[key] = [d for d in shown[key] if d != docname]
            if not shown[key]:
                del shown[key]


def _env_merge(app, env, docnames, other):
    for rel, shown in getattr(other, "bsvd_api_shown", {}).items():
        mine = env.bsvd_api_shown.setdefault(rel, {})
        for key, docs in shown.items():
            mine.setdefault(key, []).extend(docs)


def _env_before_read(app, env, docnames):
    if not hasattr(env, "bsvd_api_shown"):
        env.bsvd_api_shown = {}


def _check(app, env):
    """Every entry of each header rendered exactly once; every exported C
    function of the library documented."""
    documented = set()
    for rel, shown in env.bsvd_api_shown.items():
        for e in _entries_of(app.srcdir, rel):
            docs = shown.get(e.names[0], [])
            if not docs:
                logger.warning("bsvd-header: %s: %s is not on any page", rel, ", ".join(e.names[:3]))
            elif len(docs) > 1:
                logger.warning("bsvd-header: %s: %s is on more than one page (%s)", rel,
                               e.names[0], ", ".join(docs))
            documented.update(e.names)
    lib = Path(app.srcdir) / app.config.bsvd_api_library
    if app.config.bsvd_api_library and lib.exists() and "include/bsvd/bsvd.h" in env.bsvd_api_shown:
        out = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True,
                             text=True, check=True).stdout
        exported = {ln.split()[-1] for ln in out.splitlines() if re.search(r" T bsvd_\w+$", ln)}
        missing = sorted(exported - documented)
        if missing:
            logger.warning("bsvd-header: %d functions of %s are not documented: %s", len(missing),
                           app.config.bsvd_api_library, ", ".join(missing[:10]))
        env.bsvd_api_counts = (len(exported), len(documented))


def setup(app):
    app.add_config_value("bsvd_api_library", "", "env")
    app.add_directive("bsvd-header", HeaderDirective)
    app.connect("env-before-read-docs", _env_before_read)
    app.connect("env-purge-doc", _env_purge)
    app.connect("env-merge-info", _env_merge)
    app.connect("env-check-consistency", _check)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
