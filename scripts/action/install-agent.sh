#!/usr/bin/env bash
# Installs the agent CLI from npm at the pinned version, when it is not installed yet.
set -euo pipefail
case "${AGENT:?}" in
  claude)
    if command -v claude >/dev/null 2>&1; then
      claude --version
    else
      npm install -g "@anthropic-ai/claude-code@${AGENT_VERSION:?}"
      claude --version
    fi
    ;;
  *)
    echo "::error title=aptitude::agent '${AGENT}' is not supported by this version of the action (claude only)"
    exit 2
    ;;
esac
