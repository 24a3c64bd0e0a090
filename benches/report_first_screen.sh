#!/usr/bin/env bash
# The HTML report of 5,000 tests × 3 runs in Chromium (`bash benches/report_first_screen.sh
# [REPORT.html ...]`): renders it with `cargo bench --bench report_render` (the suite of
# benches/support/suite.rs) unless reports are given — an older build's, to compare — and
# prints, for each, its size, the browser's first-contentful-paint, when the first test's
# name was painted (Element Timing), DOMContentLoaded and load (the navigation timing
# entry), all in ms from navigation start, and how long a test's details take to unpack
# once opened (tests/browser/first-screen.mjs, headless Debian Chromium via playwright-core,
# $CHROMIUM to use another). Targets (issue 43): at most 8 MB, first paint and
# DOMContentLoaded at most 1 s. Figures are printed, not asserted; best of 3 loads.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
reports=("$@")
if [ "${#reports[@]}" -eq 0 ]; then
  REPORT_RENDER_HTML="$work/report.html" cargo bench --quiet --locked --bench report_render >/dev/null
  reports=("$work/report.html")
fi
for report in "${reports[@]}"; do
  for _ in 1 2 3; do node tests/browser/first-screen.mjs "$report"; done > "$work/seen.jsonl"
  python3 - "$report" "$work/seen.jsonl" <<'PY'
import json, os, sys
report, seen = sys.argv[1], [json.loads(l) for l in open(sys.argv[2])]
best = lambda k: min(s[k] for s in seen if s.get(k) is not None)
print(f"{report}: {os.path.getsize(report) / 1e6:.1f} MB (target ≤ 8 MB), {seen[0]['rows']} tests; "
      f"first contentful paint {best('fcpMs')} ms, first test painted {best('firstTestPaintMs')} ms, "
      f"DOMContentLoaded {best('domContentLoadedMs')} ms (targets ≤ 1,000 ms), load {best('loadMs')} ms; "
      f"a test's details unpacked {best('detailsMs')} ms after its click (best of {len(seen)})")
if any(s["errors"] for s in seen):
    sys.exit(f"the page's script failed: {seen[0]['errors']}")
PY
done
