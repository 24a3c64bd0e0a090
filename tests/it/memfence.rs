//! The agent's memory is out of its tools' reach (issue #44, item 3), end to end through
//! the real Claude Code and the scripted model: a script the model asks `Bash` to run walks
//! up its parents to the first one that is not a shell — the agent — and tries to open its
//! `/proc/<pid>/mem` read-write and read-only, the way a tool rewrote the agent's prompt in
//! its heap. Sandboxed (the default) every open fails; its control, the same test with
//! `sandbox: off` (the only way to run without the tool fence), shows the attack at work,
//! so a pass can not come from a script that never reached the agent.

use std::sync::OnceLock;

use serde_json::Value;

use crate::agents::{AGENTS, run_on};
use crate::run::{Suite, test};
use crate::support::model::{ScriptedModel, Turn};

/// The hostile script: `agent` holds the process it found, `opened-rw` / `opened-r` are
/// written only when an open of the agent's memory succeeded.
const WALK_UP: &str = r#"p=$$
while :; do
  p=$(awk '/^PPid:/{print $2}' /proc/$p/status)
  [ "$p" -le 1 ] && break
  n=$(awk '/^Name:/{print $2}' /proc/$p/status)
  case "$n" in bash|sh|dash) continue;; esac
  break
done
echo "$n $p" > agent
if (exec 3<>/proc/$p/mem) 2>>refused; then echo "$n $p" > opened-rw; fi
if (exec 3</proc/$p/mem) 2>>refused; then echo "$n $p" > opened-r; fi
cat agent refused 2>/dev/null
"#;

fn memory_run() -> &'static (Value, Suite) {
    static RUN: OnceLock<(Value, Suite)> = OnceLock::new();
    RUN.get_or_init(|| {
        let claude = AGENTS[0]();
        assert_eq!(claude.name, "claude");
        let model = ScriptedModel::start();
        let suite = Suite::new();
        for (name, extra) in [("memory", ""), ("memory-open", "sandbox: off\n")] {
            let marker = format!("memfence-{name}");
            model.script(
                &marker,
                vec![claude.shell_call("sh walk.sh"), Turn::Text("Done.".into())],
            );
            suite.file(&format!("tests/{name}/walk.sh"), WALK_UP);
            suite.file(
                &format!("tests/{name}.aptitude.yaml"),
                &format!(
                    "name: {name}\nprompt: \"{marker}\"\nworkspace: {name}\n{extra}assertions:\n  - file_exists: agent\n  - file_absent: opened-rw\n  - file_absent: opened-r\n"
                ),
            );
        }
        let (code, results, stderr) = run_on(
            &suite,
            &model,
            &claude,
            &["--no-grade", "--keep-workspaces", "--jobs", "2"],
        );
        assert!(results.is_object(), "exit {code}: {stderr}");
        (results, suite)
    })
}

/// Sandboxed, a script run by Claude Code's `Bash` finds the agent and can not open its
/// memory, read-write or read-only; the run's fence proof checked it before the agent
/// started. With `sandbox: off` the same script opens it.
#[test]
fn a_tool_can_not_open_the_agents_memory() {
    let (results, _suite) = memory_run();
    let t = test(results, "memory");
    assert_eq!(t["status"], "passed", "{t:#}");
    let checks = t["sandbox"]["verified"].as_array().unwrap();
    let probe = checks
        .iter()
        .find(|c| {
            c["tried"]
                .as_str()
                .is_some_and(|s| s.starts_with("open the agent's memory"))
        })
        .unwrap_or_else(|| panic!("no memory check in {checks:#?}"));
    assert_eq!(probe["held"], true, "{probe:#}");
    assert!(
        probe["detail"]
            .as_str()
            .is_some_and(|d| d.contains("read-write: Permission denied")),
        "{probe:#}"
    );
    // The script reached the agent and was refused, by the kernel, both opens.
    let output = t["transcript"]["tool_calls"][0]["output"]
        .as_str()
        .unwrap_or_default();
    assert!(output.starts_with("claude "), "the agent found: {output}");
    assert_eq!(output.matches("Permission denied").count(), 2, "{t:#}");
    let open = test(results, "memory-open");
    assert_eq!(open["status"], "failed", "the control: {open:#}");
}
