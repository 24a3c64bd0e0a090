//! `tool:` assertions: the tool's name, parameters by matcher, counts, order and
//! positional checks, with every contradiction between them reported. `skill:`
//! assertions are tool assertions on the `Skill` tool and are read by the same code.

use super::super::diagnostic::{Diagnostic, did_you_mean};
use super::super::node::{Key, Node, Value};
use super::super::pattern::{MatcherError, NameMatcher, SkillMatcher, ValueMatcher};
use super::super::{CallIndex, ParamMatcher, SkillAssertion, ToolAssertion};
use super::{Ctx, Fields, kinds, list};

/// The keys of a `tool:` assertion after `tool`; a `skill:` assertion takes the same after
/// `skill`.
pub(in crate::spec) const CALL_KEYS: &[&str] = &[
    "called",
    "params",
    "call_count",
    "min_calls",
    "max_calls",
    "called_after",
    "called_before",
    "nth_call_params",
    "first_call_params",
    "last_call_params",
    "scope",
];

/// The count keys of a tool assertion, as read (`None`: absent or invalid).
#[derive(Debug, Clone, Copy)]
struct ToolFields {
    called: Option<bool>,
    call_count: Option<u32>,
    min_calls: Option<u32>,
    max_calls: Option<u32>,
}

/// A positional parameter check: which call, its parameters (`None`: invalid), the key.
type Positional = (CallIndex, Option<Vec<ParamMatcher>>, &'static str);

impl Ctx {
    pub(super) fn tool_item_keys(&mut self, fields: &Fields<'_>) {
        self.item_keys(fields, "tool");
    }

    /// Reports every key of a `kind` (`tool`, `skill`) assertion that is neither `kind` nor
    /// one of [`CALL_KEYS`].
    pub(super) fn item_keys(&mut self, fields: &Fields<'_>, kind: &str) {
        for (key, _) in fields.entries {
            let name = key.name.as_str();
            if name == kind || CALL_KEYS.contains(&name) || name == super::ASSERTION_VARIANTS_KEY {
                continue;
            }
            if kinds::is_kind(name) {
                self.push(
                    Diagnostic::new(
                        key.pos,
                        format!("`{name}` can not be combined with `{kind}` in one assertion"),
                    )
                    .label("second assertion kind")
                    .hint(format!("put `{name}` in its own list item (`- {name}: …`)")),
                );
                continue;
            }
            let hint = did_you_mean(name, CALL_KEYS.iter().copied().chain(kinds::keys()))
                .map(|s| format!("did you mean `{s}`?"))
                .or_else(|| {
                    Some(format!(
                        "{kind} assertion keys: `{kind}`, {}",
                        list(CALL_KEYS)
                    ))
                });
            self.push(
                Diagnostic::new(
                    key.pos,
                    format!("unknown key `{name}` in a {kind} assertion"),
                )
                .label("unknown key")
                .maybe_hint(hint),
            );
        }
    }

    pub(super) fn tool(&mut self, fields: &Fields<'_>) -> Option<ToolAssertion> {
        let tool_node = fields.get("tool")?;
        let tool = self.tool_name(tool_node, "tool");
        if tool.is_some()
            && let Value::Str(name) = &tool_node.value
        {
            self.param_names(fields, tool_node, name.trim());
        }
        self.tool_fields(fields, tool)
    }

    /// `skill: name` with a tool assertion's other keys: a tool assertion on `Skill`.
    pub(super) fn skill(&mut self, fields: &Fields<'_>) -> Option<SkillAssertion> {
        let node = fields.get("skill")?;
        let skill = self.non_empty_string(node, "skill").and_then(|name| {
            match SkillMatcher::new(name.trim()) {
                Ok(m) => Some(m),
                Err(err) => {
                    self.push(Diagnostic::new(node.pos, err.message).label("invalid pattern"));
                    None
                }
            }
        });
        let tool = NameMatcher::new(crate::spec::tools::SKILL_TOOL).ok();
        self.param_names(fields, node, crate::spec::tools::SKILL_TOOL);
        let tool = self.tool_fields(fields, tool);
        Some(SkillAssertion {
            skill: skill?,
            tool: tool?,
        })
    }

    /// Every key of a tool assertion but `tool`, for the tool `tool` (`None` once its name
    /// was reported as invalid).
    fn tool_fields(
        &mut self,
        fields: &Fields<'_>,
        tool: Option<NameMatcher>,
    ) -> Option<ToolAssertion> {
        let called = fields.get("called").and_then(|n| self.bool(n, "called"));
        let params = match fields.get("params") {
            Some(n) => self.params(n, "params"),
            None => Some(Vec::new()),
        };
        let read = ToolFields {
            called,
            call_count: fields
                .get("call_count")
                .and_then(|n| self.count(n, "call_count")),
            min_calls: fields
                .get("min_calls")
                .and_then(|n| self.count(n, "min_calls")),
            max_calls: fields
                .get("max_calls")
                .and_then(|n| self.count(n, "max_calls")),
        };
        let called_after = fields
            .get("called_after")
            .and_then(|n| self.tool_name(n, "called_after"));
        let called_before = fields
            .get("called_before")
            .and_then(|n| self.tool_name(n, "called_before"));
        let scope = self.scope(fields);
        let positional = self.positional_params(fields);
        self.check_call_keys(fields, &read, &positional);

        let ToolFields {
            called,
            call_count,
            min_calls,
            max_calls,
        } = read;
        Some(ToolAssertion {
            tool: tool?,
            called: called.unwrap_or(!(call_count == Some(0) || max_calls == Some(0))),
            params: params?,
            call_count,
            min_calls,
            max_calls,
            called_after,
            called_before,
            positional: positional
                .into_iter()
                .filter_map(|(index, params, _)| Some((index, params?)))
                .collect(),
            scope,
        })
    }

    /// `first_call_params`, `last_call_params` and `nth_call_params`, as (which call, its
    /// parameters, the key that asked).
    fn positional_params(&mut self, fields: &Fields<'_>) -> Vec<Positional> {
        let mut positional = Vec::new();
        if let Some(node) = fields.get("first_call_params") {
            positional.push((
                CallIndex::Nth(1),
                self.params(node, "first_call_params"),
                "first_call_params",
            ));
        }
        if let Some(node) = fields.get("last_call_params") {
            positional.push((
                CallIndex::Last,
                self.params(node, "last_call_params"),
                "last_call_params",
            ));
        }
        if let Some(node) = fields.get("nth_call_params")
            && let Some(nth) = self.map(node, "nth_call_params")
        {
            for (key, value) in nth.entries {
                match key.name.parse::<u32>() {
                    Ok(n) if n >= 1 => {
                        positional.push((CallIndex::Nth(n), self.params(value, "nth_call_params"), "nth_call_params"));
                    }
                    _ => self.push(
                        Diagnostic::new(key.pos, format!("`nth_call_params` keys are call numbers from 1, found `{}`", key.name))
                            .label("not a call number")
                            .hint("write e.g. `nth_call_params: {2: {command: \"cargo test\"}}` for the second call"),
                    ),
                }
            }
        }
        positional
    }

    /// Reports keys of a tool assertion that contradict each other, each at the second of
    /// the two keys that disagree.
    fn check_call_keys(
        &mut self,
        fields: &Fields<'_>,
        read: &ToolFields,
        positional: &[Positional],
    ) {
        let contradiction = |key: &str, why: String| {
            Diagnostic::new(fields.key_pos(key), format!("contradiction: {why}"))
                .label("contradicts `called`")
                .hint("remove one of the two")
        };
        let ToolFields {
            called,
            call_count,
            min_calls,
            max_calls,
        } = *read;
        if called == Some(false) {
            self.check_not_called(fields, read, positional, &contradiction);
        }
        if called == Some(true) {
            if call_count == Some(0) {
                self.push(contradiction(
                    "call_count",
                    "`called: true` with `call_count: 0`".into(),
                ));
            }
            if max_calls == Some(0) {
                self.push(contradiction(
                    "max_calls",
                    "`called: true` with `max_calls: 0`".into(),
                ));
            }
        }
        if call_count.is_some() {
            for key in ["min_calls", "max_calls"] {
                if fields.get(key).is_some() {
                    self.push(
                        Diagnostic::new(
                            fields.key_pos(key),
                            format!("`{key}` can not be combined with `call_count`"),
                        )
                        .label("conflicting bound")
                        .hint("use either an exact `call_count` or `min_calls`/`max_calls` bounds"),
                    );
                }
            }
        }
        if let (Some(min), Some(max)) = (min_calls, max_calls)
            && min > max
        {
            self.push(
                Diagnostic::new(
                    fields.key_pos("max_calls"),
                    format!("contradiction: `min_calls: {min}` is above `max_calls: {max}`"),
                )
                .label("below min_calls"),
            );
        }
        let limit = call_count.or(max_calls);
        for (index, _, key) in positional {
            if let (CallIndex::Nth(n), Some(limit)) = (index, limit)
                && *n > limit
            {
                self.push(
                    Diagnostic::new(fields.key_pos(key), format!("contradiction: `{key}` checks call {n}, but at most {limit} calls are allowed"))
                        .label("call out of range"),
                );
            }
        }
    }

    /// The keys that contradict `called: false`.
    fn check_not_called(
        &mut self,
        fields: &Fields<'_>,
        read: &ToolFields,
        positional: &[Positional],
        contradiction: &dyn Fn(&str, String) -> Diagnostic,
    ) {
        if let Some(n) = read.call_count.filter(|n| *n > 0) {
            self.push(contradiction(
                "call_count",
                format!("`called: false` with `call_count: {n}`"),
            ));
        }
        if let Some(n) = read.min_calls.filter(|n| *n > 0) {
            self.push(contradiction(
                "min_calls",
                format!("`called: false` with `min_calls: {n}`"),
            ));
        }
        if let Some(n) = read.max_calls.filter(|n| *n > 0) {
            self.push(
                contradiction(
                    "max_calls",
                    format!("`called: false` means no call, but `max_calls: {n}` allows {n}"),
                )
                .hint("use `max_calls: 0` or drop `called: false`"),
            );
        }
        for key in ["called_after", "called_before"] {
            if fields.get(key).is_some() {
                self.push(contradiction(
                    key,
                    format!(
                        "`called: false` with `{key}`: calls that must not happen have no order"
                    ),
                ));
            }
        }
        for (_, _, key) in positional {
            self.push(contradiction(key, format!("`called: false` with `{key}`: calls that must not happen have no parameters to check")));
        }
    }

    /// A tool name (`tool:`, `called_after:`, `called_before:`): any spelling some agent has
    /// ([`crate::spec::tools::is_known_tool`]), `mcp__server__tool`, or a glob with `*`. A
    /// name no agent has could never match — a `called: false` on it would always pass — so
    /// it is an error, with the closest known name.
    pub(super) fn tool_name(&mut self, node: &Node, key: &str) -> Option<NameMatcher> {
        let name = self.non_empty_string(node, key)?;
        if !name.contains('*')
            && !name.starts_with("mcp__")
            && !crate::spec::tools::is_known_tool(&name)
        {
            let hint = match did_you_mean(&name, crate::spec::tools::known_spellings()) {
                Some(suggestion) => format!(
                    "did you mean `{}`? (MCP tools are written `mcp__server__tool`)",
                    crate::spec::tools::canonical_tool_name(suggestion)
                ),
                None => "name a tool as Claude Code does (`Read`, `Write`, `Edit`, `Bash`, \
                         `Glob`, `Grep`, `WebFetch`, `Task`, `Skill`, …) or as the agent \
                         itself does (`run_shell_command`, `read_bash`); MCP tools are \
                         `mcp__server__tool`; `*` makes a glob (docs/agents.md)"
                    .to_owned(),
            };
            self.push(
                Diagnostic::new(node.pos, format!("unknown tool `{name}`"))
                    .label("no agent has a tool of that name")
                    .hint(hint),
            );
            return None;
        }
        match NameMatcher::new(&name) {
            Ok(m) => Some(m),
            Err(err) => {
                self.push(Diagnostic::new(node.pos, err.message).label("invalid pattern"));
                None
            }
        }
    }

    /// The parameter names of the tool `tool` (as written), or `None` when they are not
    /// known at load: a built-in tool's ([`crate::spec::tools::params::known_params`]), or
    /// a `mock:` server's tool's (its `input_schema`'s `properties`). Reports an MCP tool
    /// that a mock without `from:` does not have (no call could ever match it).
    fn tool_params(&mut self, node: &Node, tool: &str) -> Option<Vec<String>> {
        let Some(rest) = tool.strip_prefix("mcp__") else {
            return crate::spec::tools::params::known_params(tool)
                .map(|p| p.into_iter().map(str::to_owned).collect());
        };
        let (server, name) = rest.split_once("__")?;
        let mock = self.mocks.get(server)?;
        match mock.tools.get(name) {
            Some(t) => t
                .input_schema
                .get("properties")
                .and_then(serde_json::Value::as_object)
                .map(|p| p.keys().cloned().collect()),
            None if mock.from.is_none() && !name.contains('*') => {
                let hint = did_you_mean(name, mock.tools.keys().map(String::as_str))
                    .map(|s| format!("did you mean `mcp__{server}__{s}`?"))
                    .unwrap_or_else(|| {
                        let names: Vec<&str> = mock.tools.keys().map(String::as_str).collect();
                        format!("the mock's tools: {}", list(&names))
                    });
                self.push(
                    Diagnostic::new(
                        node.pos,
                        format!("the mock server `{server}` has no tool `{name}`"),
                    )
                    .label("not one of the mock's tools")
                    .hint(hint),
                );
                None
            }
            None => None,
        }
    }

    /// Reports every key of `params:` and the positional `*_call_params:` that the tool
    /// `tool` (as written) does not take ([`Ctx::tool_params`]): a misspelt key could never
    /// match a call, so `called: false` on it would always pass.
    fn param_names(&mut self, fields: &Fields<'_>, node: &Node, tool: &str) {
        let Some(known) = self.tool_params(node, tool) else {
            return;
        };
        let mut checked: Vec<&Node> = ["params", "first_call_params", "last_call_params"]
            .iter()
            .filter_map(|key| fields.get(key))
            .collect();
        if let Some(Value::Map(nth)) = fields.get("nth_call_params").map(|n| &n.value) {
            // Each call number's value is a `params:` mapping; the outer map itself is not.
            checked.extend(nth.iter().map(|(_, v)| v));
        }
        for node in checked {
            let Value::Map(entries) = &node.value else {
                continue;
            };
            for (key, _) in entries {
                let top = crate::spec::tools::params::top_key(&key.name);
                if known.iter().any(|k| k == top) {
                    continue;
                }
                let names: Vec<&str> = known.iter().map(String::as_str).collect();
                let hint = match did_you_mean(top, names.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("`{tool}` takes {}", list(&names)),
                };
                self.push(
                    Diagnostic::new(
                        key.pos,
                        format!("unknown parameter `{top}` of tool `{tool}`"),
                    )
                    .label(if tool.starts_with("mcp__") {
                        "not in the mock tool's `input_schema`"
                    } else {
                        "no agent's tool takes this parameter"
                    })
                    .hint(hint),
                );
            }
        }
    }

    /// A `params:`-style mapping. `None` when any entry is invalid.
    pub(super) fn params(&mut self, node: &Node, key: &str) -> Option<Vec<ParamMatcher>> {
        let fields = self.map(node, key)?;
        let mut out = Vec::new();
        let mut ok = true;
        for (param, value) in fields.entries {
            match self.value_matcher(value, &param.name) {
                Some(matcher) => out.push(ParamMatcher {
                    key: param.name.clone(),
                    matcher,
                }),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    /// A parameter's matcher, by [`ValueMatcher::from_json`] (the rules the fluent API
    /// shares), each problem pointed at where it stands.
    pub(super) fn value_matcher(&mut self, node: &Node, param: &str) -> Option<ValueMatcher> {
        let error = match ValueMatcher::from_json(&node.value.to_json()) {
            Ok(matcher) => return Some(matcher),
            Err(error) => error,
        };
        let entries: &[(Key, Node)] = match &node.value {
            Value::Map(entries) => entries,
            _ => &[],
        };
        // The value under the object's one form, for errors about it.
        let inner = entries.first().map_or(node, |(_, v)| v);
        let diagnostic = match &error {
            MatcherError::Bare(err) => {
                let s = match &node.value {
                    Value::Str(s) => s.as_str(),
                    _ => "",
                };
                Diagnostic::new(node.pos, format!("parameter `{param}`: {}", err.message))
                    .label("invalid pattern")
                    .hint(format!(
                        "to match the text literally, write `{{equals: {s:?}}}` or `{{contains: {s:?}}}`"
                    ))
            }
            MatcherError::NotAForm {
                unknown,
                suggestion,
            } => {
                let at = unknown
                    .as_ref()
                    .and_then(|u| entries.iter().find(|(k, _)| &k.name == u))
                    .map_or(node.pos, |(k, _)| k.pos);
                Diagnostic::new(at, format!("parameter `{param}`: {error}"))
                    .label("not a matcher")
                    .hint(suggestion.map_or_else(
                        || "to compare a whole object, write `{equals: {…}}`".to_owned(),
                        |s| format!("did you mean `{s}`?"),
                    ))
            }
            MatcherError::NotAString { form } => {
                self.type_error(inner, form, "a string");
                return None;
            }
            MatcherError::EmptyContains => {
                Diagnostic::new(inner.pos, error.to_string()).label("empty")
            }
            MatcherError::Form(err) => {
                Diagnostic::new(inner.pos, format!("parameter `{param}`: {}", err.message))
                    .label("invalid pattern")
            }
        };
        self.push(diagnostic);
        None
    }
}
