"""The grader's words for students, in English or in Chinese.

The feedback page is in the student's language: a notebook of the Chinese
release gets it in Chinese. :data:`ZH` and :data:`ZH_TEMPLATES` are the
label table of the grader's own words (fixed texts, and templates whose
``{}`` parts are kept: names, numbers, values). The assignments' check
messages (``assert ..., "message"``, the ``what`` of ``check_array``, the
messages of errors the tests raise) are written in English in the test
cells, whose code is the same in both editions, byte for byte; their
Chinese is in the catalogue ``locales/zh_CN/LC_MESSAGES/grader.po``
(``msgctxt`` = the assignment, ``msgid`` = the message with ``{}`` for each
part an f-string fills in). ``python tools/assignments.py labels`` brings
the catalogue up to date with the assignments (new messages untranslated,
translations kept); ``tests/test_teaching_labels.py`` fails on any message
without its translation. A message that matches no entry stays English.
"""

import ast
import importlib.util
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
PO = REPO / "locales" / "zh_CN" / "LC_MESSAGES" / "grader.po"

ZH = {
    # the page
    "Automatic tests": "自动测试",
    "written answers": "书面回答",
    "total": "总分",
    "not yet marked": "尚未评分",
    "when every written answer is marked": "待所有书面回答评分后给出",
    "Each test, as the grader checked it:": "每个测试的评分结果：",
    "Written answers:": "书面回答：",
    "Notes of the grader:": "评分程序的说明：",
    "passed": "通过",
    "failed": "未通过",
    "no message": "无说明",
    "not checked": "未检查",
    "Test": "测试",
    "Given code, as released.": "给定的代码（与发放时相同）。",
    "feedback for": "反馈：",
    "The notebook is not shown here.": "此处不显示笔记本。",
    "graded": "已评分",
    "flagged": "已评分，请教师查看",
    "missing": "未提交",
    "invalid": "无效文件",
    "failed to grade": "无法评分",
    "unmatched": "无法匹配",
}

# Templates: "{}" matches any text, kept as it is in the translation.
ZH_TEMPLATES = {
    "{} returned None: is a `return` missing?":
        "{} 返回了 None：是否漏写了 `return`？",
    "{} must give numbers ({})": "{} 必须给出数值（{}）",
    "{} has shape {}, expected shape {}": "{} 的形状是 {}，应为 {}",
    "{} is wrong in {} of {} entries, the first at index {}: got {}, "
    "expected {}": "{} 有 {} 处不对（共 {} 个元素），第一处在下标 {}："
                   "得到 {}，应为 {}",
    "{} is wrong in {} of {} entries, the first at index {}":
        "{} 有 {} 处不对（共 {} 个元素），第一处在下标 {}",
    "{} raised {} (run the visible tests in your notebook to see where)":
        "{} 抛出了 {}（在你的笔记本里运行可见的测试，看看出错的位置）",
    "{} ran past the time limit of {} s": "{} 超过了 {} 秒的时间限制",
    "{} is not defined in your notebook": "你的笔记本中没有定义 {}",
    "{} returned something the grader cannot read":
        "{} 返回了评分程序无法读取的内容",
    "{} returned a {}, which the grader cannot check":
        "{} 返回了 {}，评分程序无法检查",
    "not checked: {}": "未检查：{}",
    "this question asks you to write it with numpy, without calling "
    "posenc_core.{}": "本题要求你用 numpy 自己写出来，不调用 posenc_core.{}",
    "this question asks you to write it with torch, without calling "
    "posenc_core.{}": "本题要求你用 torch 自己写出来，不调用 posenc_core.{}",
    "this question asks you to write it yourself, without calling "
    "posenc_core.{}": "本题要求你自己写出来，不调用 posenc_core.{}",
    "NameError: name {} is not defined": "NameError：名称 {} 未定义",
    "the check ran past the time limit of {} s":
        "检查超过了 {} 秒的时间限制",
}


def _pattern(template):
    literal = template.replace("{{", "\0").replace("}}", "\1")
    parts = [re.escape(p.replace("\0", "{").replace("\1", "}"))
             for p in literal.split("{}")]
    return re.compile("^" + "(.*?)".join(parts) + "$", re.S)


def _po_module():
    """posenc_plots/i18n.py's PO reader and writer (standard library only)."""
    spec = importlib.util.spec_from_file_location(
        "posenc_po", REPO / "posenc_plots" / "i18n.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _template(node):
    """The message of an AST string node, ``{}`` for each field (or None)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value).replace("{", "{{").replace(
                    "}", "}}"))
            else:
                parts.append("{}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _template(node.left), _template(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def messages(nb):
    """The check messages of an instructor notebook's test and setup cells."""
    found = []
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {}) or {}
        if cell.get("cell_type") != "code" or meta.get("solution") or not (
                meta.get("grade") or meta.get("locked")):
            continue
        source = "".join(cell["source"]) if isinstance(
            cell["source"], list) else cell["source"]
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            texts = []
            if isinstance(node, ast.Assert) and node.msg is not None:
                texts.append(node.msg)
            elif isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", ""))
                if name == "check_array" and len(node.args) >= 3:
                    texts.append(node.args[2])
                elif name.endswith("Error") and node.args:
                    texts.append(node.args[0])
                # a test's own helper names what it checks as what=...
                texts += [k.value for k in node.keywords if k.arg == "what"]
            for text in texts:
                template = _template(text)
                if template and re.search(r"[A-Za-z]{2}",
                                          template.replace("{}", "")):
                    found.append(template)
    return list(dict.fromkeys(found))


def assignment_messages(path):
    """The check messages of the assignment ``path`` (its instructor
    notebook) and of its class variants: the variants change some
    messages (a dtype, a function's name), and their Chinese feedback
    needs those too."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    found = messages(nb)
    from .sources import GRADING, SOURCE

    spec = GRADING / f"{Path(path).stem}.json"
    if Path(path).resolve().is_relative_to(SOURCE.resolve()) and spec.is_file():
        from .variants import every_choice, load_spec

        for variant in every_choice(nb, load_spec(spec)):
            found += messages(variant)
    return list(dict.fromkeys(found))


def _catalogue():
    if not PO.is_file():
        return {}
    entries = _po_module().read_po(PO)
    return {e["msgid"]: e["msgstr"] for e in entries
            if e["msgid"] and e["msgstr"] and not e["fuzzy"]}


def update(source=None):
    """Bring grader.po up to date with the assignments; returns its entries."""
    po = _po_module()
    source = Path(source or REPO / "assignments" / "source")
    old = {}
    if PO.is_file():
        old = {e["msgid"]: e for e in po.read_po(PO) if e["msgid"]}
    entries = [{"context": None, "msgid": "", "fuzzy": False, "comments": [],
                "msgstr": "Project-Id-Version: posenc-book grader\n"
                          "Language: zh_CN\nMIME-Version: 1.0\n"
                          "Content-Type: text/plain; charset=UTF-8\n"
                          "Content-Transfer-Encoding: 8bit\n"}]
    seen = set()
    for path in sorted(source.glob("*/*.ipynb")):
        for message in assignment_messages(path):
            if message in seen:
                continue
            seen.add(message)
            kept = old.get(message, {})
            entries.append({"context": None, "msgid": message,
                            "msgstr": kept.get("msgstr", ""),
                            "fuzzy": kept.get("fuzzy", False),
                            "comments": [f"#: assignments/source/{path.parent.name}"]})
    po.write_po(entries, PO)
    return entries[1:]


_COMPILED = None


def _compiled():
    global _COMPILED
    if _COMPILED is None:
        table = {**_catalogue(), **ZH_TEMPLATES}
        fixed = {k: v for k, v in table.items() if "{}" not in k}
        templates = sorted(((k, v) for k, v in table.items() if "{}" in k),
                           key=lambda kv: -len(kv[0]))
        _COMPILED = (fixed, [(_pattern(k), v) for k, v in templates])
    return _COMPILED


def translate(text, language="en"):
    """``text`` in ``language`` (English text is returned as it is)."""
    if language != "zh_CN" or not text:
        return text
    if text in ZH:
        return ZH[text]
    fixed, templates = _compiled()
    if text in fixed:
        return fixed[text].replace("{{", "{").replace("}}", "}")
    for pattern, target in templates:
        match = pattern.match(text)
        if match:
            parts = [translate(g, language) for g in match.groups()]
            return _fill(target, parts)
    return text


def _fill(target, parts):
    """``target`` with its ``{}`` replaced by ``parts`` in order."""
    pieces = re.split(r"(\{\{|\}\}|\{\})", target)
    out, k = [], 0
    for piece in pieces:
        if piece == "{}":
            out.append(parts[k] if k < len(parts) else "")
            k += 1
        elif piece == "{{":
            out.append("{")
        elif piece == "}}":
            out.append("}")
        else:
            out.append(piece)
    return "".join(out)


def translator(language="en"):
    return lambda text: translate(text, language)
