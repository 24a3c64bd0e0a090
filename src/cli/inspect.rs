//! The commands that run no agent: `validate` (with `--explain`: each test's effective
//! settings and their origins), `transcript`, `report`.

use std::collections::BTreeMap;
use std::path::Path;

use super::output::{self, out};
use super::{CliError, Outcome, ReportCommandArgs, TranscriptArgs, ValidateArgs};
use crate::report::terminal;
use crate::shared::redact::Redactor;
use crate::spec;
use crate::spec::diagnostic::display_path;
use crate::spec::node::Value;
use crate::spec::suite::Origin;
use crate::transcript;

pub(super) fn validate(args: &ValidateArgs) -> Result<Outcome, CliError> {
    let redactor = Redactor::from_process_env([]);
    let found = output::discover_tests(&args.paths, Some(&args.discovery))?;
    if args.discovery.list_tests {
        output::list_tests(&found);
        return Ok(Outcome::Passed);
    }
    let files = &found.files;
    let report = spec::load_files(files);
    output::check_load_errors(&redactor, &report, files.len())?;
    let assertions: usize = report.specs.iter().map(|s| s.assertions.len()).sum();
    if args.explain {
        out(&redactor.redact(&explain_discovery(&found, &report.configs)));
        for spec in &report.specs {
            out(&redactor.redact(&explain(spec)));
            for warning in git_warnings(spec) {
                output::err(&redactor.redact(&super::error::warning_line(&warning)));
            }
        }
    }
    let tests = files.len() - report.configs.len();
    let green = anstyle::AnsiColor::Green.on_default();
    let mut summary = format!(
        "{green}✓{green:#} {tests} test file{} valid ({assertions} assertion{})",
        if tests == 1 { "" } else { "s" },
        if assertions == 1 { "" } else { "s" },
    );
    if !report.configs.is_empty() {
        summary.push_str(&format!(
            "; {} discovery configuration{} (not {}): {}",
            report.configs.len(),
            if report.configs.len() == 1 { "" } else { "s" },
            if report.configs.len() == 1 {
                "a test"
            } else {
                "tests"
            },
            report
                .configs
                .iter()
                .map(|p| display_path(p))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut drafts: Vec<String> = report
        .specs
        .iter()
        .filter(|s| s.draft)
        .map(|s| display_path(&s.file))
        .collect();
    drafts.dedup();
    if !drafts.is_empty() {
        summary.push_str(&format!(
            "; {} draft{} to review (then remove its `draft: true`): {}",
            drafts.len(),
            if drafts.len() == 1 { "" } else { "s" },
            drafts.join(", ")
        ));
    }
    out(&(summary + "\n"));
    Ok(Outcome::Passed)
}

/// The `--explain` block of discovery: for each directory searched, the configuration used
/// and where each of its values comes from; then the rule that joins it with `aptitude.yaml`.
fn explain_discovery(found: &spec::Discovered, configs: &[std::path::PathBuf]) -> String {
    use crate::spec::discover;
    let mut text = String::new();
    let from = |origin: Option<&Origin>| {
        origin.map_or_else(
            || "default".to_owned(),
            |o| {
                if o.line == 0 {
                    "command line".to_owned()
                } else {
                    origin_text(o)
                }
            },
        )
    };
    for (dir, config) in &found.searches {
        let source = config.file.as_deref().map_or_else(
            || "built-in default (no .aptitude.yaml above it)".to_owned(),
            display_path,
        );
        text.push_str(&format!("discovery for {}: {source}\n", display_path(dir)));
        let rows = [
            (
                "test_pattern",
                config.pattern().to_owned(),
                from(config.test_pattern.as_ref().map(|s| &s.origin)),
            ),
            (
                "root",
                display_path(&config.search_dir(dir)),
                from(config.root.as_ref().map(|s| &s.origin)),
            ),
            (
                "recursive",
                config.is_recursive().to_string(),
                from(config.recursive.as_ref().map(|s| &s.origin)),
            ),
            (
                "exclude",
                config.excluded().join(", "),
                from(config.exclude.as_ref().map(|s| &s.origin)),
            ),
        ];
        for (key, value, origin) in rows {
            text.push_str(&format!("  {key:<14}{value}  [{origin}]\n"));
        }
    }
    if found.searches.is_empty() {
        text.push_str("discovery: the files named (no directory searched)\n");
    }
    for config in configs {
        text.push_str(&format!(
            "  {} is discovery configuration, not a test: skipped\n",
            display_path(config)
        ));
    }
    text.push_str(&format!(
        "  rule          {} decides which files are tests; {} gives each test found its defaults\n",
        discover::CONFIG_FILES[0],
        crate::spec::suite::SUITE_FILE
    ));
    text
}

/// Where each top-level key of a test file is (1-based line), and where each key of its
/// `env` and `mcp_servers` mappings is, as `env.NAME` / `mcp_servers.NAME`.
fn key_lines(path: &Path) -> BTreeMap<String, u32> {
    let mut lines = BTreeMap::new();
    let Ok(source) = std::fs::read_to_string(path) else {
        return lines;
    };
    let Ok(root) = spec::node::parse(&source) else {
        return lines;
    };
    if let Value::Map(entries) = &root.value {
        for (key, value) in entries {
            lines.insert(key.name.clone(), key.pos.line);
            if let (true, Value::Map(inner)) = (
                matches!(key.name.as_str(), "env" | "mcp_servers"),
                &value.value,
            ) {
                for (k, _) in inner {
                    lines.insert(format!("{}.{}", key.name, k.name), k.pos.line);
                }
            }
        }
    }
    lines
}

/// `--explain`'s warnings about `git` commands a test expects to see succeed: the
/// workspace copy has no `.git` unless the test asks for it (`workspace: {path, git:
/// true}`), so `git log` fails there with "not a git repository" — and `ran:` holds for a
/// command that ran, whatever its outcome. One warning per `ran:`, `run_count:` and
/// `command_succeeded:` on `git`, at its line.
fn git_warnings(spec: &spec::TestSpec) -> Vec<String> {
    if spec.workspace_git {
        return Vec::new();
    }
    let Ok(git) = regex::Regex::new(r"(^|[^A-Za-z0-9_.-])git([^A-Za-z0-9_-]|$)") else {
        return Vec::new();
    };
    let path = spec
        .workspace
        .as_deref()
        .map_or_else(|| ".".to_owned(), |p| p.display().to_string());
    spec.assertions
        .iter()
        .filter_map(|a| {
            let (pattern, outcome) = match &a.kind {
                spec::AssertionKind::Ran { pattern, .. }
                | spec::AssertionKind::RunCount { pattern, .. } => (
                    pattern.as_str(),
                    "and it holds for a command that ran, whatever its outcome",
                ),
                spec::AssertionKind::CommandSucceeded { pattern, .. } => {
                    (pattern.as_str(), "so the command fails there")
                }
                _ => return None,
            };
            let pattern = pattern.strip_prefix("(?i)").unwrap_or(pattern);
            git.is_match(pattern).then(|| {
                format!(
                    "{}:{}: `{}: {pattern}` checks a git command, but the workspace copy has no `.git` (git says \"not a git repository\"), {outcome}: write `workspace: {{path: {path}, git: true}}` to copy `.git` too",
                    display_path(&spec.file),
                    a.line,
                    a.kind.key(),
                )
            })
        })
        .collect()
}

/// Where a setting comes from, for `--explain`.
fn origin_text(origin: &Origin) -> String {
    format!("{}:{}", display_path(&origin.file), origin.line)
}

/// The `--explain` block of one test: each effective setting with its origin (the test
/// file's `file:line`, an `aptitude.yaml`'s, or `default`). Env values are never shown.
fn explain(spec: &spec::TestSpec) -> String {
    let suite = spec::suite_defaults(&spec.file).unwrap_or_default();
    let lines = key_lines(&spec.file);
    let file = display_path(&spec.file);
    let here = |key: &str| lines.get(key).map(|l| format!("{file}:{l}"));
    let from = |key: &str, suite: Option<&Origin>| {
        here(key)
            .or_else(|| suite.map(origin_text))
            .unwrap_or_else(|| "default".to_owned())
    };
    let mut rows: Vec<(&str, String, String)> = Vec::new();
    let agents = if spec.agents.is_empty() {
        ("claude (or `run --agent`)".to_owned(), "default".to_owned())
    } else {
        let names = spec
            .agents
            .iter()
            .map(|t| match &t.model {
                Some(m) => format!("{} (model {m})", t.kind),
                None => t.kind.to_string(),
            })
            .collect::<Vec<_>>()
            .join(", ");
        let key = if lines.contains_key("agents") {
            "agents"
        } else {
            "agent"
        };
        (names, from(key, suite.agents.as_ref().map(|s| &s.origin)))
    };
    rows.push(("agents", agents.0, agents.1));
    rows.push((
        "model",
        spec.model
            .clone()
            .unwrap_or_else(|| "the agent's own (or `run --model`)".to_owned()),
        from("model", suite.model.as_ref().map(|s| &s.origin)),
    ));
    rows.push((
        "timeout",
        spec.timeout.map_or_else(
            || {
                format!(
                    "{} (or `run --timeout`)",
                    humantime::format_duration(crate::run::DEFAULT_TIMEOUT)
                )
            },
            |t| humantime::format_duration(t).to_string(),
        ),
        from("timeout", suite.timeout.as_ref().map(|s| &s.origin)),
    ));
    rows.push((
        "max_turns",
        spec.max_turns
            .map_or_else(|| "the agent's own".to_owned(), |n| n.to_string()),
        from("max_turns", suite.max_turns.as_ref().map(|s| &s.origin)),
    ));
    rows.push((
        "runs",
        spec.runs
            .map_or_else(|| "1 (or `run --runs`)".to_owned(), |n| n.to_string()),
        from("runs", suite.runs.as_ref().map(|s| &s.origin)),
    ));
    rows.push((
        "min_pass",
        spec.min_pass
            .map_or_else(|| "every run".to_owned(), |n| n.to_string()),
        from("min_pass", suite.min_pass.as_ref().map(|s| &s.origin)),
    ));
    let keyed =
        |prefix: &str, names: Vec<&String>, suite_origin: &dyn Fn(&str) -> Option<Origin>| {
            if names.is_empty() {
                return "none".to_owned();
            }
            names
                .iter()
                .map(|name| {
                    let origin = here(&format!("{prefix}.{name}"))
                        .or_else(|| suite_origin(name).map(|o| origin_text(&o)))
                        .unwrap_or_else(|| "default".to_owned());
                    format!("{name} ({origin})")
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
    rows.push((
        "env",
        keyed("env", spec.env.keys().collect(), &|n| {
            suite.env.get(n).map(|s| s.origin.clone())
        }),
        String::new(),
    ));
    rows.push((
        "mcp_servers",
        keyed(
            "mcp_servers",
            spec.mcp_servers
                .keys()
                .chain(spec.mcp_mocks.keys())
                .collect(),
            &|n| {
                (suite.mcp_servers.get(n).map(|s| s.origin.clone()))
                    .or_else(|| suite.mcp_mocks.get(n).map(|s| s.origin.clone()))
            },
        ),
        String::new(),
    ));
    rows.push(judge_row(&suite.judge));
    rows.extend(user_row(spec.user.as_deref(), &from));
    let mut text = format!("{file}: {}\n", spec.name);
    for (key, value, origin) in rows {
        if origin.is_empty() {
            text.push_str(&format!("  {key:<12}{value}\n"));
        } else {
            text.push_str(&format!("  {key:<12}{value}  [{origin}]\n"));
        }
    }
    text
}

/// The `user` row of `--explain` (with where `from` says it is written), when the test
/// has a `user:`.
fn user_row(
    user: Option<&spec::user::User>,
    from: &dyn Fn(&str, Option<&Origin>) -> String,
) -> Option<(&'static str, String, String)> {
    user.map(|u| ("user", user_text(u), from("user", None)))
}

/// Who answers the agent's questions, how often, and which facts it holds back (their
/// names, never their values).
fn user_text(user: &spec::user::User) -> String {
    let lines = match user.script.len() {
        1 => "1 script line".to_owned(),
        n => format!("{n} script lines"),
    };
    let rest = if user.script_only() {
        "no reply to other questions (no `goal:`)"
    } else {
        "the simulated user (`goal:`, a model call) for other questions (on the \
         plain-text channel and in replays; elsewhere no reply, and `user_turns` and \
         `elicited` are then error)"
    };
    let knows = if user.knows.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = user.knows.keys().map(String::as_str).collect();
        format!("; knows {}", names.join(", "))
    };
    format!(
        "{lines}, then {rest}; at most {} replies{knows}",
        user.max_turns
    )
}

/// The `judge` row of `--explain`: the suite's judge settings with their origins.
fn judge_row(judge: &spec::suite::JudgeDefaults) -> (&'static str, String, String) {
    let setting = |value: Option<String>, origin: Option<&Origin>| match (value, origin) {
        (Some(v), Some(o)) => format!("{v} ({})", origin_text(o)),
        _ => "default".to_owned(),
    };
    (
        "judge",
        format!(
            "model {}, agent {}, threshold {}, votes {}",
            setting(
                judge.model.as_ref().map(|s| s.value.clone()),
                judge.model.as_ref().map(|s| &s.origin)
            ),
            setting(
                judge.agent.as_ref().map(|s| s.value.to_string()),
                judge.agent.as_ref().map(|s| &s.origin)
            ),
            judge.threshold.as_ref().map_or_else(
                || format!("{} (default)", spec::DEFAULT_THRESHOLD),
                |s| format!("{} ({})", s.value, origin_text(&s.origin))
            ),
            setting(
                judge.votes.as_ref().map(|s| s.value.to_string()),
                judge.votes.as_ref().map(|s| &s.origin)
            ),
        ),
        "a review's own keys win".to_owned(),
    )
}

pub(super) fn show_transcript(args: &TranscriptArgs) -> Result<Outcome, CliError> {
    let redactor = Redactor::from_process_env([]);
    let t = transcript::parse_file(&args.file)?;
    let t = output::redacted(&redactor, &t)?;
    if args.json {
        let text = serde_json::to_string_pretty(&t).map_err(CliError::Serialize)?;
        out(&(text + "\n"));
    } else {
        output::report_transcript_warnings(&redactor, &args.file, &t);
        out(&terminal::render_transcript(&t));
    }
    Ok(Outcome::Passed)
}

pub(super) fn report(args: &ReportCommandArgs) -> Result<Outcome, CliError> {
    if !args.reports.any() {
        return Err(CliError::NothingToWrite);
    }
    // Read test by test: the tests' verdicts and figures first, each test whole again while
    // its part of a report is written (bounded memory on big suites).
    let (results, file) = crate::report::json::source::ResultsFile::open(
        &args.results,
        Some(Redactor::from_process_env([])),
    )?;
    output::write_reports_from(&results, &file, None, &args.reports)?;
    Ok(Outcome::Passed)
}
