#!/usr/bin/env bash
# Builds the working corpus fuzz/corpus/<target>/ from the repository's own data, so the
# seeds are not committed twice: real transcripts from tests/data/corpus (and the bundled
# examples' recordings), test files from examples/ and tests/data, results JSON from
# tests/data/results. Line formats are also cut into chunks of 8 lines, which keeps seeds
# small (fast executions) while covering every kind of event.
#
# Usage: fuzz/seed-corpus.sh   (from anywhere; existing corpus files are kept)
# Set APTITUDE=path/to/aptitude to also seed `report` with results of `aptitude analyze`
# on the bundled examples.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
corpus="$root/fuzz/corpus"
data="$root/tests/data"

# seed TARGET FILE...: copies each file whole into the target's corpus.
seed() {
  local target="$1"
  shift
  mkdir -p "$corpus/$target"
  for f in "$@"; do
    [ -f "$f" ] || continue
    cp "$f" "$corpus/$target/$(echo "${f#"$root"/}" | tr '/' '_')"
  done
}

# chunks TARGET FILE...: the whole file plus 8-line pieces of it, for the target and for
# transcript_detect (which sees every transcript).
chunks() {
  local target="$1"
  shift
  for t in "$target" transcript_detect; do
    seed "$t" "$@"
    for f in "$@"; do
      [ -f "$f" ] || continue
      split -l 8 -d -a 3 "$f" "$corpus/$t/$(echo "${f#"$root"/}" | tr '/' '_').part"
    done
  done
}

shopt -s nullglob
c="$data/corpus"
chunks transcript_claude_session "$c"/claude-session-jsonl/*.jsonl "$c"/live/claude-*/session_log_*.jsonl \
  "$root"/examples/hello-script/*.jsonl "$root"/examples/push-to-github/*.jsonl
chunks transcript_claude_stream_json "$c"/claude-stream-json/*.jsonl "$c"/live/claude-*/events_*.jsonl \
  "$c"/live/claude-*/err_*.jsonl "$root"/examples/counter/*.jsonl "$data"/env/*.jsonl "$data"/hostile/*.jsonl
chunks transcript_qwen_stream_json "$c"/live/qwen-*/events_*.jsonl
chunks transcript_qwen_session "$c"/live/qwen-*/session_log_*.jsonl
chunks transcript_codex_exec_json "$c"/codex-exec-json/*.jsonl "$c"/live/codex-*/events_*.jsonl
chunks transcript_codex_rollout "$c"/codex-rollout/*.jsonl "$c"/live/codex-*/session_rollout_*.jsonl
chunks transcript_gemini_stream_json "$c"/live/gemini-*/events_*.jsonl
chunks transcript_gemini_session "$c"/live/gemini-*/session_log_*.jsonl
chunks transcript_copilot_json "$c"/live/copilot-*/events_*.jsonl "$c"/live/copilot-*/session_events_*.jsonl
chunks transcript_opencode_json "$c"/live/opencode-*/events_*.jsonl "$c"/live/kilo-*/events_*.jsonl
chunks transcript_pi_json "$c"/live/pi-*/events_*.jsonl "$c"/live/pi-*/session_log_*.jsonl
chunks transcript_cursor_stream_json "$c"/cursor-stream-json/*.jsonl
chunks transcript_aider_chat "$c"/live/aider-*/chat_history_*.md
k="$data/kiro/stores"
mkdir -p "$corpus/transcript_kiro_conversation"
python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$k"/v1/conversation_value.json \
  > "$corpus/transcript_kiro_conversation/kiro_v1_conversation.jsonl"
seed transcript_detect "$corpus/transcript_kiro_conversation/kiro_v1_conversation.jsonl"
chunks transcript_kiro_session "$k"/v2/cli/*.jsonl
chunks transcript_kiro_kas "$k"/v3/*/*/messages.jsonl
seed transcript_gemini_document "$c"/gemini/*.json "$c"/live/gemini-*/result_json_*.json "$c"/live/*/grading_result_*.json
seed transcript_detect "$c"/gemini/*.json "$c"/live/*/*.json "$c"/live/*/*.md

seed spec_loader "$root"/examples/*/*.aptitude.yaml "$data"/*/*.aptitude.yaml
seed report "$data"/results/*.json
# Text through shared::inert and shared::cut: instruction files, READMEs and docs (prose
# with URLs, em dashes, tables, emoji), and the inputs that once crashed them.
for t in shared_inert shared_cut; do
  seed "$t" "$root"/README.md "$root"/docs/*.md "$root"/fuzz/corpus-regressions/"$t"/*
done
if [ -n "${APTITUDE:-}" ]; then
  mkdir -p "$corpus/report"
  for t in "$root"/examples/*/*.aptitude.yaml "$data"/env/*.aptitude.yaml; do
    # A failing test is a fine seed: only the JSON matters.
    "$APTITUDE" analyze "$t" --json "$corpus/report/analyze_$(basename "$t" .aptitude.yaml).json" \
      >/dev/null 2>&1 || true
  done
fi
for d in "$corpus"/*; do
  echo "$(basename "$d"): $(find "$d" -type f | wc -l) seeds"
done
