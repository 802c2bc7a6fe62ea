# Sphinx configuration of the bsvd documentation site (scripts/docs.sh).
# The source folder is the repository root, so that the Markdown of docs/,
# python/README.md and examples/ are pages in their own places and their
# relative links work on the site as on GitHub; include_patterns names the
# pages. The new pages of the site live in docs/site/.
import sys
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here / "_ext"))

project = "bsvd"
author = "the bsvd authors"
copyright = "the bsvd authors"
try:
    import bsvd

    release = bsvd.__version__
except ImportError:  # the Python API page then warns, and the build fails
    release = ""

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "bsvd_snippets",
    "bsvd_site",
    "bsvd_api",
]

root_doc = "docs/site/index"
source_suffix = {".md": "markdown"}
include_patterns = [
    "docs/*.md",
    "docs/design/*.md",
    "docs/design/decisions/*.md",
    "docs/perf/*.md",
    "docs/site/*.md",
    "docs/site/*/*.md",
    "python/README.md",
    "examples/*/README.md",
]
exclude_patterns = ["build*", ".venv*", ".git", "out", "data", "src", "tests", "tools",
                    "include", "scripts", "cmake", "docs/perf/raw"]

# The Markdown is written for GitHub, which keeps "--" and quotes as typed.
smartquotes = False
# Blocks without a language are text (diagrams, output), not code.
highlight_language = "none"
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]

# A page that is not on the site, linked from one that is: its stand-in.
bsvd_doc_aliases = {"README": "docs/site/index"}
# The library whose exported C functions the C API pages must all document.
bsvd_api_library = "build/libbsvd.so"
# The Python names the API pages must document, with every parameter.
bsvd_python_modules = {"bsvd": "__all__", "bsvd.torch": ["svd", "svdvals", "svd_backward"]}

autodoc_member_order = "bysource"
autodoc_mock_imports = ["torch"]
autodoc_typehints = "signature"

html_theme = "furo"
html_title = f"bsvd {release}".strip()
html_static_path = [str(here / "_static")]
html_css_files = ["bsvd.css"]
html_copy_source = False
html_show_sourcelink = False
# build/docs/html/index.html: a redirect to the home page
html_extra_path = [str(here / "_extra")]
