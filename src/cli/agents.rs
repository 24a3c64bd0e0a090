//! `aptitude agents`: every agent of the registry, whether it is installed (its
//! `--version` check, as `run` makes it), its version against the one aptitude is tested
//! with ([`crate::agent::AgentCli::pinned_version`]), and which of its credentials are
//! present ([`crate::agent::AgentCli::credentials`]). Only names and paths are printed,
//! never a value.

use std::ffi::OsString;

use super::output::out;
use super::settings::{AgentArgs, version_matches};
use super::{AgentsArgs, CliError, Outcome};
use crate::agent::registry::{self, AgentOptions};
use crate::agent::{AgentError, AgentInfo, AgentKind, Credential};

/// One agent's line.
struct Row {
    kind: AgentKind,
    checked: Result<AgentInfo, AgentError>,
    pin: Option<&'static str>,
    install_hint: &'static str,
    /// Each credential source, as shown, and whether it is present.
    credentials: Vec<(String, bool)>,
}

pub(super) fn agents(args: &AgentsArgs) -> Result<Outcome, CliError> {
    let env = |name: &str| std::env::var_os(name);
    let setup = AgentArgs {
        agent_bin: args.agent_bin.clone(),
        permission_mode: "bypass".into(),
        ..AgentArgs::default()
    }
    .resolve(env);
    let runtime = super::output::runtime()?;
    let checks = AgentKind::ALL.map(|kind| {
        let agent = setup.agent(kind);
        async move { (kind, agent.check().await) }
    });
    let checked = runtime.block_on(futures_util::future::join_all(checks));
    let rows: Vec<Row> = checked
        .into_iter()
        .map(|(kind, checked)| {
            let cli = registry::cli(kind, &AgentOptions::default());
            Row {
                kind,
                checked,
                pin: cli.pinned_version(),
                install_hint: cli.install_hint(),
                credentials: cli
                    .credentials()
                    .iter()
                    .map(|c| credential(c, &env))
                    .collect(),
            }
        })
        .collect();
    out(&render(&rows));
    Ok(Outcome::Passed)
}

/// A credential source as shown, and whether it is present
/// ([`Credential::shown`], [`Credential::present`]).
fn credential(source: &Credential, env: &impl Fn(&str) -> Option<OsString>) -> (String, bool) {
    (source.shown(env), source.present(env))
}

/// The table, then a line per agent on where it is or how to install it.
fn render(rows: &[Row]) -> String {
    let table: Vec<[String; 4]> = rows
        .iter()
        .map(|row| {
            let (installed, pinned) = match (&row.checked, row.pin) {
                (Ok(info), Some(pin)) if version_matches(&info.version, pin) => {
                    (info.version.clone(), format!("{pin} (matches)"))
                }
                (Ok(info), Some(pin)) => (info.version.clone(), format!("{pin} (differs)")),
                (Ok(info), None) => (info.version.clone(), "none".into()),
                (Err(AgentError::Missing { .. }), pin) => {
                    ("not found".into(), pin.unwrap_or("none").to_owned())
                }
                (Err(_), pin) => ("does not start".into(), pin.unwrap_or("none").to_owned()),
            };
            let present: Vec<&str> = row
                .credentials
                .iter()
                .filter(|(_, p)| *p)
                .map(|(s, _)| s.as_str())
                .collect();
            let credentials = if present.is_empty() {
                let all: Vec<&str> = row.credentials.iter().map(|(s, _)| s.as_str()).collect();
                format!("none ({})", or_list(&all))
            } else {
                present.join(", ")
            };
            [row.kind.to_string(), installed, pinned, credentials]
        })
        .collect();
    let header = [
        "agent".to_owned(),
        "installed".to_owned(),
        "tested with".to_owned(),
        "credentials".to_owned(),
    ];
    let widths: Vec<usize> = (0..3)
        .map(|i| {
            std::iter::once(&header)
                .chain(&table)
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for r in std::iter::once(&header).chain(&table) {
        text.push_str(&format!(
            "{:w0$}  {:w1$}  {:w2$}  {}\n",
            r[0],
            r[1],
            r[2],
            r[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        ));
    }
    text.push('\n');
    for row in rows {
        let line = match &row.checked {
            Ok(info) => match row.pin {
                Some(pin) if !version_matches(&info.version, pin) => format!(
                    "{}: not the version aptitude is tested with; `{}` installs it",
                    info.binary.display(),
                    row.install_hint
                ),
                _ => info.binary.display().to_string(),
            },
            Err(e) => e.to_string(),
        };
        text.push_str(&format!("{}: {line}\n", row.kind));
    }
    text
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_show_names_and_paths_never_values() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
        std::fs::write(
            dir.path().join(".claude/.credentials.json"),
            "{\"token\":\"s3cr3t\"}",
        )
        .unwrap();
        let home = dir.path().as_os_str().to_owned();
        let env = move |name: &str| match name {
            "HOME" => Some(home.clone()),
            "ANTHROPIC_API_KEY" => Some("sk-ant-s3cr3t".into()),
            "CLAUDE_CODE_OAUTH_TOKEN" => Some("".into()),
            _ => None,
        };
        let shown: Vec<(String, bool)> = registry::cli(AgentKind::Claude, &AgentOptions::default())
            .credentials()
            .iter()
            .map(|c| credential(c, &env))
            .collect();
        assert_eq!(
            shown,
            [
                ("ANTHROPIC_API_KEY".to_owned(), true),
                ("CLAUDE_CODE_OAUTH_TOKEN".to_owned(), false),
                ("ANTHROPIC_AUTH_TOKEN".to_owned(), false),
                ("CLAUDE_CODE_USE_BEDROCK".to_owned(), false),
                ("CLAUDE_CODE_USE_VERTEX".to_owned(), false),
                ("CLAUDE_CODE_USE_FOUNDRY".to_owned(), false),
                ("~/.claude/.credentials.json".to_owned(), true),
            ]
        );
        assert_eq!(or_list(&["a", "b", "c"]), "a, b or c");
    }
}
