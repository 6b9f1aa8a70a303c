#!/usr/bin/env bash
# Install what the book needs into .venv and build both editions: English
# into _build/html, Chinese (the same notebooks with the prose of
# locales/zh_CN, written by tools/i18n.py build-zh into _build/zh_src) into
# _build/html/zh. Every notebook is executed afresh, in each edition; a
# failing cell, a warning or anything a cell writes to stderr fails the
# build. A missing or fuzzy translation fails it too; `--allow-missing`
# keeps the English of untranslated paragraphs (for development only).
set -euo pipefail
cd "$(dirname "$0")/.."
allow_missing=()
for arg in "$@"; do
  case "$arg" in
    --allow-missing) allow_missing=(--allow-missing) ;;
    *) echo "usage: bash scripts/book.sh [--allow-missing]" >&2; exit 2 ;;
  esac
done
source scripts/_venv.sh requirements.txt
source scripts/_assets.sh
rm -rf _build
jupyter-book build . -W -n --keep-going
python tools/i18n.py build-zh _build/zh_src "${allow_missing[@]}"
# POSENC_LANG: posenc_plots labels the figures in Chinese.
POSENC_LANG=zh_CN jupyter-book build _build/zh_src --path-output _build/zh \
  -W -n --keep-going
# The Chinese notebooks that learners open in Jupyter (_build/zh_src/chapters)
# get the outputs the build just computed, Chinese figures included.
cp _build/zh/_build/jupyter_execute/chapters/*.ipynb _build/zh_src/chapters/
# The notebooks as learners open them in JupyterLab, in both languages:
# every citation, number and cross-reference written out as the HTML
# shows it (tools/learner_notebooks.py; chapters/ stays MyST).
python tools/learner_notebooks.py _build/learn/en
python tools/learner_notebooks.py _build/learn/zh --source _build/zh_src
mv _build/zh/_build/html _build/html/zh
echo "The book is in $PWD/_build/html/index.html (Chinese: _build/html/zh/index.html)"
echo "For JupyterLab: .venv/bin/jupyter lab _build/learn/en (Chinese: _build/learn/zh)"
