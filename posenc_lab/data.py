"""The data of the experiment: a public-domain text and a copying task.

Two tasks, both the same on every machine and neither downloaded:

* **Character-level language modelling** on *Alice's Adventures in
  Wonderland* (Project Gutenberg EBook #11, shipped in ``data/``; see
  ``data/README.md``). :func:`load_text` returns the book,
  :func:`split_text` its fixed train/validation split (first 90 %, last
  10 %), :class:`CharVocab` the character vocabulary, :func:`lm_batch`
  random training windows and :func:`lm_windows` the non-overlapping
  validation windows of Press et al. (2022).
* **Copying**, one of the synthetic tasks of Kazemnejad et al. (2023):
  ``x_1 ... x_k SEP x_1 ... x_k``, trained on ``k <= K`` and tested on
  longer ``k``; :func:`copy_batch`.
* **Passkey retrieval** (chapter 10), the task of Mohtashami and Jaggi
  (2023) that Chen et al. (2023) use to test extended contexts: a key of
  digits hidden at a random depth in repetitive filler, asked for at the
  end; :func:`passkey_batch`.
"""

import hashlib
from pathlib import Path

import numpy as np
import torch

__all__ = [
    "TEXT_SHA256",
    "load_text",
    "split_text",
    "CharVocab",
    "lm_batch",
    "lm_windows",
    "COPY_SYMBOLS",
    "copy_batch",
    "PASSKEY_DIGITS",
    "PASSKEY_FILLER",
    "PASSKEY_KEY",
    "PASSKEY_QUERY",
    "PASSKEY_VOCAB",
    "passkey_batch",
    "passkey_depths",
]

DATA_DIR = Path(__file__).resolve().parent / "data"
TEXT_SHA256 = "f00b287e63f5ae3442dc5b9c4bf18650adaf3b7f5034f7be5460089b934a0752"
_START = "*** START OF THIS PROJECT GUTENBERG EBOOK"
_END = "*** END OF THIS PROJECT GUTENBERG EBOOK"
_END_LINE = "End of Project Gutenberg's"


def load_text(path=None):
    """The book as a string, without Project Gutenberg's header and footer.

    Checks the file's sha256 (the committed text must be the same on every
    machine), drops the byte-order mark, turns CRLF into LF and keeps the
    lines strictly between the ``*** START`` marker and the "End of
    Project Gutenberg's ..." line before the ``*** END`` marker.
    """
    path = DATA_DIR / "alice.txt" if path is None else Path(path)
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if path.name == "alice.txt" and digest != TEXT_SHA256:
        raise ValueError(
            f"path {path} is not the committed text: sha256 {digest}, "
            f"expected {TEXT_SHA256}")
    text = raw.decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n")
    start = text.index("\n", text.index(_START)) + 1
    end = text.index(_END)
    end = text.rfind(_END_LINE, start, end) if _END_LINE in text else end
    return text[start:end].strip() + "\n"


def split_text(text, valid_fraction=0.1):
    """Fixed split: the first ``1 - valid_fraction`` of the characters
    train, the rest validates (no shuffling, so no sentence is in both)."""
    if not 0 < valid_fraction < 1:
        raise ValueError(
            f"valid_fraction must be in (0, 1), got {valid_fraction!r}")
    cut = int(round(len(text) * (1 - valid_fraction)))
    return text[:cut], text[cut:]


class CharVocab:
    """One token per distinct character of ``text``, in sorted order."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self):
        return len(self.chars)

    def encode(self, text):
        """A string as an int64 array of token ids."""
        return np.array([self.index[c] for c in text], dtype=np.int64)

    def decode(self, ids):
        return "".join(self.chars[int(i)] for i in ids)


def lm_batch(ids, batch_size, n, rng):
    """``batch_size`` random windows of ``n + 1`` tokens of ``ids``.

    Returns ``(x, y)``, int64 tensors of shape ``(batch_size, n)``: the
    inputs and the next characters (``y`` is ``x`` shifted by one).
    ``rng`` is a ``numpy.random.Generator``, so batches follow the seed.
    """
    if len(ids) < n + 1:
        raise ValueError(
            f"n must be below the text's length {len(ids)}, got {n}")
    start = rng.integers(0, len(ids) - n, size=batch_size)
    windows = np.stack([ids[s: s + n + 1] for s in start])
    w = torch.from_numpy(windows)
    return w[:, :-1], w[:, 1:]


def lm_windows(ids, n):
    """Every non-overlapping window of ``n + 1`` tokens, from the start.

    The evaluation of Press et al. (2022): each window is scored on its
    own, so a token at window position ``pos`` sees ``pos`` tokens of
    context. Returns ``(x, y)`` of shape ``(n_windows, n)``.
    """
    count = (len(ids) - 1) // n
    if count < 1:
        raise ValueError(
            f"n must be below the text's length {len(ids)}, got {n}")
    x = ids[: count * n].reshape(count, n)
    y = ids[1: count * n + 1].reshape(count, n)
    return torch.from_numpy(x.copy()), torch.from_numpy(y.copy())


#: Symbols of the copying task; token ``COPY_SYMBOLS`` is the separator.
COPY_SYMBOLS = 16


def copy_batch(batch_size, k_min, k_max, rng):
    """A batch of the copying task of Kazemnejad et al. (2023), section 3.

    Each example is ``x_1 ... x_k SEP x_1 ... x_k`` with ``k`` drawn
    uniformly from ``k_min..k_max`` and each ``x_j`` uniformly from
    ``0..COPY_SYMBOLS - 1``; the separator is token ``COPY_SYMBOLS``.
    Examples are padded at the end (harmless in a causal model).

    Returns ``(x, y, mask)`` of shape ``(batch_size, 2 * k_max)``: inputs,
    next tokens, and ``mask`` True exactly where ``y`` is a copied symbol,
    the only places that are trained and scored. The answer is exactly
    right (greedy decoding reproduces it) when the argmax is right at
    every masked place, since then teacher forcing feeds the model what it
    would have produced itself.
    """
    if not 1 <= k_min <= k_max:
        raise ValueError(
            f"k_min and k_max must satisfy 1 <= k_min <= k_max, got "
            f"{k_min} and {k_max}")
    width = 2 * k_max + 1
    seq = np.full((batch_size, width), COPY_SYMBOLS, dtype=np.int64)
    mask = np.zeros((batch_size, width - 1), dtype=bool)
    k = rng.integers(k_min, k_max + 1, size=batch_size)
    for row, kr in enumerate(k):
        symbols = rng.integers(0, COPY_SYMBOLS, size=kr)
        seq[row, :kr] = symbols
        seq[row, kr + 1: 2 * kr + 1] = symbols
        mask[row, kr: 2 * kr] = True
    s = torch.from_numpy(seq)
    return s[:, :-1], s[:, 1:], torch.from_numpy(mask)


#: Passkey task: tokens ``0..9`` are the key's digits, the next
#: ``PASSKEY_FILLER`` tokens the filler (repeated in this order, as the
#: filler sentences of Mohtashami and Jaggi repeat), then the marker that
#: announces the key and the one that asks for it.
PASSKEY_DIGITS = 10
PASSKEY_FILLER = 8
PASSKEY_KEY = PASSKEY_DIGITS + PASSKEY_FILLER
PASSKEY_QUERY = PASSKEY_KEY + 1
PASSKEY_VOCAB = PASSKEY_QUERY + 1


def passkey_batch(batch_size, n, rng, *, digits=5):
    """A batch of passkey retrieval, ``n`` tokens per example.

    Each example is the token version of the prompt of Mohtashami and
    Jaggi (2023, their ``generate_prompt`` in epfml/landmark-attention,
    ``llama/run_test.py``), which Chen et al. (2023, section 3.2) use too::

        filler(a)  KEY d_1 ... d_D  filler(b)  QUERY d_1 ... d_D

    ``filler(a)`` is ``a`` tokens of the filler cycle (``PASSKEY_DIGITS``,
    ``PASSKEY_DIGITS + 1``, ... ``PASSKEY_KEY - 1``, again and again; each
    example's cycle starts at a random phase), the key is ``D = digits``
    digits drawn uniformly (leading zeros allowed), and ``a`` is drawn
    uniformly from ``0..a + b`` with ``a + b = n + 1 - 2 (D + 1)``, as the
    original draws the length of the filler before the key. The model
    reads the first ``n`` tokens and is scored on the last ``D``: the
    key's digits after ``QUERY``.

    Returns ``(x, y, mask)``, int64, int64 and bool tensors of shape
    ``(batch_size, n)``: inputs, next tokens, and ``mask`` True exactly at
    the ``D`` places where ``y`` is a digit of the asked key (the only
    places trained and scored). As in :func:`copy_batch`, the key is
    retrieved exactly (greedy decoding gives it) when the argmax is right
    at all ``D`` places. :func:`passkey_depths` says where each key was.
    """
    for name, value in (("batch_size", batch_size), ("digits", digits)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    shortest = 2 * (digits + 1) - 1
    if isinstance(n, bool) or not isinstance(n, int) or n < shortest:
        raise ValueError(
            f"n must be an integer >= 2 (digits + 1) - 1 = {shortest} (the "
            f"key, asked for, with its two markers), got {n!r}")
    filler = n + 1 - 2 * (digits + 1)
    seq = np.empty((batch_size, n + 1), dtype=np.int64)
    phase = rng.integers(0, PASSKEY_FILLER, size=batch_size)
    before = rng.integers(0, filler + 1, size=batch_size)
    keys = rng.integers(0, PASSKEY_DIGITS, size=(batch_size, digits))
    cycle = np.arange(n + 1)
    for row in range(batch_size):
        a = before[row]
        fill = PASSKEY_DIGITS + (phase[row] + cycle[:filler]) % PASSKEY_FILLER
        seq[row, :a] = fill[:a]
        seq[row, a] = PASSKEY_KEY
        seq[row, a + 1: a + 1 + digits] = keys[row]
        seq[row, a + 1 + digits: n - digits] = fill[a:]
        seq[row, n - digits] = PASSKEY_QUERY
        seq[row, n + 1 - digits:] = keys[row]
    mask = np.zeros((batch_size, n), dtype=bool)
    mask[:, n - digits:] = True
    s = torch.from_numpy(seq)
    return s[:, :-1], s[:, 1:], torch.from_numpy(mask)


def passkey_depths(x, *, digits=5):
    """Where each example's key sits: the filler before it over all filler.

    ``x`` is the input of :func:`passkey_batch` (made with the same
    ``digits``); returns float64 depths in ``[0, 1]``, 0 for a key at the
    very start and 1 for a key right before the question (Kamradt's
    "needle in a haystack" depth).
    """
    x = torch.as_tensor(x)
    n = x.shape[1]
    filler = n + 1 - 2 * (digits + 1)
    before = (x == PASSKEY_KEY).int().argmax(1).double()
    return (before / filler).numpy() if filler else np.zeros(len(x))
