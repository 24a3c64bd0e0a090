//! Hooks read from each CLI's settings files, and named where the exec record shows them
//! running (the shapes of a real Claude Code 2.1 run's trace: its hook's `/bin/sh -c`).

use super::*;
use crate::sandbox::exec::strace::parse;
use crate::spec::HooksSetting;

/// A sandbox's trace: the helper becomes the agent (`claude`), which runs its own `git`,
/// a `SessionStart` hook (`/bin/sh -c sh .hooks/start.sh`, which runs `rm -f README`), and
/// a shell of its own that runs `env`.
const TRACE: &str = r#"100 1.000000 execve("/usr/bin/bwrap", ["bwrap", "--", "/run/aptitude/init"], 0x1 /* 1 vars */) = 0
100 1.001000 clone(child_stack=NULL, flags=CLONE_NEWPID|SIGCHLD) = 101
101 1.002000 clone(child_stack=NULL, flags=SIGCHLD) = 2 /* 102 in strace's PID NS */
102 1.003000 execve("/run/aptitude/init", ["/run/aptitude/init", "__sandbox-init", "--", "claude"], 0x1 /* 1 vars */) = 0
102 1.003500 clone(child_stack=NULL, flags=SIGCHLD) = 3 /* 107 in strace's PID NS */
107 1.004000 execve("/opt/claude", ["/opt/claude", "-p", "hi"], 0x1 /* 1 vars */) = 0
107 1.010000 clone(child_stack=NULL, flags=SIGCHLD) = 4 /* 103 in strace's PID NS */
103 1.011000 execve("/usr/bin/git", ["git", "ls-files"], 0x1 /* 1 vars */) = 0
103 1.012000 +++ exited with 0 +++
107 1.020000 clone(child_stack=NULL, flags=SIGCHLD) = 5 /* 104 in strace's PID NS */
104 1.021000 execve("/bin/sh", ["/bin/sh", "-c", "sh .hooks/start.sh"], 0x1 /* 1 vars */) = 0
104 1.022000 clone(child_stack=NULL, flags=SIGCHLD) = 6 /* 105 in strace's PID NS */
105 1.023000 execve("/bin/sh", ["sh", ".hooks/start.sh"], 0x1 /* 1 vars */) = 0
105 1.024000 clone(child_stack=NULL, flags=SIGCHLD) = 7 /* 106 in strace's PID NS */
106 1.025000 execve("/bin/rm", ["rm", "-f", "README"], 0x1 /* 1 vars */) = 0
106 1.026000 +++ exited with 0 +++
105 1.027000 +++ exited with 0 +++
104 1.028000 +++ exited with 0 +++
107 1.030000 clone(child_stack=NULL, flags=SIGCHLD) = 8 /* 108 in strace's PID NS */
108 1.031000 execve("/bin/bash", ["/bin/bash", "-c", "env"], 0x1 /* 1 vars */) = 0
108 1.032000 +++ exited with 0 +++
"#;

/// Claude Code's project settings, with the hook on line 5.
const CLAUDE: &str = r#"{
  "hooks": {
    "SessionStart": [
      {"matcher": ".*", "hooks": [
        {"type": "command", "command": "sh .hooks/start.sh"}
      ]}
    ],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "prompt", "prompt": "no command"}]}]
  }
}"#;

/// The hooks of `text` that ran in `trace`, given that every exec below the agent (the
/// trace's `git`, hook and `bash -c env`: indices 3 to 7) is one no tool call accounts for
/// (what `check` works out, tested in `check`'s tests).
fn named(file: &str, text: &str, trace: &str) -> Vec<HookRan> {
    ran(&parse(trace), &[3, 4, 5, 6, 7], &in_file(file, text))
}

#[test]
fn a_claude_command_hook_is_read_with_its_file_line_and_event() {
    let hooks = in_file(".claude/settings.json", CLAUDE);
    assert_eq!(
        hooks,
        vec![Hook {
            file: ".claude/settings.json".into(),
            line: Some(5),
            event: "SessionStart".into(),
            command: "sh .hooks/start.sh".into(),
        }],
        "a `prompt` hook has no command to run"
    );
}

#[test]
fn a_hook_that_ran_is_named_with_every_exec_below_it_and_nothing_else() {
    let ran = named(".claude/settings.json", CLAUDE, TRACE);
    assert_eq!(ran.len(), 1, "{ran:#?}");
    let hook = &ran[0];
    assert_eq!(hook.place(), ".claude/settings.json:5 SessionStart");
    assert_eq!(hook.command, "sh .hooks/start.sh");
    let commands: Vec<&str> = hook.execs.iter().map(|e| e.command.as_str()).collect();
    assert_eq!(
        commands,
        [
            "/bin/sh -c sh .hooks/start.sh",
            "sh .hooks/start.sh",
            "rm -f README"
        ],
        "the agent's own `git` and `bash -c env` are no hook's"
    );
    assert_eq!(hook.execs_total, 3);
    assert_eq!(hook.execs[2].exit_code, Some(0));
    assert_eq!(
        hook.phrase(),
        "hook .claude/settings.json:5 SessionStart `sh .hooks/start.sh` ran 3 execs: /bin/sh -c sh .hooks/start.sh → exit 0, sh .hooks/start.sh → exit 0, rm -f README → exit 0"
    );
}

#[test]
fn a_configured_hook_whose_command_never_ran_is_not_named() {
    let other = CLAUDE.replace("sh .hooks/start.sh", "sh .hooks/other.sh");
    assert!(named(".claude/settings.json", &other, TRACE).is_empty());
}

#[test]
fn gemini_cli_puts_the_project_path_in_before_the_shell_starts() {
    // Gemini CLI 0.61 replaces `$GEMINI_PROJECT_DIR` (shell-escaped) and runs `bash -c`.
    let settings = r#"{"hooks": {"BeforeTool": [{"matcher": ".*", "hooks": [
        {"type": "command", "command": "sh \"$GEMINI_PROJECT_DIR\"/.hooks/hook.sh"}]}],
        "disabled": ["other"]}}"#;
    let trace = TRACE.replace(
        r#"["/bin/sh", "-c", "sh .hooks/start.sh"]"#,
        r#"["bash", "-c", "sh \"'/tmp/work space'\"/.hooks/hook.sh"]"#,
    );
    let ran = named(".gemini/settings.json", settings, &trace);
    assert_eq!(ran.len(), 1, "{ran:#?}");
    assert_eq!(ran[0].event, "BeforeTool");
    assert_eq!(ran[0].line, Some(2));
    assert_eq!(ran[0].execs_total, 3);
}

/// A command that is only variables would match any script with them as wildcards: it
/// is matched as written, so the agent's own shells are no hook's.
#[test]
fn a_command_of_variables_alone_matches_only_as_written() {
    for command in ["$HOOK", "${HOOK} $ARGS"] {
        let settings =
            format!(r#"{{"hooks": {{"Stop": [{{"hooks": [{{"command": "{command}"}}]}}]}}}}"#);
        assert!(
            named(".claude/settings.json", &settings, TRACE).is_empty(),
            "{command}"
        );
    }
}

#[test]
fn copilot_and_codex_hooks_are_read_in_their_own_shapes() {
    let copilot = r#"{"version": 1, "hooks": {"sessionStart": [
        {"type": "command", "bash": "sh .hooks/start.sh", "timeoutSec": 30}]}}"#;
    let hooks = in_file(".github/hooks/start.json", copilot);
    assert_eq!(hooks.len(), 1);
    assert_eq!(
        (hooks[0].event.as_str(), hooks[0].command.as_str()),
        ("sessionStart", "sh .hooks/start.sh")
    );
    let codex = "notify = [\"python3\", \"notify.py\"]\n\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"sh .hooks/hook.sh\"\n\n[hooks.state]\nx = 1\n";
    let hooks = in_file(".codex/config.toml", codex);
    let seen: Vec<(&str, &str, Option<u32>)> = hooks
        .iter()
        .map(|h| (h.event.as_str(), h.command.as_str(), h.line))
        .collect();
    assert_eq!(
        seen,
        [
            ("PreToolUse", "sh .hooks/hook.sh", Some(7)),
            ("notify", "python3 notify.py", None)
        ]
    );
}

#[test]
fn codexs_notify_argv_runs_without_a_shell_and_is_still_named() {
    let codex = "notify = [\"sh\", \".hooks/start.sh\"]\n";
    let ran = named(".codex/config.toml", codex, TRACE);
    assert_eq!(ran.len(), 1, "{ran:#?}");
    assert_eq!(ran[0].event, "notify");
    // Its `sh .hooks/start.sh` and the `rm` below it; the shell above, whose script is
    // the same words, is taken for the hook too.
    assert_eq!(ran[0].execs_total, 3);
    assert_eq!(ran[0].execs[1].command, "sh .hooks/start.sh");
}

#[test]
fn a_file_not_in_its_format_configures_nothing() {
    assert!(in_file(".claude/settings.json", "{not json").is_empty());
    assert!(in_file(".codex/config.toml", "[[[").is_empty());
    assert!(in_file(".qwen/settings.json", r#"{"hooks": "off"}"#).is_empty());
}

#[test]
fn the_workspaces_files_are_read_from_every_place_a_cli_looks() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(".claude/settings.local.json", CLAUDE);
    write(
        ".github/hooks/b.json",
        r#"{"hooks": {"preToolUse": [{"bash": "b"}]}}"#,
    );
    write(
        ".github/hooks/a.json",
        r#"{"hooks": {"preToolUse": [{"bash": "a"}]}}"#,
    );
    let files: Vec<String> = configured(dir.path())
        .into_iter()
        .map(|h| format!("{} {}", h.file, h.command))
        .collect();
    assert_eq!(
        files,
        [
            ".claude/settings.local.json sh .hooks/start.sh",
            ".github/hooks/a.json a",
            ".github/hooks/b.json b"
        ]
    );
}

#[test]
fn a_hook_that_ran_while_hooks_were_off_is_a_breach_naming_it() {
    assert_eq!(breach(HooksSetting::None, &[]), None);
    let ran = named(".claude/settings.json", CLAUDE, TRACE);
    assert_eq!(breach(HooksSetting::Workspace, &ran), None, "opted in");
    let why = breach(HooksSetting::None, &ran).unwrap();
    assert!(
        why.contains(".claude/settings.json:5 SessionStart")
            && why.contains("`sh .hooks/start.sh`")
            && why.contains("did not hold"),
        "{why}"
    );
}
