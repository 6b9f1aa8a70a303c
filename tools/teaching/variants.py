"""Class-specific variants of an assignment: other constants, other hidden inputs.

The solutions of the book's assignments are public, so a teacher hands out a
*variant*: the same notebook with some constants replaced (a base, a seed of
the hidden inputs, ...), chosen by a secret class seed. An answer copied from
the public repository (or from another class) then fails the hidden tests.

A variant is described by the teacher-side file
``assignments/grading/NN_x.json`` (never released to students)::

    {
      "forbidden": ["alibi_bias", "relative_positions"],
      "parameters": {
        "base": {"choices": ["10000.0", "500000.0", "20000.0"]},
        "seed": {"choices": "int"}
      },
      "substitutions": [
        {"text": "base=10000.0", "template": "base={base}", "count": 4},
        {"text": "default_rng(1234)", "template": "default_rng({seed})",
         "count": 1}
      ]
    }

Keys (anything else is refused, so that a typo cannot pass unnoticed; a key
``"comment"`` holding text is allowed at the top level, in a parameter and in
a substitution):

``forbidden``
    posenc_core names an answer must not use (read by ``flags.py``); a list
    of strings, may be empty or missing.
``parameters``
    ``{name: {"choices": [...]}}``. A list of choices (strings or numbers,
    written into the notebook with ``str``): the FIRST choice is the public
    value, the one in the public notebook; a variant draws one of the other
    choices. ``"choices": "int"``: an integer drawn uniformly from
    ``INT_RANGE`` = [1000, 999999] (six digits at most, readable in a
    prompt), or from ``"min"``/``"max"`` (inclusive) given in the parameter;
    a value equal to the public one (read from the notebook text, below) is
    drawn again. A choice may also be an object of named texts, all
    choices with the same names, such as ``{"code": "4.0", "tex": "4"}``:
    one change of the mathematics written as code, as TeX and as prose,
    drawn together; a template names one of them as ``{name[key]}``.
``substitutions``
    A list of ``{"text", "template", "count"}``. ``text`` is a piece of the
    public notebook; ``template`` is the same piece written with
    ``{parameter}`` fields (``{{``/``}}`` for literal braces); rendering the
    template with the public values must give ``text`` back (checked, so a
    template cannot silently drift from its text). ``count`` is how many
    times ``text`` occurs in the sources of the public notebook's cells
    (markdown prompts, solutions, tests, hidden tests); a different number
    fails loudly.
``derived``
    A list of names of values *computed* from the drawn parameters, such as
    a wavelength that a model answer quotes: never typed in by hand, so
    that a model answer states the variant's numbers. Each name is a
    function of the teacher-side module ``assignments/grading/NN_x.py``
    (beside the spec, never released), whose arguments are the names of
    the parameters it reads (parameters with a list of choices: their
    value as text, or the object of named texts) and which returns text. A
    template uses it as ``{name}``. Rendered with the public values, it
    must give the public notebook's text back, like every template.

All substitutions are applied in ONE pass over each cell's source: at each
place the longest matching ``text`` wins and replaced text is never
substituted again. For texts that do not overlap, ``count`` is plain
``str.count``.

Parameters are drawn with ``numpy.random.default_rng(seed)`` in the sorted
order of their names, so a class seed gives the same variant on every
machine. Nothing in the variant (cells or metadata) records the seed or the
drawn values; ``describe`` tells the teacher what changed.

Choose a LARGE seed (``new_seed()``): the specs are public in the book's
repository, so a small seed could be found by trying seeds until the
values shown in the handout (a base in a prompt) come out, which would
give away the hidden ones (a hidden test's random inputs).
"""

import copy
import hashlib
import importlib.util
import inspect
import json
import re
import secrets
import string
from pathlib import Path

import numpy as np

INT_RANGE = (1000, 999999)
# Other languages of the assignments (tools/i18n.py): a substitution whose
# text is prose gives that prose in each language, as {"text", "template"}.
_LANGUAGES = ("zh_CN",)
_TOP_KEYS = {"forbidden", "parameters", "substitutions", "derived",
             "derive", "comment"}
_PARAM_KEYS = {"choices", "min", "max", "comment"}
_SUB_KEYS = {"text", "template", "count", "comment", *_LANGUAGES}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_FIELD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[([A-Za-z_][A-Za-z0-9_]*)\])?\Z")


def _fail(where, what):
    raise ValueError(f"variant spec: {where}: {what}")


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _fields(template, where, parameters, derived=()):
    """The parameter (and derived) names used by ``template``, checked."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as err:
        _fail(where, f"template {template!r} is not a format string ({err})")
    names = []
    for _literal, field, spec, conversion in parsed:
        if field is None:
            continue
        match = _FIELD.match(field)
        if not match:
            _fail(where, f"template field {{{field}}} must be a parameter "
                  "name, or name[key] for a parameter whose choices are "
                  "objects (no attribute or empty field)")
        if spec or conversion:
            _fail(where, f"template field {{{field}}} must have no format "
                  "spec or conversion")
        name, key = match.groups()
        if name in derived and key is None:
            names.append(field)
            continue
        if name not in parameters:
            _fail(where, f"template field {{{field}}} is not one of the "
                  f"parameters {sorted(parameters)} or derived values "
                  f"{sorted(derived)}")
        choices = parameters[name]["choices"]
        keys = set(choices[0]) if isinstance(choices[0], dict) else None
        if (key is None) != (keys is None) or (key and key not in keys):
            _fail(where, f"template field {{{field}}}: write {{{name}}} for "
                  "a parameter with plain choices and {name[key]}, key one "
                  "of the names of its choices, for one with objects")
        names.append(field)
    return names


def validate_spec(spec, where="spec"):
    """Check a spec's structure; return it. ValueError names the bad key."""
    if not isinstance(spec, dict):
        _fail(where, f"must be a JSON object, not {type(spec).__name__}")
    for key in spec:
        if key not in _TOP_KEYS:
            _fail(f"{where}: {key}", f"unknown key; allowed: "
                  f"{sorted(_TOP_KEYS)}")
    if "comment" in spec and not isinstance(spec["comment"], str):
        _fail(f"{where}: comment", "must be a string")
    forbidden = spec.get("forbidden", [])
    if not (isinstance(forbidden, list)
            and all(isinstance(n, str) and _NAME.match(n) for n in forbidden)):
        _fail(f"{where}: forbidden", "must be a list of Python names")
    parameters = spec.get("parameters", {})
    if not isinstance(parameters, dict):
        _fail(f"{where}: parameters", "must be an object")
    for name, param in parameters.items():
        at = f"{where}: parameters.{name}"
        if not _NAME.match(name):
            _fail(at, "a parameter name must be a Python identifier")
        if not isinstance(param, dict):
            _fail(at, "must be an object with 'choices'")
        for key in param:
            if key not in _PARAM_KEYS:
                _fail(f"{at}.{key}", f"unknown key; allowed: "
                      f"{sorted(_PARAM_KEYS)}")
        if not isinstance(param.get("comment", ""), str):
            _fail(f"{at}.comment", "must be a string")
        if "choices" not in param:
            _fail(f"{at}.choices", "missing")
        choices = param["choices"]
        if choices == "int":
            low = param.get("min", INT_RANGE[0])
            high = param.get("max", INT_RANGE[1])
            if not (_is_int(low) and _is_int(high) and 0 <= low < high):
                _fail(f"{at}.min/max", "must be integers with 0 <= min < max")
        else:
            if "min" in param or "max" in param:
                _fail(f"{at}.min/max", "only for \"choices\": \"int\"")
            plain = isinstance(choices, list) and all(
                isinstance(c, (str, int, float)) and not isinstance(c, bool)
                for c in choices)
            named = isinstance(choices, list) and all(
                isinstance(c, dict) and c and set(c) == set(choices[0])
                and all(_NAME.match(k) and isinstance(v, str)
                        for k, v in c.items()) for c in choices)
            if not ((plain or named) and len(choices) >= 2):
                _fail(f"{at}.choices", "must be \"int\" or a list of at least "
                      "two strings or numbers, or of objects with the same "
                      "names and string values (the first is the public "
                      "value)")
            texts = [json.dumps(c, sort_keys=True) if named else str(c)
                     for c in choices]
            if len(set(texts)) != len(texts):
                _fail(f"{at}.choices", "has repeated values")
    derived = spec.get("derived", [])
    derive = spec.get("derive", {})
    if not (isinstance(derived, list) and all(
            isinstance(n, str) and _NAME.match(n) and n not in parameters
            for n in derived) and len(set(derived)) == len(derived)):
        _fail(f"{where}: derived", "must be a list of distinct Python names, "
              "none of them a parameter")
    if not (isinstance(derive, dict) and set(derive) == set(derived)
            and all(callable(f) for f in derive.values())):
        _fail(f"{where}: derived", "each name needs a function of that name "
              "in the teacher-side module beside the spec (NN_x.py), read "
              "by load_spec")
    for name, function in derive.items():
        for arg in _arguments(function):
            if arg not in parameters or parameters[arg]["choices"] == "int":
                _fail(f"{where}: derived.{name}", f"argument {arg!r} is not a "
                      "parameter with a list of choices")
    derived_public = _derived(spec, _first_choices(parameters), where)
    subs = spec.get("substitutions", [])
    if not isinstance(subs, list):
        _fail(f"{where}: substitutions", "must be a list")
    used, texts = set(), set()
    for number, sub in enumerate(subs):
        at = f"{where}: substitutions[{number}]"
        if not isinstance(sub, dict):
            _fail(at, "must be an object with text, template, count")
        for key in sub:
            if key not in _SUB_KEYS:
                _fail(f"{at}.{key}", f"unknown key; allowed: "
                      f"{sorted(_SUB_KEYS)}")
        if not isinstance(sub.get("comment", ""), str):
            _fail(f"{at}.comment", "must be a string")
        for key in ("text", "template"):
            if not (isinstance(sub.get(key), str) and sub.get(key)):
                _fail(f"{at}.{key}", "must be a non-empty string")
        if not (_is_int(sub.get("count")) and sub["count"] >= 1):
            _fail(f"{at}.count", "must be an integer >= 1")
        if sub["text"] in texts:
            _fail(f"{at}.text", f"{sub['text']!r} is already substituted")
        texts.add(sub["text"])
        fields = _fields(sub["template"], f"{at}.template", parameters,
                         derived)
        if not fields:
            _fail(f"{at}.template", "uses no parameter")
        used.update(_reads(fields, derive))
        # the template renders back to the text
        _public_values(sub, parameters, at, derived_public)
        for language in _LANGUAGES:
            if language not in sub:
                continue
            other = sub[language]
            where_other = f"{at}.{language}"
            if not isinstance(other, dict) or set(other) != {"text",
                                                             "template"}:
                _fail(where_other, "must be an object with text and template")
            for key in ("text", "template"):
                if not (isinstance(other[key], str) and other[key]):
                    _fail(f"{where_other}.{key}", "must be a non-empty string")
            if (_reads(_fields(other["template"], f"{where_other}.template",
                               parameters, derived), derive)
                    != _reads(fields, derive)):
                _fail(f"{where_other}.template",
                      "must use the same parameters as the template")
            _public_values({**other, "count": sub["count"]}, parameters,
                           where_other, derived_public)
    for name in parameters:
        if name not in used:
            _fail(f"{where}: parameters.{name}",
                  "is used by no substitution")
    return spec


def _reads(fields, derive):
    """The parameters that template fields read (a derived value: its
    function's arguments)."""
    names = set()
    for field in fields:
        name = _FIELD.match(field).group(1)
        names.update(_arguments(derive[name]) if name in derive else [name])
    return names


def _arguments(function):
    return list(inspect.signature(function).parameters)


def _derived(spec, values, where="spec"):
    """{derived name: text} computed from ``values`` (list parameters)."""
    out = {}
    for name, function in spec.get("derive", {}).items():
        text = function(**{arg: values[arg] for arg in _arguments(function)})
        if not isinstance(text, str):
            _fail(f"{where}: derived.{name}", f"must return text, not "
                  f"{type(text).__name__}")
        out[name] = text
    return out


def load_spec(path):
    """Read and validate ``assignments/grading/NN_x.json``.

    The functions of its ``derived`` values come from ``NN_x.py`` beside it.
    """
    path = Path(path)
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ValueError(f"variant spec: path {str(path)!r}: cannot read "
                         f"({err})") from err
    except json.JSONDecodeError as err:
        raise ValueError(f"variant spec: {path.name}: not valid JSON "
                         f"({err})") from err
    if isinstance(spec, dict) and "derive" in spec:
        _fail(f"{path.name}: derive", "is set from the module beside the "
              "spec, not in the JSON")
    module = path.with_suffix(".py")
    if isinstance(spec, dict) and spec.get("derived"):
        if not module.is_file():
            _fail(f"{path.name}: derived", f"needs {module.name} beside it")
        loader = importlib.util.spec_from_file_location(
            f"posenc_variant_{path.stem}", module)
        code = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(code)
        spec["derive"] = {name: getattr(code, name, None)
                          for name in spec["derived"]
                          if callable(getattr(code, name, None))}
    return validate_spec(spec, where=path.name)


def _public_values(sub, parameters, at="substitution", derived=None):
    """{parameter: public value as text} read from ``sub['text']``.

    A list parameter's public value is its first choice; an int parameter's
    is whatever the template's field matches in the text.
    """
    pattern, groups = [], []
    for literal, field, _spec, _conv in string.Formatter().parse(
            sub["template"]):
        pattern.append(re.escape(literal))
        if field is None:
            continue
        name, key = _FIELD.match(field).groups()
        if derived is not None and name in derived:
            pattern.append(re.escape(derived[name]))
            continue
        group = f"g{len(groups)}"
        groups.append((group, name))
        choices = parameters[name]["choices"]
        if choices == "int":
            pattern.append(f"(?P<{group}>-?[0-9]+)")
        elif key is not None:  # named texts: the first choice's
            pattern.append(f"(?P<{group}>{re.escape(choices[0][key])})")
        else:
            pattern.append(f"(?P<{group}>{re.escape(str(choices[0]))})")
    match = re.fullmatch("".join(pattern), sub["text"], flags=re.S)
    if not match:
        _fail(f"{at}.template", f"{sub['template']!r} with the public values "
              f"(the first choices) does not give the text {sub['text']!r}")
    values = {}
    for group, name in groups:
        choices = parameters[name]["choices"]
        value = (match[group] if choices == "int" or not isinstance(
            choices[0], dict) else choices[0])
        if values.setdefault(name, value) != value:
            _fail(f"{at}.template", f"{{{name}}} matches two values in "
                  f"{sub['text']!r}")
    return values


def public_values(spec):
    """{parameter: public value as text}, read from the substitutions."""
    validate_spec(spec)
    parameters = spec.get("parameters", {})
    first = _first_choices(parameters)
    derived = _derived(spec, first)
    values = {}
    for sub in spec.get("substitutions", []):
        for name, value in _public_values(sub, parameters,
                                          derived=derived).items():
            if values.setdefault(name, value) != value:
                _fail(f"parameters.{name}", f"the public notebook "
                      f"uses two values, {values[name]!r} and {value!r}")
    # a parameter that only a derived value reads: its first choice
    return {**first, **values}


def _first_choices(parameters):
    """{parameter: its first (public) choice} for the list parameters."""
    return {name: p["choices"][0] if isinstance(p["choices"][0], dict)
            else str(p["choices"][0]) for name, p in parameters.items()
            if p["choices"] != "int"}


def _check_seed(seed):
    if seed is not None and not (_is_int(seed) and seed >= 0):
        raise ValueError(f"seed must be None (the public notebook) or an "
                         f"integer >= 0, not {seed!r}")


def draw_parameters(spec, seed):
    """{parameter: value as text} of the variant ``seed`` (None: public)."""
    _check_seed(seed)
    public = public_values(spec)
    parameters = spec.get("parameters", {})
    if seed is None:
        values = {name: public[name] for name in sorted(parameters)}
        return {**values, **_derived(spec, values)}
    rng = np.random.default_rng(seed)
    values = {}
    for name in sorted(parameters):
        param = parameters[name]
        if param["choices"] == "int":
            low = param.get("min", INT_RANGE[0])
            high = param.get("max", INT_RANGE[1])
            while True:
                value = str(int(rng.integers(low, high + 1)))
                if value != public[name]:
                    break
        else:
            others = [c if isinstance(c, dict) else str(c)
                      for c in param["choices"][1:]]
            value = others[int(rng.integers(len(others)))]
        values[name] = value
    return {**values, **_derived(spec, values)}


def _cell_text(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _pattern(spec):
    texts = sorted((s["text"] for s in spec.get("substitutions", [])),
                   key=len, reverse=True)
    return re.compile("|".join(re.escape(t) for t in texts)) if texts else None


def count_texts(nb, spec):
    """{text: occurrences in the cells of ``nb``}, counted as substituted."""
    pattern = _pattern(spec)
    counts = {s["text"]: 0 for s in spec.get("substitutions", [])}
    if pattern is not None:
        for cell in nb["cells"]:
            for match in pattern.finditer(_cell_text(cell)):
                counts[match.group(0)] += 1
    return counts


def check_counts(nb, spec):
    """ValueError unless every text occurs ``count`` times in ``nb``."""
    counts = count_texts(nb, spec)
    for number, sub in enumerate(spec.get("substitutions", [])):
        found = counts[sub["text"]]
        if found != sub["count"]:
            raise ValueError(
                f"variant spec: substitutions[{number}].count: the "
                f"public notebook has {found} occurrence(s) of "
                f"{sub['text']!r}, the spec says {sub['count']}; the "
                "notebook or the spec has drifted")


def localized(spec, language="en"):
    """The spec for the assignment in ``language``: each substitution that
    gives its prose in that language (``"zh_CN": {"text", "template"}``)
    uses it; the others (code, numbers, math) are the same in every
    language."""
    if language == "en":
        return spec
    if language not in _LANGUAGES:
        raise ValueError(f"language: {language!r} is not one of en, "
                         f"{', '.join(_LANGUAGES)}")
    spec = copy.deepcopy(spec)
    for sub in spec.get("substitutions", []):
        other = sub.pop(language, None)
        for name in _LANGUAGES:
            sub.pop(name, None)
        if other is not None:
            sub.update(other)
    return spec


def make_variant(nb, spec, seed, language="en"):
    """A copy of the notebook ``nb`` with the variant ``seed``'s constants.

    ``nb`` is the public instructor notebook (an nbformat node or a plain
    dict), in ``language`` (its prose translated, see ``localized``); it is
    not changed. ``seed`` None gives an unchanged copy. The spec is
    validated and its counts checked against ``nb`` first (also for seed
    None, so a drifted spec fails on every call).
    """
    validate_spec(spec)
    spec = localized(spec, language)
    _check_seed(seed)
    check_counts(nb, spec)
    variant = copy.deepcopy(nb)
    if seed is None:
        return variant
    return _render(variant, spec, draw_parameters(spec, seed))


def _render(variant, spec, values):
    """``variant`` (a copy) with the substitutions at ``values``."""
    replace = {s["text"]: s["template"].format(**values)
               for s in spec.get("substitutions", [])}
    pattern = _pattern(spec)
    if pattern is None:
        return variant
    for cell in variant["cells"]:
        text = _cell_text(cell)
        new = pattern.sub(lambda m: replace[m.group(0)], text)
        if new != text:
            cell["source"] = new
            # A code cell's old outputs could show the public values.
            if cell.get("cell_type") == "code":
                cell["outputs"] = []
                cell["execution_count"] = None
    return variant


def every_choice(nb, spec):
    """Variants of ``nb`` that together show every choice of every
    parameter: one per choice other than the public one, the other
    parameters at their public values. For what must hold for every
    variant whatever its seed (every check message a variant's tests can
    write has its translation, ``labels.py``)."""
    validate_spec(spec)
    check_counts(nb, spec)
    public = draw_parameters(spec, None)
    for name, param in sorted(spec.get("parameters", {}).items()):
        if param["choices"] == "int":
            continue
        for choice in param["choices"][1:]:
            values = {key: value for key, value in public.items()
                      if key in spec["parameters"]}
            values[name] = choice if isinstance(choice, dict) else str(choice)
            values.update(_derived(spec, {
                key: value for key, value in values.items()
                if spec["parameters"][key]["choices"] != "int"}))
            yield _render(copy.deepcopy(nb), spec, values)


def new_seed():
    """A class seed nobody can guess: 63 random bits (``secrets``)."""
    return secrets.randbits(63)


def variant_name(seed):
    """A label for the teacher's reports: "public" or "variant 1a2b3c4d".

    It is a digest of the seed and must still stay on the teacher's side:
    small seeds can be found again by trying them all.
    """
    _check_seed(seed)
    if seed is None:
        return "public"
    digest = hashlib.sha256(f"posenc-variant:{int(seed)}".encode()).hexdigest()
    return f"variant {digest[:8]}"


def describe(spec, seed):
    """Lines telling the teacher what the variant ``seed`` changes."""
    validate_spec(spec)
    _check_seed(seed)
    if seed is None:
        return ["public notebook (no variant)"]
    public = draw_parameters(spec, None)
    values = draw_parameters(spec, seed)
    lines = [f"{variant_name(seed)}:"]
    lines += [f"  {name}: {public[name]} -> {values[name]}"
              for name in sorted(values)]
    for sub in spec.get("substitutions", []):
        lines.append(f"  {sub['text']!r} -> "
                     f"{sub['template'].format(**values)!r} "
                     f"({sub['count']}x)")
    return lines
