//! `user:` (persona, goal, knows, script, max_turns) and the conversation assertions
//! (`asked`, `did_not_ask`, `user_turns`, `elicited`), read with positions.

use std::collections::BTreeMap;

use regex::Regex;

use super::super::AssertionKind;
use super::super::diagnostic::{Diagnostic, did_you_mean};
use super::super::node::{Node, Value};
use super::super::user::{
    ConversationAssertion, DEFAULT_USER_TURNS, MAX_USER_TURNS, ScriptLine, User,
};
use super::Ctx;

/// The keys of `user:`.
const USER_KEYS: &[&str] = &["persona", "goal", "knows", "script", "max_turns"];

impl Ctx {
    /// `user:`; `None` after reporting every problem.
    pub(super) fn user(&mut self, node: &Node) -> Option<User> {
        let fields = self.map(node, "user")?;
        self.unknown_keys(&fields, USER_KEYS, "`user`");
        let before = self.diags.len();
        let text = |ctx: &mut Self, key: &str| {
            fields
                .get(key)
                .and_then(|n| ctx.non_empty_string(n, &format!("user.{key}")))
        };
        let persona = text(self, "persona");
        let goal = text(self, "goal");
        let knows = fields
            .get("knows")
            .map(|n| self.knows(n))
            .unwrap_or_default();
        let script = fields
            .get("script")
            .map(|n| self.script(n))
            .unwrap_or_default();
        let max_turns = match fields.get("max_turns") {
            None => Some(DEFAULT_USER_TURNS),
            Some(n) => match self.count(n, "user.max_turns") {
                Some(t) if (1..=MAX_USER_TURNS).contains(&t) => Some(t),
                Some(t) => {
                    self.push(
                        Diagnostic::new(
                            n.pos,
                            format!("`user.max_turns` must be 1 to {MAX_USER_TURNS}, found {t}"),
                        )
                        .label("out of range")
                        .hint("each reply of the user is one more turn of the agent"),
                    );
                    None
                }
                None => None,
            },
        };
        if goal.is_none() && script.is_empty() && fields.get("script").is_none() {
            self.push(
                Diagnostic::new(fields.pos, "`user` needs `script:`, `goal:` or both")
                    .label("nobody to answer")
                    .hint(
                        "write e.g. `script: [{when: \"sides|range\", say: \"Six-sided.\"}]` \
                         for fixed replies, or `goal:` for a simulated user",
                    ),
            );
        }
        if self.diags.len() > before {
            return None;
        }
        Some(User {
            persona,
            goal,
            knows,
            script,
            max_turns: max_turns?,
        })
    }

    /// `knows:` — a mapping of fact names to scalar values (strings, numbers, booleans).
    fn knows(&mut self, node: &Node) -> BTreeMap<String, String> {
        let Some(fields) = self.map(node, "user.knows") else {
            return BTreeMap::new();
        };
        let mut knows = BTreeMap::new();
        for (key, value) in fields.entries {
            let text = match &value.value {
                Value::Str(s) => s.clone(),
                Value::Int(i) => i.to_string(),
                Value::Float(f) => f.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => {
                    self.type_error(value, &key.name, "a string or a number");
                    continue;
                }
            };
            if text.trim().is_empty() {
                self.push(
                    Diagnostic::new(value.pos, format!("fact `{}` is empty", key.name))
                        .label("empty")
                        .hint("a fact is revealed when its value is in a reply; give it one"),
                );
                continue;
            }
            knows.insert(key.name.clone(), text);
        }
        knows
    }

    /// `script:` — a list of `{when: REGEX, say: TEXT}`.
    fn script(&mut self, node: &Node) -> Vec<ScriptLine> {
        let Value::Seq(items) = &node.value else {
            self.type_error(node, "user.script", "a list");
            return Vec::new();
        };
        let mut lines = Vec::new();
        for item in items {
            let Some(fields) = self.map(item, "script line") else {
                continue;
            };
            self.unknown_keys(&fields, &["when", "say"], "a `script` line");
            let when = match fields.get("when") {
                Some(n) => self.question_regex(n, "when"),
                None => {
                    self.push(
                        Diagnostic::new(fields.pos, "a `script` line needs `when:`")
                            .hint("`when:` is a regex matched against the agent's question"),
                    );
                    None
                }
            };
            let say = match fields.get("say") {
                Some(n) => self.non_empty_string(n, "say"),
                None => {
                    self.push(
                        Diagnostic::new(fields.pos, "a `script` line needs `say:`")
                            .hint("`say:` is the user's reply, sent as written"),
                    );
                    None
                }
            };
            if let (Some(when), Some(say)) = (when, say) {
                lines.push(ScriptLine {
                    when,
                    say,
                    line: fields.pos.line,
                });
            }
        }
        lines
    }

    /// A regex matched against a question, anywhere in it, ignoring case.
    fn question_regex(&mut self, node: &Node, key: &str) -> Option<Regex> {
        let pattern = self.non_empty_string(node, key)?;
        match Regex::new(&format!("(?i){pattern}")) {
            Ok(regex) => Some(regex),
            Err(err) => {
                self.push(
                    Diagnostic::new(node.pos, format!("`{key}`: invalid regex: {err}"))
                        .label("invalid regex")
                        .hint("escape regex characters with `\\`, e.g. `which file\\?`"),
                );
                None
            }
        }
    }

    /// One conversation assertion (`key`: `asked`, `did_not_ask`, `user_turns`,
    /// `elicited`); an error when the test has no `user:`.
    pub(super) fn conversation(&mut self, node: &Node, key: &str) -> Option<AssertionKind> {
        let Some(facts) = self.user_facts.clone() else {
            self.push(
                Diagnostic::new(node.pos, format!("`{key}` needs a `user:` in the test"))
                    .label("nobody answers the agent")
                    .hint(
                        "add `user:` with a `script:` (fixed replies) or a `goal:` (a simulated \
                         user), so that the agent's questions get answers (docs/conversations.md)",
                    ),
            );
            return None;
        };
        let kind = match key {
            "asked" => self.asked(node)?,
            "did_not_ask" => {
                let fields = self.map(node, key)?;
                self.unknown_keys(&fields, &["about"], "`did_not_ask`");
                let about = self.about(&fields, key)?;
                ConversationAssertion::DidNotAsk { about }
            }
            "user_turns" => self.user_turns(node)?,
            _ => self.elicited(node, &facts)?,
        };
        Some(AssertionKind::Conversation(kind))
    }

    /// `about:` of `asked` and `did_not_ask`.
    fn about(&mut self, fields: &super::Fields<'_>, key: &str) -> Option<Regex> {
        match fields.get("about") {
            Some(n) => self.question_regex(n, "about"),
            None => {
                self.push(
                    Diagnostic::new(fields.pos, format!("`{key}` needs `about:`"))
                        .hint(format!("write e.g. `{key}: {{about: \"sides|range\"}}`")),
                );
                None
            }
        }
    }

    /// `asked: {about, before}`.
    fn asked(&mut self, node: &Node) -> Option<ConversationAssertion> {
        let fields = self.map(node, "asked")?;
        self.unknown_keys(&fields, &["about", "before"], "`asked`");
        let about = self.about(&fields, "asked");
        let before = match fields.get("before") {
            None => Vec::new(),
            Some(n) => {
                let items: Vec<&Node> = match &n.value {
                    Value::Seq(items) => items.iter().collect(),
                    _ => vec![n],
                };
                let before = self.diags.len();
                let tools: Vec<_> = items
                    .into_iter()
                    .filter_map(|i| self.tool_name(i, "before"))
                    .collect();
                if self.diags.len() > before {
                    return None;
                }
                tools
            }
        };
        Some(ConversationAssertion::Asked {
            about: about?,
            before,
        })
    }

    /// `user_turns: {min, max}`.
    fn user_turns(&mut self, node: &Node) -> Option<ConversationAssertion> {
        let fields = self.map(node, "user_turns")?;
        self.unknown_keys(&fields, &["min", "max"], "`user_turns`");
        let (min, max) = self.count_range(
            &fields,
            "user_turns",
            "write e.g. `user_turns: {max: 2}`; it counts the user's replies",
        )?;
        Some(ConversationAssertion::UserTurns { min, max })
    }

    /// `elicited: fact` or `[fact, …]`: names of `user.knows` facts.
    fn elicited(&mut self, node: &Node, facts: &[String]) -> Option<ConversationAssertion> {
        let items: Vec<&Node> = match &node.value {
            Value::Seq(items) if !items.is_empty() => items.iter().collect(),
            Value::Seq(_) => {
                self.push(
                    Diagnostic::new(node.pos, "`elicited` is empty")
                        .label("no fact")
                        .hint("name the `user.knows` facts the agent must find out"),
                );
                return None;
            }
            _ => vec![node],
        };
        let before = self.diags.len();
        let mut names = Vec::new();
        for item in items {
            let Some(name) = self.non_empty_string(item, "elicited") else {
                continue;
            };
            if !facts.contains(&name) {
                let hint = match did_you_mean(&name, facts.iter().map(String::as_str)) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None if facts.is_empty() => {
                        "the test's `user:` has no `knows:`; list the facts there".to_owned()
                    }
                    None => format!("`user.knows` has: {}", facts.join(", ")),
                };
                self.push(
                    Diagnostic::new(item.pos, format!("unknown fact `{name}`"))
                        .label("not in `user.knows`")
                        .hint(hint),
                );
                continue;
            }
            names.push(name);
        }
        (self.diags.len() == before).then_some(ConversationAssertion::Elicited { facts: names })
    }
}
