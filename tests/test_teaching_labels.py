"""The grader's words in Chinese: the label table and grader.po.

Every check message the assignments' test and setup cells can write (an
``assert``'s message, the ``what`` of ``check_array``, an error's message)
has a Chinese translation in ``locales/zh_CN/LC_MESSAGES/grader.po``, with
the same ``{}`` parts; the feedback of a Chinese notebook uses them, also
for messages composed of several (``check_array``'s sentence around the
test's ``what``).
"""

import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

from teaching import labels  # noqa: E402

SOURCE = REPO / "assignments" / "source"
NAMES = sorted(p.name for p in SOURCE.iterdir()
               if (p / f"{p.name}.ipynb").is_file())
HAN = re.compile(r"[\u4e00-\u9fff]")


def catalogue():
    entries = labels._po_module().read_po(labels.PO)
    return {e["msgid"]: e for e in entries if e["msgid"]}


@pytest.mark.parametrize("name", NAMES)
def test_every_check_message_has_its_translation(name):
    table = catalogue()
    found = labels.assignment_messages(SOURCE / name / f"{name}.ipynb")
    assert found, name
    for message in found:
        entry = table.get(message)
        assert entry is not None, f"{name}: no entry for {message!r} (run " \
            "python tools/assignments.py labels)"
        assert entry["msgstr"] and not entry["fuzzy"], message
        assert entry["msgstr"].count("{}") == message.count("{}"), message
        prose = re.sub(r"`[^`]*`|\w+\([^)]*\)|[\w.]+=[\w.\"']+", "",
                       message.replace("{}", ""))
        if re.search(r"\b[a-z]{3,}\b \b[a-z]{3,}\b", prose):
            assert HAN.search(entry["msgstr"]), (message, entry["msgstr"])


def test_the_catalogue_has_nothing_stale():
    every = set()
    for name in NAMES:
        every |= set(labels.assignment_messages(
            SOURCE / name / f"{name}.ipynb"))
    assert set(catalogue()) == every


@pytest.mark.parametrize("english, chinese", [
    ("attention_weights for a single token is wrong in 1 of 1 entries, the "
     "first at index (0, 0)", "只有一个词元时的 attention_weights"),
    ("unscramble raised ValueError (run the visible tests in your notebook "
     "to see where)", "unscramble 抛出了 ValueError"),
    ("head_reach(4, 1.0) must raise ValueError: p must lie strictly between "
     "0 and 1", "head_reach(4, 1.0) 必须抛出 ValueError"),
    ("alibi_bias_tensor must return a torch tensor, got list",
     "alibi_bias_tensor 必须返回 torch 张量，得到的是 list"),
    ("not checked: the Python kernel died", "未检查"),
])
def test_messages_are_translated_whole(english, chinese):
    assert chinese in labels.translate(english, "zh_CN")
    assert labels.translate(english, "en") == english


def test_an_unknown_message_stays_as_it_is():
    assert labels.translate("something new", "zh_CN") == "something new"
