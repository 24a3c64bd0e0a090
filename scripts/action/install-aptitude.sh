#!/usr/bin/env bash
# Installs aptitude for the action: the release asset for this runner, verified against the
# SHA256 sums committed in checksums/, else `cargo install --locked` from the repository.
# The asset is downloaded from `GITHUB_SERVER_URL` (github.com, or a GitHub Enterprise
# server), where the action's repository publishes its releases.
set -euo pipefail

version="${APTITUDE_VERSION:?}"
repo="${APTITUDE_REPOSITORY:-aptitude-dev/aptitude}"
server="${GITHUB_SERVER_URL:-https://github.com}"
case "${RUNNER_OS_NAME:-}/${RUNNER_ARCH_NAME:-}" in
  # Linux binaries link glibc statically (`+crt-static`, see release.yml): no dynamic
  # dependencies, whatever the runner's distribution.
  Linux/X64) target=x86_64-unknown-linux-gnu ;;
  Linux/ARM64) target=aarch64-unknown-linux-gnu ;;
  macOS/X64) target=x86_64-apple-darwin ;;
  macOS/ARM64) target=aarch64-apple-darwin ;;
  *) target="" ;;
esac
bin_dir="${RUNNER_TEMP:-/tmp}/aptitude-${version}/bin"
mkdir -p "$bin_dir"
asset="aptitude-v${version}-${target}.tar.gz"
sums="${ACTION_PATH:?}/checksums/aptitude-v${version}.sha256"

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

if [ -n "$target" ] && [ -f "$sums" ]; then
  expected="$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1 }' "$sums")"
  if [ -n "$expected" ]; then
    archive="${RUNNER_TEMP:-/tmp}/$asset"
    if curl -fsSL --retry 3 -o "$archive" "${server%/}/${repo}/releases/download/v${version}/${asset}"; then
      actual="$(sha256 "$archive")"
      if [ "$actual" != "$expected" ]; then
        echo "::error title=aptitude::checksum mismatch for $asset: expected $expected, got $actual"
        exit 1
      fi
      tar -xzf "$archive" -C "$bin_dir"
      echo "$bin_dir" >> "$GITHUB_PATH"
      "$bin_dir/aptitude" --version
      exit 0
    fi
  fi
fi

echo "::notice title=aptitude::no verified release asset for ${target:-this runner} at v${version}; building with cargo install --locked"
cargo install --locked --git "${server%/}/${repo}" --tag "v${version}" --root "$(dirname "$bin_dir")" aptitude
echo "$bin_dir" >> "$GITHUB_PATH"
"$bin_dir/aptitude" --version
