//! The agent's stream checked against the wire: results JSON's `witness`.
//!
//! What an agent writes about itself (its output stream, its session files) is a claim:
//! any process in its sandbox may have written to it. What crossed the gateway is the
//! witness ([`super::wire::Wire`]). Each tool call of the transcript must be one the model
//! asked for, and each result the transcript shows must agree with the one the agent sent
//! back to the model:
//!
//! - **matched** by the model's id (Claude Code, Qwen Code, Copilot CLI, opencode, pi keep
//!   it), else by content: the same tool (in the agent's vocabulary) with an input the
//!   wire's supports (every string of the transcript's input is in the wire's, a shell
//!   command unwrapped from `bash -lc '…'`, a path by its last components: Codex's exec
//!   events and Gemini CLI name calls by their own ids);
//! - **a result agrees** when the exit codes do not contradict (`Exit code 1` on the wire
//!   against an exit 0 in the stream), the error flags do not (the wire's `is_error`
//!   against a success), and every line of the stream's output is in the wire's (a wire
//!   result the agent cut down, marked `truncated`, needs its first line and half of the
//!   lines);
//! - a call the model asked for and the agent answered, of a tool the stream records, that
//!   the stream does not show, was **hidden**;
//! - one id for two different calls, in the stream or on the wire, and everything the wire
//!   alone shows ([`super::wire::WireFinding`]) is tampering too.
//!
//! Any finding makes the run `error`, kind `tampered`, naming the call: never a pass.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::wire::{Wire, WireCall, describe, same_input};
use crate::spec::tools::canonical_name;
use crate::transcript::{Format, ToolCall, Transcript};

/// How far a run's transcript is backed by what crossed the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WitnessStatus {
    /// Every tool call and result of the transcript agrees with the wire.
    Witnessed,
    /// The transcript and the wire disagree: the run is `error`, kind `tampered`.
    Tampered,
    /// They agree as far as the wire was kept (a bound was reached).
    Partial,
    /// No wire to check against: the run went direct (no gateway), or the transcript was
    /// analyzed from a file.
    Unwitnessed,
}

impl WitnessStatus {
    /// How much a status weighs when runs are summed up: the least witnessed wins.
    pub fn rank(self) -> u8 {
        match self {
            WitnessStatus::Witnessed => 0,
            WitnessStatus::Partial => 1,
            WitnessStatus::Unwitnessed => 2,
            WitnessStatus::Tampered => 3,
        }
    }
}

/// What the wire says of one run's transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Witness {
    /// The verdict on the transcript.
    pub status: WitnessStatus,
    /// Tool calls of the transcript found on the wire.
    #[serde(default)]
    pub calls: u32,
    /// Of them, with a result compared with the one the model got.
    #[serde(default)]
    pub results: u32,
    /// Calls the model asked for that the transcript does not show, of tools its format
    /// does not record (Codex's `write_stdin`): counted, not a finding.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unrecorded: u32,
    /// What disagrees, each naming the call (the first 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
    /// Why the transcript is unwitnessed or partial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// What differs between the stream and the wire for an honest reason, each naming the
    /// call: a call the agent's own guard blocked, whose stream shows the agent's display
    /// text while the model was told the agent's own words for the refusal (the first 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The most findings kept.
const MAX_FINDINGS: usize = 20;

impl Witness {
    /// A transcript no wire backs, and why.
    pub fn unwitnessed(why: impl Into<String>) -> Self {
        Witness {
            status: WitnessStatus::Unwitnessed,
            calls: 0,
            results: 0,
            unrecorded: 0,
            findings: Vec::new(),
            why: Some(why.into()),
            notes: Vec::new(),
        }
    }

    /// The error a tampered run ends with: `the agent's own record of the run (its stream)
    /// disagrees with the model traffic aptitude saw: …` (the first finding, how many
    /// more, and what to check).
    pub fn tampered(&self) -> Option<String> {
        if self.status != WitnessStatus::Tampered {
            return None;
        }
        let first = self.findings.first().map_or("", String::as_str);
        let more = match self.findings.len() {
            0 | 1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        Some(format!(
            "the agent's own record of the run (its stream) disagrees with the model traffic aptitude saw: {first}{more}. aptitude trusts the traffic, so the run is not judged; check what in the run could write to the agent's stream or session files (a tool, a hook, a plugin), or whether this agent version records that call in a way aptitude does not read yet"
        ))
    }

    /// One line for reports: `witnessed: 4 tool calls, 4 results`, `unwitnessed: …`.
    pub fn phrase(&self) -> String {
        match self.status {
            WitnessStatus::Witnessed => format!(
                "witnessed by the model gateway: {} tool call{}, {} result{} checked{}",
                self.calls,
                plural(self.calls),
                self.results,
                plural(self.results),
                match self.notes.len() {
                    0 => String::new(),
                    n => format!(
                        " ({n} blocked by the agent's own guard, told to the model in its own words)"
                    ),
                }
            ),
            WitnessStatus::Partial => format!(
                "partly witnessed: {}",
                self.why.as_deref().unwrap_or("the wire was not kept whole")
            ),
            WitnessStatus::Tampered => self.tampered().unwrap_or_else(|| "tampered".into()),
            WitnessStatus::Unwitnessed => format!(
                "unwitnessed: {}",
                self.why
                    .as_deref()
                    .unwrap_or("no model traffic to check it against")
            ),
        }
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Whether the stream of `format` shows every call of the tool the model called `name`
/// (so one missing from it was hidden): every tool for the formats that record each call;
/// for Codex's exec events, the shell and patch calls they show as `command_execution` and
/// `file_change`.
fn records(format: Format, name: &str) -> bool {
    match format {
        Format::ClaudeStreamJson
        | Format::ClaudeSession
        | Format::QwenStreamJson
        | Format::GeminiStreamJson => true,
        Format::CodexExecJson => {
            matches!(
                name,
                "exec_command" | "shell" | "shell_command" | "local_shell" | "apply_patch"
            )
        }
        _ => false,
    }
}

/// Checks `transcript` against `wire` (see the module docs).
pub fn check(wire: &Wire, transcript: &Transcript) -> Witness {
    // Aider's calls are its applied edits, parsed from the model's text: there are no tool
    // calls on the wire to hold them against.
    if transcript.records_only.is_some() {
        return Witness::unwitnessed(
            "the agent's calls are edits parsed from the model's text, not tool calls the wire could show",
        );
    }
    let mut findings: Vec<String> = wire.findings.iter().map(ToString::to_string).collect();
    let vocabulary = transcript.format.vocabulary();
    let mut matched = vec![false; wire.calls.len()];
    let (mut calls, mut results) = (0u32, 0u32);
    let mut notes = Vec::new();
    let mut seen_ids = std::collections::HashMap::<&str, &ToolCall>::new();
    for call in &transcript.tool_calls {
        if !call.id.is_empty()
            && let Some(earlier) = seen_ids.insert(call.id.as_str(), call)
            && (earlier.name != call.name || !same_input(&earlier.input, &call.input))
        {
            findings.push(format!(
                "the agent's stream uses the id `{}` for two calls: {} and {}",
                call.id,
                describe(&earlier.name, &earlier.input),
                describe(&call.name, &call.input)
            ));
        }
        let Some(index) = find(wire, &matched, call, vocabulary) else {
            if !wire.partial {
                findings.push(format!(
                    "the agent's stream shows a call its model never asked for: {}",
                    describe(&call.name, &call.input)
                ));
            }
            continue;
        };
        matched[index] = true;
        calls += 1;
        let Some(sent) = wire.result(index) else {
            continue;
        };
        if call.output.is_none() {
            continue;
        }
        results += 1;
        if call.blocked.is_some() && disagreement(call, sent).is_some() && reads_as_refusal(sent) {
            notes.push(format!(
                "{} was blocked by the agent's own guard: its stream shows {:?}, the model was told {:?}",
                describe(&call.name, &call.input),
                crate::shared::cut::chars(call.output.as_deref().unwrap_or("").trim(), 120).kept,
                crate::shared::cut::chars(sent.text.trim(), 120).kept
            ));
            continue;
        }
        if let Some(why) = disagreement(call, sent) {
            findings.push(format!(
                "the result of {} in the agent's stream is not the one its model got: {why}",
                describe(&call.name, &call.input)
            ));
        }
    }
    let mut unrecorded = 0;
    for (index, wired) in wire.calls.iter().enumerate() {
        if matched[index] || wire.result(index).is_none() {
            continue;
        }
        if records(transcript.format, &wired.name) && !wire.partial {
            findings.push(format!(
                "the model asked for {}, and the agent answered it, but its stream does not show the call",
                describe(&wired.name, &wired.input)
            ));
        } else {
            unrecorded += 1;
        }
    }
    findings.truncate(MAX_FINDINGS);
    notes.truncate(MAX_FINDINGS);
    let status = if !findings.is_empty() {
        WitnessStatus::Tampered
    } else if wire.partial {
        WitnessStatus::Partial
    } else {
        WitnessStatus::Witnessed
    };
    Witness {
        status,
        calls,
        results,
        unrecorded,
        findings,
        why: wire.partial.then(|| {
            format!(
                "the run's model traffic went over the witness's bounds ({} calls, {} MiB of results): what was kept agrees",
                super::wire::MAX_CALLS,
                super::wire::MAX_RESULT_BYTES / (1024 * 1024)
            )
        }),
        notes,
    }
}

/// Whether the result the model got says a call was refused before it did anything: the
/// words agents tell their model when their own guard stops a call ("Command injection
/// detected: … the command was blocked", "denied by policy", "rejected"). A transcript
/// that says *blocked* where the model got a command's real output is still tampering.
fn reads_as_refusal(sent: &super::wire::WireResult) -> bool {
    let text = sent.text.to_lowercase();
    crate::transcript::refusal_in(&sent.text).is_some()
        || [
            "blocked",
            "denied",
            "not allowed",
            "refused",
            "rejected",
            "declined",
            "injection detected",
        ]
        .iter()
        .any(|w| text.contains(w))
}

/// The wire call `call` is, if any: by id, else the first unmatched call of the same tool
/// whose input supports the transcript's.
fn find(
    wire: &Wire,
    matched: &[bool],
    call: &ToolCall,
    vocabulary: crate::spec::tools::Vocabulary,
) -> Option<usize> {
    if !call.id.is_empty()
        && let Some(index) = wire.by_id(&call.id)
    {
        let wired = &wire.calls[index];
        if same_tool(call, wired, vocabulary) && supports(&wired.input, &call.input) {
            return Some(index);
        }
    }
    wire.calls.iter().enumerate().position(|(i, wired)| {
        !matched[i] && same_tool(call, wired, vocabulary) && supports(&wired.input, &call.input)
    })
}

fn same_tool(
    call: &ToolCall,
    wired: &WireCall,
    vocabulary: crate::spec::tools::Vocabulary,
) -> bool {
    if call.name == wired.name {
        return true;
    }
    let canonical = canonical_name(vocabulary, &wired.name);
    let loose = |s: &str| {
        s.trim_start_matches("mcp__")
            .trim_start_matches("mcp_")
            .replace("__", "_")
            .replace('-', "_")
            .to_ascii_lowercase()
    };
    call.canonical == canonical
        || loose(&call.canonical) == loose(&wired.name)
        || loose(&call.name) == loose(&wired.name)
}

/// Whether the wire's input supports the transcript's: equal, or every string of the
/// transcript's found in the wire's (see the module docs).
fn supports(wired: &Value, claimed: &Value) -> bool {
    if same_input(wired, claimed) {
        return true;
    }
    let mut haystack = String::new();
    strings(wired, &mut |s| {
        haystack.push_str(&s.to_lowercase());
        haystack.push('\n');
    });
    let mut ok = true;
    strings(claimed, &mut |s| {
        ok &= string_supported(&haystack, s);
    });
    ok
}

fn strings(v: &Value, f: &mut impl FnMut(&str)) {
    match v {
        Value::String(s) => {
            // Arguments given as a JSON string.
            match serde_json::from_str::<Value>(s) {
                Ok(inner @ (Value::Object(_) | Value::Array(_))) => strings(&inner, f),
                _ => f(s),
            }
        }
        Value::Array(items) => items.iter().for_each(|i| strings(i, f)),
        Value::Object(map) => map.values().for_each(|i| strings(i, f)),
        _ => {}
    }
}

/// The strings of a JSON result that are its content: every string but a `type` tag
/// (`{"type": "text", "text": "Echo: hi"}` holds `Echo: hi`).
fn content_strings(v: &Value, f: &mut impl FnMut(&str)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|i| content_strings(i, f)),
        Value::Object(map) => map
            .iter()
            .filter(|(k, _)| k.as_str() != "type")
            .for_each(|(_, i)| content_strings(i, f)),
        _ => {}
    }
}

fn string_supported(haystack: &str, claimed: &str) -> bool {
    let lower = claimed.trim().to_lowercase();
    if lower.is_empty() || haystack.contains(&lower) {
        return true;
    }
    // A shell command the agent records wrapped: `/bin/bash -lc 'cmd'`.
    if let Some(words) = shlex::split(claimed)
        && let [shell, flag, script] = words.as_slice()
        && matches!(shell.rsplit('/').next(), Some("sh" | "bash" | "zsh"))
        && matches!(flag.as_str(), "-c" | "-lc")
        && haystack.contains(&script.trim().to_lowercase())
    {
        return true;
    }
    // An absolute path the wire names relative to the workspace.
    if lower.starts_with('/') {
        let tail: Vec<&str> = lower.rsplit('/').take(2).collect();
        let tail: String = tail.into_iter().rev().collect::<Vec<_>>().join("/");
        return !tail.is_empty() && haystack.contains(&tail);
    }
    false
}

/// Lines of text as compared: trimmed, inner whitespace collapsed, empty ones dropped. A
/// JSON document (an MCP result as Codex's stream shows it) is compared by the text it
/// holds: its strings' lines.
fn lines(text: &str) -> Vec<String> {
    let split = |t: &str, out: &mut Vec<String>| {
        out.extend(
            t.split(['\n', '\r'])
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .filter(|l| !l.is_empty()),
        );
    };
    let mut out = Vec::new();
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(json @ (Value::Object(_) | Value::Array(_))) => {
            content_strings(&json, &mut |s| split(s, &mut out));
        }
        _ => split(text, &mut out),
    }
    out
}

/// Why the transcript's result of `call` is not the one the model got, if it is not.
fn disagreement(call: &ToolCall, sent: &super::wire::WireResult) -> Option<String> {
    // An exit code the kernel saw is not contradicted by one a command printed (`Exit
    // Code: 0`), which is all the wire's text can hold.
    let wire_exit =
        crate::transcript::exit_code_in_text(&sent.text).filter(|_| !call.exit_by_kernel);
    if let (Some(claimed), Some(real)) = (call.exit_code, wire_exit)
        && claimed != real
    {
        return Some(format!(
            "the stream says exit code {claimed}, the model was told {real}"
        ));
    }
    // The kernel's code stands; what the agent told its model of it is the agent's reading,
    // not a sign that the stream was written to.
    if !call.exit_by_kernel && sent.is_error == Some(true) && call.exit_code == Some(0) {
        return Some("the stream says it succeeded, the model was told it failed".into());
    }
    if !call.exit_by_kernel
        && sent.is_error == Some(true)
        && !call.is_error
        && call.blocked.is_none()
    {
        return Some("the stream says it succeeded, the model was told it failed".into());
    }
    let claims_failure = call.exit_code.is_some_and(|c| c != 0)
        || (call.is_error && call.exit_code.is_none() && call.blocked.is_none());
    if sent.is_error == Some(false)
        && claims_failure
        && !call.exit_by_kernel
        && wire_exit.is_none_or(|c| c == 0)
    {
        return Some("the stream says it failed, the model was told it succeeded".into());
    }
    let output = call.output.as_deref().unwrap_or("");
    let claimed = lines(output);
    if claimed.is_empty() {
        return None;
    }
    let wired = lines(&sent.text).join("\n");
    let found: Vec<bool> = claimed.iter().map(|l| wired.contains(l.as_str())).collect();
    let present = found.iter().filter(|f| **f).count();
    if present == claimed.len() {
        return None;
    }
    let cut =
        sent.text.to_ascii_lowercase().contains("truncat") || sent.text.len() >= 256 * 1024 - 4;
    if cut && found[0] && present * 2 >= claimed.len() {
        return None;
    }
    let missing = claimed
        .iter()
        .zip(&found)
        .find(|(_, f)| !**f)
        .map(|(l, _)| crate::shared::cut::chars(l, 120).kept.to_owned())
        .unwrap_or_default();
    Some(format!(
        "its output line {missing:?} is not in what the model got"
    ))
}

pub mod dialog;
pub mod refused;

#[cfg(test)]
mod tests;
