#!/usr/bin/env bash
# Install what the book needs into .venv and build it into _build/html.
# Every notebook is executed afresh; a failing cell, a warning or anything a
# cell writes to stderr fails the build.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh requirements.txt
source scripts/_assets.sh
rm -rf _build
jupyter-book build . -W -n --keep-going
echo "The book is in $PWD/_build/html/index.html"
