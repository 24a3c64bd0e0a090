//! The drift check `aptitude run` makes before its tests: when an agent found as usual
//! (`PATH`, `--agent-bin`, `APTITUDE_<NAME>_BIN`) reports another version than the one
//! aptitude is tested with (its pin), the tools each release offers the model are compared
//! as `aptitude drift` compares them ([`super::drift::probe`], against the stub model: no
//! model cost), and every test naming a tool the installed release no longer offers, or
//! offers under another name, is a warning on stderr with its `file:line:col`. It is a
//! warning, never a failure: the tests themselves say whether the suite still passes.
//!
//! Cost: the pinned release is installed once into aptitude's agent cache (as for
//! `versions: [pinned]`) and each release is run once against the stub; the tool list of
//! each (agent, version) is kept in `<agent cache>/<agent>/drift/<version>.json`, so a later
//! run reads it instead. A check that could not be made says so and why (never "no
//! drift"). `--no-drift-check` skips it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::output;
use super::{CliError, RunArgs};
use crate::agent::AgentKind;
use crate::agent::registry::{self, AgentOptions};
use crate::spec::agent_version::is_exact_version;

/// Warns, on stderr, about the tests a drifted agent may break; prints nothing when every
/// agent is its pinned version. Problems that stop the run (a test file that does not load,
/// an agent that does not start) are left to `run`, which reports them.
pub(super) fn warn(args: &RunArgs) {
    if args.no_drift_check || args.discovery.list_tests {
        return;
    }
    let Ok(specs) = super::run::load_specs(args) else {
        return;
    };
    let kinds: BTreeSet<AgentKind> = specs
        .iter()
        .filter(|s| s.agent.release().is_none())
        .map(|s| s.agent.kind)
        .collect();
    let setup = args.agents.resolve(|name| std::env::var_os(name));
    for kind in kinds {
        let Some(pinned) = registry::cli(kind, &AgentOptions::default()).pinned_version() else {
            continue;
        };
        // A version the user pinned is checked by `run` itself, and stops it.
        if setup.pin(kind).is_some() {
            continue;
        }
        let Ok(runtime) = output::runtime() else {
            return;
        };
        let Ok(info) = runtime.block_on(setup.agent(kind).check()) else {
            continue;
        };
        drop(runtime);
        if super::settings::version_matches(&info.version, pinned) {
            continue;
        }
        let lines = match release_number(&info.version) {
            None => vec![format!(
                "warning: {kind} reports `{}`, not the pinned {pinned}, and no release number aptitude can read: the drift check was not made",
                info.version
            )],
            Some(installed) => check(kind, pinned, &installed, &info.binary, args, &specs)
                .unwrap_or_else(|e| {
                    vec![format!(
                        "warning: {kind} {installed} is not the pinned {pinned}, and the drift check could not be made: {e}"
                    )]
                }),
        };
        for line in lines {
            output::err(&format!("{line}\n"));
        }
    }
}

/// The first word of a `--version` answer that is one release (`2.1.330` of `2.1.330
/// (Claude Code)`, `0.24.4` of `qwen-code v0.24.4`).
fn release_number(reported: &str) -> Option<String> {
    reported
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ',' | '@' | '/'))
        .map(|w| w.trim_start_matches('v'))
        .find(|w| is_exact_version(w))
        .map(str::to_owned)
}

/// The warnings of one agent: the tests naming a tool `installed` no longer offers or
/// renamed, against `pinned`.
fn check(
    kind: AgentKind,
    pinned: &str,
    installed: &str,
    binary: &Path,
    args: &RunArgs,
    specs: &[crate::spec::TestSpec],
) -> Result<Vec<String>, CliError> {
    let installer = crate::agent::install::Installer::from_env()
        .map_err(|e| CliError::Runtime(std::io::Error::other(e.to_string())))?;
    let cache = installer.dir(kind, "drift");
    let user_args = probe_args(args);
    let pinned_tools = cached_tools(&cache, pinned, || {
        let runtime = output::runtime()?;
        let release = runtime
            .block_on(crate::agent::install::install(kind, pinned))
            .map_err(|e| CliError::Runtime(std::io::Error::other(e.to_string())))?;
        drop(runtime);
        Ok(super::drift::probe(kind, pinned, Some(&release.binary), &user_args)?.tools)
    })?;
    let installed_tools = cached_tools(&cache, installed, || {
        Ok(super::drift::probe(kind, installed, Some(binary), &user_args)?.tools)
    })?;
    let vocabulary = registry::cli(kind, &AgentOptions::default())
        .stream_format()
        .vocabulary();
    let drift = crate::verdict::drift::compare(
        vocabulary,
        (pinned, &pinned_tools),
        (installed, &installed_tools),
        specs,
        kind,
    );
    let mut lines = Vec::new();
    for a in &drift.affected {
        lines.push(format!(
            "warning: {}:{}:{}: test \"{}\" names {}, which {kind} {installed} (yours; aptitude is tested with {pinned}) no longer offers",
            a.file, a.line, a.column, a.test, a.tool
        ));
    }
    for a in &drift.renamed_in_tests {
        let (before, after) = drift.rename_of(&a.tool);
        lines.push(format!(
            "warning: {}:{}:{}: test \"{}\" names {}, which {kind} {installed} offers as {after} (was {before} in {pinned}): settings and hooks naming {before} no longer match",
            a.file, a.line, a.column, a.test, a.tool
        ));
    }
    if lines.is_empty() {
        lines.push(format!(
            "note: {kind} {installed} is not the pinned {pinned}; no test names a tool it dropped or renamed (`aptitude drift --agent {kind} --from {pinned} --to {installed}` shows every change)"
        ));
    }
    Ok(lines)
}

/// The arguments each probe's `aptitude run` gets from this run: its sandbox and model.
fn probe_args(args: &RunArgs) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(sandbox) = args.agents.sandbox {
        let word = match sandbox {
            crate::sandbox::Setting::On => "on",
            crate::sandbox::Setting::Off => "off",
        };
        out.extend(["--sandbox".to_owned(), word.to_owned()]);
    }
    if let Some(model) = args.model.as_deref().filter(|m| !m.is_empty()) {
        out.extend(["--model".to_owned(), model.to_owned()]);
    }
    out
}

/// The tool list of `version` from `cache/<version>.json`, else from `probe` (then kept
/// there; a list that can not be kept is still used).
fn cached_tools(
    cache: &Path,
    version: &str,
    probe: impl FnOnce() -> Result<Vec<String>, CliError>,
) -> Result<Vec<String>, CliError> {
    let path: PathBuf = cache.join(format!("{version}.json"));
    if let Ok(bytes) = crate::shared::files::read_capped(&path, 1024 * 1024)
        && let Ok(tools) = serde_json::from_slice::<Vec<String>>(&bytes)
        && !tools.is_empty()
    {
        return Ok(tools);
    }
    let quiet = output::Quiet::new();
    let tools = probe();
    drop(quiet);
    let tools = tools?;
    if std::fs::create_dir_all(cache).is_ok()
        && let Ok(text) = serde_json::to_vec(&tools)
    {
        // Written whole then renamed, so that a run reading it never sees half of it.
        let staging = cache.join(format!(".{version}.json.{}", std::process::id()));
        if std::fs::write(&staging, text).is_ok() {
            let _ = std::fs::rename(&staging, &path);
        }
    }
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_release_number_is_read_from_each_agents_version_answer() {
        assert_eq!(
            release_number("2.1.330 (Claude Code)").as_deref(),
            Some("2.1.330")
        );
        assert_eq!(
            release_number("qwen-code v0.24.4").as_deref(),
            Some("0.24.4")
        );
        assert_eq!(
            release_number("codex-cli 0.169.0").as_deref(),
            Some("0.169.0")
        );
        assert_eq!(release_number("dev build"), None);
    }

    /// A kept list is read instead of probing again; a missing one is probed and kept.
    #[test]
    fn a_versions_tool_list_is_probed_once_then_read() {
        let dir = tempfile::tempdir().unwrap();
        let first = cached_tools(dir.path(), "1.0.0", || Ok(vec!["Bash".to_owned()])).unwrap();
        assert_eq!(first, ["Bash"]);
        let second = cached_tools(dir.path(), "1.0.0", || {
            panic!("the kept list is read, not probed again")
        })
        .unwrap();
        assert_eq!(second, ["Bash"]);
    }
}
