"""Page-level HTML fixes (issue 23).

The cells tagged ``hide-input`` (the checks the page folds) are rendered
by myst-nb as ``<details><summary aria-label="Toggle hidden content">``
around the visible words "Show code cell source": the summary's accessible
name then differs from its visible text (WCAG 2.5.3, axe's serious
``label-content-name-mismatch``). This extension renders the same summary
without the aria-label, so its name is the text the reader sees.
"""

from html import escape

from myst_nb.sphinx_ import HideCodeCellNode


def visit_hide_input(self, node):
    classes = " ".join(node["classes"])
    self.body.append(f'<details class="admonition hide {classes}">\n<summary>\n')
    for kind, key in (("collapsed", "prompt_show"), ("expanded", "prompt_hide")):
        self.body.append(f'<p class="{kind} admonition-title">'
                         f"{escape(node[key])}</p>\n")
    self.body.append("</summary>\n")


def depart_hide_input(self, node):
    self.body.append("</details>\n")


def setup(app):
    app.setup_extension("myst_nb")
    app.add_node(HideCodeCellNode, override=True,
                 html=(visit_hide_input, depart_hide_input))
    return {"parallel_read_safe": True, "parallel_write_safe": True,
            "version": "1"}
