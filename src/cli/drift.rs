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
use crate::verdict::drift::{self, Drift, shape};

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
    let from = surface_of(args, &args.from)?;
    let to = surface_of(args, &args.to)?;
    let specs = test_specs(&args.paths);
    let vocabulary = registry::cli(args.agent, &AgentOptions::default())
        .stream_format()
        .vocabulary();
    let mut drift = drift::compare(
        vocabulary,
        (&args.from, &from.tools),
        (&args.to, &to.tools),
        &specs,
        args.agent,
    );
    drift.stream = shape::compare((&args.from, from.stream), (&args.to, to.stream));
    drift.settings = shape::compare((&args.from, from.settings), (&args.to, to.settings));
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

/// What one release showed: the tools it offered the model, its output stream's shape and
/// its settings schemas' fields (each, or why it could not be read).
pub(super) struct Surface {
    /// The tools offered, by the names the model was shown.
    pub(super) tools: Vec<String>,
    /// The output stream's events and fields.
    stream: Result<shape::Shape, Unread>,
    /// The settings schemas' fields.
    settings: Result<shape::Shape, Unread>,
}

/// Why a release's stream or settings schemas were not read: what [`shape`] says of
/// them, or why they were not found.
#[derive(Debug, thiserror::Error)]
enum Unread {
    /// Found, and not readable: no JSON event, no schema.
    #[error(transparent)]
    Shape(#[from] shape::Unreadable),
    /// The run's stream could not be read where `--record` writes it (none, or over
    /// [`MAX_STREAM_BYTES`]).
    #[error("its output stream was not recorded ({0})")]
    NotRecorded(#[source] crate::shared::files::FileError),
    /// Not looked for: the settings of a release only probed ([`probe`]).
    #[error("not read")]
    NotRead,
    /// The agent is not installed from npm, whose package directory is searched.
    #[error("{0} is not an npm package: its files are not searched for schemas")]
    NotNpm(AgentKind),
    /// The binary has no package directory beside it (`…/node_modules/PACKAGE`).
    #[error("{package}@{version}: no package directory beside {}", binary.display())]
    NoPackage {
        /// The npm package.
        package: &'static str,
        /// The release.
        version: String,
        /// The binary installed.
        binary: PathBuf,
    },
}

/// The tests of `paths`, for the assertions a change affects; none when there are none or
/// they do not load (`validate` reports those).
fn test_specs(paths: &[PathBuf]) -> Vec<crate::spec::TestSpec> {
    match super::output::discover_tests(paths, None) {
        Ok(found) => crate::spec::load_files(&found.files).specs,
        Err(_) => Vec::new(),
    }
}

/// Installs `version`, runs it once against the stub (its stream recorded), and returns
/// what it showed.
fn surface_of(args: &DriftArgs, version: &str) -> Result<Surface, CliError> {
    out(&format!(
        "drift: {} {version}: reading the tools it offers\n",
        args.agent
    ));
    let binary = install(args.agent, version)?;
    let mut surface = probe(args.agent, version, Some(&binary), &args.run_args)?;
    surface.settings = settings_of(args.agent, version, &binary);
    Ok(surface)
}

/// Runs `agent` (`binary`, else the one `run` finds) once against the stub, its stream
/// recorded, through `aptitude run` with `user_args` after its own; the tools it offered
/// and its stream's shape (settings: not read here).
///
/// # Errors
/// A run that could not start, or a release that sent its model no request offering tools.
pub(super) fn probe(
    agent: AgentKind,
    version: &str,
    binary: Option<&std::path::Path>,
    user_args: &[String],
) -> Result<Surface, CliError> {
    let stub = StubUpstream::start().map_err(DriftError::Stub)?;
    let dir = tempfile::tempdir().map_err(CliError::Runtime)?;
    let key = registry::cli(agent, &AgentOptions::default()).api_key_env();
    let test = dir.path().join("drift.aptitude.yaml");
    let yaml = format!(
        "name: drift probe\nprompt: Say hello.\nenv:\n  {key}: aptitude-drift-no-key\nassertions:\n  - output_contains: hello\n"
    );
    std::fs::write(&test, yaml).map_err(|source| CliError::Write {
        path: test.clone(),
        source,
    })?;
    let name = agent.name();
    let mut argv: Vec<String> = ["aptitude", "run"].map(String::from).to_vec();
    argv.push(test.display().to_string());
    argv.extend([
        "--agent".into(),
        name.into(),
        "--agent-base-url".into(),
        format!("{name}={}", stub.url()),
        "--timeout".into(),
        "120s".into(),
        // The raw stream, beside the test, for its shape.
        "--record".into(),
        // The probe is the check: it must not check itself again.
        "--no-drift-check".into(),
    ]);
    if let Some(binary) = binary {
        argv.extend(["--agent-bin".into(), format!("{name}={}", binary.display())]);
    }
    let run_args = run_args(argv, user_args)?;
    // The run fails by design (its model refuses); only a run that could not start stops.
    super::run::run(&run_args)?;
    let tools = stub.tools_offered();
    if tools.is_empty() {
        return Err(DriftError::NoTools {
            agent,
            version: version.to_owned(),
            requests: stub.requests(),
        }
        .into());
    }
    let recorded = dir.path().join("drift.transcript.jsonl");
    let stream = match crate::shared::files::read_capped(&recorded, MAX_STREAM_BYTES) {
        Ok(bytes) => shape::stream_shape(&String::from_utf8_lossy(&bytes)).map_err(Unread::from),
        Err(e) => Err(Unread::NotRecorded(e)),
    };
    Ok(Surface {
        tools,
        stream,
        settings: Err(Unread::NotRead),
    })
}

/// A recorded stream's bytes read at most (the stub run stops at the first request).
const MAX_STREAM_BYTES: u64 = 16 * 1024 * 1024;
/// A schema file's bytes read at most.
const MAX_SCHEMA_BYTES: u64 = 4 * 1024 * 1024;

/// The settings and hook payload fields of the JSON schemas the release's package ships
/// (`*schema*.json` under its package directory, not its dependencies'), or why none.
fn settings_of(
    agent: AgentKind,
    version: &str,
    binary: &std::path::Path,
) -> Result<shape::Shape, Unread> {
    let hint = registry::cli(agent, &AgentOptions::default()).install_hint();
    let Some(crate::agent::install::Source::Npm(package)) = crate::agent::install::source_of(hint)
    else {
        return Err(Unread::NotNpm(agent));
    };
    // `…/node_modules/.bin/NAME` → `…/node_modules/PACKAGE`.
    let root = binary
        .parent()
        .and_then(std::path::Path::parent)
        .map(|modules| modules.join(package))
        .filter(|p| p.is_dir())
        .ok_or_else(|| Unread::NoPackage {
            package,
            version: version.to_owned(),
            binary: binary.to_owned(),
        })?;
    let schemas: Vec<(String, String)> = ignore::WalkBuilder::new(&root)
        .standard_filters(false)
        .filter_entry(|e| e.file_name() != "node_modules")
        .build()
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name().to_string_lossy();
            name.ends_with(".json") && name.contains("schema")
        })
        .filter_map(|e| {
            let bytes = crate::shared::files::read_capped(e.path(), MAX_SCHEMA_BYTES).ok()?;
            let name = e.path().strip_prefix(&root).ok()?.display().to_string();
            Some((name, String::from_utf8_lossy(&bytes).into_owned()))
        })
        .collect();
    shape::schema_fields(&format!("{package}@{version}"), &schemas).map_err(Unread::from)
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
    lines.extend(render_shape("output stream", &drift.stream));
    lines.extend(render_shape("settings and hook payloads", &drift.settings));
    for a in &drift.affected {
        lines.push(format!(
            "{}:{}:{}: test \"{}\" names {}, which {} {} no longer offers",
            a.file, a.line, a.column, a.test, a.tool, agent, drift.to
        ));
    }
    for a in &drift.renamed_in_tests {
        let (before, after) = drift.rename_of(&a.tool);
        lines.push(format!(
            "{}:{}:{}: test \"{}\" names {}, which {} {} offers as {after} (was {before}): the assertion still matches; settings and hooks naming {before} do not",
            a.file, a.line, a.column, a.test, a.tool, agent, drift.to
        ));
    }
    lines.join("\n")
}

/// The lines of one compared shape: `output stream: the same events and fields`, or its
/// changes, or why it was not readable.
fn render_shape(what: &str, drift: &shape::ShapeDrift) -> Vec<String> {
    match drift {
        shape::ShapeDrift::NotReadable { why } => vec![format!("  {what}: not readable ({why})")],
        _ if drift.is_unchanged() => vec![format!("  {what}: the same parts and fields")],
        shape::ShapeDrift::Compared {
            added,
            removed,
            changed,
        } => {
            let mut lines = vec![format!("  {what}:")];
            lines.extend(added.iter().map(|p| format!("    + {p}")));
            lines.extend(removed.iter().map(|p| format!("    - {p}")));
            for c in changed {
                let mut fields: Vec<String> = c.added.iter().map(|f| format!("+{f}")).collect();
                fields.extend(c.removed.iter().map(|f| format!("-{f}")));
                lines.push(format!("    ~ {}: {}", c.part, fields.join(" ")));
            }
            lines
        }
    }
}
