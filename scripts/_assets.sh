# Sourced by book.sh and test.sh: MathJax for the offline book, from the
# npm registry at the version pinned in package.json / package-lock.json.
if ! command -v npm >/dev/null 2>&1; then
  echo "error: npm (Node.js 18 or newer) is needed to install MathJax" >&2
  exit 1
fi
npm ci --no-audit --no-fund --loglevel=error
