#!/usr/bin/env bash
# Makes the sandbox work on the runner, before any agent runs: installs bubblewrap
# (Debian/Ubuntu's `bubblewrap` package) when it is missing, and, where AppArmor restricts
# unprivileged user namespaces (Ubuntu 24.04 and later: GitHub's ubuntu-24.04 and
# ubuntu-latest runners), lifts that restriction for the job with the documented `sudo`
# step (docs/security.md). Then checks that bubblewrap can make a sandbox; when it can not,
# the step fails here with bubblewrap's words — aptitude would otherwise make every test an
# `error` (it never runs an agent unsandboxed unless `sandbox: off`).
set -euo pipefail
[ "$(uname -s)" = Linux ] || exit 0 # macOS: Seatbelt, built in.
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
if ! command -v bwrap >/dev/null 2>&1; then
  echo "aptitude: installing bubblewrap for the sandbox"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq bubblewrap >/dev/null
fi
restrict=/proc/sys/kernel/apparmor_restrict_unprivileged_userns
if [ -r "$restrict" ] && [ "$(cat "$restrict")" = 1 ]; then
  echo "aptitude: AppArmor restricts unprivileged user namespaces here; allowing them for this job (sysctl kernel.apparmor_restrict_unprivileged_userns=0)"
  $sudo_cmd sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 >/dev/null
fi
links=()
for top in /bin /sbin /lib /lib64; do
  if [ -L "$top" ]; then links+=(--symlink "$(readlink "$top")" "$top"); fi
done
if ! said="$(env -i PATH=/usr/bin:/bin bwrap --unshare-user --disable-userns --cap-drop ALL \
  --unshare-pid --unshare-net --die-with-parent --ro-bind /usr /usr "${links[@]}" \
  --proc /proc --dev /dev true 2>&1)"; then
  said="${said//[$'\r\n']/ }"
  echo "::error title=aptitude::the sandbox can not be made on this runner: $said (see docs/security.md, or set sandbox: off)"
  exit 1
fi
echo "aptitude: sandbox ready ($(bwrap --version))"
