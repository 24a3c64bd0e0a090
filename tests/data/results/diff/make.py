"""Writes base.json and head.json: two results of one suite for `aptitude diff` and the
HTML run view (tests/it/diff.rs, tests/it/reports.rs). Run from this directory:
    python3 make.py
"""
import json

WS = "/tmp/aptitude-ws-{}/workspace"
USAGE = {"input_tokens": 1200, "output_tokens": 300, "cache_creation_input_tokens": 0,
         "cache_read_input_tokens": 9000, "cost_usd": 0.01, "turns": 3, "duration_ms": 9000}


def call(i, ws, name, inp, output, exit_code=None, error=False, agent="main", ts=None):
    c = {"id": f"toolu_{i}", "name": name, "canonical": name, "input": inp, "output": output,
         "is_error": error, "exit_code": exit_code, "agent": agent}
    if ts:
        c["timestamp"] = ts
    return c


def edit(i, ws):
    return call(i, ws, "Edit", {"file_path": f"{WS.format(ws)}/src/app.py",
                                "old_string": "return a - b", "new_string": "return a + b"},
                "The file has been updated.")


def pytest(i, ws, code):
    out = "1 passed" if code == 0 else "Exit code 1\n1 failed"
    return call(i, ws, "Bash", {"command": "pytest -q", "description": "Run the tests"},
                out, exit_code=code, error=code != 0)


def turn(text, calls, ms, tin=1200, tout=80, agent="main"):
    t = {"agent": agent, "calls": calls, "tokens": {"input": tin, "output": tout, "cache_read": 3000},
         "duration_ms": ms}
    if text:
        t["text"] = text
    return t


def transcript(calls, turns, answer):
    return {"format": "claude-stream-json", "session_id": "s", "agent_version": "claude-code 2.1.328",
            "model": "claude-sonnet-4-5", "tool_calls": calls, "final_text": answer, "usage": USAGE,
            "outcome": {"status": "completed"}, "runs": 1, "warnings": [], "turns": turns}


def assertion(kind, desc, status, line, detail=None):
    return {"kind": kind, "description": desc, "status": status, "line": line, "detail": detail}


def traffic(n, failed_at=None):
    log = []
    for i in range(1, n + 1):
        r = {"index": i, "model": "claude-sonnet-4-5", "status": 200, "input_tokens": 1200,
             "output_tokens": 80, "cache_tokens": 3000, "duration_ms": 900 + i}
        if i == failed_at:
            r.update({"status": 529, "failed": True, "output_tokens": 0})
        log.append(r)
    return {"upstream": "https://api.anthropic.com", "requests": n, "retries": 1 if failed_at else 0,
            "failed": 1 if failed_at else 0, "other_requests": 0, "input_tokens": 1200 * n,
            "output_tokens": 80 * n, "cache_read_input_tokens": 3000 * n,
            "cache_creation_input_tokens": 0, "unmetered": 0, "models": ["claude-sonnet-4-5"],
            "request_log": log}


def test(name, file, status, assertions, tr=None, files=(), model_traffic=None, **extra):
    t = {"name": name, "file": file, "prompt": "Fix the failing test in src/app.py, then run the suite.",
         "status": status, "duration_ms": 9000, "usage": USAGE, "error": None,
         "assertions": assertions, "agent": "claude 2.1.328 (Claude Code)", "agent_id": "claude"}
    if tr:
        t["transcript"] = tr
    if files:
        t["files"] = list(files)
    if model_traffic:
        t["model_traffic"] = model_traffic
    t.update(extra)
    return t


APP_DIFF = ("--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
            "-    return a - b\n+    return a + b\n")
FILES = [{"path": "src/app.py", "change": "modified", "size": 30, "diff": APP_DIFF},
         {"path": "logo.png", "change": "created", "size": 2048, "diff_omitted": "not shown: binary"}]
RAN = "a command matching /pytest/ succeeded"


def fix_test(ws, ran):
    calls = [edit(1, ws)] + ([pytest(2, ws, 0)] if ran else [])
    turns = [turn("The subtraction should be an addition. <script>window.__pwned=1</script>", [0], 2100)]
    if ran:
        turns.append(turn("Now the tests.", [1], 1500))
    turns.append(turn("Fixed `add`." + (" The suite passes." if ran else ""), [], 900))
    a = [assertion("tool", "Edit called with file_path ~ glob \"*app.py\"", "pass", 6),
         assertion("command_succeeded", RAN, "pass" if ran else "fail", 9,
                   None if ran else "no command matched /pytest/; 1 call in all")]
    return test("Fix and test", "tests/fix.aptitude.yaml", "passed" if ran else "failed", a,
                transcript(calls, turns, turns[-1]["text"]), FILES,
                traffic(len(turns) + 1, failed_at=None if ran else 2))


def docs_test(ws):
    calls = [call(1, ws, "Task", {"description": "find docs", "prompt": "Find the docs"}, "README.md"),
             call(2, ws, "Read", {"file_path": f"{WS.format(ws)}/README.md"}, "# Docs", agent="toolu_1"),
             call(3, ws, "mcp__docs__search", {"query": "add"}, "1 hit")]
    turns = [turn("I'll delegate. <script>window.__pwned=1</script>", [0], 800),
             turn("Reading.", [1], 400, agent="toolu_1"),
             turn(None, [2], 600), turn("The docs say add adds; noted.", [], 500)]
    a = [assertion("tool", "Read called", "pass", 5)]
    notes = {"path": "notes.md", "change": "created", "size": 12,
             "diff": "--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1 @@\n+add adds <b>\n"}
    logo = {"path": "logo.png", "change": "created", "size": 2048, "diff_omitted": "not shown: binary"}
    return test("Reads the docs", "tests/docs.aptitude.yaml", "passed", a,
                transcript(calls, turns, "The docs say add adds."), (notes, logo), traffic(4, failed_at=2))


def lint_run(ws, ok, n):
    calls = [call(1, ws, "Bash", {"command": "ruff check ."}, "All checks passed!" if ok else "Exit code 1\nE501",
                  exit_code=0 if ok else 1, error=not ok)]
    if not ok:
        calls.append(call(2, ws, "Bash", {"command": "ruff check --fix ."}, "Exit code 1\nE501",
                          exit_code=1, error=True))
    a = [assertion("command_succeeded", "a command matching /ruff/ succeeded", "pass" if ok else "fail", 7)]
    tr = transcript(calls, [turn("Linting.", list(range(len(calls))), 700), turn("Done.", [], 300)], "Done.")
    return test("Lint", "tests/lint.aptitude.yaml", "passed" if ok else "failed", a, tr, (), traffic(2))


def lint_test(ws, oks):
    runs = [lint_run(f"{ws}{i}", ok, i) for i, ok in enumerate(oks)]
    passed = sum(oks)
    n = len(oks)
    status = "passed" if passed == n else "failed"
    agg = test("Lint", "tests/lint.aptitude.yaml", status,
               [assertion("command_succeeded", "a command matching /ruff/ succeeded",
                          "pass" if passed == n else "fail", 7)])
    agg["runs"] = runs
    agg["repeat"] = {"runs": n, "min_pass": n, "passed": passed, "failed": n - passed, "errors": 0,
                     "skipped": 0, "flaky": 0 < passed < n, "pass_rate": passed / n,
                     "assertions": [{"line": 7, "kind": "command_succeeded",
                                     "description": "a command matching /ruff/ succeeded",
                                     "passed": passed, "failed": n - passed, "other": 0, "flaky": 0 < passed < n}]}
    return agg


def results(tests):
    passed = sum(t["status"] == "passed" for t in tests)
    failed = sum(t["status"] == "failed" for t in tests)
    return {"version": 2, "aptitude_version": "0.1.0", "tests": tests,
            "summary": {"total": len(tests), "passed": passed, "failed": failed, "errors": 0, "skipped": 0,
                        "assertions": {"pass": 0, "fail": 0, "error": 0, "invalid": 0, "skip": 0},
                        "duration_ms": 30000, "usage": USAGE, "tests_without_cost": 0}}


base = results([fix_test("base1", True), docs_test("base2"), lint_test("base3", [True, True, True])])
head = results([docs_test("head2"), fix_test("head1", False), lint_test("head3", [True, False, False])])
for name, r in (("base.json", base), ("head.json", head)):
    with open(name, "w") as f:
        json.dump(r, f, indent=1)
        f.write("\n")
