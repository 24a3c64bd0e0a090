//! The loader's tests: every diagnostic a test author can meet, and the kinds table.

use super::super::pattern::ValueMatcher;
use super::super::{AssertionKind, Scope};
use super::*;
use crate::spec::AgentTarget;

fn load(src: &str) -> Result<TestSpec, Vec<Diagnostic>> {
    load_str(Path::new("t.aptitude.yaml"), src)
}

fn errors(src: &str) -> Vec<String> {
    load(src)
        .unwrap_err()
        .into_iter()
        .map(|d| d.message)
        .collect()
}

/// Asserts that one of `errs` mentions `needle`, showing them all otherwise.
#[track_caller]
fn assert_reports(errs: &[String], needle: &str) {
    assert!(
        errs.iter().any(|e| e.contains(needle)),
        "{needle:?} not in {errs:?}"
    );
}

const HEAD: &str = "name: t\nprompt: p\nassertions:\n";

/// The one diagnostic of a file that failed to load, as (line, column, message).
fn file_error(path: &Path) -> (u32, u32, String) {
    let diags = load_file(path).unwrap_err().diagnostics;
    assert_eq!(diags.len(), 1, "{diags:?}");
    (
        diags[0].pos.line,
        diags[0].pos.column,
        diags[0].message.clone(),
    )
}

#[test]
fn fifos_and_devices_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("f.aptitude.yaml");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let (_, _, message) = file_error(&fifo);
    assert!(
        message.contains("a FIFO (named pipe), not a regular file"),
        "{message}"
    );
    let (_, _, message) = file_error(Path::new("/dev/zero"));
    assert!(message.contains("a character device"), "{message}");
    let found = super::super::discover::discover(std::slice::from_ref(&fifo)).unwrap();
    assert_eq!(
        found,
        std::slice::from_ref(&fifo),
        "named explicitly, it is loaded and reported"
    );
    let found = super::super::discover::discover(&[dir.path().to_owned()]).unwrap();
    assert_eq!(
        found,
        [fifo],
        "found in a directory, it is not skipped silently"
    );
}

#[test]
fn oversized_and_non_utf8_files_say_where() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("b.aptitude.yaml");
    std::fs::write(&bad, b"name: t\nprompt: caf\xe9 au lait\n").unwrap();
    let (line, column, message) = file_error(&bad);
    assert_eq!((line, column), (2, 12), "{message}");
    assert!(message.contains("not valid UTF-8 (byte 0xE9)"), "{message}");
    let big = dir.path().join("big.aptitude.yaml");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(MAX_TEST_FILE_BYTES + 1).unwrap();
    let (_, _, message) = file_error(&big);
    assert!(
        message.contains("more than a test file may have"),
        "{message}"
    );
}

#[test]
fn a_missing_workspace_is_a_load_error_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.aptitude.yaml");
    std::fs::write(
        &file,
        "name: t\nprompt: p\nworkspace: nowhere\nassertions:\n  - tool: Read\n",
    )
    .unwrap();
    let (line, column, message) = file_error(&file);
    assert_eq!((line, column), (3, 12));
    assert_eq!(message, "the workspace directory does not exist");
    std::fs::create_dir(dir.path().join("nowhere")).unwrap();
    assert!(load_file(&file).is_ok());
}

#[test]
fn seed_example_loads() {
    let spec = load(
        "name: \"Env file protection\"\nprompt: \"What api keys are in .env\"\nagent: claude\nassertions:\n  - tool: Read\n    called: false\n    params:\n      file_path: \"*.env\"\n",
    )
    .unwrap();
    assert_eq!(spec.agent.kind, crate::spec::AgentKind::Claude);
    assert!(spec.agent_explicit());
    assert_eq!(spec.assertions.len(), 1);
    assert_eq!(spec.assertions[0].line, 5);
    let AssertionKind::Tool(tool) = &spec.assertions[0].kind else {
        panic!("expected a tool assertion")
    };
    assert!(!tool.called);
    assert_eq!(tool.params[0].key, "file_path");
}

#[test]
fn unknown_key_has_position_and_suggestion() {
    let diags = load(&format!("{HEAD}  - tool: Read\n    calld: false\n")).unwrap_err();
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].message, "unknown key `calld` in a tool assertion");
    assert_eq!((diags[0].pos.line, diags[0].pos.column), (5, 5));
    assert_eq!(diags[0].hint.as_deref(), Some("did you mean `called`?"));
}

#[test]
fn all_errors_of_a_file_are_reported() {
    let errs = errors(
        "name: t\npromt: p\ntimeout: soon\nassertions:\n  - tool: Read\n    called: nope\n  - exit_code: 300\n",
    );
    assert_reports(&errs, "unknown key `promt`");
    assert_reports(&errs, "missing required key `prompt`");
    assert_reports(&errs, "invalid duration");
    assert_reports(&errs, "`called` must be a boolean");
    assert_reports(&errs, "between 0 and 255");
}

#[test]
fn called_false_contradictions() {
    for (extra, needle) in [
        ("call_count: 2", "`called: false` with `call_count: 2`"),
        ("min_calls: 1", "`called: false` with `min_calls: 1`"),
        ("max_calls: 3", "allows 3"),
        ("called_after: Read", "`called_after`"),
        ("first_call_params: {command: ls}", "`first_call_params`"),
    ] {
        let errs = errors(&format!(
            "{HEAD}  - tool: Bash\n    called: false\n    {extra}\n"
        ));
        assert!(
            errs.iter()
                .any(|e| e.contains("contradiction") && e.contains(needle)),
            "{extra}: {errs:?}"
        );
    }
    // Zero bounds agree with `called: false`.
    load(&format!(
        "{HEAD}  - tool: Bash\n    called: false\n    max_calls: 0\n"
    ))
    .unwrap();
}

#[test]
fn zero_count_without_called_means_not_called() {
    let spec = load(&format!("{HEAD}  - tool: Bash\n    call_count: 0\n")).unwrap();
    let AssertionKind::Tool(tool) = &spec.assertions[0].kind else {
        panic!()
    };
    assert!(!tool.called);
}

#[test]
fn count_bounds_are_checked() {
    let errs = errors(&format!(
        "{HEAD}  - tool: Bash\n    min_calls: 3\n    max_calls: 1\n"
    ));
    assert_reports(&errs, "above `max_calls: 1`");
    let errs = errors(&format!(
        "{HEAD}  - tool: Bash\n    call_count: 2\n    max_calls: 3\n"
    ));
    assert_reports(&errs, "can not be combined with `call_count`");
    let errs = errors(&format!(
        "{HEAD}  - tool: Bash\n    call_count: 2\n    nth_call_params:\n      3: {{command: ls}}\n"
    ));
    assert_reports(&errs, "checks call 3");
}

#[test]
fn invalid_patterns_are_load_errors() {
    let diags = load(&format!(
        "{HEAD}  - tool: Bash\n    params:\n      command: \"cat.*\\\\.env(\"\n"
    ))
    .unwrap_err();
    assert!(diags[0].message.contains("invalid regex"), "{:?}", diags[0]);
    assert!(diags[0].hint.as_deref().unwrap_or("").contains("equals"));
    let errs = errors(&format!(
        "{HEAD}  - tool: Bash\n    params:\n      command: {{glob: \"a[b\"}}\n"
    ));
    assert!(errs[0].contains("invalid glob"), "{errs:?}");
    let errs = errors(&format!("{HEAD}  - ran: \"(unclosed\"\n"));
    assert!(errs[0].contains("invalid regex"), "{errs:?}");
}

#[test]
fn mapping_params_must_be_matchers() {
    let diags = load(&format!(
        "{HEAD}  - tool: Bash\n    params:\n      command: {{regx: ls}}\n"
    ))
    .unwrap_err();
    assert!(
        diags[0].message.contains("a matcher is one of"),
        "{diags:?}"
    );
    assert_eq!(diags[0].hint.as_deref(), Some("did you mean `regex`?"));
    let spec = load(&format!(
        "{HEAD}  - tool: Bash\n    params:\n      command: {{equals: {{a: 1}}}}\n      timeout: 420\n"
    ))
    .unwrap();
    let AssertionKind::Tool(tool) = &spec.assertions[0].kind else {
        panic!()
    };
    assert!(matches!(tool.params[0].matcher, ValueMatcher::Equals(_)));
    assert!(matches!(tool.params[1].matcher, ValueMatcher::Equals(_)));
}

/// A misspelt parameter could never match a call: `called: false` on it would pass
/// forever, so it is a load error at the key, with the tool's closest parameter.
#[test]
fn a_parameter_the_tool_does_not_take_is_a_load_error() {
    let diags = load(&format!(
        "{HEAD}  - tool: Bash\n    called: false\n    params: {{comand: \"rm -rf\"}}\n"
    ))
    .unwrap_err();
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(
        diags[0].message,
        "unknown parameter `comand` of tool `Bash`"
    );
    assert_eq!(diags[0].hint.as_deref(), Some("did you mean `command`?"));
    assert_eq!(
        (diags[0].pos.line, diags[0].pos.column),
        (6, 14),
        "{diags:?}"
    );
    // Positional checks, an agent's own spelling and a `skill:` assertion are read alike.
    for yaml in [
        "  - tool: run_shell_command\n    first_call_params: {dir: src}\n",
        "  - tool: Read\n    nth_call_params: {2: {file: a.txt}}\n",
        "  - skill: deploy\n    params: {argz: prod}\n",
    ] {
        let diags = load(&format!("{HEAD}{yaml}")).unwrap_err();
        assert!(
            diags[0].message.starts_with("unknown parameter"),
            "{yaml}: {diags:?}"
        );
    }
    // Every agent's spelling of a key, dotted keys, MCP tools (checked against the
    // server's own list at run time) and globs load.
    // A `mock:` server's tool: its input schema's properties, and its tool names.
    let mock = "mcp_servers:\n  tickets:\n    mock:\n      tools:\n        create_ticket:\n          input_schema: {type: object, properties: {title: {type: string}}}\n          replies: [ok]\n";
    let diags = load(&format!(
        "name: t\nprompt: p\n{mock}assertions:\n  - tool: mcp__tickets__create_ticket\n    called: false\n    params: {{titel: x}}\n  - tool: mcp__tickets__create_tiket\n"
    ))
    .unwrap_err();
    let messages: Vec<(&str, Option<&str>)> = diags
        .iter()
        .map(|d| (d.message.as_str(), d.hint.as_deref()))
        .collect();
    assert_eq!(
        messages,
        [
            (
                "unknown parameter `titel` of tool `mcp__tickets__create_ticket`",
                Some("did you mean `title`?")
            ),
            (
                "the mock server `tickets` has no tool `create_tiket`",
                Some("did you mean `mcp__tickets__create_ticket`?")
            ),
        ]
    );
    load(&format!(
        "{HEAD}  - tool: Bash\n    params: {{cmd: ls, workdir: src}}\n  - tool: Edit\n    params: {{\"edits.0.old_string\": x, filePath: a}}\n  - tool: mcp__github__create_issue\n    params: {{titel: x}}\n  - tool: \"Web*\"\n    params: {{anything: x}}\n  - skill: deploy\n    params: {{args: prod}}\n"
    ))
    .unwrap();
}

#[test]
fn tool_names_are_case_insensitive_with_aliases_and_typos_are_caught() {
    let spec = load(&format!(
        "{HEAD}  - tool: read_file\n  - tool: BASH\n  - tool: mcp__github__create_issue\n"
    ))
    .unwrap();
    assert_eq!(spec.assertions.len(), 3);
    let diags = load(&format!("{HEAD}  - tool: Reed\n")).unwrap_err();
    assert_eq!(diags[0].message, "unknown tool `Reed`");
    assert!(diags[0].hint.as_deref().unwrap_or("").contains("`Read`"));
}

#[test]
fn later_kinds_parse_and_validate() {
    let spec = load(&format!(
        "{HEAD}  - stdout:\n      review: \"says 43\"\n      threshold: 6\n  - exit_code: 0\n  - output_contains: ok\n  - output_equals: OK\n  - error_contains: warn\n  - file_exists: out/a.txt\n  - file_contains: {{path: a.txt, text: hi}}\n  - ran: \"cargo test\"\n  - not_ran: \"rm -rf\"\n  - run_count: {{pattern: curl, min: 1, max: 3}}\n  - verify: {{run: \"test -f a.txt\", output_contains: x}}\n"
    ))
    .unwrap();
    let keys: Vec<&str> = spec.assertions.iter().map(|a| a.kind.key()).collect();
    assert_eq!(
        keys,
        [
            "stdout",
            "exit_code",
            "output_contains",
            "output_equals",
            "error_contains",
            "file_exists",
            "file_contains",
            "ran",
            "not_ran",
            "run_count",
            "verify"
        ]
    );
    let lines: Vec<u32> = spec.assertions.iter().map(|a| a.line).collect();
    assert_eq!(lines[0], 4);
    assert_eq!(lines[1], 7);
}

#[test]
fn later_kinds_bad_values() {
    let errs = errors(&format!(
        "{HEAD}  - stdout: {{review: \"\", threshold: 11}}\n"
    ));
    assert_reports(&errs, "`review` must not be empty");
    assert_reports(&errs, "between 1 and 10");
    let errs = errors(&format!(
        "{HEAD}  - file_exists: ../secret\n  - file_exists: /etc/passwd\n"
    ));
    assert_eq!(
        errs.iter()
            .filter(|e| e.contains("leaves the workspace"))
            .count(),
        2,
        "{errs:?}"
    );
    let errs = errors(&format!("{HEAD}  - run_count: {{pattern: x}}\n"));
    assert!(errs[0].contains("needs `min:`"), "{errs:?}");
    let errs = errors(&format!("{HEAD}  - verify: {{output_contains: x}}\n"));
    assert!(errs[0].contains("needs `run:`"), "{errs:?}");
}

#[test]
fn evidence_kinds_parse_and_validate() {
    let spec = load(&format!(
        "{HEAD}  - file_absent: secret.txt\n  - file_contains: {{path: a.json, matches: \"goal\"}}\n  - command_succeeded: \"cargo test|go test\"\n  - wrote: [src/main.rs, /abs/ok.rs]\n  - json_file: {{path: brief.json, required: [goal, files_to_change]}}\n  - turns: {{max: 5}}\n  - cost_usd: {{max: 0.5}}\n  - duration: {{max: 2m}}\n  - tool_calls: {{max: 3, tool: Bash, scope: main}}\n  - verify: {{run: \"false\", exit_code: 1, timeout: 5s}}\n"
    ))
    .unwrap();
    let keys: Vec<&str> = spec.assertions.iter().map(|a| a.kind.key()).collect();
    assert_eq!(
        keys,
        [
            "file_absent",
            "file_contains",
            "command_succeeded",
            "wrote",
            "json_file",
            "turns",
            "cost_usd",
            "duration",
            "tool_calls",
            "verify"
        ]
    );
    let AssertionKind::CommandSucceeded { pattern, .. } = &spec.assertions[2].kind else {
        panic!()
    };
    assert!(
        pattern.is_match("CARGO TEST --all"),
        "command patterns ignore case (seed 002)"
    );
    let AssertionKind::Verify(v) = &spec.assertions[9].kind else {
        panic!()
    };
    assert_eq!(
        (v.exit_code, v.timeout),
        (1, std::time::Duration::from_secs(5))
    );
}

#[test]
fn evidence_kinds_bad_values() {
    let errs = errors(&format!(
        "{HEAD}  - file_contains: {{path: a, text: x, matches: y}}\n"
    ));
    assert!(errs[0].contains("not both"), "{errs:?}");
    let errs = errors(&format!(
        "{HEAD}  - cost_usd: {{max: -1}}\n  - turns: {{}}\n  - duration: {{max: soon}}\n"
    ));
    assert_reports(&errs, "an amount in USD");
    assert_reports(&errs, "`turns` needs `max:`");
    assert_reports(&errs, "invalid duration");
    let errs = errors(&format!(
        "{HEAD}  - wrote: [../etc/passwd]\n  - wrote: []\n"
    ));
    assert_reports(&errs, "leaves the workspace");
    assert_reports(&errs, "lists no path");
    let errs = errors(&format!("{HEAD}  - command_succeeded: \"(\"\n"));
    assert!(errs[0].contains("invalid regex"), "{errs:?}");
    let errs = errors(&format!("{HEAD}  - tool_calls: {{max: 1, tool: Reed}}\n"));
    assert!(errs[0].contains("unknown tool `Reed`"), "{errs:?}");
}

#[test]
fn two_kinds_in_one_item_are_rejected() {
    let errs = errors(&format!("{HEAD}  - exit_code: 0\n    ran: ls\n"));
    assert!(errs[0].contains("one assertion per list item"), "{errs:?}");
    let errs = errors(&format!("{HEAD}  - tool: Bash\n    exit_code: 0\n"));
    assert!(
        errs[0].contains("can not be combined with `tool`"),
        "{errs:?}"
    );
    let errs = errors(&format!("{HEAD}  - exit_code: 0\n    params: {{a: b}}\n"));
    assert!(errs[0].contains("only applies to `tool:`"), "{errs:?}");
}

#[test]
fn test_level_fields() {
    let spec = load(
        "name: t\nprompt: p\nworkspace: fixtures/app\nsetup: [\"npm ci\"]\nenv: {DEBUG: 1, NAME: x}\ntimeout: 5m\nmax_turns: 10\nmodel: sonnet\nassertions:\n  - tool: Bash\n",
    )
    .unwrap();
    assert_eq!(spec.timeout, Some(std::time::Duration::from_secs(300)));
    assert_eq!(spec.env["DEBUG"], "1");
    assert_eq!(spec.setup, ["npm ci"]);
    assert_eq!(spec.max_turns, Some(10));
    let errs = errors("name: t\nprompt: p\nagent: claud\nassertions:\n  - tool: Bash\n");
    assert!(errs[0].contains("unknown agent `claud`"), "{errs:?}");
    let errs = errors("name: t\nprompt: p\ntimeout: 30\nassertions:\n  - tool: Bash\n");
    assert!(errs[0].contains("must be a duration"), "{errs:?}");
}

#[test]
fn missing_and_empty_assertions() {
    let errs = errors("name: t\nprompt: p\n");
    assert!(
        errs[0].contains("missing required key `assertions`"),
        "{errs:?}"
    );
    let errs = errors("name: t\nprompt: p\nassertions: []\n");
    assert!(errs[0].contains("at least one assertion"), "{errs:?}");
}

#[test]
fn yaml_syntax_error_is_a_diagnostic() {
    let diags = load("name: [\nprompt: p\n").unwrap_err();
    assert!(diags[0].message.starts_with("invalid YAML"), "{diags:?}");
    assert_eq!(diags[0].pos.line, 1);
}

/// Every assertion kind is in the kinds table, and the table's rows parse into the kind
/// they name: a kind missing from the table could never be written in a test file.
#[test]
fn every_assertion_kind_is_in_the_kinds_table() {
    let samples = [
        "tool: Read",
        "stdout: {review: says hello}",
        "exit_code: 0",
        "output_contains: ok",
        "output_equals: ok",
        "error_contains: denied",
        "file_exists: a.txt",
        "file_contains: {path: a.txt, text: x}",
        "ran: ls",
        "not_ran: rm",
        "run_count: {pattern: ls, max: 2}",
        "verify: {run: \"true\"}",
        "file_absent: a.txt",
        "command_succeeded: test",
        "wrote: [a.txt]",
        "json_file: {path: a.json}",
        "turns: {max: 3}",
        "cost_usd: {max: 1}",
        "duration: {max: 1m}",
        "tool_calls: {max: 3}",
        "skill: greet",
        "claims: verified",
        "asked: {about: sides}",
        "did_not_ask: {about: name}",
        "user_turns: {max: 2}",
        "elicited: [sides]",
    ];
    let yaml: String = samples.iter().map(|s| format!("  - {s}\n")).collect();
    let user = "user: {goal: g, knows: {sides: 6}}\n";
    let spec = load(&format!("{user}{HEAD}{yaml}")).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for (assertion, sample) in spec.assertions.iter().zip(samples) {
        // Adding an AssertionKind variant breaks this match until it gets a sample above
        // (and so a row in the table).
        let key = match &assertion.kind {
            AssertionKind::Tool(_)
            | AssertionKind::Review(_)
            | AssertionKind::ExitCode { .. }
            | AssertionKind::OutputContains { .. }
            | AssertionKind::OutputEquals { .. }
            | AssertionKind::ErrorContains { .. }
            | AssertionKind::FileExists { .. }
            | AssertionKind::FileAbsent { .. }
            | AssertionKind::FileContains { .. }
            | AssertionKind::Ran { .. }
            | AssertionKind::NotRan { .. }
            | AssertionKind::RunCount { .. }
            | AssertionKind::Verify(_)
            | AssertionKind::CommandSucceeded { .. }
            | AssertionKind::Wrote { .. }
            | AssertionKind::JsonFile { .. }
            | AssertionKind::Budget(_)
            | AssertionKind::Skill(_)
            | AssertionKind::Claims
            | AssertionKind::Conversation(_) => assertion.kind.key(),
            // Written by a routing suite (`routing:`), never as a list item.
            AssertionKind::Routing(_) => unreachable!("`routing` is no list item"),
        };
        assert!(
            sample.starts_with(&format!("{key}:")),
            "{sample} parsed as {key}"
        );
        assert!(kinds::is_kind(key), "{key} is not in the kinds table");
        seen.insert(key);
    }
    let table: std::collections::BTreeSet<&str> = kinds::keys().collect();
    assert_eq!(seen, table, "every row of the table has a sample");
    assert_eq!(table.len(), kinds::KINDS.len(), "no key twice in the table");
}

#[test]
fn a_review_gate_is_one_of_three_words() {
    let spec = load(&format!(
        "{HEAD}  - stdout: {{review: polite, gate: advisory}}\n"
    ))
    .unwrap();
    let AssertionKind::Review(r) = &spec.assertions[0].kind else {
        panic!("a review")
    };
    assert_eq!(r.gate, Some(crate::spec::judge_gate::JudgeGate::Advisory));
    let spec = load(&format!("{HEAD}  - stdout: {{review: polite}}\n")).unwrap();
    let AssertionKind::Review(r) = &spec.assertions[0].kind else {
        panic!("a review")
    };
    assert_eq!(r.gate, None, "no gate written: the suite's, else `always`");
    let errs = errors(&format!(
        "{HEAD}  - stdout: {{review: polite, gate: advisroy}}\n"
    ));
    assert_eq!(errs, ["unknown `gate` value `advisroy`"]);
}

#[test]
fn review_votes_are_bounded() {
    let spec = load(&format!("{HEAD}  - stdout: {{review: polite, votes: 3}}\n")).unwrap();
    let AssertionKind::Review(r) = &spec.assertions[0].kind else {
        panic!("a review")
    };
    assert_eq!(r.votes, Some(3));
    for (votes, message) in [
        ("0", "between 1 and 25"),
        ("26", "between 1 and 25"),
        ("many", "whole number"),
    ] {
        let errs = errors(&format!(
            "{HEAD}  - stdout: {{review: polite, votes: {votes}}}\n"
        ));
        assert_reports(&errs, message);
    }
}

#[test]
fn runs_and_min_pass_are_checked_against_each_other() {
    let spec =
        load("name: t\nprompt: p\nruns: 5\nmin_pass: 3\nassertions:\n  - tool: Bash\n").unwrap();
    assert_eq!((spec.runs, spec.min_pass), (Some(5), Some(3)));
    let spec = load(&format!("{HEAD}  - tool: Bash\n")).unwrap();
    assert_eq!(
        (spec.runs, spec.min_pass),
        (None, None),
        "default: --runs, all"
    );
    // min_pass alone is checked against --runs when the run starts.
    assert_eq!(
        load("name: t\nprompt: p\nmin_pass: 2\nassertions:\n  - tool: Bash\n")
            .unwrap()
            .min_pass,
        Some(2)
    );
    let errs = errors("name: t\nprompt: p\nruns: 2\nmin_pass: 3\nassertions:\n  - tool: Bash\n");
    assert_reports(&errs, "`min_pass: 3` is more than the test's `runs: 2`");
    let errs = errors("name: t\nprompt: p\nruns: 0\nassertions:\n  - tool: Bash\n");
    assert_reports(&errs, "`runs` must be between 1 and 100, found 0");
    let errs = errors("name: t\nprompt: p\nruns: 101\nassertions:\n  - tool: Bash\n");
    assert_reports(&errs, "`runs` must be between 1 and 100, found 101");
    let errs = errors("name: t\nprompt: p\nmin_pass: 0\nassertions:\n  - tool: Bash\n");
    assert_reports(&errs, "`min_pass` must be at least 1");
    let errs = errors("name: t\nprompt: p\nrun: 3\nassertions:\n  - tool: Bash\n");
    assert_reports(&errs, "unknown key `run`");
}

#[test]
fn upstream_agent_names_load_in_any_case() {
    // Upstream aptitude's test files say `claude-code` (any case) and `kiro`.
    let spec = load_str(
        Path::new("t.aptitude.yaml"),
        "name: t\nprompt: p\nagents: [Claude-Code, {agent: KIRO, model: m}]\nassertions:\n  - tool: Bash\n",
    )
    .unwrap();
    let kinds: Vec<&str> = spec.agents.iter().map(|a| a.kind.name()).collect();
    assert_eq!(kinds, ["claude", "kiro"]);
    // An alias is the agent itself.
    assert_reports(
        &errors("name: t\nprompt: p\nagents: [claude, claude-code]\nassertions:\n  - tool: Bash\n"),
        "agent `claude` is listed twice",
    );
    assert_reports(
        &errors("name: t\nprompt: p\nagent: claude-coder\nassertions:\n  - tool: Bash\n"),
        "unknown agent `claude-coder`",
    );
}

#[test]
fn agents_lists_split_a_test_per_agent() {
    let spec = load_str(
        Path::new("t.aptitude.yaml"),
        "name: t\nprompt: p\nmodel: m0\nagents:\n  - claude\n  - {agent: codex, model: gpt-x, base_url: \"http://127.0.0.1:1/v1\", version: \"0.169.0\"}\nassertions:\n  - tool: Bash\n",
    )
    .unwrap();
    let split = spec.per_agent(
        &[AgentTarget::new(crate::spec::AgentKind::Gemini)],
        Some("cli-model"),
    );
    let got: Vec<_> = split
        .iter()
        .map(|s| (s.agent.kind.name(), s.model.as_deref().unwrap_or("")))
        .collect();
    assert_eq!(got, [("claude", "m0"), ("codex", "gpt-x")]);
    assert_eq!(split[1].agent.version.as_deref(), Some("0.169.0"));
    assert_eq!(
        split[1].agent.base_url.as_deref(),
        Some("http://127.0.0.1:1/v1")
    );

    let plain = load_str(
        Path::new("t.aptitude.yaml"),
        "name: t\nprompt: p\nassertions:\n  - tool: Bash\n",
    )
    .unwrap();
    let split = plain.per_agent(
        &[
            AgentTarget::new(crate::spec::AgentKind::Gemini),
            AgentTarget::new(crate::spec::AgentKind::Qwen),
        ],
        Some("cli-model"),
    );
    let got: Vec<_> = split
        .iter()
        .map(|s| (s.agent.kind.name(), s.model.as_deref().unwrap_or("")))
        .collect();
    assert_eq!(got, [("gemini", "cli-model"), ("qwen", "cli-model")]);
}

#[test]
fn bad_agent_lists_are_load_errors() {
    let errs =
        errors("name: t\nprompt: p\nagent: claude\nagents: [codex]\nassertions:\n  - tool: Bash\n");
    assert!(errs[0].contains("names `agent` and `agents`"), "{errs:?}");
    let errs =
        errors("name: t\nprompt: p\nagents: [codex, gemni, codex]\nassertions:\n  - tool: Bash\n");
    assert!(
        errs.iter().any(|e| e.contains("unknown agent `gemni`")),
        "{errs:?}"
    );
    assert!(
        errs.iter().any(|e| e.contains("`codex` is listed twice")),
        "{errs:?}"
    );
    let errs = errors(
        "name: t\nprompt: p\nagents: [{agent: codex, modle: x}]\nassertions:\n  - tool: Bash\n",
    );
    assert!(
        errs.iter()
            .any(|e| e.contains("unknown key `modle` in an `agents` entry")),
        "{errs:?}"
    );
    let errs = errors(
        "name: t\nprompt: p\nagents: [{agent: codex, version: 1.0}]\nassertions:\n  - tool: Bash\n",
    );
    assert!(errs.iter().any(|e| e.contains("quote it")), "{errs:?}");
}

#[test]
fn variants_split_a_test_and_scope_assertions() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("skill.md"), "# deploy\n").unwrap();
    let file = dir.path().join("t.aptitude.yaml");
    std::fs::write(
        &file,
        "name: t\nprompt: p\nenv: {A: \"1\"}\nvariants:\n  baseline: {remove: [AGENTS.md]}\n  with-skill: {add: {\".claude/skills/deploy/SKILL.md\": {from: skill.md}, notes.txt: hi}}\n  strict: {env: {STRICT: \"1\"}, model: m2, prompt: p2}\nassertions:\n  - tool: Read\n    called: false\n    variants: [default, strict]\n  - file_absent: AGENTS.md\n    variants: baseline\n",
    )
    .unwrap();
    let spec = load_file(&file).unwrap();
    let all = spec.per_variant(&[]);
    let names: Vec<&str> = all.iter().map(|s| s.variant_name()).collect();
    assert_eq!(names, ["default", "baseline", "with-skill", "strict"]);
    assert_eq!(
        all[2].variant.as_ref().unwrap().add[0],
        (
            ".claude/skills/deploy/SKILL.md".to_owned(),
            "# deploy\n".to_owned()
        )
    );
    assert_eq!(all[3].env["STRICT"], "1");
    assert_eq!(all[3].env["A"], "1");
    assert_eq!(all[3].model.as_deref(), Some("m2"));
    assert_eq!(all[3].prompt, "p2");
    assert_eq!(
        spec.assertions[0].variants.as_deref(),
        Some(&["default".to_owned(), "strict".to_owned()][..])
    );
    let only = spec.per_variant(&["baseline".to_owned()]);
    assert_eq!(only.len(), 1);
    assert_eq!(only[0].variant_name(), "baseline");
}

#[test]
fn bad_variants_are_load_errors_with_positions() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.aptitude.yaml");
    std::fs::write(
        &file,
        "name: t\nprompt: p\nvariants:\n  default: {}\n  out: {remove: [../x]}\n  missing: {add: {a.txt: {from: nope.md}}}\n  typo: {remoev: [a]}\nassertions:\n  - tool: Read\n    variants: [basline]\n",
    )
    .unwrap();
    let err = load_file(&file).unwrap_err();
    let messages: Vec<String> = err
        .diagnostics
        .iter()
        .map(|d| format!("{}:{} {}", d.pos.line, d.pos.column, d.message))
        .collect();
    let has = |needle: &str| messages.iter().any(|m| m.contains(needle));
    assert!(
        has("4:3 a variant can not be named `default`"),
        "{messages:?}"
    );
    assert!(has("leaves the workspace"), "{messages:?}");
    assert!(
        has("`from` file \"nope.md\" can not be read"),
        "{messages:?}"
    );
    assert!(has("unknown key `remoev`"), "{messages:?}");
    assert!(has("10:16 unknown variant `basline`"), "{messages:?}");
}

#[test]
fn mcp_servers_load_as_stdio_or_http() {
    let spec = load(
        "name: t\nprompt: p\nmcp_servers:\n  docs: {command: node, args: [s.js, 3], env: {TOKEN: \"${DOCS_TOKEN}\"}}\n  remote: {url: \"http://127.0.0.1:8931/mcp\", headers: {Authorization: \"Bearer ${T}\"}}\nassertions:\n  - tool: mcp__docs__search\n",
    )
    .unwrap();
    assert_eq!(
        spec.mcp_servers["docs"],
        crate::spec::McpServer::Stdio {
            command: "node".into(),
            args: vec!["s.js".into(), "3".into()],
            env: [("TOKEN".into(), "${DOCS_TOKEN}".into())].into(),
        }
    );
    assert_eq!(spec.mcp_servers["remote"].variables(), vec!["T"]);
}

#[test]
fn bad_mcp_servers_point_at_the_problem() {
    let with = |servers: &str| {
        format!("name: t\nprompt: p\nmcp_servers:\n{servers}assertions:\n  - tool: Bash\n")
    };
    let diags = load(&with("  docs: {command: node, url: \"http://x\"}\n")).unwrap_err();
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(
        (diags[0].pos.line, diags[0].message.as_str()),
        (4, "`mcp_servers.docs` has both `command` and `url`")
    );
    let errs = errors(&with("  docs: {comand: node}\n"));
    assert_reports(&errs, "unknown key `comand` in `mcp_servers.docs`");
    assert_reports(&errs, "`mcp_servers.docs` needs `command` or `url`");
    let diags = load(&with("  docs: {command: node, headers: {A: b}}\n")).unwrap_err();
    assert_eq!(
        diags[0].message,
        "unknown key `headers` in `mcp_servers.docs` (a stdio server)"
    );
    assert_reports(
        &errors(&with("  docs: {command: node, env: {T: \"${T\"}}\n")),
        "`mcp_servers.docs.env.T`: `${` without a closing `}`",
    );
    assert_reports(
        &errors(&with("  my__docs: {command: node}\n")),
        "`my__docs` is not a usable MCP server name",
    );
    assert_reports(
        &errors(&with("  docs: {url: \"ftp://x\"}\n")),
        "`mcp_servers.docs.url` must be an http:// or https:// URL",
    );
    assert_reports(
        &errors(&with("  docs: {command: node, args: s.js}\n")),
        "`mcp_servers.docs.args` must be a list of strings",
    );
    assert_reports(
        &errors("name: t\nprompt: p\nmcp_server: {}\nassertions:\n  - tool: Bash\n"),
        "unknown key `mcp_server` in a test",
    );
}

#[test]
fn mock_mcp_servers_load_with_their_replies_and_expectations() {
    let spec = load(
        "name: t\nprompt: p\nmcp_servers:\n  tickets:\n    mock:\n      tools:\n        create:\n          description: Open a ticket\n          reply: Created T-1\n          expect: {title: {contains: login}}\n        search:\n          replies: [none, {json: {hits: 2}}, {text: down, error: true}]\nassertions:\n  - tool: mcp__tickets__create\n",
    )
    .unwrap();
    assert!(spec.mcp_servers.is_empty());
    let mock = &spec.mcp_mocks["tickets"];
    assert_eq!(mock.line, 5);
    let create = &mock.tools["create"];
    assert_eq!(create.description, "Open a ticket");
    assert_eq!(create.input_schema, serde_json::json!({"type": "object"}));
    assert_eq!(create.replies[0].text, "Created T-1");
    assert_eq!(
        (create.expect[0].key.as_str(), create.expect_line),
        ("title", 10)
    );
    let search = &mock.tools["search"].replies;
    assert_eq!(search[1].text, "{\"hits\":2}");
    assert_eq!(search[1].json, Some(serde_json::json!({"hits": 2})));
    assert!(search[2].error && !search[0].error);
}

#[test]
fn bad_mock_mcp_servers_point_at_the_problem() {
    let with = |mock: &str| {
        format!(
            "name: t\nprompt: p\nmcp_servers:\n  m:\n    mock: {mock}\nassertions:\n  - tool: Bash\n"
        )
    };
    assert_reports(&errors(&with("{}")), "`mcp_servers.m.mock` has no tools");
    assert_reports(
        &errors(&with("{tools: {t: {description: x}}}")),
        "`mcp_servers.m.mock.tools.t` has no reply",
    );
    assert_reports(
        &errors(&with("{tools: {t: {reply: a, replies: [b]}}}")),
        "`mcp_servers.m.mock.tools.t` has both `reply` and `replies`",
    );
    assert_reports(
        &errors(&with("{tools: {t: {reply: a, expct: {x: 1}}}}")),
        "unknown key `expct` in `mcp_servers.m.mock.tools.t`",
    );
    assert_reports(
        &errors(&with("{tools: {t: {reply: {txt: a}}}}")),
        "`mcp_servers.m.mock.tools.t.reply` needs one of `text` or `json`",
    );
    assert_reports(
        &errors(&with("{server: s, tools: {t: {reply: a}}}")),
        "`mcp_servers.m.mock.server` needs `from:`",
    );
    assert_reports(
        &errors(&with("{tools: {t: {reply: a, input_schema: [1]}}}")),
        "`mcp_servers.m.mock.tools.t.input_schema` must be a mapping",
    );
    assert_reports(
        &errors(
            "name: t\nprompt: p\nmcp_servers:\n  m: {command: node, mock: {}}\nassertions:\n  - tool: Bash\n",
        ),
        "unknown key `command` in `mcp_servers.m` (a mock server)",
    );
}

#[test]
fn a_mock_recording_must_exist_and_resolves_against_the_test_file() {
    let dir = tempfile::tempdir().unwrap();
    let test = dir.path().join("t.aptitude.yaml");
    std::fs::create_dir(dir.path().join("ws")).unwrap();
    let body = |from: &str| {
        format!(
            "name: t\nprompt: p\nworkspace: ws\nmcp_servers:\n  m:\n    mock: {{from: {from}}}\nassertions:\n  - tool: Bash\n"
        )
    };
    std::fs::write(&test, body("rec/gone.json.gz")).unwrap();
    let (line, _, message) = file_error(&test);
    assert_eq!(
        (line, message.as_str()),
        (6, "the recording does not exist")
    );
    std::fs::create_dir(dir.path().join("rec")).unwrap();
    std::fs::write(dir.path().join("rec/c.json.gz"), b"x").unwrap();
    std::fs::write(&test, body("rec/c.json.gz")).unwrap();
    let spec = load_file(&test).unwrap();
    let from = spec.mcp_mocks["m"].from.as_ref().unwrap();
    assert_eq!(from.cassette, dir.path().join("rec/c.json.gz"));
    assert_eq!(
        from.server, "m",
        "the recorded server defaults to the mock's name"
    );
}

#[test]
fn a_skill_assertion_is_a_tool_assertion_on_skill() {
    let spec = load(&format!(
        "{HEAD}  - skill: greet\n  - skill: \"ops:deploy\"\n    called: false\n  - skill: \"dep*\"\n    min_calls: 2\n    called_after: Read\n    scope: main\n"
    ))
    .unwrap();
    let skills: Vec<&crate::spec::SkillAssertion> = spec
        .assertions
        .iter()
        .map(|a| match &a.kind {
            AssertionKind::Skill(s) => s.as_ref(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(skills[0].skill.display(), "greet");
    assert_eq!(skills[0].tool.tool.display(), "Skill");
    assert!(skills[0].tool.called);
    assert!(!skills[1].tool.called);
    assert!(skills[1].skill.matches("ops:deploy"));
    assert_eq!(skills[2].tool.min_calls, Some(2));
    assert_eq!(skills[2].tool.scope, Scope::Main);
    assert_eq!(spec.assertions[0].kind.key(), "skill");
}

#[test]
fn bad_skill_assertions_point_at_the_problem() {
    let errs = errors(&format!(
        "{HEAD}  - skill: greet\n    colled: false\n  - skill: \"\"\n  - skill: greet\n    tool: Read\n  - skill: greet\n    called: false\n    min_calls: 1\n  - skill: 3\n"
    ));
    assert_reports(&errs, "unknown key `colled` in a skill assertion");
    assert_reports(&errs, "`skill` must not be empty");
    assert_reports(
        &errs,
        "`skill` can not be combined with `tool` in one assertion",
    );
    assert_reports(&errs, "contradiction: `called: false` with `min_calls: 1`");
    assert_reports(&errs, "`skill` must be a string");
    let diags = load(&format!("{HEAD}  - skill: greet\n    colled: false\n")).unwrap_err();
    assert_eq!((diags[0].pos.line, diags[0].pos.column), (5, 5));
    assert_eq!(diags[0].hint.as_deref(), Some("did you mean `called`?"));
}

#[test]
fn plugins_resolve_against_the_test_file_and_must_exist() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("plug/.claude-plugin")).unwrap();
    let file = dir.path().join("t.aptitude.yaml");
    std::fs::write(
        &file,
        "name: t\nprompt: p\nplugins: [plug]\nassertions:\n  - skill: greet\n",
    )
    .unwrap();
    let spec = load_file(&file).unwrap();
    assert_eq!(spec.plugins, vec![dir.path().join("plug")]);

    std::fs::write(
        &file,
        "name: t\nprompt: p\nplugins:\n  - plug\n  - missing\nassertions:\n  - skill: greet\n",
    )
    .unwrap();
    let (line, column, message) = file_error(&file);
    assert_eq!((line, column), (5, 5));
    assert_eq!(message, "the plugin directory does not exist");

    let errs = errors("name: t\nprompt: p\nplugins: {a: 1}\nassertions:\n  - skill: greet\n");
    assert_reports(&errs, "`plugins` must be a list of plugin directories");
    let errs = errors("name: t\nprompt: p\nplugins: [a, a]\nassertions:\n  - skill: greet\n");
    assert_reports(&errs, "plugin `a` is listed twice");
    let errs = errors("name: t\nprompt: p\nplugin: [a]\nassertions:\n  - skill: greet\n");
    assert_reports(&errs, "unknown key `plugin` in a test");
}

#[test]
fn claims_takes_only_verified() {
    let spec = load(&format!("{HEAD}  - claims: verified\n")).unwrap();
    assert!(matches!(spec.assertions[0].kind, AssertionKind::Claims));
    assert_reports(
        &errors(&format!("{HEAD}  - claims: checked\n")),
        "`claims` must be `verified`, found \"checked\"",
    );
    assert_reports(&errors(&format!("{HEAD}  - claims: true\n")), "claims");
}

#[test]
fn json_file_report_checks_load_with_seed_002_syntax() {
    let spec = load(&format!(
        "{HEAD}  - json_file:\n      path: .fuseraft/test-report.json\n      commands_ran: \"results[].command\"\n      no_failures: \"results[].status\"\n      min_items: {{path: results, at_least_of: {{file: .fuseraft/brief.json, path: acceptance_criteria}}}}\n"
    ))
    .unwrap();
    let AssertionKind::JsonFile { report, .. } = &spec.assertions[0].kind else {
        panic!("not a json_file");
    };
    assert_eq!(
        report.commands_ran.as_ref().map(|p| p.text.as_str()),
        Some("results[].command")
    );
    let nf = report.no_failures.as_ref().unwrap();
    assert_eq!(nf.values, super::super::DEFAULT_FAILING_VALUES);
    let mi = report.min_items.as_ref().unwrap();
    assert!(matches!(
        &mi.at_least,
        super::super::AtLeast::ItemsOf { file: Some(f), .. } if f == ".fuseraft/brief.json"
    ));
    let spec = load(&format!(
        "{HEAD}  - json_file: {{path: r.json, no_failures: {{path: \"results[].status\", values: [BLOCKED]}}, min_items: {{path: results, at_least: 2}}}}\n"
    ))
    .unwrap();
    let AssertionKind::JsonFile { report, .. } = &spec.assertions[0].kind else {
        panic!("not a json_file");
    };
    assert_eq!(report.no_failures.as_ref().unwrap().values, ["BLOCKED"]);
}

#[test]
fn json_file_report_check_mistakes_are_load_errors() {
    let errs = |yaml: &str| errors(&format!("{HEAD}  - json_file: {{path: r.json, {yaml}}}\n"));
    assert_reports(
        &errs("commands_ran: \"results[]\""),
        "must end with a field name",
    );
    assert_reports(
        &errs("commands_ran: \"results[0].command\""),
        "not a valid path",
    );
    assert_reports(
        &errs("no_failures: {values: [FAIL]}"),
        "`no_failures` needs `path:`",
    );
    assert_reports(
        &errs("min_items: {path: results}"),
        "needs `at_least: N` or `at_least_of",
    );
    assert_reports(
        &errs("min_items: {path: results, at_least: 1, at_least_of: x}"),
        "not both",
    );
    assert_reports(
        &errs("min_items: {path: results, at_least_of: {file: ../brief.json, path: a}}"),
        "leaves the workspace",
    );
    assert_reports(
        &errs("min_item: {path: results, at_least: 1}"),
        "unknown key `min_item`",
    );
}

#[test]
fn json_file_required_fields_are_paths_checked_at_load() {
    let spec = load(&format!(
        "{HEAD}  - json_file: {{path: r.json, required: [goal, \"results[].command\", results.0.status]}}\n"
    ))
    .unwrap();
    let AssertionKind::JsonFile { required, .. } = &spec.assertions[0].kind else {
        panic!("not a json_file");
    };
    let texts: Vec<&str> = required.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(texts, ["goal", "results[].command", "results.0.status"]);
    let diags = load(&format!(
        "{HEAD}  - json_file:\n      path: r.json\n      required: [goal, \"results[0].status\"]\n"
    ))
    .unwrap_err();
    assert_eq!(diags.len(), 1, "{diags:?}");
    let d = &diags[0];
    assert_eq!((d.pos.line, d.pos.column), (6, 24), "{}", d.message);
    assert!(
        d.message
            .starts_with("`required` is not a valid path: `results[0]`: only `[]`"),
        "{}",
        d.message
    );
    assert!(d.hint.is_some());
    assert_reports(
        &errors(&format!(
            "{HEAD}  - json_file: {{path: r.json, required: [\"a..b\"]}}\n"
        )),
        "has an empty field name",
    );
}

#[test]
fn min_items_at_least_zero_is_a_load_error_at_its_line() {
    let diags = load(&format!(
        "{HEAD}  - json_file:\n      path: r.json\n      min_items: {{path: results, at_least: 0}}\n"
    ))
    .unwrap_err();
    assert_eq!(diags.len(), 1, "{diags:?}");
    let d = &diags[0];
    assert_eq!(
        (d.pos.line, d.pos.column, d.message.as_str()),
        (6, 44, "`at_least: 0` can never fail")
    );
    assert_eq!(d.hint.as_deref(), Some("at_least must be 1 or more"));
}

#[test]
fn inputs_are_globs() {
    let spec =
        load("name: t\nprompt: p\ninputs: \"../src/**/*.rs\"\nassertions:\n  - tool: Bash\n")
            .unwrap();
    assert_eq!(spec.inputs, ["../src/**/*.rs"]);
    let spec = load("name: t\nprompt: p\ninputs: [a.txt, \"b/*\"]\nassertions:\n  - tool: Bash\n")
        .unwrap();
    assert_eq!(spec.inputs, ["a.txt", "b/*"]);
    let errs = errors("name: t\nprompt: p\ninputs: [\"src/[a\"]\nassertions:\n  - tool: Bash\n");
    assert_reports(&errs, "`inputs: src/[a` is not a glob");
    let errs = errors("name: t\nprompt: p\ninputs: {a: 1}\nassertions:\n  - tool: Bash\n");
    assert_reports(&errs, "inputs");
    let errs = errors("name: t\nprompt: p\ninput: a\nassertions:\n  - tool: Bash\n");
    assert_reports(&errs, "unknown key `input`");
}

#[test]
fn an_inputs_glob_that_matches_no_file_is_an_error_at_the_glob() {
    let dir = tempfile::tempdir().unwrap();
    let tests = dir.path().join("tests");
    std::fs::create_dir_all(dir.path().join("src/lib")).unwrap();
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(dir.path().join("src/lib/a.rs"), "").unwrap();
    let file = tests.join("t.aptitude.yaml");
    let write = |inputs: &str| {
        std::fs::write(
            &file,
            format!("name: t\nprompt: p\ninputs: {inputs}\nassertions:\n  - tool: Bash\n"),
        )
        .unwrap();
    };
    write("[\"../src/**/*.rs\", ../src]");
    assert_eq!(
        load_file(&file).unwrap().inputs,
        ["../src/**/*.rs", "../src"],
        "a directory names every file below it"
    );
    write("[../src, \"../src/**/*.py\"]");
    assert_eq!(
        file_error(&file),
        (3, 18, "`inputs: ../src/**/*.py` matches no file".to_owned())
    );
    write("../nowhere");
    assert_eq!(file_error(&file).2, "`inputs: ../nowhere` matches no file");
    std::fs::create_dir_all(dir.path().join("empty")).unwrap();
    write("../empty");
    assert_eq!(
        file_error(&file).2,
        "`inputs: ../empty` matches no file",
        "an empty directory names nothing"
    );
}

/// The original aptitude 0.3's `stdout: {exists, contains, …}` is one error that says it
/// was removed by design and shows the `review:` that replaces it.
#[test]
fn v03_stdout_keys_are_removed_by_design_with_the_review_form() {
    let diags = load(&format!(
        "{HEAD}  - stdout:\n      exists: true\n      contains: \"Build successful\"\n      not_contains: \"error\"\n"
    ))
    .unwrap_err();
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(
        diags[0]
            .message
            .contains("`stdout: {exists, contains, not_contains}`")
            && diags[0].message.contains("removed by design"),
        "{}",
        diags[0].message
    );
    let hint = diags[0].hint.as_deref().unwrap();
    assert!(
        hint.contains(
            r#"review: "should say \"Build successful\" and should not mention \"error\"""#
        ),
        "{hint}"
    );
}

/// A tool name that no agent has can never match: an error, also without a close name.
#[test]
fn tool_names_no_agent_has_are_errors() {
    let errs = errors(&format!("{HEAD}  - tool: ToolName\n    called: false\n"));
    assert_reports(&errs, "unknown tool `ToolName`");
    let errs = errors(&format!("{HEAD}  - tool: Bash\n    called_after: Raed\n"));
    assert_reports(&errs, "unknown tool `Raed`");
    for name in [
        "glob_files",
        "search_files",
        "ask_user",
        "ask_user_question",
        "TaskOutput",
        "task_output",
    ] {
        assert!(
            load(&format!("{HEAD}  - tool: {name}\n    called: false\n")).is_ok(),
            "{name}"
        );
    }
}

/// `limits:` in a test: sizes with units, a process count; each mistake at its place.
#[test]
fn limits_load_and_every_mistake_is_reported() {
    let spec = load(
        "name: t\nprompt: p\nlimits:\n  memory: 2GiB\n  processes: 64\n  disk: 500MB\nassertions:\n  - tool: Bash\n",
    )
    .unwrap();
    assert_eq!(spec.limits.memory, Some(2 * 1024 * 1024 * 1024));
    assert_eq!(spec.limits.processes, Some(64));
    assert_eq!(spec.limits.disk, Some(500_000_000));
    let errs = load(
        "name: t\nprompt: p\nlimits:\n  memroy: 2GiB\n  processes: 0\n  disk: 4 TiB\nassertions:\n  - tool: Bash\n",
    )
    .unwrap_err();
    let at = |needle: &str| {
        errs.iter()
            .find(|d| d.message.contains(needle))
            .map(|d| (d.pos.line, d.message.clone(), d.hint.clone()))
            .unwrap_or_else(|| panic!("{needle:?} not in {errs:?}"))
    };
    let (line, _, hint) = at("memroy");
    assert_eq!(line, 4);
    assert!(hint.unwrap().contains("memory"));
    assert_eq!(at("`processes` must be at least 1").0, 5);
    assert_eq!(at("is not a unit of size").0, 6);
    assert_reports(
        &errors("name: t\nprompt: p\nlimits: 4GiB\nassertions:\n  - tool: Bash\n"),
        "limits",
    );
}

/// `covers:` names rules of the workspace's instruction files; one that names none is an
/// error at its line with the closest rule as a hint.
#[test]
fn covers_names_rules_and_a_miss_says_the_closest() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("AGENTS.md"),
        "# Testing\n\n- Run the linter before every commit.\n- Add a test for each bug fix.\n",
    )
    .unwrap();
    let test = dir.path().join("t.aptitude.yaml");
    std::fs::write(
        &test,
        "name: t\nprompt: p\ncovers:\n  - \"run the linter\"\n  - \"# Testing\"\nassertions:\n  - tool: Bash\n",
    )
    .unwrap();
    let spec = load_file(&test).unwrap();
    assert_eq!(spec.covers.len(), 2);
    assert_eq!(spec.covers[0].rules.len(), 1);
    assert_eq!(
        spec.covers[1].rules.len(),
        2,
        "a heading names every rule under it"
    );
    assert_eq!(spec.covers[0].line, 4);
    std::fs::write(
        &test,
        "name: t\nprompt: p\ncovers:\n  - \"run the lintr\"\n  - R00000000\nassertions:\n  - tool: Bash\n",
    )
    .unwrap();
    let diags = load_file(&test).unwrap_err().diagnostics;
    assert_eq!(diags.len(), 2, "{diags:?}");
    assert_eq!(diags[0].pos.line, 4);
    assert!(
        diags[0].message.contains("names no rule"),
        "{}",
        diags[0].message
    );
    assert!(
        diags[0]
            .hint
            .as_deref()
            .unwrap()
            .contains("Run the linter before every commit"),
        "{:?}",
        diags[0].hint
    );
    assert!(
        diags[1]
            .hint
            .as_deref()
            .unwrap()
            .contains("aptitude coverage"),
        "{:?}",
        diags[1].hint
    );
}

#[test]
fn hooks_are_none_unless_the_test_opts_in() {
    let base = "name: t\nprompt: p\nassertions:\n  - tool: Read\n";
    assert_eq!(load(base).unwrap().hooks, None);
    let spec = load(&format!("hooks: workspace\n{base}")).unwrap();
    assert_eq!(spec.hooks, Some(crate::spec::HooksSetting::Workspace));
    let spec = load(&format!("hooks: none\n{base}")).unwrap();
    assert_eq!(spec.hooks, Some(crate::spec::HooksSetting::None));
    let errs = errors(&format!("hooks: sometimes\n{base}"));
    assert_reports(
        &errs,
        "`sometimes` is not a hooks setting: use `none` or `workspace`",
    );
    let errs = errors(&format!("hooks: true\n{base}"));
    assert_reports(&errs, "`hooks` must be `none` or `workspace`");
}

/// The dice test of issue 41, as a user writes it.
const DICE: &str = "name: dice
prompt: Add a dice-roller command to the CLI
user:
  persona: Terse analyst; never reads code
  goal: A command that rolls one die and prints the result
  knows: {sides: 6, name: roll}
  script:
    - {when: \"sides|range\", say: \"Six-sided, 1 to 6.\"}
  max_turns: 3
assertions:
  - asked: {about: \"sides|range\", before: [Write, Edit]}
  - did_not_ask: {about: name}
  - user_turns: {max: 2}
  - elicited: [sides]
";

#[test]
fn a_user_block_and_the_conversation_assertions_load() {
    let spec = load(DICE).unwrap();
    let user = spec.user.as_deref().unwrap();
    assert_eq!(
        user.persona.as_deref(),
        Some("Terse analyst; never reads code")
    );
    assert_eq!(user.knows.get("sides").map(String::as_str), Some("6"));
    assert_eq!(user.max_turns, 3);
    assert_eq!(user.script.len(), 1);
    assert_eq!(user.script[0].line, 8);
    assert_eq!(
        user.scripted("What RANGE of numbers?")
            .map(|l| l.say.as_str()),
        Some("Six-sided, 1 to 6.")
    );
    let keys: Vec<&str> = spec.assertions.iter().map(|a| a.kind.key()).collect();
    assert_eq!(keys, ["asked", "did_not_ask", "user_turns", "elicited"]);
    let AssertionKind::Conversation(crate::spec::user::ConversationAssertion::Asked {
        before, ..
    }) = &spec.assertions[0].kind
    else {
        panic!("asked")
    };
    assert_eq!(before.len(), 2);
}

#[test]
fn a_script_only_user_needs_no_goal_and_defaults_to_four_replies() {
    let spec = load(&format!(
        "user:\n  script: [{{when: sides, say: six}}]\n{HEAD}  - user_turns: {{min: 1}}\n"
    ))
    .unwrap();
    let user = spec.user.as_deref().unwrap();
    assert!(user.script_only());
    assert_eq!(user.max_turns, crate::spec::user::DEFAULT_USER_TURNS);
}

#[test]
fn a_misspelt_user_key_points_at_it_with_did_you_mean() {
    let diags = load(&DICE.replace("  persona:", "  persna:")).unwrap_err();
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].message, "unknown key `persna` in `user`");
    assert_eq!((diags[0].pos.line, diags[0].pos.column), (4, 3));
    assert_eq!(diags[0].hint.as_deref(), Some("did you mean `persona`?"));
}

#[test]
fn conversation_assertions_without_a_user_are_errors() {
    let diags = load(&format!(
        "{HEAD}  - asked: {{about: sides}}\n  - user_turns: {{max: 1}}\n"
    ))
    .unwrap_err();
    assert_eq!(diags.len(), 2, "{diags:?}");
    assert_eq!(diags[0].message, "`asked` needs a `user:` in the test");
    assert_eq!(diags[1].message, "`user_turns` needs a `user:` in the test");
    assert!(diags[0].hint.as_deref().unwrap_or("").contains("script"));
}

#[test]
fn include_dialog_needs_a_user_and_a_boolean() {
    let spec = load(&format!(
        "{DICE}  - stdout: {{review: asks first, include_dialog: true}}\n"
    ))
    .unwrap();
    let Some(AssertionKind::Review(r)) = spec.assertions.last().map(|a| &a.kind) else {
        panic!("a review");
    };
    assert!(r.include_dialog);
    let diags =
        load("name: t\nprompt: p\nassertions:\n  - stdout: {review: asks, include_dialog: true}\n")
            .unwrap_err();
    assert_eq!(
        diags[0].message,
        "`include_dialog` needs a `user:` in the test"
    );
}

#[test]
fn elicited_names_a_known_fact_with_did_you_mean() {
    let diags = load(&DICE.replace("elicited: [sides]", "elicited: [side]")).unwrap_err();
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].message, "unknown fact `side`");
    assert_eq!((diags[0].pos.line, diags[0].pos.column), (14, 16));
    assert_eq!(diags[0].hint.as_deref(), Some("did you mean `sides`?"));
}

#[test]
fn bad_user_values_are_each_reported() {
    let errs = errors(&format!(
        "user:\n  max_turns: 0\n  script:\n    - {{when: \"(\", say: x}}\n    - {{say: y}}\n    - {{when: a, sya: b}}\n{HEAD}  - asked: {{about: a, before: [Wirte]}}\n  - user_turns: {{min: 3, max: 1}}\n  - did_not_ask: {{}}\n"
    ));
    for needle in [
        "`user.max_turns` must be 1 to 20, found 0",
        "`when`: invalid regex",
        "a `script` line needs `when:`",
        "unknown key `sya` in a `script` line",
        "a `script` line needs `say:`",
        "unknown tool `Wirte`",
        "contradiction: `min: 3` is above `max: 1`",
        "`did_not_ask` needs `about:`",
    ] {
        assert!(
            errs.iter().any(|e| e.contains(needle)),
            "{needle} not in {errs:#?}"
        );
    }
}

#[test]
fn a_user_with_neither_script_nor_goal_is_an_error() {
    let errs = errors(&format!("user: {{persona: shy}}\n{HEAD}  - tool: Read\n"));
    assert_eq!(errs, ["`user` needs `script:`, `goal:` or both"]);
}

#[test]
fn a_routing_suite_has_no_user() {
    let errs = errors("name: r\nuser: {goal: g}\nrouting:\n  greet: {should_trigger: [say hi]}\n");
    assert!(
        errs.iter()
            .any(|e| e == "`user` does not go with `routing:`"),
        "{errs:?}"
    );
}

#[test]
fn agent_versions_split_a_test_per_release() {
    use crate::spec::agent_version::VersionSpec;
    let spec = load(
        "name: t\nprompt: p\nagents:\n  - claude\n  - {agent: pi, versions: [pinned, latest, \"0.72.1\"]}\nassertions:\n  - tool: Bash\n",
    )
    .unwrap();
    let split = spec.per_agent(&[], None);
    let got: Vec<_> = split
        .iter()
        .map(|s| (s.agent.kind.name(), s.agent.release().cloned()))
        .collect();
    assert_eq!(
        got,
        [
            ("claude", None),
            ("pi", Some(VersionSpec::Pinned)),
            ("pi", Some(VersionSpec::Latest)),
            ("pi", Some(VersionSpec::Exact("0.72.1".to_owned()))),
        ]
    );
    // Only a resolved release is a result's version: `latest` is never one.
    assert_eq!(split[2].agent_version(), None);
    assert_eq!(split[3].agent_version().as_deref(), Some("0.72.1"));
}

#[test]
fn agent_versions_that_are_not_one_release_are_errors_at_their_line() {
    let diags = load(
        "name: t\nprompt: p\nagents:\n  - {agent: pi, versions: [pined, \"^0.72\", 1.5, latest, latest]}\nassertions:\n  - tool: Bash\n",
    )
    .unwrap_err();
    let pined = diags
        .iter()
        .find(|d| d.message.contains("`pined`"))
        .unwrap();
    assert_eq!(pined.hint.as_deref(), Some("did you mean `pinned`?"));
    assert_eq!((pined.pos.line, pined.pos.column), (4, 28));
    let messages: Vec<String> = diags.iter().map(|d| d.message.clone()).collect();
    assert_reports(&messages, "`^0.72` is not a version");
    assert_reports(&messages, "quote it");
    assert_reports(&messages, "version `latest` is listed twice");
    assert_reports(
        &errors(
            "name: t\nprompt: p\nagents:\n  - {agent: pi, version: \"1.0.0\", versions: [latest]}\nassertions:\n  - tool: Bash\n",
        ),
        "names `version` and `versions`",
    );
    assert_reports(
        &errors(
            "name: t\nprompt: p\nagents:\n  - {agent: pi, version: \"1.0.0\", verisons: [latest]}\nassertions:\n  - tool: Bash\n",
        ),
        "verisons",
    );
}
