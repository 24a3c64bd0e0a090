//! The transcript's shell calls against exec records as strace writes them.

use super::*;
use crate::sandbox::exec::strace::parse;
use crate::transcript::{ToolCall, Transcript};

/// A sandbox's trace: bwrap, the helper that becomes the agent (`node`), the agent's
/// shell for one call (its script exits 1 after printing `Exit Code: 0`), a hook's
/// `sh -c rm …` the agent ran for no call, and the agent's own `git`.
const TRACE: &str = r#"100 1.000000 execve("/usr/bin/bwrap", ["bwrap", "--", "/run/aptitude/init"], 0x1 /* 1 vars */) = 0
100 1.001000 clone(child_stack=NULL, flags=CLONE_NEWPID|SIGCHLD) = 101
101 1.002000 clone(child_stack=NULL, flags=SIGCHLD) = 2 /* 102 in strace's PID NS */
102 1.003000 execve("/run/aptitude/init", ["/run/aptitude/init", "__sandbox-init", "--", "node"], 0x1 /* 1 vars */) = 0
102 1.003500 clone(child_stack=NULL, flags=SIGCHLD) = 3 /* 107 in strace's PID NS */
107 1.003600 execve("/opt/agent/bin/agent", ["/opt/agent/bin/agent"], 0x1 /* 1 vars */) = 0
107 1.004000 execve("/usr/bin/node", ["node", "/opt/agent/cli.js"], 0x1 /* 1 vars */) = 0
107 1.010000 clone(child_stack=NULL, flags=SIGCHLD) = 4 /* 103 in strace's PID NS */
103 1.011000 execve("/usr/bin/git", ["git", "status"], 0x1 /* 1 vars */) = 0
103 1.012000 +++ exited with 0 +++
107 1.020000 clone(child_stack=NULL, flags=SIGCHLD) = 5 /* 104 in strace's PID NS */
104 1.021000 execve("/bin/bash", ["bash", "-c", "shopt -u promptvars; { ./check.sh; }; __code=$?; exit $__code;"], 0x1 /* 1 vars */) = 0
104 1.022000 clone(child_stack=NULL, flags=SIGCHLD) = 6 /* 105 in strace's PID NS */
105 1.023000 execve("/bin/sh", ["/bin/sh", "./check.sh"], 0x1 /* 1 vars */) = 0
105 1.024000 +++ exited with 1 +++
104 1.025000 +++ exited with 1 +++
107 1.030000 clone(child_stack=NULL, flags=SIGCHLD) = 7 /* 106 in strace's PID NS */
106 1.031000 execve("/bin/sh", ["/bin/sh", "-c", "rm -rf secrets"], 0x1 /* 1 vars */) = 0
106 1.032000 execve("/bin/rm", ["rm", "-rf", "secrets"], 0x1 /* 1 vars */) = 0
106 1.033000 +++ exited with 0 +++
"#;

fn shell(id: &str, command: &str, exit: Option<i32>) -> ToolCall {
    let mut call = ToolCall::new(
        "run_shell_command",
        serde_json::json!({ "command": command }),
    );
    call.id = id.to_owned();
    call.canonical = SHELL_TOOL.to_owned();
    call.output = Some("Exit Code: 0".to_owned());
    call.exit_code = exit;
    call
}

fn transcript(calls: Vec<ToolCall>) -> Transcript {
    Transcript::completed(calls, "done")
}

#[test]
fn the_kernels_exit_code_overrules_one_read_from_the_output() {
    let record = ExecRecord::Recorded(parse(TRACE));
    let mut t = transcript(vec![shell("c1", "./check.sh", Some(0))]);
    let (report, _) = check(&record, &mut t, &[]);
    assert_eq!(report.status, ExecStatus::Recorded);
    assert_eq!((report.execs, report.calls), (9, 1));
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    assert_eq!(t.tool_calls[0].exit_code, Some(1));
    assert!(t.tool_calls[0].is_error);
    assert_eq!(report.notes.len(), 1);
    assert!(
        report.notes[0].contains("exit code 0, the kernel saw 1"),
        "{}",
        report.notes[0]
    );
    assert!(report.tampered().is_none());
}

#[test]
fn execs_no_call_claims_are_listed_with_who_ran_them() {
    let record = ExecRecord::Recorded(parse(TRACE));
    let mut t = transcript(vec![shell("c1", "./check.sh", Some(1))]);
    let (report, _) = check(&record, &mut t, &[]);
    let listed: Vec<(&str, Option<&str>)> = report
        .unclaimed
        .iter()
        .map(|u| (u.command.as_str(), u.run_by.as_deref()))
        .collect();
    assert_eq!(
        listed,
        [
            ("git status", Some("node /opt/agent/cli.js")),
            ("/bin/sh -c rm -rf secrets", Some("node /opt/agent/cli.js")),
            ("rm -rf secrets", Some("node /opt/agent/cli.js")),
        ]
    );
    assert_eq!(report.unclaimed_total, 3);
    assert_eq!(t.unclaimed_execs.len(), 3);
    // The call's own `/bin/sh ./check.sh` is its shell's child: claimed.
    assert!(!t.unclaimed_execs.iter().any(|c| c.contains("check.sh")));
}

#[test]
fn a_claimed_command_no_process_ran_is_a_finding() {
    let record = ExecRecord::Recorded(parse(TRACE));
    let mut t = transcript(vec![
        shell("c1", "./check.sh", Some(1)),
        shell("c2", "ls -la", Some(0)),
    ]);
    let (report, _) = check(&record, &mut t, &[]);
    assert_eq!(report.findings.len(), 1);
    assert!(
        report.findings[0].contains("`ls -la` ran, and no process"),
        "{}",
        report.findings[0]
    );
    assert!(
        report
            .tampered()
            .is_some_and(|w| w.contains("kernel never saw run"))
    );
}

#[test]
fn no_record_is_absent_with_why_never_an_empty_record() {
    let mut t = transcript(vec![shell("c1", "./check.sh", Some(0))]);
    let (report, _) = check(
        &ExecRecord::Absent("strace is not installed".into()),
        &mut t,
        &[],
    );
    assert_eq!(report.status, ExecStatus::Absent);
    assert_eq!(report.why.as_deref(), Some("strace is not installed"));
    assert!(report.phrase().starts_with("no exec record: strace"));
    // The transcript's claim stands: nothing overruled it.
    assert_eq!(t.tool_calls[0].exit_code, Some(0));
    // A trace without the helper's start can not say what the agent ran.
    let bare = parse(r#"1 1.0 execve("/usr/bin/bwrap", ["bwrap"], 0x1 /* 1 vars */) = 0"#);
    let (report, _) = check(&ExecRecord::Recorded(bare), &mut t, &[]);
    assert_eq!(report.status, ExecStatus::Absent);
}

#[test]
fn a_single_quoted_command_is_found_inside_claude_codes_eval() {
    let exec = Exec {
        pid: 1,
        parent: None,
        path: "/bin/bash".into(),
        argv: vec![
            "/bin/bash".into(),
            "-c".into(),
            "-l".into(),
            r#"source /tmp/snap.sh && eval 'echo '"'"'hi there'"'"'' \< /dev/null && pwd -P >| /tmp/cwd"#.into(),
        ],
        at_ms: 0,
        ended: None,
    };
    assert!(runs_script(&exec, "echo 'hi there'"));
    assert!(!runs_script(&exec, "echo 'bye'"));
    // Gemini CLI runs the script of a `sh -c '…'` call in its own shell.
    let gemini = Exec {
        argv: vec![
            "/usr/bin/bash".into(),
            "-c".into(),
            "shopt -u promptvars; (\necho after; exit 7\n)\n__code=$?\nexit $__code".into(),
        ],
        ..exec
    };
    assert!(runs_script(&gemini, "sh -c 'echo after; exit 7'"));
    assert!(!runs_script(&gemini, "sh -c 'echo before'"));
}

/// Codex opens a shell with `exec_command` and types `rm` into it with `write_stdin`,
/// which the stream does not show: the call claims the shell, not the `rm`.
#[test]
fn what_is_typed_into_a_shell_a_call_opened_is_not_that_calls() {
    const OPENED: &str = r#"1 1.000 execve("/run/aptitude/init", ["/run/aptitude/init"], 0x1 /* 1 vars */) = 0
1 1.001 clone(child_stack=NULL, flags=SIGCHLD) = 2 /* 2 in strace's PID NS */
2 1.002 execve("/opt/codex", ["codex", "exec"], 0x1 /* 1 vars */) = 0
2 1.003 clone(child_stack=NULL, flags=SIGCHLD) = 3 /* 3 in strace's PID NS */
3 1.004 execve("/bin/bash", ["/bin/bash", "-lc", "bash"], 0x1 /* 1 vars */) = 0
3 1.005 clone(child_stack=NULL, flags=SIGCHLD) = 4 /* 4 in strace's PID NS */
4 1.006 execve("/bin/rm", ["rm", "-f", "README"], 0x1 /* 1 vars */) = 0
4 1.007 +++ exited with 0 +++
"#;
    let record = ExecRecord::Recorded(parse(OPENED));
    let mut t = transcript(vec![shell("c1", "bash", None)]);
    let (report, _) = check(&record, &mut t, &[]);
    assert_eq!(report.calls, 1);
    assert_eq!(t.unclaimed_execs, ["rm -f README"]);
    assert!(opens_a_shell("/bin/bash -i") && opens_a_shell("zsh"));
    assert!(!opens_a_shell("bash -c 'ls'") && !opens_a_shell("bash run.sh"));
}

/// The fence proof's memory probe, the helper's first child, is not the agent: the agent
/// is the child after it, and the probe's execs are nobody's unclaimed commands.
#[test]
fn the_proofs_memory_probe_is_not_taken_for_the_agent() {
    let probe = r#"102 1.003100 clone(child_stack=NULL, flags=SIGCHLD) = 9 /* 120 in strace's PID NS */
120 1.003200 execve("/usr/bin/bash", ["/bin/bash", "-c", "exec /run/aptitude/init __sandbox-memprobe"], 0x1 /* 1 vars */) = 0
120 1.003250 execve("/run/aptitude/shell/bash", ["/bin/bash", "-c", "exec /run/aptitude/init __sandbox-memprobe"], 0x1 /* 1 vars */) = 0
120 1.003300 execve("/run/aptitude/init", ["/run/aptitude/init", "__sandbox-memprobe"], 0x1 /* 1 vars */) = 0
120 1.003400 +++ exited with 0 +++
"#;
    // The probe's lines go right after the helper's exec.
    let (head, tail) = TRACE
        .split_once("102 1.003500")
        .expect("the helper forks the agent");
    let with_probe = format!("{head}{probe}102 1.003500{tail}");
    let record = ExecRecord::Recorded(parse(&with_probe));
    let mut t = transcript(vec![shell("c1", "./check.sh", Some(0))]);
    let (report, _) = check(&record, &mut t, &[]);
    assert_eq!(report.status, ExecStatus::Recorded);
    assert_eq!(report.calls, 1, "{report:?}");
    assert_eq!(t.tool_calls[0].exit_code, Some(1));
    assert!(
        report
            .unclaimed
            .iter()
            .all(|u| !u.command.contains("memprobe")),
        "{:?}",
        report.unclaimed
    );
    assert!(
        report
            .unclaimed
            .iter()
            .any(|u| u.command.contains("rm -rf")),
        "{:?}",
        report.unclaimed
    );
}

/// Of what ran without a call, the execs of a workspace hook are named with it: the
/// trace's `sh -c rm -rf secrets` is a hook's when a settings file configures that
/// command. The same command run for a tool call is the call's, and no hook's.
#[test]
fn a_hooks_execs_are_named_and_a_calls_are_not() {
    let record = ExecRecord::Recorded(parse(TRACE));
    let hooks = super::hooks::in_file(
        ".claude/settings.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "rm -rf secrets"}]}]}}"#,
    );
    let mut t = transcript(vec![shell("c1", "./check.sh", Some(1))]);
    let (report, ran) = check(&record, &mut t, &hooks);
    assert_eq!(report.unclaimed_total, 3, "git and the hook's two");
    assert_eq!(ran.len(), 1);
    assert_eq!(ran[0].event, "Stop");
    let execs: Vec<&str> = ran[0].execs.iter().map(|e| e.command.as_str()).collect();
    assert_eq!(execs, ["/bin/sh -c rm -rf secrets", "rm -rf secrets"]);
    let mut t = transcript(vec![
        shell("c1", "./check.sh", Some(1)),
        shell("c2", "rm -rf secrets", Some(0)),
    ]);
    let (report, ran) = check(&record, &mut t, &hooks);
    assert_eq!(report.calls, 2);
    assert!(ran.is_empty(), "{ran:#?}");
}
