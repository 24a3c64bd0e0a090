//! `routing:` and `stop:`: a routing suite's skills, the prompts that should and should not
//! trigger each, and when each run stops ([`crate::spec::routing`]).
//!
//! ```yaml
//! stop: first_call        # or never
//! routing:
//!   pdf:
//!     should_trigger: ["Fill in the form in invoice.pdf"]
//!     should_not_trigger: ["Summarise notes.docx"]
//! ```
//!
//! A prompt may be listed under several skills (a near-miss of one is often another's
//! should-trigger prompt) and runs once; it may be a should-trigger prompt of one skill
//! only, and never both a should- and a should-not prompt of the same skill. When the file
//! system is checked, each skill must be in the workspace (or a plugin) where some agent
//! looks for skills.

use std::path::{Path, PathBuf};

use super::super::diagnostic::{Diagnostic, display_path};
use super::super::node::{Node, Value};
use super::super::routing::{
    NO_SKILL, OTHER_SKILL, Routing, RoutingPrompt, RoutingSkill, SKILL_ROOTS, Stop, find_skill,
    one_line,
};
use super::Ctx;

/// The keys of one skill's entry.
const SKILL_KEYS: &[&str] = &["should_trigger", "should_not_trigger"];

/// The test keys a routing suite can not have: it has a prompt per entry and its own
/// assertion per prompt.
pub(super) const NOT_WITH_ROUTING: &[(&str, &str)] = &[
    (
        "user",
        "a routing suite's run stops at the agent's first decision; test the agent's questions in a test of their own",
    ),
    (
        "prompt",
        "a routing suite's prompts are listed under each skill's `should_trigger` and `should_not_trigger`",
    ),
    (
        "assertions",
        "a routing suite asserts which skill each prompt triggers; write other checks in a test of their own",
    ),
    (
        "variants",
        "compare two versions of a skill against a baseline (`--baseline`) instead",
    ),
    (
        "min_pass",
        "a routing prompt's runs are each counted; a run that errored counts in no figure",
    ),
    ("covers", "`covers:` belongs to tests of instruction files"),
];

/// Which list a prompt is in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    Should,
    ShouldNot,
}

impl Ctx {
    /// `stop: first_call | never`.
    pub(super) fn stop(&mut self, node: &Node) -> Option<Stop> {
        match &node.value {
            Value::Str(s) if s == "first_call" => Some(Stop::FirstCall),
            Value::Str(s) if s == "never" => Some(Stop::Never),
            _ => {
                self.push(
                    Diagnostic::new(node.pos, "`stop` must be `first_call` or `never`")
                        .label("invalid stop")
                        .hint(
                            "`first_call` (the default) stops each run at the agent's first tool \
                             or skill call, its decision; `never` lets it finish",
                        ),
                );
                None
            }
        }
    }

    /// `routing:`; `workspace` and `plugins` are where its skills must be when the file
    /// system is checked.
    pub(super) fn routing(
        &mut self,
        node: &Node,
        stop: Stop,
        workspace: &Path,
        plugins: &[PathBuf],
    ) -> Option<Routing> {
        let fields = self.map(node, "routing")?;
        if fields.entries.is_empty() {
            self.push(Diagnostic::new(node.pos, "`routing` lists no skill").hint(
                "list each skill with its `should_trigger` and `should_not_trigger` prompts",
            ));
            return None;
        }
        let mut routing = Routing {
            skills: Vec::new(),
            prompts: Vec::new(),
            stop,
        };
        for (key, value) in fields.entries {
            let name = key.name.trim();
            if name.is_empty() || name.contains('/') || name == NO_SKILL || name == OTHER_SKILL {
                self.push(
                    Diagnostic::new(key.pos, format!("`{}` is not a skill name", key.name))
                        .label("not a skill name")
                        .hint(
                            "a skill's name is its directory's: `.claude/skills/<name>/SKILL.md`",
                        ),
                );
                continue;
            }
            if self.check_workspace && find_skill(name, workspace, plugins).is_none() {
                self.push(
                    Diagnostic::new(key.pos, format!("skill `{name}` is not in the workspace"))
                        .label("no SKILL.md found")
                        .hint(format!(
                            "put it at {}/.claude/skills/{name}/SKILL.md (looked in {} and each plugin's skills/)",
                            display_path(workspace),
                            SKILL_ROOTS.join(", ")
                        )),
                );
            }
            routing.skills.push(RoutingSkill {
                name: name.to_owned(),
                line: key.pos.line,
            });
            let what = format!("skill `{name}`");
            let Some(entry) = self.map(value, &what) else {
                continue;
            };
            self.unknown_keys(&entry, SKILL_KEYS, &format!("the routing of {what}"));
            for (list, key) in [
                (List::Should, "should_trigger"),
                (List::ShouldNot, "should_not_trigger"),
            ] {
                if let Some(n) = entry.get(key) {
                    self.prompts(&mut routing.prompts, n, name, list);
                }
            }
        }
        if routing.prompts.is_empty() && self.diags.is_empty() {
            self.push(
                Diagnostic::new(node.pos, "`routing` lists no prompt")
                    .hint("give each skill `should_trigger: [\"…\"]` prompts"),
            );
        }
        Some(routing)
    }

    /// One skill's `should_trigger` or `should_not_trigger` list, merged into `prompts`.
    fn prompts(&mut self, prompts: &mut Vec<RoutingPrompt>, node: &Node, skill: &str, list: List) {
        let key = match list {
            List::Should => "should_trigger",
            List::ShouldNot => "should_not_trigger",
        };
        let Value::Seq(items) = &node.value else {
            self.type_error(node, key, "a list of prompts");
            return;
        };
        for item in items {
            let Some(text) = self.non_empty_string(item, key) else {
                continue;
            };
            let same = one_line(&text);
            let index = match prompts.iter().position(|p| one_line(&p.text) == same) {
                Some(i) => i,
                None => {
                    prompts.push(RoutingPrompt {
                        text,
                        line: item.pos.line,
                        expect: None,
                        near_miss_for: Vec::new(),
                    });
                    prompts.len() - 1
                }
            };
            let prompt = &mut prompts[index];
            let line = prompt.line;
            let problem = match list {
                List::Should => match &prompt.expect {
                    Some(other) if other == skill => Some(format!(
                        "this prompt is already a should-trigger prompt of `{skill}`"
                    )),
                    Some(other) => Some(format!(
                        "this prompt already should trigger `{other}` (line {line}): a prompt expects one skill"
                    )),
                    None if prompt.near_miss_for.iter().any(|s| s == skill) => Some(format!(
                        "this prompt is also a should-not-trigger prompt of `{skill}`"
                    )),
                    None => {
                        prompt.expect = Some(skill.to_owned());
                        None
                    }
                },
                List::ShouldNot if prompt.near_miss_for.iter().any(|s| s == skill) => Some(
                    format!("this prompt is already a should-not-trigger prompt of `{skill}`"),
                ),
                List::ShouldNot if prompt.expect.as_deref() == Some(skill) => Some(format!(
                    "this prompt is also a should-trigger prompt of `{skill}`"
                )),
                List::ShouldNot => {
                    prompt.near_miss_for.push(skill.to_owned());
                    None
                }
            };
            if let Some(message) = problem {
                self.push(
                    Diagnostic::new(item.pos, message)
                        .label("listed again")
                        .hint("a prompt runs once; list it under each skill at most once, in one list"),
                );
            }
        }
    }
}
