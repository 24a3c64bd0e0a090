#!/usr/bin/env bash
# What the exec record costs (`bash benches/exec_record.sh [RUNS]`): the kept Claude Code
# cassette (tests/data/cassettes/claude) replayed by the real `claude`, sandboxed, with the
# tracer (strace on PATH, as scripts/test and the action install it) and without it (a
# PATH that holds bubblewrap but no strace: each run's `execs` then says `absent`). Prints
# the median and best wall time of RUNS runs (default 7) of each, alternated so that the
# machine's load weighs on both alike, and the exec count of the last traced run.
# It needs the pinned `claude` (`npm install`), bubblewrap, strace and a built aptitude
# (APTITUDE=path, default target/debug/aptitude under CARGO_TARGET_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-7}"
bin="${APTITUDE:-${CARGO_TARGET_DIR:-target}/debug/aptitude}"
bin="$(realpath "$bin")"
root="$PWD"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# No strace here: bubblewrap and the tools a run of aptitude calls, nothing else.
mkdir "$work/bin"
for tool in bwrap git sh bash env; do
  found="$(command -v "$tool" || true)"
  [ -z "$found" ] || ln -s "$found" "$work/bin/$tool"
done
one() { # one replay, PATH as given: prints seconds and the run's execs status
  local path="$1" dir="$work/run"
  rm -rf "$dir"
  cp -r tests/data/cassettes/claude "$dir"
  (cd "$dir" && python3 - "$bin" "$root" "$path" <<'PY'
import json, os, subprocess, sys, time
bin, root, path = sys.argv[1], sys.argv[2], sys.argv[3]
t = time.perf_counter()
subprocess.run([bin, "run", "tests", "--no-grade",
                "--agent-bin", f"claude={root}/node_modules/.bin/claude",
                "--model", "fake-model", "--replay", "recorded.json", "--json", "out.json"],
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
               env={**os.environ, "PATH": path})
d = time.perf_counter() - t
tests = json.load(open("out.json"))["tests"]
execs = [t.get("execs") or {} for t in tests]
print(f"{d:.3f} {','.join(e.get('status', 'none') for e in execs)} {sum(e.get('execs', 0) for e in execs)}")
PY
  )
}
traced=() bare=()
for _ in $(seq "$runs"); do
  read -r s status n < <(one "$PATH")
  [ "$status" != "${status//absent/}" ] && { echo "the traced run has no record: $status" >&2; exit 1; }
  traced+=("$s"); execs="$n"
  read -r s status _ < <(one "$work/bin")
  [ "$status" != "${status//recorded/}" ] && { echo "the untraced run has a record: $status" >&2; exit 1; }
  bare+=("$s")
done
python3 - "${#traced[@]}" "${traced[@]}" "${bare[@]}" "$execs" <<'PY'
import statistics, sys
n = int(sys.argv[1]); traced = list(map(float, sys.argv[2:2 + n])); bare = list(map(float, sys.argv[2 + n:2 + 2 * n]))
execs = sys.argv[-1]
mt, mb = statistics.median(traced), statistics.median(bare)
print("| | median (s) | best (s) |\n|---|---|---|")
print(f"| with the exec record | {mt:.3f} | {min(traced):.3f} |")
print(f"| without | {mb:.3f} | {min(bare):.3f} |")
print(f"overhead: {mt - mb:+.3f} s ({(mt / mb - 1) * 100:+.1f} %) on a run of {n} runs each; {execs} execs recorded per traced run")
PY
