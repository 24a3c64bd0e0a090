//! Routing suites: does the right skill load for a prompt, and only then?
//!
//! A test file with `routing:` instead of `prompt:` and `assertions:` lists, per skill of
//! its workspace, the prompts that should trigger it and the near-misses that should not:
//!
//! ```yaml
//! name: "pdf and docx routing"
//! workspace: fixture            # holds .claude/skills/pdf, .claude/skills/docx
//! agents: [claude, copilot]
//! runs: 3
//! stop: first_call              # the default: stop each run at the agent's first call
//! routing:
//!   pdf:
//!     should_trigger: ["Fill in the form in invoice.pdf"]
//!     should_not_trigger: ["Summarise notes.docx"]
//!   docx:
//!     should_trigger: ["Summarise notes.docx"]
//! ```
//!
//! The suite loads as one [`TestSpec`] holding a [`Routing`]; [`TestSpec::per_routing_prompt`]
//! (called by the loader for every file it loads) makes it one ordinary test per distinct
//! prompt, whose one assertion ([`crate::spec::AssertionKind::Routing`]) records which skill
//! the run triggered. Every skill listed is in the one workspace, so they compete. The
//! figures (recall, false-trigger rate, the confusion matrix) are computed from the
//! results by `verdict::routing`. The syntax is documented in `docs/routing.md`.

use serde::{Deserialize, Serialize};

use super::{Assertion, AssertionKind, TestSpec};

/// When an agent run is stopped (`stop:` of a routing suite).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The agent runs until it ends on its own (every ordinary test).
    #[default]
    Never,
    /// The agent is stopped as soon as it makes its first tool call (a skill call, a read
    /// of a `SKILL.md`, any other tool): its first decision. The run's transcript then
    /// ends `decided`, which is not an error. The default of routing suites.
    FirstCall,
}

impl Stop {
    /// The YAML word: `first_call` or `never`.
    pub fn word(self) -> &'static str {
        match self {
            Stop::Never => "never",
            Stop::FirstCall => "first_call",
        }
    }
}

/// The class, in a confusion matrix, of prompts that should trigger no skill of the suite,
/// and the row of runs that triggered none.
pub const NO_SKILL: &str = "(none)";

/// The row of a confusion matrix for runs that triggered a skill the suite does not list.
pub const OTHER_SKILL: &str = "(other)";

/// A routing suite as its file declares it (`routing:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routing {
    /// The skills listed, in file order.
    pub skills: Vec<RoutingSkill>,
    /// The distinct prompts, in the order they first appear in the file.
    pub prompts: Vec<RoutingPrompt>,
    /// `stop:` (default [`Stop::FirstCall`]).
    pub stop: Stop,
}

/// One skill of a routing suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutingSkill {
    /// Its name, as the agent knows it (`pdf`, a plugin's `my-plugin:pdf`).
    pub name: String,
    /// Its line in the file.
    pub line: u32,
}

/// One distinct prompt of a routing suite, with what it should trigger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutingPrompt {
    /// The prompt given to the agent.
    pub text: String,
    /// The line where it first appears.
    pub line: u32,
    /// The skill whose `should_trigger` lists it; `None`: it should trigger none of the
    /// suite's skills.
    pub expect: Option<String>,
    /// The skills whose `should_not_trigger` list it (it is a near-miss for them).
    pub near_miss_for: Vec<String>,
}

/// One prompt of a routing suite as a test runs it and its results record it (results
/// JSON's `routing` of a test): the assertion that reads the run's skill evidence, and
/// what `verdict::routing` groups runs by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoutingCase {
    /// The suite's `name:`.
    pub suite: String,
    /// Every skill of the suite, in file order.
    pub skills: Vec<String>,
    /// The prompt's number among the suite's distinct prompts, 1-based.
    pub prompt: u32,
    /// The skill it should trigger; `None` (absent in JSON): none of the suite's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<String>,
    /// The skills it is a near-miss for (their `should_not_trigger` lists it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub near_miss_for: Vec<String>,
    /// When the run was stopped.
    pub stop: Stop,
}

impl RoutingCase {
    /// The prompt's class in the confusion matrix: the skill it should trigger, else
    /// [`NO_SKILL`].
    pub fn class(&self) -> &str {
        self.expect.as_deref().unwrap_or(NO_SKILL)
    }

    /// `should trigger pdf`, `should trigger none (near-miss for pdf)`.
    pub fn expectation(&self) -> String {
        let near = if self.near_miss_for.is_empty() {
            String::new()
        } else {
            format!(" (near-miss for {})", self.near_miss_for.join(", "))
        };
        match &self.expect {
            Some(skill) => format!("should trigger {skill}{near}"),
            None => format!("should trigger no skill{near}"),
        }
    }
}

/// A prompt as it names its test: its words joined by single spaces, so that a prompt
/// written over several lines stays on one line in every report.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl TestSpec {
    /// The tests a file stands for: itself, or, for a routing suite, one test per distinct
    /// prompt, named `<suite> › <prompt>`, with the prompt, [`TestSpec::stop`] and one
    /// [`AssertionKind::Routing`] assertion at the prompt's line.
    pub fn per_routing_prompt(&self) -> Vec<TestSpec> {
        let Some(routing) = &self.routing else {
            return vec![self.clone()];
        };
        let skills: Vec<String> = routing.skills.iter().map(|s| s.name.clone()).collect();
        routing
            .prompts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let case = RoutingCase {
                    suite: self.name.clone(),
                    skills: skills.clone(),
                    prompt: u32::try_from(i + 1).unwrap_or(u32::MAX),
                    expect: p.expect.clone(),
                    near_miss_for: p.near_miss_for.clone(),
                    stop: routing.stop,
                };
                let mut spec = self.clone();
                spec.routing = None;
                spec.name = format!("{} › {}", self.name, one_line(&p.text));
                spec.prompt = p.text.clone();
                spec.stop = routing.stop;
                spec.assertions = vec![Assertion {
                    line: p.line,
                    column: 1,
                    kind: AssertionKind::Routing(Box::new(case.clone())),
                    variants: None,
                }];
                spec.routing_case = Some(case);
                spec
            })
            .collect()
    }
}

/// The directories of a workspace (or a plugin, `skills/`) where agents look for skills,
/// each holding `<name>/SKILL.md`: Claude Code, Copilot CLI and opencode read
/// `.claude/skills`; Codex, Gemini CLI, Qwen Code, opencode and pi `.agents/skills`; each
/// also its own (docs/agents.md, "Skills and plugins", has the table).
pub const SKILL_ROOTS: &[&str] = &[
    ".claude/skills",
    ".agents/skills",
    ".codex/skills",
    ".gemini/skills",
    ".qwen/skills",
    ".github/skills",
    ".opencode/skill",
    ".opencode/skills",
    ".pi/skills",
    ".kiro/skills",
];

/// The `SKILL.md` of skill `name` in `workspace` (under one of [`SKILL_ROOTS`]) or in one
/// of `plugins` (under its `skills/`; a plugin-qualified `plugin:skill` is looked up by
/// its skill part), if there is one.
pub fn find_skill(
    name: &str,
    workspace: &std::path::Path,
    plugins: &[std::path::PathBuf],
) -> Option<std::path::PathBuf> {
    let bare = name.rsplit_once(':').map_or(name, |(_, skill)| skill);
    let in_workspace = SKILL_ROOTS
        .iter()
        .map(|root| workspace.join(root).join(bare).join("SKILL.md"));
    let in_plugins = plugins
        .iter()
        .map(|p| p.join("skills").join(bare).join("SKILL.md"));
    in_workspace.chain(in_plugins).find(|p| p.is_file())
}

/// The `description` of a `SKILL.md`'s front matter (YAML between two `---` lines at its
/// top, the Agent Skills format, read as [`front_matter`] reads it), on one line; `None`
/// without one.
pub fn skill_description(text: &str) -> Option<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    let yaml: Vec<&str> = lines.take_while(|l| l.trim_end() != "---").collect();
    let value = front_matter(&yaml.join("\n")).ok()?;
    let description = one_line(value.get("description")?.as_str()?);
    (!description.is_empty()).then_some(description)
}

/// A skill's front matter (the YAML between its `---` lines) as the agent CLIs read it.
///
/// Strict YAML first. When that fails, the CLIs' leniency: Claude Code 2.1 (its front
/// matter parser retries after quoting values that YAML can not take plain) loads a skill
/// whose `description: Implement an issue end-to-end: branch, test, PR` holds `: ` in a
/// plain scalar. So does this: each top-level `key: value` line whose value is a plain
/// scalar (not quoted, not a block scalar `|`/`>`, not a flow `[`/`{`, no anchor, alias or
/// tag), with the indented lines that continue it folded in, is read as that text quoted,
/// and the YAML parsed again.
///
/// # Errors
/// The strict parse's error (its position within `yaml`), when the lenient reading fails too.
pub fn front_matter(yaml: &str) -> Result<serde_json::Value, super::node::SyntaxError> {
    let strict = match super::node::parse(yaml) {
        Ok(node) => return Ok(node.value.to_json()),
        Err(e) => e,
    };
    super::node::parse(&quote_plain_values(yaml))
        .map(|node| node.value.to_json())
        .map_err(|_| strict)
}

/// `yaml` with every top-level plain scalar value quoted ([`front_matter`]).
fn quote_plain_values(yaml: &str) -> String {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let top = !line.starts_with([' ', '\t', '#', '-']);
        let Some((key, value)) = line.split_once(':').filter(|_| top) else {
            out.push(line.to_owned());
            continue;
        };
        let value = value.trim();
        let plain = !value.is_empty()
            && !value.starts_with(['"', '\'', '|', '>', '[', '{', '&', '*', '!', '#'])
            && key
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !plain {
            out.push(line.to_owned());
            continue;
        }
        let mut text = value.to_owned();
        while let Some(next) = lines.get(i).filter(|l| l.starts_with([' ', '\t'])) {
            if !next.trim().is_empty() {
                text.push(' ');
                text.push_str(next.trim());
            }
            i += 1;
        }
        let escaped = text.replace('\\', "\\\\").replace('"', "\\\"");
        out.push(format!("{key}: \"{escaped}\""));
    }
    out.join("\n")
}

/// What a request to the model must hold to have shown it a skill: the start of its
/// `description` (at most [`NEEDLE_CHARS`] characters, up to the first character an agent
/// may escape: `<`, `>`, `&`, `"`, `\`), whitespace runs as single spaces; `None` when
/// fewer than 8 characters remain (too little to tell one skill from another).
pub fn shown_needle(description: &str) -> Option<String> {
    let plain: String = one_line(description)
        .chars()
        .take_while(|c| !matches!(c, '<' | '>' | '&' | '"' | '\\'))
        .take(NEEDLE_CHARS)
        .collect();
    let plain = plain.trim_end().to_owned();
    (plain.chars().count() >= 8).then_some(plain)
}

/// The most characters of a description [`shown_needle`] looks for.
pub const NEEDLE_CHARS: usize = 40;

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Claude Code loads a skill whose plain `description` holds `: `; so does aptitude, as
    /// it reads every other front matter (quoted, block and folded values unchanged).
    #[test]
    fn a_plain_description_holding_a_colon_is_read_as_the_clis_read_it() {
        let md = "---\nname: implement\ndescription: Implement a GitHub Issue end-to-end: branch, code, PR. Use \"/implement 12\"\n  when asked to: fix #12\nallowed-tools: [Bash]\n---\nbody\n";
        assert_eq!(
            skill_description(md).as_deref(),
            Some(
                "Implement a GitHub Issue end-to-end: branch, code, PR. Use \"/implement 12\" when asked to: fix #12"
            )
        );
        let value = front_matter("name: a\ndescription: |\n  Keep: this\ntags: [x, z]\n").unwrap();
        assert_eq!(value["description"], "Keep: this\n");
        assert_eq!(value["tags"], serde_json::json!(["x", "z"]));
        // What no leniency makes YAML keeps the strict parser's error and position.
        let err = front_matter("name: a\ndescription: [unclosed\n").unwrap_err();
        assert!(err.pos.is_some_and(|p| p.line >= 2), "{err:?}");
    }

    #[test]
    fn a_skill_is_told_by_the_start_of_its_description() {
        let md = "---\nname: pdf\ndescription: >\n  Fill, rotate   and merge PDF files\n  when asked.\n---\nbody\n";
        let d = skill_description(md).unwrap();
        assert_eq!(d, "Fill, rotate and merge PDF files when asked.");
        assert_eq!(
            shown_needle(&d).as_deref(),
            Some("Fill, rotate and merge PDF files when as")
        );
        assert_eq!(
            shown_needle("Use it for <pdf> files").as_deref(),
            Some("Use it for"),
        );
        assert_eq!(shown_needle("Tiny <b>"), None);
        assert_eq!(skill_description("# no front matter\n"), None);
        assert_eq!(skill_description("---\nname: x\n---\n"), None);
    }

    const SUITE: &str = "name: r\nrouting:\n  pdf:\n    should_trigger: [\"Fill invoice.pdf\", \"Rotate scan.pdf\"]\n    should_not_trigger: [\"Summarise notes.docx\"]\n  docx:\n    should_trigger: [\"Summarise   notes.docx\"]\n    should_not_trigger: [\"hello\"]\n";

    #[test]
    fn a_suite_is_one_test_per_distinct_prompt_with_its_expectation() {
        let spec = crate::spec::load_str(Path::new("r.aptitude.yaml"), SUITE).unwrap();
        let tests = spec.per_routing_prompt();
        let names: Vec<&str> = tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "r › Fill invoice.pdf",
                "r › Rotate scan.pdf",
                "r › Summarise notes.docx",
                "r › hello"
            ]
        );
        let notes = &tests[2];
        let case = notes.routing_case.as_ref().unwrap();
        assert_eq!(case.expect.as_deref(), Some("docx"), "{case:?}");
        assert_eq!(case.near_miss_for, ["pdf"]);
        assert_eq!(case.prompt, 3);
        assert_eq!(case.skills, ["pdf", "docx"]);
        assert_eq!(notes.stop, Stop::FirstCall, "the default stop");
        assert_eq!(notes.prompt, "Summarise notes.docx");
        assert_eq!(notes.assertions.len(), 1);
        assert_eq!(notes.assertions[0].kind.key(), "routing");
        assert_eq!(notes.assertions[0].line, 5, "the prompt's first appearance");
        assert_eq!(tests[3].routing_case.as_ref().unwrap().class(), NO_SKILL);
        assert!(tests.iter().all(|t| t.routing.is_none()));
    }

    /// Every mistake of a routing suite is a diagnostic at its line, all at once.
    #[test]
    fn mistakes_are_diagnostics_at_their_line() {
        let bad = "name: r\nprompt: p\nassertions: []\nvariants: {a: {}}\nstop: sometimes\nrouting:\n  pdf:\n    should_trigger: [a, b]\n    should_not_trigger: [a]\n    sould_trigger: [c]\n  docx:\n    should_trigger: [b, \"\"]\n  \"(none)\": {should_trigger: [z]}\n";
        let diags = crate::spec::load_str(Path::new("r.aptitude.yaml"), bad).unwrap_err();
        let lines: Vec<(u32, &str)> = diags
            .iter()
            .map(|d| (d.pos.line, d.message.as_str()))
            .collect();
        let has = |line: u32, text: &str| {
            assert!(
                lines.iter().any(|(l, m)| *l == line && m.contains(text)),
                "no `{text}` at line {line}: {lines:#?}"
            );
        };
        has(2, "`prompt` does not go with `routing:`");
        has(3, "`assertions` does not go with `routing:`");
        has(4, "`variants` does not go with `routing:`");
        has(5, "`stop` must be `first_call` or `never`");
        has(9, "also a should-trigger prompt of `pdf`");
        has(10, "unknown key `sould_trigger`");
        has(12, "already should trigger `pdf` (line 8)");
        has(12, "`should_trigger` must not be empty");
        has(13, "`(none)` is not a skill name");
        let stray = crate::spec::load_str(
            Path::new("t.aptitude.yaml"),
            "name: t\nprompt: p\nstop: never\nassertions:\n  - tool: Bash\n",
        )
        .unwrap_err();
        assert!(
            stray[0]
                .message
                .contains("`stop` belongs to routing suites"),
            "{stray:?}"
        );
        let empty = crate::spec::load_str(
            Path::new("r.aptitude.yaml"),
            "name: r\nrouting: {pdf: {}}\n",
        )
        .unwrap_err();
        assert!(empty[0].message.contains("lists no prompt"), "{empty:?}");
    }

    /// With the file system checked (`run`, `validate`), a skill that is nowhere an agent
    /// looks for skills is an error at its key, naming where it was looked for.
    #[test]
    fn a_skill_missing_from_the_workspace_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".claude/skills/pdf")).unwrap();
        std::fs::write(dir.path().join(".claude/skills/pdf/SKILL.md"), "x").unwrap();
        let text =
            "name: r\nrouting:\n  pdf: {should_trigger: [a]}\n  docx: {should_trigger: [b]}\n";
        let diags =
            crate::spec::load_str_checked(&dir.path().join("r.aptitude.yaml"), text).unwrap_err();
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert_eq!(diags[0].pos.line, 4);
        assert!(
            diags[0]
                .message
                .contains("skill `docx` is not in the workspace"),
            "{diags:?}"
        );
        assert!(
            diags[0]
                .hint
                .as_deref()
                .unwrap_or("")
                .contains(".agents/skills"),
            "{diags:?}"
        );
        let ok = "name: r\nstop: never\nrouting:\n  pdf: {should_trigger: [a]}\n";
        let spec = crate::spec::load_str_checked(&dir.path().join("r.aptitude.yaml"), ok).unwrap();
        assert_eq!(spec.per_routing_prompt()[0].stop, Stop::Never);
    }

    #[test]
    fn skills_are_found_where_agents_look_for_them() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::create_dir_all(ws.join(".agents/skills/pdf")).unwrap();
        std::fs::write(ws.join(".agents/skills/pdf/SKILL.md"), "x").unwrap();
        std::fs::create_dir_all(ws.join("plug/skills/wave")).unwrap();
        std::fs::write(ws.join("plug/skills/wave/SKILL.md"), "x").unwrap();
        assert!(find_skill("pdf", ws, &[]).is_some());
        assert!(find_skill("docx", ws, &[]).is_none());
        assert!(find_skill("wave", ws, &[]).is_none());
        assert!(find_skill("plug:wave", ws, &[ws.join("plug")]).is_some());
    }
}
