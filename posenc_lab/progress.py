"""A progress line for one training run: live while it runs, never stored.

In a notebook, :class:`ProgressLine` shows one line under the cell and
rewrites it in place (an IPython display with a ``display_id``) as the
steps go by: how many steps are done, the time so far, the steps per second
on this machine and the time left. When the run ends, the line goes back to
its first text, which says only what was trained: the stored output of the
cell (what nbval compares and the book shows) is the same on every machine
and every run, while the reader saw the timing on their own machine as it
ran. nbval reads only the first display of a cell, and nbclient (the
book's build, ``jupyter nbconvert --execute``) keeps its last update:
both are that first text.

Outside IPython (a script, the command line) the line goes to standard
error, rewritten with a carriage return, and ends with a newline.
"""

import sys
import time

__all__ = ["ProgressLine", "format_seconds", "from_templates"]


def format_seconds(seconds):
    """``75.4`` -> ``'1:15'``; ``3725`` -> ``'1:02:05'`` (rounded down)."""
    if not seconds >= 0:  # also NaN
        raise ValueError(f"seconds must be a number >= 0, got {seconds!r}")
    s = int(seconds)
    hours, rest = divmod(s, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def from_templates(text, fields):
    """The ``idle`` text and the ``running`` function of a
    :class:`ProgressLine`, from three :meth:`str.format` templates.

    ``text["idle"]`` is filled with ``fields``; while the run goes,
    ``text["starting"]`` (before a rate is known) and ``text["running"]``
    get ``fields`` and ``done``, ``elapsed`` (as :func:`format_seconds`
    writes it), ``rate`` (steps per second, one decimal) and ``left``.

    >>> idle, running = from_templates(
    ...     {"idle": "{what}", "starting": "{what}: {done} steps",
    ...      "running": "{what}: {done} steps, {rate}/s, {left} left"},
    ...     {"what": "NoPE"})
    >>> idle, running(3, 10, 1.5, None, None)
    ('NoPE', 'NoPE: 3 steps')
    >>> running(20, 100, 2.0, 10.0, 8.0)
    'NoPE: 20 steps, 10.0/s, 0:08 left'
    """
    def running(done, total, elapsed, rate, left):
        now = dict(fields, done=done, elapsed=format_seconds(elapsed))
        if rate is None or left is None:
            return text["starting"].format(**now)
        return text["running"].format(rate=f"{rate:.1f}",
                                      left=format_seconds(left), **now)

    return text["idle"].format(**fields), running


class ProgressLine:
    """One line of progress, for ``total`` steps.

    ``idle`` is the text shown before the first step and again after the
    last; ``running(done, total, elapsed, rate, left)`` gives the text
    while it runs (``elapsed`` and ``left`` in seconds, ``rate`` in steps
    per second; ``left`` is ``None`` until a rate is known). Use it as a
    context manager and call :meth:`tick` once a step (the ``tick``
    argument of :func:`posenc_lab.experiment.run_one`); the line is
    rewritten at most every ``every`` seconds.
    """

    def __init__(self, total, idle, running, *, every=0.5, clock=None):
        if isinstance(total, bool) or not isinstance(total, int) or total < 1:
            raise ValueError(f"total must be an integer >= 1, got {total!r}")
        if not isinstance(idle, str) or not idle:
            raise ValueError(f"idle must be a non-empty str, got {idle!r}")
        if not callable(running):
            raise ValueError(f"running must be callable, got {running!r}")
        if not every >= 0:
            raise ValueError(f"every must be a number >= 0, got {every!r}")
        self.total, self.idle, self.running = total, idle, running
        self.every = every
        self.clock = time.perf_counter if clock is None else clock
        self.done = 0
        self.start = None
        self._last = None
        self._handle = None
        self._stream = None

    # ------------------------------------------------------------ output

    def _show(self, text):
        if self._handle is not None:
            self._handle.update({"text/plain": text}, raw=True)
        elif self._stream is not None:
            self._stream.write("\r" + text)
            self._stream.flush()

    def __enter__(self):
        try:
            from IPython import get_ipython
            from IPython.display import display
        except ImportError:  # pragma: no cover - IPython comes with Jupyter
            get_ipython = None
        shell = get_ipython() if get_ipython is not None else None
        if shell is not None and getattr(shell, "kernel", None) is not None:
            self._handle = display({"text/plain": self.idle}, raw=True,
                                   display_id=True)
        else:
            self._stream = sys.stderr
            self._show(self.idle)
        self.start = self._last = self.clock()
        return self

    def tick(self, k=1):
        """``k`` more steps are done."""
        self.done += k
        now = self.clock()
        if now - self._last >= self.every or self.done >= self.total:
            self._last = now
            elapsed = now - self.start
            rate = self.done / elapsed if elapsed > 0 else None
            left = ((self.total - self.done) / rate
                    if rate else None)
            self._show(self.running(self.done, self.total, elapsed, rate,
                                    left))

    def __exit__(self, *exc):
        self._show(self.idle)
        if self._stream is not None:
            self._stream.write("\n")
            self._stream.flush()
        return False
