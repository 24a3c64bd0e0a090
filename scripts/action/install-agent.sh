#!/usr/bin/env bash
# Installs each agent CLI the run needs, at its pinned version, when it is not installed
# yet: the agents of the `agent` input, and every agent a test file names (`agent:`,
# `agents:`). The pins are the versions aptitude is tested with (package-lock.json,
# tests/requirements.txt); `agent-version` (NAME=VERSION,...) overrides them.
set -euo pipefail

declare -A pins=(
  [claude]=2.1.328 [codex]=0.169.0 [gemini]=0.61.0 [qwen]=0.24.4
  [copilot]=1.0.102 [opencode]=1.18.33 [pi]=0.73.1 [aider]=0.86.2
)
declare -A packages=(
  [claude]=@anthropic-ai/claude-code [codex]=@openai/codex [gemini]=@google/gemini-cli
  [qwen]=@qwen-code/qwen-code [copilot]=@github/copilot [opencode]=opencode-ai
  [pi]=@mariozechner/pi-coding-agent
)

IFS=',' read -ra overrides <<< "${AGENT_VERSION:-}"
for override in "${overrides[@]}"; do
  override="${override// /}"
  [ -z "$override" ] && continue
  if [[ "$override" == *=* ]]; then
    pins["${override%%=*}"]="${override#*=}"
  else
    pins[claude]="$override"
  fi
done

wanted=()
IFS=',' read -ra listed <<< "${AGENT:-claude}"
for name in "${listed[@]}"; do
  name="${name// /}"
  # NAME@VERSION: aptitude installs that release into its own cache when the tests run.
  [[ "$name" == *@* ]] && continue
  [ -n "$name" ] && wanted+=("$name")
done
# Agents named in test files: `agent: NAME`, `- NAME` / `- {agent: NAME` under `agents:`.
read -ra test_paths <<< "${TESTS:-.}"
while IFS= read -r name; do
  wanted+=("$name")
done < <(
  find "${test_paths[@]}" -type f \( -name '*.aptitude.yaml' -o -name '*.aptitude.yml' \) \
    -exec grep -hoE '^\s*(agent:|-\s*(\{\s*agent:)?)\s*(claude|codex|gemini|qwen|copilot|opencode|pi|aider|cursor)\b' {} + 2>/dev/null |
    grep -oE '(claude|codex|gemini|qwen|copilot|opencode|pi|aider|cursor)$' | sort -u || true
)

declare -A seen=()
for name in "${wanted[@]}"; do
  [ -n "${seen[$name]:-}" ] && continue
  seen[$name]=1
  program="$name"
  [ "$name" = cursor ] && program=cursor-agent
  if command -v "$program" >/dev/null 2>&1; then
    echo "$name: $("$program" --version 2>/dev/null | head -n1)"
    continue
  fi
  case "$name" in
    aider)
      python3 -m pip install --quiet "aider-chat==${pins[aider]}"
      ;;
    cursor)
      echo "::error title=aptitude::the Cursor CLI is not on npm; install it with Cursor's script (curl https://cursor.com/install -fsS | bash) before this step"
      exit 2
      ;;
    *)
      if [ -z "${packages[$name]:-}" ]; then
        echo "::error title=aptitude::unknown agent '$name' (known: claude, codex, gemini, qwen, copilot, opencode, pi, aider, cursor)"
        exit 2
      fi
      npm install -g "${packages[$name]}@${pins[$name]}"
      ;;
  esac
  echo "$name: $("$program" --version 2>/dev/null | head -n1)"
done
