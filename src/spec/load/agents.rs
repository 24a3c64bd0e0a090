//! `agent:` and `agents:`: which agents a test runs on, each with an optional `model`,
//! `base_url` and `version` pin.
//!
//! ```yaml
//! agent: codex                      # one agent
//! agents: [claude, codex]           # several; each (test, agent) is its own result
//! agents:
//!   - claude
//!   - {agent: codex, model: gpt-5-codex, base_url: "http://127.0.0.1:8080/v1", version: 0.169.0}
//!   - {agent: pi, versions: [pinned, latest, "0.72.1"]}   # one result per release
//! ```

use super::super::agent_version::VersionSpec;
use super::super::diagnostic::Diagnostic;
use super::super::node::{Node, Value};
use super::super::{AgentKind, AgentTarget};
use super::{Ctx, Fields};

/// The keys of an `agents:` entry written as a mapping.
const TARGET_KEYS: &[&str] = &["agent", "model", "base_url", "version", "versions"];

impl Ctx {
    /// The agents a test names; empty when it names none.
    pub(super) fn agents(&mut self, fields: &Fields<'_>) -> Vec<AgentTarget> {
        match (fields.get("agent"), fields.get("agents")) {
            (Some(_), Some(n)) => {
                self.push(
                    Diagnostic::new(n.pos, "a test names `agent` and `agents`")
                        .label("second list of agents")
                        .hint("list every agent under `agents:` and remove `agent:`"),
                );
                Vec::new()
            }
            (Some(n), None) => self
                .agent_name(n, "agent")
                .map(AgentTarget::new)
                .into_iter()
                .collect(),
            (None, Some(n)) => self.agent_list(n),
            (None, None) => Vec::new(),
        }
    }

    fn agent_list(&mut self, node: &Node) -> Vec<AgentTarget> {
        let Value::Seq(items) = &node.value else {
            self.type_error(node, "agents", "a list of agent names");
            return Vec::new();
        };
        if items.is_empty() {
            self.push(
                Diagnostic::new(node.pos, "`agents` is empty")
                    .label("no agent")
                    .hint("name at least one agent, e.g. `agents: [claude]`"),
            );
        }
        let mut targets: Vec<AgentTarget> = Vec::new();
        for item in items {
            let target = match &item.value {
                Value::Map(_) => self.agent_entry(item),
                _ => self.agent_name(item, "agents").map(AgentTarget::new),
            };
            let Some(target) = target else { continue };
            if targets.iter().any(|t| t.kind == target.kind) {
                self.push(
                    Diagnostic::new(item.pos, format!("agent `{}` is listed twice", target.kind))
                        .label("listed before")
                        .hint("each agent runs the test once; give it one entry"),
                );
                continue;
            }
            targets.push(target);
        }
        targets
    }

    fn agent_entry(&mut self, node: &Node) -> Option<AgentTarget> {
        let fields = self.map(node, "an `agents` entry")?;
        self.unknown_keys(&fields, TARGET_KEYS, "an `agents` entry");
        let Some(name) = fields.get("agent") else {
            self.push(
                Diagnostic::new(fields.pos, "an `agents` entry needs `agent:`")
                    .hint("write e.g. `{agent: codex, model: gpt-5-codex}`"),
            );
            return None;
        };
        let kind: Option<AgentKind> = self.agent_name(name, "agent");
        let model = fields
            .get("model")
            .and_then(|n| self.non_empty_string(n, "model"));
        let base_url = fields
            .get("base_url")
            .and_then(|n| self.non_empty_string(n, "base_url"));
        if let (Some(n), Some(url)) = (fields.get("base_url"), &base_url)
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            self.push(
                Diagnostic::new(n.pos, "`base_url` must be an http:// or https:// URL")
                    .label("not a URL"),
            );
        }
        let version = fields.get("version").and_then(|n| match &n.value {
            // `version: 1.0` reads as a number in YAML; the pin is its text.
            Value::Int(_) | Value::Float(_) => {
                self.type_error(n, "version", "a string (quote it: \"1.0\")");
                None
            }
            _ => self.non_empty_string(n, "version"),
        });
        let versions = fields
            .get("versions")
            .map(|n| self.versions(n))
            .unwrap_or_default();
        if let (Some(_), Some(n)) = (fields.get("version"), fields.get("versions")) {
            self.push(
                Diagnostic::new(n.pos, "an `agents` entry names `version` and `versions`")
                    .label("second version")
                    .hint("`version:` checks the installed agent; `versions:` installs each release named: keep one"),
            );
        }
        Some(AgentTarget {
            kind: kind?,
            model,
            base_url,
            version,
            versions,
        })
    }

    /// `versions: [pinned, latest, "2.1.300"]`: each release once.
    fn versions(&mut self, node: &Node) -> Vec<VersionSpec> {
        let Value::Seq(items) = &node.value else {
            self.type_error(
                node,
                "versions",
                "a list of versions: pinned, latest or \"2.1.300\"",
            );
            return Vec::new();
        };
        if items.is_empty() {
            self.push(
                Diagnostic::new(node.pos, "`versions` is empty")
                    .label("no version")
                    .hint("name at least one, e.g. `versions: [pinned, latest]`, or remove it"),
            );
        }
        let mut out: Vec<VersionSpec> = Vec::new();
        for item in items {
            let text = match &item.value {
                Value::Int(_) | Value::Float(_) => {
                    self.type_error(item, "versions", "a string (quote it: \"1.0\")");
                    continue;
                }
                _ => match self.non_empty_string(item, "versions") {
                    Some(text) => text,
                    None => continue,
                },
            };
            match text.parse::<VersionSpec>() {
                Ok(v) if out.contains(&v) => self.push(
                    Diagnostic::new(item.pos, format!("version `{v}` is listed twice"))
                        .label("listed before")
                        .hint("each version runs once; give it one entry"),
                ),
                Ok(v) => out.push(v),
                Err(e) => {
                    let suggestion =
                        crate::shared::suggest::did_you_mean(&text, ["pinned", "latest"]);
                    let mut d = Diagnostic::new(item.pos, e.to_string()).label("not a version");
                    if let Some(s) = suggestion {
                        d = d.hint(format!("did you mean `{s}`?"));
                    }
                    self.push(d);
                }
            }
        }
        out
    }
}
