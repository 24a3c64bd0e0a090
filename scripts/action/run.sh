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
{
  echo "artifact-name=$artifact"
  echo "artifact-dir=$out"
} >> "$GITHUB_OUTPUT"

args=(run --github --json "$out/results.json" --html "$out/report.html" --markdown "$out/summary.md" --junit "$out/junit.xml" --jobs "${JOBS:-4}")
[ -n "${AGENT:-}" ] && args+=(--agent "$AGENT")
[ -n "${MODEL:-}" ] && args+=(--model "$MODEL")
[ -n "${RUNS:-}" ] && args+=(--runs "$RUNS")
[ -n "${MAX_COST:-}" ] && args+=(--max-cost "$MAX_COST")
# A shard job (publish: false) leaves the comment and the check run to the job that merges
# the shards.
if [ "${COMMENT:-true}" != "true" ] || [ "${PUBLISH:-true}" != "true" ]; then args+=(--no-comment); fi
if [ "${CHECK_RUN:-true}" != "true" ] || [ "${PUBLISH:-true}" != "true" ]; then args+=(--no-check-run); fi
# `baseline: auto`: the latest results artifact of this job on the base branch, for the
# comparison and to reuse the runs of unchanged tests (github:auto finds it by this name).
export APTITUDE_ARTIFACT_NAME="$artifact"
if [ "${BASELINE:-}" = "auto" ]; then
  args+=(--baseline github:auto --reuse github:auto)
elif [ -n "${BASELINE:-}" ]; then
  args+=(--baseline "$BASELINE")
fi
[ -n "${SHARD:-}" ] && args+=(--shard "$SHARD")

# The event travels with the reports, for the fork-safe `workflow_run` publisher.
[ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "$GITHUB_EVENT_PATH" ] && cp "$GITHUB_EVENT_PATH" "$out/event.json"

read -r -a paths <<< "${TESTS:-.}"
aptitude "${args[@]}" -- "${paths[@]}"
code=$?

# 0 passed, 1 a test failed or errored, 2 invalid input, 130 interrupted.
if [ "$code" -eq 1 ] && [ "${FAIL_ON_FAILURE:-true}" != "true" ]; then
  echo "::notice title=aptitude::tests failed; fail-on-failure is off"
  exit 0
fi
exit "$code"
