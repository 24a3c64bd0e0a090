#!/usr/bin/env bash
# Runs aptitude for the action. Every input arrives as an environment variable, never
# interpolated into this script.
set -uo pipefail

out="${RUNNER_TEMP:-/tmp}/aptitude-report"
mkdir -p "$out"

# One key per job and agent/model, so matrix jobs keep their own comment, check run and
# artifact.
key="${GITHUB_JOB:-aptitude}"
[ -n "${AGENT:-}" ] && key="$key/$AGENT"
[ -n "${MODEL:-}" ] && key="$key/$MODEL"
# Shard jobs of one matrix share job, agent and model: the shard keeps their artifacts apart.
[ -n "${SHARD:-}" ] && key="$key/shard-$SHARD"
export APTITUDE_REPORT_KEY="$key"
artifact="aptitude-$(printf '%s' "$key-${RUNNER_OS:-}-${RUNNER_ARCH:-}" | tr -c 'A-Za-z0-9._-' '-')"

# shellcheck source=names.sh
. "$(dirname "${BASH_SOURCE[0]}")/names.sh"

if [ -n "${MERGE:-}" ]; then
  # The job that merges the shards' results: `actions/download-artifact` with a pattern
  # (and without merge-multiple) leaves one directory per shard artifact under MERGE.
  shopt -s nullglob
  files=("$MERGE"/*/results.json)
  if [ "${#files[@]}" -eq 0 ]; then
    # The directory is named on one line: a line break in it could start a workflow command.
    dir="${MERGE//[$'\r\n']/ }"
    echo "::error title=aptitude::no shard results under '$dir': expected $dir/<artifact>/results.json, as actions/download-artifact writes a pattern of artifacts without merge-multiple"
    exit 2
  fi
  artifact="$(merged_name "$(basename "$(dirname "${files[0]}")")")"
fi
{
  echo "artifact-name=$artifact"
  echo "artifact-dir=$out"
} >> "$GITHUB_OUTPUT"

if [ -n "${MERGE:-}" ]; then
  aptitude merge "${files[@]}" --json "$out/results.json" --html "$out/report.html" --markdown "$out/summary.md" --junit "$out/junit.xml"
  code=$?
  # 0 passed, 1 a test failed or errored: publish either way; 2 the shards do not merge.
  if [ "$code" -le 1 ]; then
    publish=(publish "$out/results.json" --report-path "$out/report.html")
    if [ "${COMMENT:-true}" != "true" ] || [ "${PUBLISH:-true}" != "true" ]; then publish+=(--no-comment); fi
    if [ "${CHECK_RUN:-true}" != "true" ] || [ "${PUBLISH:-true}" != "true" ]; then publish+=(--no-check-run); fi
    export APTITUDE_ARTIFACT_NAME="$artifact"
    [ "${BASELINE:-}" = "auto" ] && publish+=(--baseline github:auto)
    [ -n "${BASELINE:-}" ] && [ "${BASELINE:-}" != "auto" ] && publish+=(--baseline "$BASELINE")
    aptitude "${publish[@]}"
    code=$?
  fi
  if [ "$code" -eq 1 ] && [ "${FAIL_ON_FAILURE:-true}" != "true" ]; then
    echo "::notice title=aptitude::tests failed; fail-on-failure is off"
    exit 0
  fi
  exit "$code"
fi

args=(run --github --json "$out/results.json" --html "$out/report.html" --markdown "$out/summary.md" --junit "$out/junit.xml" --jobs "${JOBS:-4}")
[ -n "${AGENT:-}" ] && args+=(--agent "$AGENT")
[ -n "${MODEL:-}" ] && args+=(--model "$MODEL")
[ -n "${RUNS:-}" ] && args+=(--runs "$RUNS")
[ -n "${MAX_COST:-}" ] && args+=(--max-cost "$MAX_COST")
# Every results artifact can be replayed: the runs' model exchanges travel with it.
[ "${RECORD_MODEL:-true}" = "true" ] && args+=(--record-model)
# A shard job (publish: false) leaves the comment and the check run to the job that merges
# the shards.
if [ "${COMMENT:-true}" != "true" ] || [ "${PUBLISH:-true}" != "true" ]; then args+=(--no-comment); fi
if [ "${CHECK_RUN:-true}" != "true" ] || [ "${PUBLISH:-true}" != "true" ]; then args+=(--no-check-run); fi
# `baseline: auto`: the latest results artifact of this job on the base branch, for the
# comparison and to reuse the runs of unchanged tests (github:auto finds it by this name);
# for a shard job, the merged results of the whole matrix.
export APTITUDE_ARTIFACT_NAME="$artifact"
[ -n "${SHARD:-}" ] && APTITUDE_ARTIFACT_NAME="$(merged_name "$artifact")"
if [ "${BASELINE:-}" = "auto" ]; then
  args+=(--baseline github:auto --reuse github:auto)
elif [ -n "${BASELINE:-}" ]; then
  args+=(--baseline "$BASELINE")
fi
[ -n "${SHARD:-}" ] && args+=(--shard "$SHARD")
[ "${SANDBOX:-on}" = "off" ] && args+=(--sandbox off)

# The event travels with the reports, for the fork-safe `workflow_run` publisher.
[ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "$GITHUB_EVENT_PATH" ] && cp "$GITHUB_EVENT_PATH" "$out/event.json"

# The delegated cgroup setup-sandbox.sh made: this shell into `launch/` (sudo), aptitude
# alone into `run/`, so that it can hand memory and pids to each run's cgroup. A move that
# fails leaves aptitude where it was (its watch holds the limits).
launch=()
if [ -n "${APTITUDE_CGROUP:-}" ] && [ -d "$APTITUDE_CGROUP/launch" ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo -n"
  if echo "$$" | $sudo_cmd tee "$APTITUDE_CGROUP/launch/cgroup.procs" >/dev/null 2>&1; then
    # shellcheck disable=SC2016 # $$ and $@ are the inner shell's.
    launch=(sh -c 'echo "$$" > "$0/run/cgroup.procs" 2>/dev/null; exec "$@"' "$APTITUDE_CGROUP")
  fi
fi

read -r -a paths <<< "${TESTS:-.}"
"${launch[@]}" aptitude "${args[@]}" -- "${paths[@]}"
code=$?

# 0 passed, 1 a test failed or errored, 2 invalid input, 130 interrupted.
if [ "$code" -eq 1 ] && [ "${FAIL_ON_FAILURE:-true}" != "true" ]; then
  echo "::notice title=aptitude::tests failed; fail-on-failure is off"
  exit 0
fi
exit "$code"
