//! The part every format parser shares: tool calls kept once per id, results attached to
//! their calls whatever order they arrive in, and warnings.

use std::collections::HashMap;

use super::{MAIN_AGENT, ToolCall, WarningLog};
use crate::spec::tools::{SHELL_TOOL, Vocabulary, canonical_name, canonical_params};

/// A tool result waiting for (or attached to) its call.
#[derive(Debug, Default, Clone)]
pub(crate) struct ToolResult {
    pub output: String,
    pub is_error: bool,
    /// The agent's guard refused the call before it ran (a structured signal; the text
    /// is also read, [`super::blocked::refusal_in`]).
    pub blocked: Option<String>,
    pub exit_code: Option<i32>,
    pub stdout: Option<String>,
    pub stderr: Option<String>,
}

/// Collects tool calls and results.
#[derive(Debug, Default)]
pub(crate) struct Builder {
    calls: Vec<ToolCall>,
    by_id: HashMap<String, usize>,
    early_results: HashMap<String, ToolResult>,
    early_blocks: HashMap<String, String>,
    /// The warnings so far (bounded; see [`WarningLog`]).
    pub log: WarningLog,
    /// Whether a shell result's error flag is its exit status (Claude Code, Qwen Code: a
    /// successful call exited 0, a failed one says "Exit code N"). Gemini CLI reports
    /// `success` for a command that exited 3, so there it is not.
    pub exit_from_status: bool,
    /// Whose tool names and parameter keys the calls use.
    pub vocabulary: Vocabulary,
}

impl Builder {
    /// A builder; `exit_from_status` as documented on the field.
    pub fn new(exit_from_status: bool) -> Self {
        Builder {
            exit_from_status,
            ..Builder::default()
        }
    }

    /// The builder for calls named in `vocabulary`.
    pub fn with_vocabulary(mut self, vocabulary: Vocabulary) -> Self {
        self.vocabulary = vocabulary;
        self
    }

    /// The canonical name of a recorded call.
    pub fn canonical_of(&self, id: &str) -> Option<&str> {
        self.by_id
            .get(id)
            .map(|&i| self.calls[i].canonical.as_str())
    }

    /// The index in the calls of the call last recorded under `id` (a call recorded under
    /// a reused id is the latest one).
    pub fn index_of(&self, id: &str) -> Option<usize> {
        match self.calls.last() {
            Some(last) if last.id == id => Some(self.calls.len() - 1),
            _ => self.by_id.get(id).copied(),
        }
    }

    /// Whether a call with `id` is already recorded as this one (`name`, `input`): a line
    /// repeated. One id used for another call is never dropped: the call is recorded too
    /// (the id then names the first), and the transcript notes it
    /// ([`super::Lost::duplicate_ids`]), so that nothing passes on the absence of a call.
    fn repeated(&mut self, id: &str, name: &str, input: &serde_json::Value) -> bool {
        let Some(&i) = self.by_id.get(id) else {
            return false;
        };
        let empty = |v: &serde_json::Value| {
            v.is_null() || v.as_object().is_some_and(serde_json::Map::is_empty)
        };
        let vocabulary = self.vocabulary;
        let first = &mut self.calls[i];
        if first.name == name && (first.input == *input || empty(input)) {
            return true;
        }
        // A call first announced without its input (opencode's pending part, a stream's
        // start event), then whole: the same call.
        if first.name == name && empty(&first.input) {
            first.params = canonical_params(vocabulary, name, input);
            first.input = input.clone();
            return true;
        }
        self.log.duplicate(format!(
            "the tool-call id `{id}` is used for two calls: {} and {name}",
            first.name
        ));
        false
    }

    /// Records a call once per id; a later repeat of the same call is ignored, another
    /// call under the same id is kept and noted (see [`Builder::repeated`]).
    pub fn call(
        &mut self,
        id: &str,
        name: &str,
        input: impl FnOnce() -> serde_json::Value,
        agent: Option<&str>,
        timestamp: Option<String>,
    ) {
        let input = input();
        if self.repeated(id, name, &input) {
            return;
        }
        let canonical = canonical_name(self.vocabulary, name).into_owned();
        let params = canonical_params(self.vocabulary, name, &input);
        self.push(id, name, canonical, input, params, agent, timestamp);
    }

    /// Records an MCP tool call once per id, under its raw name and input (`name`, `input`)
    /// and the shared `mcp__<server>__<tool>` name, with `arguments` (the tool's own
    /// arguments, when the agent nests them in its input) as its canonical parameters.
    #[expect(
        clippy::too_many_arguments,
        reason = "one call's fields, named at each site"
    )]
    pub fn mcp_call(
        &mut self,
        id: &str,
        name: &str,
        (server, tool): (&str, &str),
        input: serde_json::Value,
        arguments: Option<serde_json::Value>,
        agent: Option<&str>,
        timestamp: Option<String>,
    ) {
        if self.repeated(id, name, &input) {
            return;
        }
        let canonical = format!("mcp__{server}__{tool}");
        let params = arguments.filter(|a| *a != input);
        self.push(id, name, canonical, input, params, agent, timestamp);
    }

    /// Records a call once per id under a canonical name and parameters the parser chose
    /// itself (`params` `None`: `input` as it is), for calls no table can name: one
    /// operation of a batch, a call named by the kind of tool it reports.
    #[expect(
        clippy::too_many_arguments,
        reason = "one call's fields, named at each site"
    )]
    pub fn call_as(
        &mut self,
        id: &str,
        name: &str,
        canonical: String,
        input: serde_json::Value,
        params: Option<serde_json::Value>,
        agent: Option<&str>,
        timestamp: Option<String>,
    ) {
        if self.repeated(id, name, &input) {
            return;
        }
        let params = params.filter(|p| *p != input);
        self.push(id, name, canonical, input, params, agent, timestamp);
    }

    #[expect(clippy::too_many_arguments, reason = "one call's fields")]
    fn push(
        &mut self,
        id: &str,
        name: &str,
        canonical: String,
        input: serde_json::Value,
        params: Option<serde_json::Value>,
        agent: Option<&str>,
        timestamp: Option<String>,
    ) {
        let mut call = ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            canonical,
            params,
            input,
            output: None,
            is_error: false,
            blocked: self.early_blocks.remove(id),
            exit_code: None,
            stdout: None,
            stderr: None,
            agent: agent.unwrap_or(MAIN_AGENT).to_owned(),
            timestamp,
            server_side: false,
            exit_by_kernel: false,
        };
        if let Some(result) = self.early_results.remove(id) {
            apply(&mut call, result, self.exit_from_status);
        }
        self.by_id.entry(id.to_owned()).or_insert(self.calls.len());
        self.calls.push(call);
    }

    /// Attaches a result to its call (or keeps it until the call shows up). A repeated
    /// result for the same call replaces the earlier one only if that had no output.
    pub fn result(&mut self, id: &str, result: ToolResult) {
        match self.by_id.get(id) {
            Some(&i) => {
                let call = &mut self.calls[i];
                if call.output.is_none() || call.output.as_deref() == Some("") {
                    apply(call, result, self.exit_from_status);
                }
            }
            None => {
                self.early_results.entry(id.to_owned()).or_insert(result);
            }
        }
    }

    /// Marks a call as refused by the agent's guard before it ran (a signal apart from its
    /// result: Claude Code's `system/permission_denied`, a final `permission_denials`),
    /// with the agent's words; a call not seen yet gets it when it shows up.
    pub fn block(&mut self, id: &str, why: &str) {
        match self.by_id.get(id) {
            Some(&i) => {
                let call = &mut self.calls[i];
                call.blocked.get_or_insert_with(|| why.to_owned());
                call.exit_code = None;
            }
            None => {
                self.early_blocks
                    .entry(id.to_owned())
                    .or_insert_with(|| why.to_owned());
            }
        }
    }

    /// Marks the call `id` as one the model's provider ran itself (see
    /// [`ToolCall::server_side`]); a call not seen yet is left alone.
    pub fn server_side(&mut self, id: &str) {
        if let Some(&i) = self.by_id.get(id) {
            self.calls[i].server_side = true;
        }
    }

    /// The calls recorded so far.
    pub fn calls(&self) -> &[ToolCall] {
        &self.calls
    }

    /// Records a warning for a line that held nothing a tool call could be in.
    pub fn warn(&mut self, line: u64, message: impl Into<String>) {
        self.log.warn(line, message);
    }

    /// Records a line that could not be read and may have held tool calls.
    pub fn warn_lost(&mut self, line: u64, message: impl Into<String>) {
        self.log.warn_lost(line, message);
    }

    /// The calls, in order, and the warnings. A result whose call never appeared proves
    /// that a call was lost (its line was unreadable): it counts as an orphan.
    pub fn finish(mut self) -> (Vec<super::ToolCall>, WarningLog) {
        let mut orphans: Vec<String> = self.early_results.into_keys().collect();
        orphans.sort();
        for id in orphans {
            self.log.orphan(format!(
                "tool result for call {id}, which the transcript does not contain"
            ));
        }
        (self.calls, self.log)
    }

    /// The transcript: these calls and warnings with what the parser read besides them
    /// (`records_only` is `None`; a format that records only some tools sets it after).
    pub fn into_transcript(self, parts: Parts) -> super::Transcript {
        let (tool_calls, log) = self.finish();
        super::Transcript {
            format: parts.format,
            session_id: parts.session_id,
            agent_version: parts.agent_version,
            model: parts.model,
            tool_calls,
            final_text: parts.final_text,
            usage: parts.usage,
            outcome: parts.outcome,
            runs: parts.runs,
            warnings: log.kept,
            warnings_total: log.total,
            lost: log.lost,
            records_only: None,
            skills: None,
            skills_shown: None,
            mcp_params: None,
            turns: Vec::new(),
            turns_left_out: 0,
            unclaimed_execs: Vec::new(),
        }
    }
}

/// What a parser read besides the tool calls: the rest of a [`super::Transcript`] (the
/// fields mean what they mean there).
pub struct Parts {
    pub format: super::Format,
    pub session_id: Option<String>,
    pub agent_version: Option<String>,
    pub model: Option<String>,
    pub final_text: Option<String>,
    pub usage: super::Usage,
    pub outcome: super::Outcome,
    pub runs: u32,
}

fn apply(call: &mut ToolCall, result: ToolResult, exit_from_status: bool) {
    call.is_error = result.is_error;
    let shell = call.canonical == SHELL_TOOL;
    let exit_code = result.exit_code.or_else(|| {
        if !shell {
            return None;
        }
        if exit_from_status && !result.is_error {
            Some(0)
        } else {
            super::exit_code_in_text(&result.output)
        }
    });
    // A refusal in words counts only where nothing says the call ran: no exit code, and an
    // error result or a shell call.
    let unproven = exit_code.is_none() && (result.is_error || shell);
    let refusal = result.blocked.or_else(|| {
        unproven
            .then(|| super::blocked::refusal_in(&result.output))
            .flatten()
    });
    if let Some(why) = refusal {
        call.blocked.get_or_insert(why);
    }
    call.exit_code = if call.blocked.is_some() {
        None
    } else {
        exit_code
    };
    call.stdout = result.stdout;
    call.stderr = result.stderr;
    call.output = Some(result.output);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repeated_ids_count_once_and_results_attach_in_any_order() {
        let mut b = Builder::new(true);
        b.result(
            "t2",
            ToolResult {
                output: "Exit code 3\nboom".into(),
                is_error: true,
                ..Default::default()
            },
        );
        b.call("t1", "Read", || json!({"file_path": "a"}), None, None);
        b.call("t1", "Read", || json!({"file_path": "a"}), None, None);
        b.call("t2", "Bash", || json!({"command": "x"}), Some("sub"), None);
        b.result(
            "t1",
            ToolResult {
                output: "text".into(),
                ..Default::default()
            },
        );
        let (calls, log) = b.finish();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].input, json!({"file_path": "a"}));
        assert_eq!(calls[0].output.as_deref(), Some("text"));
        assert_eq!(calls[0].exit_code, None, "not a shell call");
        assert_eq!(calls[1].exit_code, Some(3));
        assert_eq!(calls[1].agent, "sub");
        assert!(log.kept.is_empty());
    }

    #[test]
    fn successful_shell_call_has_exit_code_zero() {
        let mut b = Builder::new(true);
        b.call(
            "t",
            "run_shell_command",
            || json!({"command": "ls"}),
            None,
            None,
        );
        b.result(
            "t",
            ToolResult {
                output: "a\nb".into(),
                ..Default::default()
            },
        );
        let (calls, _) = b.finish();
        assert_eq!(calls[0].canonical, "Bash");
        assert_eq!(calls[0].exit_code, Some(0));
    }

    #[test]
    fn status_is_not_an_exit_code_where_the_agent_says_so() {
        let mut b = Builder::default();
        b.call(
            "t",
            "run_shell_command",
            || json!({"command": "exit 3"}),
            None,
            None,
        );
        b.result("t", ToolResult::default());
        let (calls, _) = b.finish();
        assert_eq!(calls[0].exit_code, None);
    }

    /// A reused id never hides a call: a Read and then a `Bash rm -f` under one id are two
    /// calls, and the transcript says an id was reused; a repeated line, or a call first
    /// seen without its input, is one call.
    #[test]
    fn a_reused_id_is_kept_and_noted() {
        let mut b = Builder::default();
        b.call(
            "t1",
            "Read",
            || serde_json::json!({"file_path": "/w/a"}),
            None,
            None,
        );
        b.call(
            "t1",
            "Read",
            || serde_json::json!({"file_path": "/w/a"}),
            None,
            None,
        );
        b.call("t2", "Bash", || serde_json::json!({}), None, None);
        b.call(
            "t2",
            "Bash",
            || serde_json::json!({"command": "ls"}),
            None,
            None,
        );
        assert_eq!(b.calls().len(), 2);
        assert_eq!(b.calls()[1].input["command"], "ls");
        b.call(
            "t1",
            "Bash",
            || serde_json::json!({"command": "rm -f a"}),
            None,
            None,
        );
        assert_eq!(b.calls().len(), 3);
        assert_eq!(b.calls()[2].command().as_deref(), Some("rm -f a"));
        let (_, log) = b.finish();
        assert_eq!(log.lost.duplicate_ids, 1);
        assert!(log.kept[0].message.contains("`t1` is used for two calls"));
    }

    #[test]
    fn orphan_results_are_warnings() {
        let mut b = Builder::default();
        b.result("ghost", ToolResult::default());
        let (_, log) = b.finish();
        assert_eq!(log.kept.len(), 1);
        assert!(log.kept[0].message.contains("ghost"));
        assert_eq!(
            log.lost.orphan_results, 1,
            "an orphan result proves a lost call"
        );
    }
}
