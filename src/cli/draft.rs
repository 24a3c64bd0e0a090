//! `aptitude init --rules FILE`: one drafted test for each rule of an instruction file that
//! no test covers, through an agent's one-shot command ([`crate::spec::draft`]).

use std::path::{Component, Path, PathBuf};

use tokio_util::sync::CancellationToken;

use super::output::out;
use super::{CliError, InitArgs, Outcome};
use crate::spec::draft::{self, DraftError};
use crate::spec::rules::{self, Rule};

/// How long one drafting call may take.
const DRAFT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// `to` relative to the directory `from` (both made absolute): `../..`, `fixture`.
fn relative(from: &Path, to: &Path) -> PathBuf {
    let (Ok(from), Ok(to)) = (std::path::absolute(from), std::path::absolute(to)) else {
        return to.to_owned();
    };
    let (from, to): (Vec<Component>, Vec<Component>) =
        (from.components().collect(), to.components().collect());
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for part in &to[common..] {
        out.push(part);
    }
    if out.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        out
    }
}

/// The ids of the rules the tests under `tests` cover (none when there are none).
fn covered(tests: &Path) -> Vec<String> {
    let Ok(found) = crate::spec::discover_tests(
        std::slice::from_ref(&tests.to_owned()),
        None,
        &Default::default(),
    ) else {
        return Vec::new();
    };
    crate::spec::load_files(&found.files)
        .specs
        .iter()
        .flat_map(|s| s.covers.iter().flat_map(|c| c.rules.iter().cloned()))
        .collect()
}

/// Drafts the tests (see the module docs).
///
/// # Errors
/// An unreadable instruction file, a draft that can not be written.
pub fn draft_rules(args: &InitArgs, file: &Path, tests: &Path) -> Result<Outcome, CliError> {
    let text = std::fs::read_to_string(file).map_err(|source| CliError::Write {
        path: file.to_owned(),
        source,
    })?;
    let workspace = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = file.file_name().map_or_else(
        || "AGENTS.md".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    );
    let covered = covered(tests);
    let uncovered: Vec<Rule> = rules::rules_of(&name, &text)
        .into_iter()
        .filter(|r| !covered.contains(&r.id))
        .collect();
    let drafts = tests.join("drafts");
    out(&format!(
        "{}: {} rules, {} not covered by a test under {}\n",
        file.display(),
        uncovered.len()
            + rules::rules_of(&name, &text)
                .iter()
                .filter(|r| covered.contains(&r.id))
                .count(),
        uncovered.len(),
        tests.display()
    ));
    // The drafts are loaded where they will be written: the directory must exist.
    std::fs::create_dir_all(&drafts).map_err(|source| CliError::Write {
        path: drafts.clone(),
        source,
    })?;
    let workspace_rel = relative(&drafts, workspace).display().to_string();
    let setup = args.agents.resolve(|name| std::env::var_os(name));
    let agent = setup.agent(args.agent);
    let runtime = tokio::runtime::Runtime::new().map_err(CliError::Runtime)?;
    let cancel = CancellationToken::new();
    let mut usage = crate::transcript::Usage::default();
    let (mut written, mut failed) = (0, 0);
    for rule in &uncovered {
        let path = drafts.join(format!("rule-{}.aptitude.yaml", rule.id));
        if std::fs::symlink_metadata(&path).is_ok() {
            out(&format!("kept     {} (it exists)\n", path.display()));
            continue;
        }
        let drafted = runtime.block_on(draft_one(
            agent.as_ref(),
            args.model.as_deref(),
            (rule, &name, &text),
            (&workspace_rel, &path),
            &cancel,
            &mut usage,
        ));
        match drafted {
            Ok(test) => {
                crate::shared::files::write_new(&path, &test).map_err(|source| {
                    CliError::Write {
                        path: path.clone(),
                        source,
                    }
                })?;
                written += 1;
                out(&format!("drafted  {} ({})\n", path.display(), rule.id));
            }
            Err(why) => {
                failed += 1;
                out(&format!(
                    "skipped  {} {}: {}\n",
                    rule.id,
                    crate::shared::inert::terminal(&crate::shared::cut::chars(&rule.text, 60).kept),
                    crate::shared::inert::terminal(&why)
                ));
            }
        }
    }
    out(&format!(
        "\n{written} draft{} written, {failed} not; drafting used {} tokens{}\nReview each draft (its first line says so), then: aptitude coverage {}\n",
        if written == 1 { "" } else { "s" },
        usage.input_tokens
            + usage.output_tokens
            + usage.cache_read_input_tokens
            + usage.cache_creation_input_tokens,
        usage
            .cost_usd
            .map_or_else(String::new, |c| format!(", ${c:.4}")),
        tests.display()
    ));
    Ok(if failed == 0 {
        Outcome::Passed
    } else {
        Outcome::Failed
    })
}

/// One rule's draft: the model's reply made into a test, with one more try when the first
/// does not load (the loader's words given back).
async fn draft_one(
    agent: &dyn crate::agent::Agent,
    model: Option<&str>,
    (rule, name, text): (&Rule, &str, &str),
    (workspace_rel, path): (&str, &Path),
    cancel: &CancellationToken,
    usage: &mut crate::transcript::Usage,
) -> Result<String, String> {
    let mut prompt = draft::prompt_for(rule, name, text);
    for attempt in 0..2 {
        let reply = agent
            .grade(&prompt, model, DRAFT_TIMEOUT, cancel)
            .await
            .map_err(|e| e.to_string())?;
        usage.add(&reply.usage);
        match draft::test_from_reply(&reply.text, rule, workspace_rel, path) {
            Ok(test) => return Ok(test),
            Err(DraftError::Invalid(why)) if attempt == 0 => {
                prompt.push_str(&format!(
                    "\n\nYour previous answer did not load ({why}). Answer again with a valid test.\n"
                ));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    Err("no valid draft".into())
}
