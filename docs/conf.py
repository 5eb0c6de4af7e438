"""Sphinx configuration of tether's documentation site.

Pages are MyST Markdown; the Python reference comes from the installed
``tether`` package (autodoc), the C ABI reference from
``cpp/include/tether/c_api.h`` (``_ext/c_api.py``), and the Rust crates'
reference is rustdoc, copied into the built site under ``rustdoc/`` by
``make docs``. Built with warnings as errors.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))

project = "tether"
author = "tether contributors"
copyright = "tether contributors, Apache-2.0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "c_api",
    "registry_stubs",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "BUILD.bazel", "requirements.txt"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# The rustdoc tree is copied in after the build; links to it are plain
# relative URLs, checked by `make docs-check`.
html_theme = "alabaster"
html_static_path = ["_static"]
html_title = "tether"
html_favicon = "_static/favicon.svg"
html_theme_options = {
    "description": "one Python wrapper per native object, on TVM-FFI's C ABI",
    "fixed_sidebar": True,
    "show_relbars": True,
    "page_width": "1240px",
    "sidebar_width": "240px",
    "body_max_width": "none",
}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}

autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_typehints = "signature"
autodoc_member_order = "bysource"
napoleon_google_docstring = False
napoleon_numpy_docstring = True

# The C header the C ABI reference is read from.
c_api_header = os.path.join(HERE, "..", "cpp", "include", "tether", "c_api.h")
