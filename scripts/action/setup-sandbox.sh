#!/usr/bin/env bash
# Makes the sandbox work on the runner, before any agent runs: installs bubblewrap and
# strace (Debian/Ubuntu's `bubblewrap` and `strace` packages; strace records what really
# ran in the sandbox, docs/security.md) when they are missing, and, where AppArmor restricts
# unprivileged user namespaces (Ubuntu 24.04 and later: GitHub's ubuntu-24.04 and
# ubuntu-latest runners), lifts that restriction for the job with the documented `sudo`
# step (docs/security.md). Then checks that bubblewrap can make a sandbox; when it can not,
# the step fails here with bubblewrap's words — aptitude would otherwise make every test an
# `error` (it never runs an agent unsandboxed unless `sandbox: off`).
set -euo pipefail
[ "$(uname -s)" = Linux ] || exit 0 # macOS: Seatbelt, built in.
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v strace >/dev/null 2>&1 || missing+=(strace)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "aptitude: installing ${missing[*]} for the sandbox"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
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
# The exec record: strace must trace bubblewrap and what runs inside it. Where it can not
# (a ptrace restriction), runs still run, their results saying the record is absent.
if strace -f -q --seccomp-bpf -e trace=execve -o /dev/null -- env -i PATH=/usr/bin:/bin \
  bwrap --unshare-user --unshare-pid --die-with-parent --ro-bind /usr /usr "${links[@]}" \
  --proc /proc --dev /dev true >/dev/null 2>&1; then
  echo "aptitude: exec record ready ($(strace -V | head -n 1))"
else
  echo "::warning title=aptitude::strace can not trace the sandbox on this runner: runs will have no exec record (docs/security.md)"
fi

# A delegated cgroup v2 for the job's runs, where the runner has one hierarchy (GitHub's
# Ubuntu runners) and sudo: the run's memory.max then counts what the watch can not see
# (shared memory, memfds, tmpfs) and pids.max counts threads and stops a fork storm at the
# limit (docs/security.md, "Bounded runs"). The job's shell moves into `launch/` in
# run.sh (with sudo: a move between the runner's cgroup and this one needs root), and
# aptitude alone into `run/` (a move inside a delegated cgroup needs none), where it makes
# a cgroup of each run. Anything missing here leaves the limits to aptitude's watch.
if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] &&
  { [ -z "$sudo_cmd" ] || sudo -n true 2>/dev/null; }; then
  cg="/sys/fs/cgroup/aptitude-${GITHUB_RUN_ID:-0}-${GITHUB_RUN_ATTEMPT:-0}-$$"
  delegated=""
  if $sudo_cmd mkdir -p "$cg/launch" "$cg/run" 2>/dev/null; then
    # The root's controllers are on already where systemd runs; asking again is harmless.
    echo "+memory +pids" | $sudo_cmd tee /sys/fs/cgroup/cgroup.subtree_control >/dev/null 2>&1 || true
    if echo "+memory +pids" | $sudo_cmd tee "$cg/cgroup.subtree_control" >/dev/null 2>&1 &&
      $sudo_cmd chown -R "$(id -u):$(id -g)" "$cg" 2>/dev/null; then
      delegated=1
    else
      $sudo_cmd rmdir "$cg/launch" "$cg/run" "$cg" 2>/dev/null || true
    fi
  fi
  if [ -n "$delegated" ]; then
    echo "APTITUDE_CGROUP=$cg" >> "${GITHUB_ENV:-/dev/null}"
    echo "aptitude: run limits held by a delegated cgroup v2 ($cg: memory.max, pids.max)"
  else
    echo "aptitude: no delegated cgroup v2 here; run limits are held by aptitude's watch"
  fi
fi
