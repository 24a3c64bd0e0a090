//! Drafting a routing suite from a directory of skills (`aptitude init --skills DIR`): the
//! skills read from their `SKILL.md` front matter, the prompt a model is given for each
//! skill, and the one suite file made of the replies — validated by the loader before it
//! is written, and marked as a draft (a comment header and `draft: true`) for a person to
//! review.
//!
//! For each skill the model sees the name and description of every skill of the suite
//! (they are installed together and compete) and is asked for should-trigger prompts and
//! near-misses: requests close to the skill's subject for which none of the skills is
//! right. The other skills' should-trigger prompts are each skill's remaining negatives:
//! a skill's false-trigger rate counts every prompt of the suite that is not its own
//! (`docs/routing.md`).
//!
//! The front matter is the Agent Skills format (`agentskills.io/specification`): YAML
//! between two `---` lines at the top of `SKILL.md`, with `name` (the skill's directory
//! name) and `description` (what an agent chooses the skill by).

use std::path::{Path, PathBuf};

use super::super::diagnostic::{Diagnostic, FileDiagnostics};
use super::super::node::Pos;
use super::super::routing::{SKILL_ROOTS, front_matter, one_line};
use super::DraftError;

/// How many should-trigger prompts are asked for per skill.
pub const SHOULD_TRIGGER: usize = 5;

/// How many near-misses are asked for per skill.
pub const NEAR_MISSES: usize = 5;

/// `runs:` of a drafted suite: each prompt runs this many times on every agent.
pub const RUNS: u32 = 3;

/// The most of a `SKILL.md` read: its front matter is at the top.
const MAX_SKILL_BYTES: u64 = 1 << 20;

/// The first line of a drafted suite.
pub const SKILLS_DRAFT_MARK: &str = "# DRAFT by `aptitude init --skills`: a model wrote these prompts from each skill's description.";

/// One skill of the directory: its name, its description and where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its directory's name (which its front matter's `name`, when there is one, matches).
    pub name: String,
    /// Its front matter's `description`, on one line.
    pub description: String,
    /// Its `SKILL.md`.
    pub path: PathBuf,
}

/// The prompts drafted for one skill.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkillPrompts {
    /// Requests for which the skill is the right one.
    pub should_trigger: Vec<String>,
    /// Near-misses: requests close to it for which no skill of the suite is right.
    pub should_not_trigger: Vec<String>,
}

/// Where the suite finds its skills: the workspace it copies, and the plugin directory
/// whose `skills/` they are in, if they are a Claude Code plugin's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The directory copied for each run (absolute).
    pub workspace: PathBuf,
    /// The plugin directory (absolute), when `DIR` is a plugin's `skills/`.
    pub plugin: Option<PathBuf>,
}

/// The skills of a directory that could be read, and the problems of the others.
#[derive(Debug, Clone)]
pub struct SkillsRead {
    /// The skills read, sorted by name.
    pub skills: Vec<Skill>,
    /// One entry per `SKILL.md` that could not be read as a skill (left out of the draft):
    /// without front matter, with front matter that is not YAML (after the agents'
    /// leniency, [`front_matter`]), without a `description`, or whose `name` is not its
    /// directory's.
    pub problems: Vec<FileDiagnostics>,
}

/// The skills of `dir` (`dir/<name>/SKILL.md`), sorted by name, and the problems of those
/// that could not be read: one broken skill leaves the others to be drafted.
///
/// # Errors
/// `dir` unreadable, holding no skill, or holding none that could be read (every problem
/// at once, per file).
pub fn skills_in(dir: &Path) -> Result<SkillsRead, Vec<FileDiagnostics>> {
    let whole = |message: String, hint: &str| {
        vec![FileDiagnostics {
            path: dir.to_owned(),
            source: String::new(),
            diagnostics: vec![Diagnostic::new(Pos::default(), message).hint(hint)],
        }]
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            return Err(whole(
                format!("can not read the skills directory: {e}"),
                "pass the directory that holds one `<name>/SKILL.md` per skill, e.g. .claude/skills",
            ));
        }
    };
    let mut paths: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter(|e| e.path().join("SKILL.md").is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.path().join("SKILL.md"),
            )
        })
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(whole(
            "no skill here: no `<name>/SKILL.md` below this directory".into(),
            "pass the directory that holds one `<name>/SKILL.md` per skill, e.g. .claude/skills",
        ));
    }
    let mut skills = Vec::new();
    let mut problems = Vec::new();
    for (name, path) in paths {
        let source = match crate::shared::files::read_prefix(&path, MAX_SKILL_BYTES) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => {
                problems.push(FileDiagnostics {
                    path: path.clone(),
                    source: String::new(),
                    diagnostics: vec![Diagnostic::new(
                        Pos::default(),
                        format!("can not read it: {e}"),
                    )],
                });
                continue;
            }
        };
        match skill_of(&name, &source) {
            Ok(description) => skills.push(Skill {
                name,
                description,
                path,
            }),
            Err(diagnostic) => problems.push(FileDiagnostics {
                path,
                source,
                diagnostics: vec![diagnostic],
            }),
        }
    }
    if skills.is_empty() {
        Err(problems)
    } else {
        Ok(SkillsRead { skills, problems })
    }
}

/// A position at `line` (1-based), its first `len` characters.
fn at(line: usize, len: usize) -> Pos {
    Pos {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        column: 1,
        len: u32::try_from(len).unwrap_or(u32::MAX),
    }
}

/// The description of the skill `name` from its `SKILL.md` text.
fn skill_of(name: &str, source: &str) -> Result<String, Diagnostic> {
    const FORMAT: &str = "start SKILL.md with its front matter: a `---` line, `name: <its directory's name>`, `description: <when to use it>`, a `---` line";
    let text = source.strip_prefix('\u{feff}').unwrap_or(source);
    let lines: Vec<&str> = text.lines().collect();
    if lines.first().map(|l| l.trim_end()) != Some("---") {
        return Err(Diagnostic::new(at(1, 3), "no front matter")
            .label("expected `---`")
            .hint(FORMAT));
    }
    let Some(end) = lines.iter().skip(1).position(|l| l.trim_end() == "---") else {
        return Err(Diagnostic::new(at(1, 3), "the front matter is not closed")
            .label("opened here")
            .hint(FORMAT));
    };
    let yaml = lines[1..=end].join("\n");
    let value = front_matter(&yaml).map_err(|e| {
        // The parser's position is within the front matter, which starts on line 2.
        let pos = e.pos.map_or(at(2, 1), |p| Pos {
            line: p.line.saturating_add(1),
            ..p
        });
        Diagnostic::new(pos, format!("the front matter is not YAML: {}", e.message))
            .label("the YAML parser stopped here")
            .hint("agents read this front matter as YAML too: quote a value that holds `: ` or ` #` (`description: \"…\"`), or write it as a block (`description: >` and the text on the lines below, indented)")
    })?;
    let line_of = |key: &str| {
        lines[1..=end]
            .iter()
            .position(|l| l.starts_with(&format!("{key}:")))
            .map_or(1, |i| i + 2)
    };
    if let Some(declared) = value.get("name").and_then(serde_json::Value::as_str)
        && declared.trim() != name
    {
        return Err(Diagnostic::new(
            at(line_of("name"), 4),
            format!(
                "the skill's name `{}` is not its directory's `{name}`",
                declared.trim()
            ),
        )
        .label("not the directory's name")
        .hint("agents find a skill by its directory and call it by its name: make them the same"));
    }
    let description = value
        .get("description")
        .and_then(serde_json::Value::as_str)
        .map(one_line)
        .unwrap_or_default();
    if description.is_empty() {
        return Err(Diagnostic::new(at(1, 3), "the front matter has no `description`")
            .label("no description")
            .hint("agents choose a skill by its description alone: say what it does and when to use it"));
    }
    Ok(description)
}

/// Where the suite will find the skills of `dir` (absolute): the workspace that holds
/// `dir` as one of the places agents load skills from ([`SKILL_ROOTS`], e.g.
/// `.claude/skills`), or, for a Claude Code plugin's `skills/` (its parent has
/// `.claude-plugin/plugin.json`), `root` with the plugin.
///
/// # Errors
/// Any other directory, with a hint naming where skills go.
pub fn placement(dir: &Path, root: &Path) -> Result<Placement, Diagnostic> {
    for skills_root in SKILL_ROOTS {
        let suffix = Path::new(skills_root);
        if dir.ends_with(suffix) {
            let mut workspace = dir.to_owned();
            for _ in suffix.components() {
                workspace.pop();
            }
            return Ok(Placement {
                workspace,
                plugin: None,
            });
        }
    }
    if dir.file_name().is_some_and(|n| n == "skills")
        && let Some(plugin) = dir.parent()
        && plugin.join(".claude-plugin/plugin.json").is_file()
    {
        return Ok(Placement {
            workspace: root.to_owned(),
            plugin: Some(plugin.to_owned()),
        });
    }
    Err(Diagnostic::new(
        Pos::default(),
        "agents do not load skills from this directory",
    )
    .hint(format!(
        "put the skills where agents look for them, e.g. <repository>/.claude/skills/<name>/SKILL.md, and pass that directory (agents look in {}); or pass a Claude Code plugin's skills/ directory",
        SKILL_ROOTS.join(", ")
    )))
}

/// The prompt that asks a model for `skill`'s should-trigger prompts and near-misses,
/// with every skill of the suite (`all`) for context.
pub fn prompt_for(skill: &Skill, all: &[Skill]) -> String {
    let listed: Vec<String> = all
        .iter()
        .map(|s| {
            format!(
                "- {}: {}",
                s.name,
                crate::shared::cut::chars(&s.description, 1000).kept
            )
        })
        .collect();
    format!(
        r#"You write routing tests for agent skills. A coding agent (Claude Code, Codex, Gemini CLI, …) sees the name and description of every installed skill and decides from a user's request alone whether to load one. These skills are installed together:

{skills}

Write test prompts for the skill `{name}`. Answer with YAML only, in a ```yaml block, with exactly these keys:

should_trigger:       # {should} realistic requests a user would type for which `{name}` is the right skill; vary the wording, and do not always name the skill or its file type
  - "…"
should_not_trigger:   # {near} near-misses: requests close to `{name}`'s subject or words for which NONE of the skills above is the right one
  - "…"

Each prompt is one or two sentences; no prompt appears twice; do not mention skills or tests in the prompts.
"#,
        skills = listed.join("\n"),
        name = skill.name,
        should = SHOULD_TRIGGER,
        near = NEAR_MISSES,
    )
}

/// The prompts of a model's `reply` for `skill`, checked by loading a suite of that skill
/// alone as it would load at `test_path` (with `placement`'s workspace and plugin).
///
/// # Errors
/// [`DraftError::NotATest`] for a reply without two lists of prompts,
/// [`DraftError::Invalid`] for prompts the loader refuses.
pub fn prompts_from_reply(
    reply: &str,
    skill: &Skill,
    placement: &Placement,
    test_path: &Path,
) -> Result<SkillPrompts, DraftError> {
    let yaml = super::yaml_of(reply);
    let value: serde_json::Value = serde_saphyr::from_str(yaml)
        .map_err(|e| DraftError::NotATest(crate::shared::cut::chars(&e.to_string(), 300).kept))?;
    let list = |key: &str| -> Result<Vec<String>, DraftError> {
        let items = value
            .get(key)
            .and_then(serde_json::Value::as_array)
            .filter(|a| !a.is_empty())
            .ok_or_else(|| DraftError::NotATest(format!("it has no list `{key}`")))?;
        items
            .iter()
            .map(|p| match p.as_str().map(str::trim) {
                Some(text) if !text.is_empty() => Ok(text.to_owned()),
                _ => Err(DraftError::NotATest(format!(
                    "`{key}` holds {p}, not a prompt"
                ))),
            })
            .collect()
    };
    let prompts = SkillPrompts {
        should_trigger: list("should_trigger")?,
        should_not_trigger: list("should_not_trigger")?,
    };
    suite_text(&[(skill.clone(), prompts.clone())], placement, test_path)?;
    Ok(prompts)
}

/// `p` as a YAML double-quoted scalar (a JSON string is one).
fn quote(p: &str) -> String {
    serde_json::Value::String(p.to_owned()).to_string()
}

/// The suite file of `drafted` (each skill with its prompts, in order): the draft mark and
/// header, `name`, `workspace` and `plugins` relative to `test_path`'s directory, `draft:
/// true`, `runs:` and `routing:`. A should-trigger prompt that an earlier skill already
/// claims is left out (a prompt expects one skill), as is a near-miss that is one of the
/// skill's own prompts. The text is loaded as it would be at `test_path`.
///
/// # Errors
/// [`DraftError::Invalid`] with the loader's messages when it does not load.
pub fn suite_text(
    drafted: &[(Skill, SkillPrompts)],
    placement: &Placement,
    test_path: &Path,
) -> Result<String, DraftError> {
    let from = test_path.parent().unwrap_or(Path::new("."));
    let workspace = super::relative(from, &placement.workspace);
    let mut text = format!(
        "{SKILLS_DRAFT_MARK}
# Review them: each should_trigger prompt should call for its skill and no other, each
# should_not_trigger prompt (a near-miss) for another skill or none. Then remove
# `draft: true`.
# Each skill's false-trigger rate counts every prompt here that is not its own: its
# near-misses and the other skills' prompts. Syntax and figures: aptitude's docs/routing.md.
name: \"Skill routing\"
workspace: {}
",
        quote(&workspace.display().to_string())
    );
    if let Some(plugin) = &placement.plugin {
        text.push_str(&format!(
            "plugins: [{}]\n",
            quote(&super::relative(from, plugin).display().to_string())
        ));
    }
    text.push_str(&format!(
        "draft: true\nruns: {RUNS}\n# stop: first_call is the default: each run ends at the agent's first tool or skill call.\nrouting:\n"
    ));
    let mut claimed: Vec<String> = Vec::new();
    for (skill, prompts) in drafted {
        let own: Vec<String> = prompts
            .should_trigger
            .iter()
            .filter(|p| {
                let line = one_line(p);
                let fresh = !claimed.contains(&line);
                if fresh {
                    claimed.push(line);
                }
                fresh
            })
            .cloned()
            .collect();
        let mut near: Vec<&String> = Vec::new();
        for p in &prompts.should_not_trigger {
            let line = one_line(p);
            let mine = prompts.should_trigger.iter().any(|s| one_line(s) == line);
            if !mine && !near.iter().any(|n| one_line(n) == line) {
                near.push(p);
            }
        }
        // A name as the Agent Skills format has them is a plain key; any other is quoted.
        let plain = skill
            .name
            .chars()
            .enumerate()
            .all(|(i, c)| c.is_ascii_alphanumeric() || (i > 0 && matches!(c, '-' | '_' | '.')));
        text.push_str(&format!(
            "  # {}\n  {}:\n",
            crate::shared::cut::chars(&skill.description, 100).kept,
            if plain {
                skill.name.clone()
            } else {
                quote(&skill.name)
            }
        ));
        for (key, list) in [
            ("should_trigger", own.iter().collect::<Vec<_>>()),
            ("should_not_trigger", near),
        ] {
            if list.is_empty() {
                continue;
            }
            text.push_str(&format!("    {key}:\n"));
            for p in list {
                text.push_str(&format!("      - {}\n", quote(&one_line(p))));
            }
        }
    }
    super::validated(test_path, &text)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn md(name: &str, description: &str) -> String {
        format!("---\nname: {name}\ndescription: {description}\n---\nBody.\n")
    }

    /// A repository with `.claude/skills/{pdf,docx}` and `tests/agents/drafts/`.
    fn repo() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let skills = root.join(".claude/skills");
        write(
            &skills.join("pdf/SKILL.md"),
            &md("pdf", "Fill and merge PDF forms."),
        );
        write(
            &skills.join("docx/SKILL.md"),
            &md("docx", "Write Word documents.\n  Also tables."),
        );
        let drafts = root.join("tests/agents/drafts");
        std::fs::create_dir_all(&drafts).unwrap();
        (dir, skills, drafts.join("routing.aptitude.yaml"))
    }

    #[test]
    fn skills_are_read_from_their_front_matter_in_name_order() {
        let (_dir, skills, _) = repo();
        let found = skills_in(&skills).unwrap().skills;
        let names: Vec<(&str, &str)> = found
            .iter()
            .map(|s| (s.name.as_str(), s.description.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("docx", "Write Word documents. Also tables."),
                ("pdf", "Fill and merge PDF forms.")
            ]
        );
    }

    /// Every broken SKILL.md is a diagnostic at its line, all at once; the skills that
    /// could be read are still read.
    #[test]
    fn a_skill_without_front_matter_or_description_is_a_diagnostic() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("a/SKILL.md"), "# A skill\n");
        write(&dir.path().join("b/SKILL.md"), "---\nname: b\n---\n");
        write(
            &dir.path().join("c/SKILL.md"),
            "---\nname: see\ndescription: x\n---\n",
        );
        write(&dir.path().join("d/SKILL.md"), "---\nname: d\n");
        write(&dir.path().join("e/SKILL.md"), &md("e", "fine"));
        write(
            &dir.path().join("f/SKILL.md"),
            "---\nname: f\ndescription: [unclosed\n---\n",
        );
        // Read as Claude Code reads it: a plain value holding `: `.
        write(
            &dir.path().join("g/SKILL.md"),
            "---\nname: g\ndescription: Implement an issue end-to-end: branch, test, PR\n---\n",
        );
        let read = skills_in(dir.path()).unwrap();
        let names: Vec<&str> = read.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["e", "g"]);
        assert_eq!(
            read.skills[1].description,
            "Implement an issue end-to-end: branch, test, PR"
        );
        let problems = read.problems;
        let got: Vec<(String, u32, String)> = problems
            .iter()
            .map(|f| {
                (
                    f.path
                        .parent()
                        .unwrap()
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                    f.diagnostics[0].pos.line,
                    f.diagnostics[0].message.clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("a".into(), 1, "no front matter".into()),
                (
                    "b".into(),
                    1,
                    "the front matter has no `description`".into()
                ),
                (
                    "c".into(),
                    2,
                    "the skill's name `see` is not its directory's `c`".into()
                ),
                ("d".into(), 1, "the front matter is not closed".into()),
                (
                    "f".into(),
                    3,
                    "the front matter is not YAML: unclosed bracket '['".into()
                ),
            ]
        );
        let empty = tempfile::tempdir().unwrap();
        let none = skills_in(empty.path()).unwrap_err();
        assert!(none[0].diagnostics[0].message.starts_with("no skill here"));
    }

    #[test]
    fn skills_are_placed_where_agents_load_them() {
        let (_dir, skills, _) = repo();
        let root = skills.parent().unwrap().parent().unwrap().to_owned();
        assert_eq!(
            placement(&skills, Path::new("/elsewhere")).unwrap(),
            Placement {
                workspace: root.clone(),
                plugin: None
            }
        );
        let plugin = root.join("plug");
        write(&plugin.join(".claude-plugin/plugin.json"), "{}");
        std::fs::create_dir_all(plugin.join("skills")).unwrap();
        assert_eq!(
            placement(&plugin.join("skills"), &root).unwrap(),
            Placement {
                workspace: root.clone(),
                plugin: Some(plugin)
            }
        );
        let stray = placement(&root.join("my-skills"), &root).unwrap_err();
        assert!(
            stray
                .hint
                .unwrap()
                .contains(".claude/skills/<name>/SKILL.md")
        );
    }

    /// Replies become one suite that loads: workspace relative to the draft, `draft: true`,
    /// a prompt claimed by two skills kept by the first, a near-miss that is the skill's
    /// own prompt left out.
    #[test]
    fn replies_become_a_validated_draft_suite() {
        let (_dir, skills, path) = repo();
        let all = skills_in(&skills).unwrap().skills;
        let place = placement(&skills, Path::new("/")).unwrap();
        let prompt = prompt_for(&all[1], &all);
        assert!(
            prompt.contains("- docx: Write Word documents. Also tables."),
            "{prompt}"
        );
        assert!(prompt.contains("prompts for the skill `pdf`"), "{prompt}");
        let pdf = prompts_from_reply(
            "Sure:\n```yaml\nshould_trigger:\n  - Fill in invoice.pdf\n  - Merge a.pdf and b.pdf\nshould_not_trigger:\n  - Print this page\n  - Fill in invoice.pdf\n```",
            &all[1],
            &place,
            &path,
        )
        .unwrap();
        let docx = prompts_from_reply(
            "should_trigger: [\"Draft a letter in Word\", \"Merge a.pdf and b.pdf\"]\nshould_not_trigger: [\"Fill in invoice.pdf\"]\n",
            &all[0],
            &place,
            &path,
        )
        .unwrap();
        let text = suite_text(
            &[(all[1].clone(), pdf), (all[0].clone(), docx)],
            &place,
            &path,
        )
        .unwrap();
        assert!(text.starts_with(SKILLS_DRAFT_MARK), "{text}");
        assert!(text.contains("workspace: \"../../..\"\n"), "{text}");
        assert!(text.contains("draft: true\nruns: 3\n"), "{text}");
        assert!(
            text.contains("\n  pdf:\n"),
            "a plain name is a plain key: {text}"
        );
        let spec = crate::spec::load_str_checked(&path, &text).unwrap();
        assert!(spec.draft);
        let routing = spec.routing.as_ref().unwrap();
        let prompts: Vec<(&str, Option<&str>, Vec<&str>)> = routing
            .prompts
            .iter()
            .map(|p| {
                (
                    p.text.as_str(),
                    p.expect.as_deref(),
                    p.near_miss_for.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            prompts,
            [
                ("Fill in invoice.pdf", Some("pdf"), vec!["docx"]),
                ("Merge a.pdf and b.pdf", Some("pdf"), vec![]),
                ("Print this page", None, vec!["pdf"]),
                ("Draft a letter in Word", Some("docx"), vec![]),
            ]
        );
    }

    #[test]
    fn a_reply_without_two_lists_or_that_does_not_load_is_refused() {
        let (_dir, skills, path) = repo();
        let all = skills_in(&skills).unwrap().skills;
        let place = placement(&skills, Path::new("/")).unwrap();
        for reply in [
            "I can not help with that.",
            "should_trigger: [a]\n",
            "should_trigger: [a]\nshould_not_trigger: [{x: 1}]\n",
        ] {
            assert!(
                matches!(
                    prompts_from_reply(reply, &all[0], &place, &path),
                    Err(DraftError::NotATest(_))
                ),
                "{reply}"
            );
        }
        // Placed where the skill is not: the loader says so.
        let elsewhere = Placement {
            workspace: path.parent().unwrap().to_owned(),
            plugin: None,
        };
        match prompts_from_reply(
            "should_trigger: [a]\nshould_not_trigger: [b]\n",
            &all[0],
            &elsewhere,
            &path,
        ) {
            Err(DraftError::Invalid(why)) => {
                assert!(
                    why.contains("skill `docx` is not in the workspace"),
                    "{why}"
                )
            }
            other => panic!("{other:?}"),
        }
    }
}
