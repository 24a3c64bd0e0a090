//! `aptitude init --rules FILE`: one drafted test for each rule of an instruction file that
//! no test covers; `aptitude init --skills DIR`: one drafted routing suite for the skills of
//! a directory. Both through an agent's one-shot command ([`crate::spec::draft`]), each
//! draft validated by the loader, with one more try given the loader's words.

use std::path::Path;

use tokio_util::sync::CancellationToken;

use super::output::out;
use super::{CliError, InitArgs, Outcome};
use crate::spec::draft::skills::{self, Placement, Skill, SkillPrompts};
use crate::spec::draft::{self, DraftError};
use crate::spec::rules::{self, Rule};

/// How long one drafting call may take.
const DRAFT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

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

/// The `coverage.exclude` entries of the `aptitude.yaml` files a test under `tests` would
/// get (an `aptitude.yaml` that does not load leaves nothing out: `validate` reports it).
fn exclusions(tests: &Path) -> Vec<rules::exclude::Exclusion> {
    crate::spec::suite::suite_files(&tests.join("draft.aptitude.yaml"))
        .iter()
        .filter_map(|f| crate::spec::load_suite_file(f).ok())
        .flat_map(|d| d.coverage_exclude.into_iter().map(|s| s.value))
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
    // What `aptitude.yaml` leaves out of coverage gets no draft either.
    let exclusions = exclusions(tests);
    let all: Vec<Rule> = rules::rules_of(&name, &text);
    let counted: Vec<Rule> = all
        .iter()
        .filter(|r| !exclusions.iter().any(|e| e.leaves_out(file, r)))
        .cloned()
        .collect();
    let uncovered: Vec<Rule> = counted
        .iter()
        .filter(|r| !covered.contains(&r.id))
        .cloned()
        .collect();
    let drafts = tests.join("drafts");
    let left_out = all.len() - counted.len();
    out(&format!(
        "{}: {} rules, {} not covered by a test under {}{}\n",
        file.display(),
        counted.len(),
        uncovered.len(),
        tests.display(),
        if left_out > 0 {
            format!(" ({left_out} left out by aptitude.yaml's coverage.exclude)")
        } else {
            String::new()
        }
    ));
    // The drafts are loaded where they will be written: the directory must exist.
    std::fs::create_dir_all(&drafts).map_err(|source| CliError::Write {
        path: drafts.clone(),
        source,
    })?;
    let workspace_rel = draft::relative(&drafts, workspace).display().to_string();
    let problems = super::settings::missing_credentials([args.agent], &[]);
    if !problems.is_empty() {
        return Err(CliError::NothingRun { problems });
    }
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
            Err((why, reply)) => {
                failed += 1;
                out(&format!(
                    "not drafted  {} {}: {}\n{}",
                    rule.id,
                    crate::shared::inert::terminal(&crate::shared::cut::chars(&rule.text, 60).kept),
                    crate::shared::inert::terminal(&why),
                    reply_line(
                        reply.as_deref(),
                        &crate::shared::redact::Redactor::from_process_env([])
                    )
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
) -> Result<String, (String, Option<String>)> {
    let mut prompt = draft::prompt_for(rule, name, text);
    for attempt in 0..2 {
        let reply = agent
            .grade(&prompt, model, DRAFT_TIMEOUT, cancel)
            .await
            .map_err(|e| (e.to_string(), None))?;
        usage.add(&reply.usage);
        match draft::test_from_reply(&reply.text, rule, workspace_rel, path) {
            Ok(test) => return Ok(test),
            Err(DraftError::Invalid(why)) if attempt == 0 => {
                prompt.push_str(&format!(
                    "\n\nYour previous answer did not load ({why}). Answer again with a valid test.\n"
                ));
            }
            Err(e) => return Err((e.to_string(), Some(reply.text))),
        }
    }
    Err(("no valid draft".into(), None))
}

/// How much of a model's reply that is not a draft is shown, in characters.
const REPLY_EXCERPT: usize = 200;

/// The line under a `not drafted` one that shows the start of the model's reply (inert,
/// redacted, on one line), so that what the model said can be read; empty without one.
fn reply_line(reply: Option<&str>, redactor: &crate::shared::redact::Redactor) -> String {
    let Some(reply) = reply else {
        return String::new();
    };
    let flat = reply.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut = crate::shared::cut::chars(&flat, REPLY_EXCERPT);
    let more = if cut.kept.len() < flat.len() {
        "…"
    } else {
        ""
    };
    format!(
        "             the reply: {}{more}\n",
        crate::shared::inert::terminal(&redactor.redact(&cut.kept))
    )
}

/// The file `init --skills` drafts, in the tests' `drafts/` directory.
const ROUTING_DRAFT: &str = "routing.aptitude.yaml";

/// `12,345 tokens, $0.0123` of what drafting used.
fn usage_phrase(usage: &crate::transcript::Usage) -> String {
    format!(
        "{} tokens{}",
        crate::shared::text::thousands(
            usage.input_tokens
                + usage.output_tokens
                + usage.cache_read_input_tokens
                + usage.cache_creation_input_tokens
        ),
        usage
            .cost_usd
            .map_or_else(String::new, |c| format!(", ${c:.4}"))
    )
}

/// The skills of `dir` and where the suite finds them, or every problem with them.
fn read_skills(dir: &Path, root: &Path) -> Result<(Vec<Skill>, Placement), CliError> {
    let redactor = crate::shared::redact::Redactor::from_process_env([]);
    let problems = |files: Vec<crate::spec::diagnostic::FileDiagnostics>| CliError::Skills {
        count: files.iter().map(|f| f.diagnostics.len()).sum(),
        diagnostics: files
            .iter()
            .map(|f| redactor.redact(&crate::spec::diagnostic::render(f, true)))
            .collect(),
        dir: dir.display().to_string(),
    };
    let read = skills::skills_in(dir).map_err(problems)?;
    // A skill that can not be read is left out; the others are still drafted.
    for file in &read.problems {
        super::output::err(&redactor.redact(&crate::spec::diagnostic::render(file, true)));
    }
    if !read.problems.is_empty() {
        let left: Vec<String> = read
            .problems
            .iter()
            .map(|f| crate::spec::diagnostic::display_path(&f.path))
            .collect();
        super::output::err(&super::error::warning_line(&format!(
            "{} of {} skills not drafted (above): {}",
            left.len(),
            left.len() + read.skills.len(),
            left.join(", ")
        )));
    }
    let skills = read.skills;
    let absolute = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    let placement = skills::placement(&absolute(dir), &absolute(root)).map_err(|d| {
        problems(vec![crate::spec::diagnostic::FileDiagnostics {
            path: dir.to_owned(),
            source: String::new(),
            diagnostics: vec![d],
        }])
    })?;
    Ok((skills, placement))
}

/// Drafts a routing suite for the skills of `dir` into `tests/drafts/` (see the module
/// docs); `root` is the repository (`init`'s `DIR`), the workspace of a plugin's skills.
///
/// # Errors
/// Skills that can not be read ([`CliError::Skills`]), a draft that can not be written.
pub fn draft_skills(
    args: &InitArgs,
    dir: &Path,
    root: &Path,
    tests: &Path,
) -> Result<Outcome, CliError> {
    let (all, placement) = read_skills(dir, root)?;
    let drafts = tests.join("drafts");
    std::fs::create_dir_all(&drafts).map_err(|source| CliError::Write {
        path: drafts.clone(),
        source,
    })?;
    let path = std::fs::canonicalize(&drafts)
        .unwrap_or_else(|_| drafts.clone())
        .join(ROUTING_DRAFT);
    let shown = drafts.join(ROUTING_DRAFT);
    let shown = shown.strip_prefix(".").unwrap_or(&shown).to_owned();
    let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
    out(&format!(
        "{}: {} skill{}: {}\n",
        dir.display(),
        all.len(),
        if all.len() == 1 { "" } else { "s" },
        names.join(", ")
    ));
    if std::fs::symlink_metadata(&path).is_ok() {
        out(&format!("kept     {} (it exists)\n", shown.display()));
        return Ok(Outcome::Passed);
    }
    let redactor = crate::shared::redact::Redactor::from_process_env([]);
    let problems = super::settings::missing_credentials([args.agent], &[]);
    if !problems.is_empty() {
        return Err(CliError::NothingRun { problems });
    }
    let setup = args.agents.resolve(|name| std::env::var_os(name));
    let agent = setup.agent(args.agent);
    let runtime = tokio::runtime::Runtime::new().map_err(CliError::Runtime)?;
    let cancel = CancellationToken::new();
    let mut usage = crate::transcript::Usage::default();
    let mut drafted = Vec::new();
    for skill in &all {
        let prompts = runtime.block_on(draft_skill(
            agent.as_ref(),
            args.model.as_deref(),
            (skill, &all),
            (&placement, &path),
            &cancel,
            &mut usage,
        ));
        match prompts {
            Ok(p) => {
                let near = p.should_not_trigger.len();
                out(&format!(
                    "drafted  {}: {} should trigger, {near} near-miss{}\n",
                    skill.name,
                    p.should_trigger.len(),
                    if near == 1 { "" } else { "es" }
                ));
                drafted.push((skill.clone(), p));
            }
            Err((why, reply)) => out(&format!(
                "not drafted  {}: {}\n{}",
                skill.name,
                crate::shared::inert::terminal(&redactor.redact(&why)),
                reply_line(reply.as_deref(), &redactor)
            )),
        }
    }
    let missing = all.len() - drafted.len();
    let written = match skills::suite_text(&drafted, &placement, &path) {
        Ok(text) if !drafted.is_empty() => {
            crate::shared::files::write_new(&path, &text).map_err(|source| CliError::Write {
                path: shown.clone(),
                source,
            })?;
            let prompts = text.lines().filter(|l| l.starts_with("      - ")).count();
            out(&format!(
                "\nwrote    {} ({} skill{}, {prompts} prompts, {} runs each on every agent; draft: true)\n",
                shown.display(),
                drafted.len(),
                if drafted.len() == 1 { "" } else { "s" },
                skills::RUNS
            ));
            true
        }
        Ok(_) => false,
        Err(why) => {
            out(&format!(
                "\nnot written: {}\n",
                crate::shared::inert::terminal(&redactor.redact(&why.to_string()))
            ));
            false
        }
    };
    out(&format!("drafting used {}\n", usage_phrase(&usage)));
    if written {
        out(&format!(
            "Review the prompts (remove `draft: true` when done), then:\n  aptitude validate {0}\n  aptitude run {0}\n",
            shown.display()
        ));
    }
    Ok(if written && missing == 0 {
        Outcome::Passed
    } else {
        Outcome::Failed
    })
}

/// One skill's prompts: the model's reply read and loaded, with one more try when the
/// first is no list of prompts or does not load (the reason given back).
async fn draft_skill(
    agent: &dyn crate::agent::Agent,
    model: Option<&str>,
    (skill, all): (&Skill, &[Skill]),
    (placement, path): (&Placement, &Path),
    cancel: &CancellationToken,
    usage: &mut crate::transcript::Usage,
) -> Result<SkillPrompts, (String, Option<String>)> {
    let mut prompt = skills::prompt_for(skill, all);
    let mut last = (String::new(), None);
    for _ in 0..2 {
        let reply = agent
            .grade(&prompt, model, DRAFT_TIMEOUT, cancel)
            .await
            .map_err(|e| (e.to_string(), None))?;
        usage.add(&reply.usage);
        match skills::prompts_from_reply(&reply.text, skill, placement, path) {
            Ok(prompts) => return Ok(prompts),
            Err(e) => {
                let why = e.to_string();
                prompt.push_str(&format!(
                    "\n\nYour previous answer could not be used ({why}). Answer again, with the YAML block alone.\n"
                ));
                last = (why, Some(reply.text));
            }
        }
    }
    Err(last)
}
