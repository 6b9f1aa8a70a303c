"""The feedback page of one submission: verdicts and marks, nothing secret.

A page of its own (not nbgrader's): the scores, the verdict of every test
cell with its message, the marks and comments of the written answers, and
the student's notebook as they handed it in, sanitised. A test cell shows
only its verdict and message, never its code or anything it printed; a
given (locked) cell shows only that it is given. Nothing printed while
the grader ran the notebook is shown (the student's code sees the tests'
inputs there, and could print them). The student's markdown and the
outputs they handed in are rendered without raw HTML, scripts, event
handlers or links other than http(s) and mailto. The page is in the
student's language: Chinese when their notebook is the Chinese release.
"""

import base64
import html
import re

from . import labels
from .report import fmt
from .sources import ANSI, hidden_leaks, html_text

TAGS = ["a", "abbr", "b", "blockquote", "br", "code", "div", "em", "h1", "h2",
        "h3", "h4", "h5", "h6", "hr", "i", "li", "ol", "p", "pre", "span",
        "strong", "sub", "sup", "table", "tbody", "td", "th", "thead", "tr",
        "ul"]
ATTRIBUTES = {"a": ["href", "title"], "abbr": ["title"]}
PROTOCOLS = ["http", "https", "mailto"]
STYLE = """body{font-family:sans-serif;max-width:60em;margin:2em auto;
padding:0 1em;line-height:1.5}pre{background:#f6f6f6;padding:.5em;
overflow-x:auto;white-space:pre-wrap}.test{border-left:4px solid #888;
padding:.3em 1em;margin:1em 0}.passed{border-color:#2a7}.failed{
border-color:#c33}.given{color:#666;font-style:italic}.note{border:2px solid
#c60;padding:.5em 1em;background:#fff4e5}"""


ACTIVE = re.compile(r"(?is)<(script|style|iframe|object|embed|template|svg|math)"
                    r"\b.*?(</\1\s*>|$)")


def clean(markup):
    """``markup`` with every tag or attribute outside the allowlist removed
    (scripts, styles, frames and SVG with everything in them)."""
    import bleach

    return bleach.clean(ACTIVE.sub("", markup), tags=TAGS,
                        attributes=ATTRIBUTES, protocols=PROTOCOLS,
                        strip=True, strip_comments=True)


def markdown(text):
    """Markdown as sanitised HTML (raw HTML in it is shown as text)."""
    import mistune

    return clean(mistune.create_markdown(escape=True)(str(text)))


def _image(kind, data):
    data = re.sub(r"\s", "", str(data))
    if not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", data) or len(data) > 4_000_000:
        return ""
    try:
        base64.b64decode(data, validate=True)
    except ValueError:
        return ""
    return f'<img alt="" src="data:{kind};base64,{data}">'


def _output(output):
    e = html.escape
    kind = output.get("output_type")
    if kind == "stream":
        return f"<pre>{e(ANSI.sub('', str(output.get('text', ''))))}</pre>"
    if kind == "error":
        text = f"{output.get('ename', '')}: {output.get('evalue', '')}"
        return f"<pre>{e(ANSI.sub('', text))}</pre>"
    data = output.get("data", {}) or {}
    for mime in ("image/png", "image/jpeg"):
        if mime in data:
            return _image(mime, data[mime])
    if "text/html" in data:
        value = data["text/html"]
        return clean("".join(value) if isinstance(value, list) else str(value))
    if "text/plain" in data:
        value = data["text/plain"]
        value = "".join(value) if isinstance(value, list) else str(value)
        return f"<pre>{e(ANSI.sub('', value))}</pre>"
    return ""


def language_of(nb):
    """"zh_CN" when the notebook's prompts are Chinese, else "en"."""
    text = "".join(c.source for c in (nb.cells if nb is not None else [])
                   if c.cell_type == "markdown")
    han = len(re.findall(r"[\u4e00-\u9fff]", text))
    latin = len(re.findall(r"[A-Za-z]", text))
    return "zh_CN" if han > latin / 4 else "en"


def summary(row, language="en"):
    """Scores, verdicts, marks and notes of ``row``, as HTML."""
    t = labels.translator(language)
    e = html.escape
    written = (t("not yet marked") if row["written_score"] is None
               else f"{fmt(row['written_score'])} / {fmt(row['written_max'])}")
    total = (t("when every written answer is marked") if row["total"] is None
             else fmt(row["total"]))
    lines = [f"<p>{e(t('Automatic tests'))}: <b>{fmt(row['auto_score'])} / "
             f"{fmt(row['auto_max'])}</b>; {e(t('written answers'))}: "
             f"<b>{e(written)}</b>; {e(t('total'))}: <b>{e(total)}</b> / "
             f"{fmt(row['max_score'])} ({e(t(row['status']))})</p>"]
    verdicts = row.get("verdicts") or {}
    if verdicts:
        items = "".join(f"<li><code>{e(gid)}</code>: {e(verdict_text(v, t))}"
                        "</li>" for gid, v in verdicts.items())
        lines.append(f"<p>{e(t('Each test, as the grader checked it:'))}</p>"
                     f"<ul>{items}</ul>")
    questions = row.get("written") or []
    if questions:
        items = []
        for item in questions:
            if item["points"] is None:
                text = f"{t('not yet marked')} ({fmt(item['max'])})"
            else:
                text = f"{fmt(item['points'])} / {fmt(item['max'])}"
                if item["comment"]:
                    text += f": {item['comment']}"
            items.append(f"<li><code>{e(item['question'])}</code>: "
                         f"{e(text)}</li>")
        lines.append(f"<p>{e(t('Written answers:'))}</p><ul>"
                     + "".join(items) + "</ul>")
    if row.get("base_reason"):  # the flags are the teacher's, not here
        lines.append(f"<p>{e(t('Notes of the grader:'))} "
                     f"{e(row['base_reason'])}</p>")
    return "\n".join(lines)


def verdict_text(verdict, t):
    if verdict.get("passed"):
        return t("passed")
    return t("failed") + ": " + t(verdict.get("message") or "no message")


def _cells(nb, task, row, t):
    e = html.escape
    verdicts = row.get("verdicts") or {}
    out = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {}) or {}
        gid = meta.get("grade_id")
        if cell.cell_type == "markdown":
            out.append(f"<div>{markdown(cell.source)}</div>")
            continue
        if cell.cell_type != "code":
            continue
        if gid in task.tests:
            verdict = verdicts.get(gid, {"passed": False,
                                         "message": "not checked"})
            state = "passed" if verdict.get("passed") else "failed"
            points = fmt(task.tests[gid])
            out.append(f'<div class="test {state}"><b>{e(t("Test"))} '
                       f"<code>{e(gid)}</code> ({points}): "
                       f"{e(verdict_text(verdict, t))}</b></div>")
            continue
        if meta.get("locked"):
            out.append(f'<p class="given">{e(t("Given code, as released."))}'
                       "</p>")
            continue
        outputs = "".join(_output(o) for o in cell.get("outputs", []))
        out.append(f"<pre><code>{e(cell.source)}</code></pre>{outputs}")
    return "\n".join(out)


def render(row, nb=None, task=None):
    """The whole page (HTML) for ``row``; with the notebook when given."""
    language = language_of(nb)
    t = labels.translator(language)
    e = html.escape
    title = f"{row['assignment']}: {t('feedback for')} {row['student_id']}"
    body = (f"<h1>{e(title)}</h1>\n<div class=\"note\">{summary(row, language)}"
            "</div>\n")
    if nb is not None and task is not None:
        cells = _cells(nb, task, row, t)
        if hidden_leaks(html_text(cells), task.instructor):
            cells = f"<p>{e(t('The notebook is not shown here.'))}</p>"
        body += cells
    lang = "zh-CN" if language == "zh_CN" else "en"
    return (f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">'
            f"<title>{e(row['assignment'])}</title><style>{STYLE}</style>"
            f"</head>\n<body>\n{body}</body></html>\n")


def write(page, row, nb=None, task=None):
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(render(row, nb, task), encoding="utf-8")
