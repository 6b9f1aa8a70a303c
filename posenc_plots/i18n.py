"""The words of the figures, in English or in Chinese.

Every label a figure shows (titles, axis labels, legend entries, tick
words, slider labels, captions) is written once, in English, in a
:class:`Labels` table: one table per figure, named ``"<module>:<figure>"``
(the key of the live figure, ``"ch02_formula:explore_encoding"``, or the
plotting function, ``"ch03_frequencies:plot_waves"``). Labels that hold
numbers are :meth:`str.format` templates (``"d_model = {d_model}"``); the
in-page JavaScript twins fill them the same way (``posenc.label``).

The language is the environment variable ``POSENC_LANG`` (unset or ``en``:
English; ``zh_CN``: Chinese), read when a table is looked up; when it is
unset, a file ``.posenc-lang`` in the working folder (a Jupyter kernel's is
the notebook's folder) may name it: ``tools/i18n.py build-zh`` writes one
beside the Chinese notebooks, so that a learner who opens them in Jupyter
moves sliders with Chinese labels, with code cells identical to the
English ones. The Chinese
words come from the gettext catalogue
``locales/zh_CN/LC_MESSAGES/figures.po`` (``msgctxt`` = the table's name,
``msgid`` = the English label, ``msgstr`` = the Chinese one), read with the
standard library. A label without a translation (or only a fuzzy one) is an
error (:class:`MissingTranslation`), never a silent English word; the tests
check that every table is translated.

Chinese labels need a font with Chinese glyphs: :func:`use_language_font`
puts the first installed family of :data:`CJK_FAMILIES` at the head of
matplotlib's ``font.sans-serif`` (``posenc_plots`` calls it on import).

``python -m posenc_plots.i18n update`` brings ``figures.po`` up to date
with the tables (new labels untranslated, translations kept, vanished
labels dropped); ``python -m posenc_plots.i18n stats`` counts.
"""

import importlib
import os
import pkgutil
import re
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "CJK_FAMILIES",
    "ENV",
    "LANGUAGES",
    "Labels",
    "MissingTranslation",
    "PAGE",
    "PO_PATH",
    "all_tables",
    "catalog",
    "cjk_font",
    "language",
    "read_po",
    "translate",
    "use_language_font",
    "write_po",
]

#: The environment variable that chooses the language of the figures.
ENV = "POSENC_LANG"

#: The languages: English (the source) and Chinese.
LANGUAGES = ("en", "zh_CN")

#: The catalogue of the figures' Chinese labels.
PO_PATH = (Path(__file__).resolve().parent.parent / "locales" / "zh_CN"
           / "LC_MESSAGES" / "figures.po")

#: Font families with Chinese glyphs, in order of preference (Debian's
#: fonts-noto-cjk, then others that cover the book's labels).
CJK_FAMILIES = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC",
                "Noto Sans CJK JP", "WenQuanYi Zen Hei",
                "WenQuanYi Micro Hei", "Droid Sans Fallback")

_ALIASES = {"": "en", "c": "en", "en": "en", "en_us": "en", "en_gb": "en",
            "zh": "zh_CN", "zh_cn": "zh_CN", "zh_hans": "zh_CN",
            "zh_hans_cn": "zh_CN"}


#: The file that names the language of the notebooks in its folder.
FOLDER_FILE = ".posenc-lang"


def _folder_language():
    """The first word of ``./.posenc-lang``, or "" when there is none."""
    try:
        with open(FOLDER_FILE, encoding="utf-8") as handle:
            words = handle.read().split()
    except OSError:
        return ""
    return words[0] if words else ""


class MissingTranslation(LookupError):
    """A label has no (non-fuzzy) translation in the catalogue."""


def language(value=None):
    """The language code, ``"en"`` or ``"zh_CN"``.

    ``value`` (default: ``$POSENC_LANG``) may be written ``zh-CN``,
    ``zh_CN.UTF-8``, ``zh``, ``en`` ... (what Sphinx and locales write).
    """
    name = "language"
    if value is None:
        raw, name = os.environ.get(ENV, ""), ENV
        if not raw:
            raw, name = _folder_language(), f"{ENV} (unset), so ./{FOLDER_FILE},"
    else:
        raw = value
    if not isinstance(raw, str):
        raise ValueError(f"language must be a string, got {raw!r}")
    key = raw.split(".")[0].replace("-", "_").lower()
    if key not in _ALIASES:
        raise ValueError(f"{name} must be one of {LANGUAGES} (or unset for "
                         f"English), got {raw!r}")
    return _ALIASES[key]


# ------------------------------------------------------------ PO files


def _unquote(text, path, lineno):
    """The value of one PO string literal (``"..."``)."""
    text = text.strip()
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        raise ValueError(f"{path}:{lineno}: expected a quoted string, "
                         f"got {text!r}")
    escapes = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "\r"}

    def one(match):
        char = match.group(1)
        if char not in escapes:
            raise ValueError(f"{path}:{lineno}: unknown escape \\{char}")
        return escapes[char]

    return re.sub(r"\\(.)", one, text[1:-1])


def _quote(text):
    return '"' + (text.replace("\\", "\\\\").replace('"', '\\"')
                  .replace("\n", "\\n").replace("\t", "\\t")) + '"'


def read_po(path=None):
    """The entries of a PO file, in order, as dicts.

    Each entry has ``context`` (``None`` without ``msgctxt``), ``msgid``,
    ``msgstr``, ``fuzzy`` and ``comments`` (its ``#`` lines). Obsolete
    entries (``#~``) are left out; the header is the entry with msgid "".
    """
    path = PO_PATH if path is None else Path(path)
    entries, entry, field = [], None, None

    def close():
        if entry is not None and "msgid" in entry:
            entries.append(entry)

    def new():
        return {"context": None, "fuzzy": False, "comments": []}

    for lineno, line in enumerate(
            path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#~"):
            continue
        if line.startswith("#"):
            if entry is not None and "msgid" in entry:
                close()
                entry = None
            entry = entry or new()
            if line.startswith("#,"):
                entry["fuzzy"] |= "fuzzy" in [f.strip()
                                              for f in line[2:].split(",")]
            entry["comments"].append(line)
            continue
        keyword, _, rest = line.partition(" ")
        if keyword in ("msgctxt", "msgid", "msgstr"):
            if keyword in ("msgctxt", "msgid") and entry is not None and (
                    "msgid" in entry):
                close()
                entry = None
            if keyword == "msgctxt" and entry is not None and (
                    entry["context"] is not None):
                raise ValueError(f"{path}:{lineno}: msgctxt twice")
            entry = entry or new()
            field = "context" if keyword == "msgctxt" else keyword
            entry[field] = _unquote(rest, path, lineno)
        elif line.startswith('"'):
            if entry is None or field is None:
                raise ValueError(f"{path}:{lineno}: a string outside an entry")
            entry[field] += _unquote(line, path, lineno)
        else:
            raise ValueError(f"{path}:{lineno}: cannot read {line!r}")
    close()
    for entry in entries:
        if "msgstr" not in entry:
            raise ValueError(f"{path}: msgid {entry['msgid']!r} has no msgstr")
    return entries


_CATALOGS = {}


def catalog(lang=None, path=None):
    """``{(context, msgid): msgstr}`` of the translated, non-fuzzy entries.

    English has no catalogue (an empty dict). Reread when the file changes.
    """
    lang = language(lang)
    if lang == "en":
        return {}
    path = PO_PATH if path is None else Path(path)
    try:
        stamp = path.stat().st_mtime_ns
    except FileNotFoundError:
        raise MissingTranslation(
            f"no catalogue of the figures' labels for {lang}: {path} is "
            "missing") from None
    key = (lang, str(path))
    cached = _CATALOGS.get(key)
    if cached is None or cached[0] != stamp:
        table = {(e["context"], e["msgid"]): e["msgstr"]
                 for e in read_po(path)
                 if e["msgid"] and e["msgstr"] and not e["fuzzy"]}
        cached = _CATALOGS[key] = (stamp, table)
    return cached[1]


def translate(context, msgid, lang=None):
    """``msgid`` (an English label of table ``context``) in ``lang``."""
    lang = language(lang)
    if lang == "en":
        return msgid
    try:
        return catalog(lang)[(context, msgid)]
    except KeyError:
        raise MissingTranslation(
            f"{context}: no {lang} translation of {msgid!r} in {PO_PATH} "
            "(run `python -m posenc_plots.i18n update` and translate it)"
        ) from None


# -------------------------------------------------------------- tables

#: Every table, by name (filled as the modules define them).
TABLES = {}


class Labels(Mapping):
    """The labels of one figure: ``{key: English label}``, translated.

    ``table[key]`` is the label in the current language (``$POSENC_LANG``);
    :meth:`get` returns the whole table in one language as a dict (look it
    up once where a figure is built, and use the dict in its updates).
    ``table.en`` is the English dict. :meth:`tr` translates any English
    label of the table (a slider's label, a caption).
    """

    def __init__(self, name, english):
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        if not isinstance(english, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) and v
                for k, v in english.items()):
            raise ValueError(f"english must map str keys to non-empty str "
                             f"labels, got {english!r}")
        if name in TABLES:
            raise ValueError(f"a table named {name!r} exists already")
        self.name = name
        self.en = dict(english)
        self._cache = {}
        TABLES[name] = self

    def get(self, lang=None):
        """The table as ``{key: label}`` in ``lang`` (default: current)."""
        lang = language(lang)
        if lang == "en":
            return self.en
        table = catalog(lang)
        cached = self._cache.get(lang)
        if cached is None or cached[0] is not table:  # the file changed
            cached = self._cache[lang] = (table, {
                k: translate(self.name, v, lang) for k, v in self.en.items()})
        return cached[1]

    def tr(self, english, lang=None):
        """One English label of this table, in ``lang``."""
        if english not in self.en.values():
            raise ValueError(f"{english!r} is not a label of {self.name}")
        return translate(self.name, english, lang)

    def __getitem__(self, key):
        return self.get()[key]

    def __iter__(self):
        return iter(self.en)

    def __len__(self):
        return len(self.en)

    def __eq__(self, other):
        if isinstance(other, Labels):
            return self.name == other.name and self.en == other.en
        return Mapping.__eq__(self, other)  # a dict of the current labels

    def __hash__(self):  # names are unique (Interactive, a frozen
        return hash(self.name)  # dataclass, hashes its tables)

    def __repr__(self):
        return f"Labels({self.name!r}, {self.en!r})"


#: The words of a live figure around the figure itself (the in-page
#: sliders, the note under the canvas, the screen-reader description).
PAGE = Labels("page", {
    "log": " (log scale)",
    "sliders": "Sliders of the live figure",
    "note": ("Live figure: move the sliders (or focus one and use the "
             "arrow keys) and it is recomputed in your browser."),
    "noscript": ("This live figure needs JavaScript; the figure above "
                 "shows its default settings."),
    "showing": " Showing ",
})


def all_tables():
    """Every table of every ``posenc_plots`` module, by name."""
    import posenc_plots

    for info in pkgutil.iter_modules(posenc_plots.__path__):
        importlib.import_module(f"posenc_plots.{info.name}")
    return dict(TABLES)


# ----------------------------------------------------------- the file


def write_po(entries, path=None):
    """Write ``entries`` (dicts as :func:`read_po` returns) to a PO file."""
    path = PO_PATH if path is None else Path(path)
    out = []
    for entry in entries:
        out.extend(c for c in entry.get("comments", ())
                   if not c.startswith("#,"))
        if entry.get("fuzzy"):
            out.append("#, fuzzy")
        if entry.get("context") is not None:
            out.append(f"msgctxt {_quote(entry['context'])}")
        out.append(f"msgid {_quote(entry['msgid'])}")
        msgstr = entry["msgstr"]
        if "\n" in msgstr.rstrip("\n"):  # the header: one line per field
            out.append('msgstr ""')
            out.extend(_quote(line) for line in msgstr.splitlines(True))
        else:
            out.append(f"msgstr {_quote(msgstr)}")
        out.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out), encoding="utf-8")


HEADER = ("Project-Id-Version: posenc-book figures\n"
          "Language: zh_CN\n"
          "MIME-Version: 1.0\n"
          "Content-Type: text/plain; charset=UTF-8\n"
          "Content-Transfer-Encoding: 8bit\n"
          "Plural-Forms: nplurals=1; plural=0;\n")


def update(path=None):
    """Bring the catalogue up to date with the tables; returns counts.

    Entries follow the tables' order; a label keeps its translation, a new
    one gets an empty msgstr, one no table has any more is dropped.
    """
    path = PO_PATH if path is None else Path(path)
    old = read_po(path) if path.is_file() else []
    header = next((e for e in old if e["msgid"] == "" and e["context"] is None),
                  {"context": None, "msgid": "", "msgstr": HEADER,
                   "comments": []})
    known = {(e["context"], e["msgid"]): e for e in old if e["msgid"]}
    entries, seen = [header], set()
    for name, table in all_tables().items():
        for key, english in table.en.items():
            if (name, english) in seen:
                continue
            seen.add((name, english))
            entry = known.get((name, english)) or {
                "context": name, "msgid": english, "msgstr": "",
                "fuzzy": False, "comments": []}
            entry["comments"] = [f"#. {name} [{key}]"]
            entries.append(entry)
    write_po(entries, path)
    dropped = len([k for k in known if k not in seen])
    return {"entries": len(entries) - 1, "dropped": dropped}


def stats(path=None):
    """(translated, fuzzy, untranslated) of the tables' labels."""
    table = {(e["context"], e["msgid"]): e for e in read_po(path)}
    counts = [0, 0, 0]
    for name, labels in all_tables().items():
        for english in set(labels.en.values()):
            entry = table.get((name, english))
            if entry is None or not entry["msgstr"]:
                counts[2] += 1
            elif entry["fuzzy"]:
                counts[1] += 1
            else:
                counts[0] += 1
    return tuple(counts)


# --------------------------------------------------------------- fonts


#: File names of the CJK fonts looked for when matplotlib's font cache
#: predates their installation.
_CJK_FILES = re.compile(r"wqy|noto\w*cjk|sourcehan|droidsansfallback",
                        re.IGNORECASE)


def cjk_font():
    """``(family, file)`` of the first installed :data:`CJK_FAMILIES`
    font matplotlib knows, or None.

    Matplotlib lists the system's fonts once, in its cache: a CJK font
    installed after that is added from the system's font folders here.
    """
    from matplotlib import font_manager

    def known():
        by_name = {}
        for entry in font_manager.fontManager.ttflist:
            by_name.setdefault(entry.name, entry.fname)
        return next(((family, by_name[family]) for family in CJK_FAMILIES
                     if family in by_name), None)

    found = known()
    if found is None:
        listed = {e.fname for e in font_manager.fontManager.ttflist}
        for path in font_manager.findSystemFonts():
            if _CJK_FILES.search(Path(path).name) and path not in listed:
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError):  # unreadable: skip it
                    continue
        found = known()
    return found


def use_language_font(lang=None):
    """Put a CJK family first in ``font.sans-serif`` for Chinese labels.

    English leaves matplotlib's fonts alone. Without an installed CJK font
    it warns (matplotlib would draw empty boxes) and changes nothing.
    Returns the family used, or None.
    """
    if language(lang) == "en":
        return None
    import matplotlib as mpl

    found = cjk_font()
    if found is None:
        warnings.warn(
            "no font with Chinese glyphs found for the figures' labels "
            f"(tried {', '.join(CJK_FAMILIES)}): apt-get install "
            "fonts-noto-cjk, then delete matplotlib's font cache",
            UserWarning, stacklevel=2)
        return None
    family = found[0]
    rest = [f for f in mpl.rcParams["font.sans-serif"] if f != family]
    mpl.rcParams["font.sans-serif"] = [family, *rest]
    mpl.rcParams["font.family"] = ["sans-serif"]
    return family


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if args == ["update"]:
        counts = update()
        print(f"{PO_PATH}: {counts['entries']} labels, "
              f"{counts['dropped']} dropped")
    elif args == ["stats"]:
        done, fuzzy, missing = stats()
        print(f"{done} translated messages, {fuzzy} fuzzy translations, "
              f"{missing} untranslated messages.")
        return 1 if fuzzy or missing else 0
    else:
        print("usage: python -m posenc_plots.i18n update|stats",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    # run as a script this file is a second module: use the package's own
    # (where the figures' tables are registered)
    from posenc_plots.i18n import main as _main

    sys.exit(_main())
