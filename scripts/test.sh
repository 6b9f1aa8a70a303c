#!/usr/bin/env bash
# Install what the tests need into .venv and run all of them: the module's
# unit, property, reference and doctests, nbval (strict) on every chapter,
# and the browser tests of the HTML book (tests/test_browser.py, in
# Debian's headless chromium, installed here when missing) and the
# grader's tests (in bubblewrap sandboxes, installed when missing). Extra arguments
# go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh requirements-test.txt
.venv/bin/python -m pip install --quiet --no-deps -r requirements-timm.txt
source scripts/_assets.sh
if [ -z "${POSENC_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then
  echo "Installing Debian's chromium for the browser tests"
  posenc_apt_install chromium
  if ! command -v chromium >/dev/null 2>&1; then
    echo "error: the browser tests need chromium (apt-get install chromium," \
      "or set POSENC_CHROMIUM to a Chromium binary)" >&2
    exit 1
  fi
fi
# The grader runs each student's kernel in a bubblewrap sandbox; its tests
# fail (never skip) without it.
if ! command -v bwrap >/dev/null 2>&1; then
  echo "Installing Debian's bubblewrap for the grader's sandbox"
  posenc_apt_install bubblewrap
  if ! command -v bwrap >/dev/null 2>&1; then
    echo "error: the grader's tests need bubblewrap (apt-get install" \
      "bubblewrap)" >&2
    exit 1
  fi
fi
# Browser tests fail (never skip) when the browser or Playwright is missing.
export POSENC_REQUIRE_BROWSER=1
ruff check posenc_core.py posenc_plots posenc_lab tests _ext tools benchmarks
python -m pytest -p no:cacheprovider -n 2 --dist loadfile \
  --nbval chapters tests "$@"
