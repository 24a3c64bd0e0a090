#!/usr/bin/env bash
# aptitude's own peak memory while an agent floods its stdout (`bash benches/stream_flood.sh
# [BYTES]`, default 1.5 GiB): a stand-in `claude` prints Claude Code's init event, then one
# line of BYTES bytes, then a result. aptitude runs it sandboxed, with `--record`, and the
# script prints aptitude's peak RSS (the largest of aptitude and what it waited for: the
# stand-in's processes are small), the run's verdict and error, and the recorded
# transcript's size. aptitude must stay bounded: a line is cut at 16 MiB, the stream at
# 256 MiB, `--record` keeps 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
bytes="${1:-1610612736}"
cargo build --quiet --release --locked
bin="$PWD/target/release/aptitude"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tests/ws" "$work/agent"
cat > "$work/agent/claude" <<EOF
#!/bin/sh
if [ "\$1" = --version ]; then echo "2.1.328 (Claude Code)"; exit 0; fi
echo '{"type":"system","subtype":"init","session_id":"flood","tools":["Bash"],"model":"m"}'
head -c $bytes /dev/zero | tr '\0' x
echo
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","num_turns":1,"session_id":"flood"}'
EOF
chmod +x "$work/agent/claude"
printf 'name: flood\nprompt: flood\nassertions:\n  - tool: Bash\n    called: false\n' > "$work/tests/ws/flood.aptitude.yaml"
cd "$work"
python3 - "$bin" "$work" <<'PY'
import json, os, subprocess, sys, time
bin, work = sys.argv[1], sys.argv[2]
cmd = [bin, "run", "tests", "--no-grade", "--no-gateway", "--record",
       "--agent-bin", f"claude={work}/agent/claude", "--json", f"{work}/results.json"]
t = time.perf_counter()
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(p.pid, 0)
wall = time.perf_counter() - t
r = json.load(open(f"{work}/results.json"))["tests"][0]
recorded = f"{work}/tests/ws/flood.transcript.jsonl"
size = os.path.getsize(recorded) if os.path.exists(recorded) else 0
print(f"peak RSS {usage.ru_maxrss / 1024:.0f} MiB, {wall:.1f} s; status {r['status']}, "
      f"kind {r.get('error_kind')}: {r.get('error')}; recorded transcript {size} bytes")
PY
