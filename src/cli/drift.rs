//! `aptitude drift --agent NAME --from V --to V`: what changed in an agent's tools between
//! two releases, at no model cost.
//!
//! Each release is installed into aptitude's cache (as `bisect` does) and run once, through
//! the ordinary `run` path and its model gateway, on a one-line prompt against a stub
//! upstream on 127.0.0.1 ([`crate::gateway::stub`]) that keeps the requests and refuses
//! them: the tools the release offered the model are read from its request. The two lists
//! are compared by [`crate::verdict::drift`], with the `tool:` assertions of the tests
//! (TESTS) that name a tool the newer release no longer offers. Exit codes: 1 when a test
//! names such a tool, 0 otherwise, 2 on bad input or a release that sent no request.

use std::path::PathBuf;

use clap::Args;

use super::Outcome;
use super::bisect::{install, run_args};
use super::error::{CliError, DriftError};
use super::output::out;
use crate::agent::AgentKind;
use crate::agent::registry::{self, AgentOptions};
use crate::gateway::stub::StubUpstream;
use crate::verdict::drift::{self, Drift};

/// `aptitude drift`.
#[derive(Debug, Args)]
#[command(after_help = "\
Exit codes: 1 a test names a tool the newer release no longer offers, 0 otherwise, 2 invalid
input or a release that sent its model no request.")]
pub struct DriftArgs {
    /// Test files or directories whose `tool:` assertions are checked against the change
    /// (none found: the change alone is shown).
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// The agent.
    #[arg(long, short = 'a', value_name = "NAME", value_parser = super::settings::parse_agent)]
    pub agent: AgentKind,
    /// The older release.
    #[arg(long, value_name = "VERSION")]
    pub from: String,
    /// The newer release.
    #[arg(long, value_name = "VERSION")]
    pub to: String,
    /// Write the comparison as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Arguments for each `aptitude run` (e.g. `-- --sandbox off`).
    #[arg(last = true, value_name = "RUN ARGS")]
    pub run_args: Vec<String>,
}

pub(super) fn drift(args: &DriftArgs) -> Result<Outcome, CliError> {
    let from_tools = tools_of(args, &args.from)?;
    let to_tools = tools_of(args, &args.to)?;
    let specs = test_specs(&args.paths);
    let vocabulary = registry::cli(args.agent, &AgentOptions::default())
        .stream_format()
        .vocabulary();
    let drift = drift::compare(
        vocabulary,
        (&args.from, &from_tools),
        (&args.to, &to_tools),
        &specs,
        args.agent,
    );
    out(&(render(args.agent, &drift) + "\n"));
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&drift).map_err(CliError::Serialize)? + "\n";
        std::fs::write(path, text).map_err(|source| CliError::Write {
            path: path.clone(),
            source,
        })?;
    }
    Ok(Outcome::of(drift.affected.is_empty()))
}

/// The tests of `paths`, for the assertions a change affects; none when there are none or
/// they do not load (`validate` reports those).
fn test_specs(paths: &[PathBuf]) -> Vec<crate::spec::TestSpec> {
    match super::output::discover_tests(paths, None) {
        Ok(found) => crate::spec::load_files(&found.files).specs,
        Err(_) => Vec::new(),
    }
}

/// Installs `version`, runs it once against the stub, and returns the tools it offered.
fn tools_of(args: &DriftArgs, version: &str) -> Result<Vec<String>, CliError> {
    out(&format!(
        "drift: {} {version}: reading the tools it offers\n",
        args.agent
    ));
    let binary = install(args.agent, version)?;
    let stub = StubUpstream::start().map_err(DriftError::Stub)?;
    let dir = tempfile::tempdir().map_err(CliError::Runtime)?;
    let key = registry::cli(args.agent, &AgentOptions::default()).api_key_env();
    let test = dir.path().join("drift.aptitude.yaml");
    let yaml = format!(
        "name: drift probe\nprompt: Say hello.\nenv:\n  {key}: aptitude-drift-no-key\nassertions:\n  - output_contains: hello\n"
    );
    std::fs::write(&test, yaml).map_err(|source| CliError::Write {
        path: test.clone(),
        source,
    })?;
    let name = args.agent.name();
    let mut argv: Vec<String> = ["aptitude", "run"].map(String::from).to_vec();
    argv.push(test.display().to_string());
    argv.extend([
        "--agent".into(),
        name.into(),
        "--agent-bin".into(),
        format!("{name}={}", binary.display()),
        "--agent-base-url".into(),
        format!("{name}={}", stub.url()),
        "--timeout".into(),
        "120s".into(),
    ]);
    let run_args = run_args(argv, &args.run_args)?;
    // The run fails by design (its model refuses); only a run that could not start stops.
    super::run::run(&run_args)?;
    let tools = stub.tools_offered();
    if tools.is_empty() {
        return Err(DriftError::NoTools {
            agent: args.agent,
            version: version.to_owned(),
            requests: stub.requests(),
        }
        .into());
    }
    Ok(tools)
}

/// The change in words.
fn render(agent: AgentKind, drift: &Drift) -> String {
    let mut lines = vec![format!("{agent} {} → {}", drift.from, drift.to)];
    if drift.is_empty() {
        lines.push("  the tools offered to the model are the same".to_owned());
    }
    let tool = |t: &drift::OfferedTool| {
        if t.raw == t.canonical {
            t.raw.clone()
        } else {
            format!("{} ({})", t.raw, t.canonical)
        }
    };
    for t in &drift.added {
        lines.push(format!("  + {}", tool(t)));
    }
    for t in &drift.removed {
        lines.push(format!("  - {}", tool(t)));
    }
    for r in &drift.renamed {
        lines.push(format!("  ~ {} → {} ({})", r.from, r.to, r.canonical));
    }
    for name in &drift.unknown {
        lines.push(format!(
            "  ? {name}: a new name aptitude does not know; its calls stay unmapped"
        ));
    }
    for a in &drift.affected {
        lines.push(format!(
            "{}:{}:{}: test \"{}\" names {}, which {} {} no longer offers",
            a.file, a.line, a.column, a.test, a.tool, agent, drift.to
        ));
    }
    lines.join("\n")
}
