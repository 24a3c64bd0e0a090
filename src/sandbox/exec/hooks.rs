//! Which of the workspace's hooks ran: the hooks its settings files configure, read when
//! the run starts, matched to the exec record's commands no tool call accounts for.
//!
//! A hook is named as run only where the kernel saw it run: an exec of its command (a
//! shell whose `-c` script is the configured command, the way the CLIs start a command
//! hook) with everything below it. What the agent's stream says of hooks counts for
//! nothing. A hook the agent writes during the run is not in the configuration read at the
//! start: what it runs stays "ran, not claimed by any tool call, run by …" in the exec
//! record, as everything else no configured hook accounts for.
//!
//! The files read (workspace-relative), each in its CLI's format:
//!
//! | file | CLI | shape |
//! |---|---|---|
//! | `.claude/settings.json`, `.claude/settings.local.json` | Claude Code 2.1.x | `{"hooks": {event: [{"matcher", "hooks": [{"type": "command", "command"}]}]}}` |
//! | `.gemini/settings.json` | Gemini CLI 0.61 | the same (`BeforeTool`, `SessionStart`, …) |
//! | `.qwen/settings.json` | Qwen Code 0.24 | the same |
//! | `.codex/hooks.json`, `.codex/config.toml` | Codex 0.169 | the same, or `[[hooks.<event>]]` / `[[hooks.<event>.hooks]]` tables; `notify = [argv]`, the after-turn command (event `notify`) |
//! | `.github/hooks/*.json`, `.github/copilot/settings.json` | Copilot CLI 1.0.102 | `{"version": 1, "hooks": {event: [{"type": "command", "bash"}]}}` |
//!
//! In-process plugins (opencode's `.opencode/plugin(s)/`, pi's `.pi/extensions/`) have no
//! command of their own: what they start is the agent's own process starting it, which the
//! exec record can not tell apart, so they are never named here.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Exec, Trace};

/// The settings files that hold hooks, besides `.github/hooks/*.json`.
const FILES: &[&str] = &[
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".gemini/settings.json",
    ".qwen/settings.json",
    ".codex/hooks.json",
    ".codex/config.toml",
    ".github/copilot/settings.json",
];

/// The largest settings file read (bytes); a larger one is skipped.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The most hooks read from one workspace.
const MAX_HOOKS: usize = 200;

/// The most execs listed under one hook that ran (all are counted).
const MAX_EXECS: usize = 50;

/// One command hook the workspace configures, as read when the run started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    /// The file it is configured in, workspace-relative with `/` (`.claude/settings.json`).
    pub file: String,
    /// The line of its command in that file (1-based), where the command's text was found.
    pub line: Option<u32>,
    /// Its event, as the file spells it (`PreToolUse`, `BeforeTool`, `sessionStart`).
    pub event: String,
    /// Its command, as configured.
    pub command: String,
}

/// One exec a hook ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookExec {
    /// Its argv, joined with spaces (agent text: render it inert).
    pub command: String,
    /// Its exit code, when the tracer saw it end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// When, in ms since the sandbox started.
    pub at_ms: u64,
}

/// A configured hook the exec record shows running: results JSON's `hooks_ran[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookRan {
    /// The file it is configured in, workspace-relative (`.claude/settings.json`).
    pub file: String,
    /// The line of its command in that file (1-based), when found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Its event, as the file spells it (`PreToolUse`, `SessionStart`, `BeforeTool`).
    pub event: String,
    /// Its command, as configured (workspace text: render it inert).
    pub command: String,
    /// The execs it ran, in order: its own shell and everything below it (the first 50).
    pub execs: Vec<HookExec>,
    /// How many there were in all.
    pub execs_total: u32,
}

impl HookRan {
    /// Where and when: `.claude/settings.json:5 PreToolUse`.
    pub fn place(&self) -> String {
        match self.line {
            Some(line) => format!("{}:{line} {}", self.file, self.event),
            None => format!("{} {}", self.file, self.event),
        }
    }
}

/// The most execs a [`HookRan::phrase`] names.
const PHRASE_EXECS: usize = 5;

impl HookRan {
    /// One line for reports (workspace and agent text: render it inert):
    /// `hook .claude/settings.json:5 SessionStart `sh start.sh` ran 3 execs: sh -c …, rm -f README`.
    pub fn phrase(&self) -> String {
        let mut execs: Vec<String> = self
            .execs
            .iter()
            .take(PHRASE_EXECS)
            .map(|e| {
                let exit = e
                    .exit_code
                    .map(|c| format!(" → exit {c}"))
                    .unwrap_or_default();
                format!("{}{exit}", crate::shared::text::truncate(&e.command, 100))
            })
            .collect();
        let shown = execs.len() as u32;
        if self.execs_total > shown {
            execs.push(format!("and {} more", self.execs_total - shown));
        }
        format!(
            "hook {} `{}` ran {} exec{}: {}",
            self.place(),
            crate::shared::text::truncate(&self.command, 200),
            self.execs_total,
            if self.execs_total == 1 { "" } else { "s" },
            execs.join(", ")
        )
    }
}

/// The command hooks `workspace` configures, in file order. A file that is absent, too
/// big or not in its format configures none (the CLI would not load it either).
pub fn configured(workspace: &Path) -> Vec<Hook> {
    let mut files: Vec<String> = FILES.iter().map(|f| (*f).to_owned()).collect();
    if let Ok(dir) = std::fs::read_dir(workspace.join(".github/hooks")) {
        let mut found: Vec<String> = dir
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(".json"))
            .map(|n| format!(".github/hooks/{n}"))
            .collect();
        found.sort();
        files.extend(found);
    }
    let mut hooks = Vec::new();
    for file in files {
        let Ok(bytes) = crate::shared::files::read_capped(&workspace.join(&file), MAX_FILE_BYTES)
        else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        hooks.extend(in_file(&file, &text));
    }
    hooks.truncate(MAX_HOOKS);
    hooks
}

/// The command hooks of one settings file's `text`.
pub fn in_file(file: &str, text: &str) -> Vec<Hook> {
    let value: Option<Value> = if file.ends_with(".toml") {
        toml::from_str(text).ok()
    } else {
        serde_json::from_str(text).ok()
    };
    let Some(value) = value else {
        return Vec::new();
    };
    let mut found: Vec<(String, String)> = Vec::new();
    if let Some(events) = value.get("hooks").and_then(Value::as_object) {
        for (event, groups) in events {
            let Some(groups) = groups.as_array() else {
                continue;
            };
            for group in groups {
                // A group holds its handlers (`hooks`), or is one (Copilot CLI's).
                let handlers = group
                    .get("hooks")
                    .and_then(Value::as_array)
                    .map_or_else(|| vec![group], |h| h.iter().collect());
                found.extend(
                    handlers
                        .into_iter()
                        .filter_map(command_of)
                        .map(|c| (event.clone(), c)),
                );
            }
        }
    }
    // Codex's after-turn command: an argv, run without a shell.
    if file.ends_with(".toml")
        && let Some(argv) = value.get("notify").and_then(Value::as_array)
    {
        let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
        if !words.is_empty() {
            found.push(("notify".to_owned(), words.join(" ")));
        }
    }
    found
        .into_iter()
        .map(|(event, command)| Hook {
            line: line_of(text, &event, &command),
            file: file.to_owned(),
            event,
            command,
        })
        .collect()
}

/// A handler's command: `command` (Claude Code, Gemini CLI, Qwen Code, Codex) or `bash`
/// (Copilot CLI); handlers of other types (`prompt`, `http`) have none.
fn command_of(handler: &Value) -> Option<String> {
    let command = ["command", "bash"]
        .iter()
        .find_map(|k| handler.get(k).and_then(Value::as_str))?;
    (!command.trim().is_empty()).then(|| command.to_owned())
}

/// The line of `command`'s text in `text`, looked for after its event's name.
fn line_of(text: &str, event: &str, command: &str) -> Option<u32> {
    let encoded = serde_json::to_string(command).ok()?;
    let encoded = encoded.trim_matches('"');
    let from = text.find(event).unwrap_or(0);
    let at = [encoded, command]
        .iter()
        .find_map(|needle| text[from..].find(needle).map(|i| from + i))?;
    Some(text[..at].matches('\n').count() as u32 + 1)
}

/// The fewest characters of its own (besides variables, quotes and spaces) a command
/// needs to be matched with its variables as wildcards.
const MIN_LITERAL: usize = 4;

/// What a hook's process looks like in the exec record.
struct Matcher {
    /// Its command with each `$VAR`/`${VAR}` as a wildcard: Gemini CLI puts the project's
    /// path in for `$GEMINI_PROJECT_DIR` before it starts the shell; other CLIs leave the
    /// shell to expand them.
    pattern: Option<regex::Regex>,
    command: String,
}

impl Matcher {
    fn new(command: &str) -> Matcher {
        let command = command.trim();
        let var = regex::Regex::new(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?").ok();
        // A command that is (nearly) all variables would match any script: it must be
        // matched as written.
        let literal = var.as_ref().map_or(0, |v| {
            v.replace_all(command, "")
                .chars()
                .filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
                .count()
        });
        let pattern = var.filter(|_| literal >= MIN_LITERAL).and_then(|var| {
            let mut source = String::from("^(?s)");
            let mut last = 0;
            for m in var.find_iter(command) {
                source.push_str(&regex::escape(&command[last..m.start()]));
                source.push_str(".*?");
                last = m.end();
            }
            source.push_str(&regex::escape(&command[last..]));
            source.push('$');
            regex::Regex::new(&source).ok()
        });
        Matcher {
            pattern,
            command: command.to_owned(),
        }
    }

    /// Whether `exec` is this hook starting: a shell running the command as its `-c`
    /// script, or the command's argv exec'd without a shell (Codex's `notify`).
    fn matches(&self, exec: &Exec) -> bool {
        if exec.command_line().trim() == self.command {
            return true;
        }
        let Some(script) = shell_script(exec) else {
            return false;
        };
        let script = script.trim();
        script == self.command || self.pattern.as_ref().is_some_and(|p| p.is_match(script))
    }
}

/// The `-c` script of a shell's exec (`sh -c SCRIPT`, `bash -lc SCRIPT`).
fn shell_script(exec: &Exec) -> Option<&str> {
    let name = exec.argv.first().map_or(exec.path.as_str(), String::as_str);
    let base = name.rsplit('/').next().unwrap_or(name);
    if !matches!(base, "sh" | "bash" | "dash" | "zsh") {
        return None;
    }
    let flag = exec
        .argv
        .iter()
        .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))?;
    exec.argv[flag + 1..]
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(String::as_str)
}

/// The configured hooks that ran, each with the execs it ran: of the execs `unclaimed`
/// (indices into `trace.execs` that no tool call accounts for), those that are a hook's
/// command or descend from one. An exec is given to the nearest hook above it; a command
/// configured for several events is named at the first.
pub fn ran(trace: &Trace, unclaimed: &[usize], hooks: &[Hook]) -> Vec<HookRan> {
    if hooks.is_empty() || unclaimed.is_empty() {
        return Vec::new();
    }
    let matchers: Vec<Matcher> = hooks.iter().map(|h| Matcher::new(&h.command)).collect();
    let mut by_pid: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, exec) in trace.execs.iter().enumerate() {
        by_pid.entry(exec.pid).or_default().push(i);
    }
    let mut out: Vec<Option<HookRan>> = vec![None; hooks.len()];
    for &i in unclaimed {
        let Some(exec) = trace.execs.get(i) else {
            continue;
        };
        let Some(h) = hook_above(trace, &by_pid, exec, &matchers) else {
            continue;
        };
        let entry = out[h].get_or_insert_with(|| HookRan {
            file: hooks[h].file.clone(),
            line: hooks[h].line,
            event: hooks[h].event.clone(),
            command: hooks[h].command.clone(),
            execs: Vec::new(),
            execs_total: 0,
        });
        entry.execs_total += 1;
        if entry.execs.len() < MAX_EXECS {
            let last = by_pid
                .get(&exec.pid)
                .and_then(|v| v.last())
                .map(|&l| &trace.execs[l]);
            entry.execs.push(HookExec {
                command: exec.command_line(),
                exit_code: last
                    .filter(|l| std::ptr::eq(*l, exec))
                    .and_then(Exec::exit_code),
                at_ms: exec.at_ms,
            });
        }
    }
    out.into_iter().flatten().collect()
}

/// The hook whose command `exec` is, or the nearest one above it: the process's own
/// execs up to this one, then each ancestor's before it.
fn hook_above(
    trace: &Trace,
    by_pid: &HashMap<u32, Vec<usize>>,
    exec: &Exec,
    matchers: &[Matcher],
) -> Option<usize> {
    let mut pid = Some(exec.pid);
    // Bounded: a pid reused within one record could make a loop.
    for _ in 0..4096 {
        let at = pid?;
        let execs = by_pid.get(&at).map(Vec::as_slice).unwrap_or_default();
        for &i in execs.iter().rev() {
            let candidate = &trace.execs[i];
            if candidate.at_ms > exec.at_ms {
                continue;
            }
            if let Some(h) = matchers.iter().position(|m| m.matches(candidate)) {
                return Some(h);
            }
        }
        pid = trace.parents.get(&at).copied();
    }
    None
}

/// Why a run whose test kept hooks off (`hooks: none`) is `error`: the exec record shows
/// a configured hook running, so the fence that turns the CLI's hooks off did not hold.
/// `None` when none ran, or under `hooks: workspace`, where hooks may run.
pub fn breach(setting: crate::spec::HooksSetting, ran: &[HookRan]) -> Option<String> {
    if setting == crate::spec::HooksSetting::Workspace {
        return None;
    }
    let first = ran.first()?;
    let what = first
        .execs
        .first()
        .map(|e| crate::shared::cut::chars(&e.command, 200).kept)
        .unwrap_or_default();
    let more = match ran.len() {
        1 => String::new(),
        n => format!(
            " (and {} more hook{})",
            n - 1,
            if n == 2 { "" } else { "s" }
        ),
    };
    Some(format!(
        "the fence that keeps the workspace's hooks off did not hold: the hook {} (`{}`) ran `{what}`{more}, by the kernel's exec record, although the test did not opt in with `hooks: workspace`; the run is not judged. Report it: the agent CLI's version may have a new way to load hooks",
        first.place(),
        crate::shared::cut::chars(&first.command, 200).kept
    ))
}

#[cfg(test)]
mod tests;
