#!/usr/bin/env bash
# Runs fuzz targets one after another, each for SECONDS (default 300), on one core, niced:
# builds the seed corpus (seed-corpus.sh), builds the targets with cargo-fuzz on stable
# Rust (RUSTC_BOOTSTRAP=1, no sanitizer: aptitude forbids unsafe code, so a panic is the
# failure that matters), and keeps going after a crash (fork mode), saving every crashing
# input under fuzz/artifacts/<target>/. See docs/fuzzing.md.
#
# Usage: fuzz/run.sh [SECONDS] [TARGET...]   (all targets when none is named)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-300}"
shift || true
export RUSTC_BOOTSTRAP=1
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^aptitude[-_]fuzz$')
fi
fuzz/seed-corpus.sh >/dev/null
nice -n 19 cargo fuzz build --sanitizer none
for target in "${targets[@]}"; do
  case "$target" in
    spec_loader) dict=fuzz/dicts/spec_loader.dict ;;
    *) dict=fuzz/dicts/json.dict ;;
  esac
  echo "== $target: ${seconds}s"
  nice -n 19 cargo fuzz run --sanitizer none "$target" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -dict="$dict" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -print_final_stats=1 || true
done
echo "crashing inputs (minimize with cargo fuzz tmin, then commit to fuzz/corpus-regressions/):"
find fuzz/artifacts -type f 2>/dev/null || true
