#!/usr/bin/env bash
# The release binary's opt-level, chosen by figures (`bash benches/opt_levels.sh [LEVELS]`):
# for each `opt-level` (default: z s 3) it builds the static PIE exactly as scripts/test
# and release.yml do (the `dist` profile with CARGO_PROFILE_DIST_OPT_LEVEL overriding its
# level, each in its own target directory), then prints
#   - its size in bytes;
#   - transcript parsing: `aptitude transcript --json` on a file of ≥ 100 MB made from the
#     corpus' Claude Code transcripts (best of 3, seconds, and MB/s);
#   - replay: `aptitude run --replay` of the kept Claude Code cassette
#     (tests/data/cassettes/claude), sandboxed, best of 5 (seconds) — aptitude's own share
#     of it is reading the cassette and answering the agent from it.
# It needs the pinned `claude` (`npm install`, as scripts/test does) and bubblewrap.
set -euo pipefail
cd "$(dirname "$0")/.."
levels=("$@")
[ $# -gt 0 ] || levels=(z s 3)
host="$(rustc -vV | sed -n 's/^host: //p')"
rustflags="-C target-feature=+crt-static"
case "$host" in x86_64-*) rustflags="$rustflags -C link-arg=-Wl,--icf=all" ;; esac
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# ≥ 100 MB of real Claude Code transcripts.
big="$work/big.jsonl"
while [ "$(stat -c %s "$big" 2>/dev/null || echo 0)" -lt 100000000 ]; do
  cat tests/data/corpus/claude-stream-json/*.jsonl tests/data/corpus/live/claude-2.1.328/*.jsonl >> "$big"
done
mb=$(( $(stat -c %s "$big") / 1000000 ))

best() { # best of N runs of a command, in seconds
  local n="$1"; shift
  python3 - "$n" "$@" <<'PY'
import subprocess, sys, time
n = int(sys.argv[1]); cmd = sys.argv[2:]
best = None
for _ in range(n):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    d = time.perf_counter() - t
    best = d if best is None else min(best, d)
print(f"{best:.3f}")
PY
}

printf '| opt-level | bytes | parse %s MB (s) | MB/s | replay (s) |\n|---|---|---|---|---|\n' "$mb"
for level in "${levels[@]}"; do
  target_dir="target/opt-$level"
  CARGO_PROFILE_DIST_OPT_LEVEL="$level" RUSTFLAGS="$rustflags" \
    cargo build --quiet --profile dist --locked --target "$host" --target-dir "$target_dir"
  bin="$target_dir/$host/dist/aptitude"
  bytes="$(stat -c %s "$bin")"
  parse="$(best 3 "$bin" transcript "$big" --json)"
  # The kept cassette, replayed by the real claude; a fresh copy each time.
  replay_dir="$work/replay-$level"
  rm -rf "$replay_dir"
  cp -r tests/data/cassettes/claude "$replay_dir"
  replay="$(cd "$replay_dir" && best 5 "$OLDPWD/$bin" run tests --no-grade \
    --agent-bin "claude=$OLDPWD/node_modules/.bin/claude" --model fake-model --replay recorded.json \
    --json "$replay_dir/out.json")"
  rate="$(python3 -c "print(f'{$mb / $parse:.0f}')")"
  printf '| %s | %s | %s | %s | %s |\n' "$level" "$bytes" "$parse" "$rate" "$replay"
done
