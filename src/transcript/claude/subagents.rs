//! Subagent transcripts kept beside a Claude Code session log, merged into the session's
//! transcript.

use std::path::Path;

use super::super::turns::{self, MAX_TURNS};
use super::super::{Format, ReadError, ToolCall, Transcript, WarningLog, parse_reader};

/// Adds the calls of a session's subagent files: `<dir>/<session>/subagents/*.jsonl`
/// (2.1.x) and `<dir>/agent-*.jsonl` siblings with the same `sessionId` (2.0.x). Calls are
/// then ordered by timestamp, so that order assertions see delegated calls in place.
///
/// `session.jsonl` and `./session.jsonl` find the same files (a bare name's directory is
/// `.`). Only regular files are read (see [`crate::shared::files::open_regular_file`]); any other file named
/// like a subagent file, or one that can not be read, is a warning.
pub(crate) fn merge_subagent_files(path: &Path, transcript: &mut Transcript) {
    let mut candidates = candidates(path);
    candidates.sort();
    let mut merged = false;
    let mut skipped = WarningLog::default();
    for candidate in candidates {
        if candidate.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        let name = candidate
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file = match crate::shared::files::open_regular_file(&candidate) {
            Ok(f) => f,
            Err(e) => {
                skipped.warn(0, format!("subagent file {name} skipped: {e}"));
                continue;
            }
        };
        let sub = match parse_reader(file) {
            Ok(sub) => sub,
            // Not a transcript at all: not this session's subagent.
            Err(ReadError::Unknown(_)) => continue,
            Err(e) => {
                skipped.warn(0, format!("subagent file {name} skipped: {e}"));
                continue;
            }
        };
        if sub.format != Format::ClaudeSession || sub.session_id != transcript.session_id {
            continue;
        }
        // The subagent's turns come along, their calls renumbered into the session's.
        let mut new_index = Vec::with_capacity(sub.tool_calls.len());
        for call in sub.tool_calls {
            if transcript.tool_calls.iter().any(|c| c.id == call.id) {
                new_index.push(usize::MAX);
            } else {
                new_index.push(transcript.tool_calls.len());
                transcript.tool_calls.push(call);
                merged = true;
            }
        }
        for mut turn in sub.turns {
            turn.calls = turn
                .calls
                .iter()
                .filter_map(|&c| new_index.get(c as usize).copied())
                .filter(|&c| c != usize::MAX)
                .filter_map(|c| u32::try_from(c).ok())
                .collect();
            if transcript.turns.len() < MAX_TURNS {
                transcript.turns.push(turn);
            } else {
                transcript.turns_left_out = transcript.turns_left_out.saturating_add(1);
            }
        }
        let log = WarningLog {
            total: sub.warnings_total.max(sub.warnings.len() as u64),
            kept: sub.warnings,
            lost: sub.lost,
        };
        transcript.absorb_warnings(log, Some(&name));
        let u = &mut transcript.usage;
        u.input_tokens = u.input_tokens.saturating_add(sub.usage.input_tokens);
        u.output_tokens = u.output_tokens.saturating_add(sub.usage.output_tokens);
        u.cache_creation_input_tokens = u
            .cache_creation_input_tokens
            .saturating_add(sub.usage.cache_creation_input_tokens);
        u.cache_read_input_tokens = u
            .cache_read_input_tokens
            .saturating_add(sub.usage.cache_read_input_tokens);
    }
    if skipped.total > 0 {
        transcript.absorb_warnings(skipped, None);
    }
    if merged {
        order_by_time(transcript);
    }
}

/// The files beside `path` that may be its subagents' transcripts: `<stem>/subagents/*`
/// (2.1.x) and, unless `path` is itself one, its `agent-*.jsonl` siblings (2.0.x).
fn candidates(path: &Path) -> Vec<std::path::PathBuf> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let own_name = path.file_name();
    let mut candidates: Vec<std::path::PathBuf> = Vec::new();
    if let Some(stem) = path.file_stem()
        && let Ok(entries) = std::fs::read_dir(dir.join(stem).join("subagents"))
    {
        candidates.extend(entries.flatten().map(|e| e.path()));
    }
    let is_agent_file = own_name
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("agent-"));
    if !is_agent_file && let Ok(entries) = std::fs::read_dir(dir) {
        candidates.extend(entries.flatten().map(|e| e.path()).filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("agent-") && n.ends_with(".jsonl"))
                && p.file_name() != own_name
        }));
    }
    candidates
}

/// Orders the calls (and the turns) by timestamp, when every call has one, so that order
/// assertions see delegated calls in place.
fn order_by_time(transcript: &mut Transcript) {
    if !transcript.tool_calls.iter().all(|c| c.timestamp.is_some()) {
        return;
    }
    // Sorted as a permutation, so that the turns' call indices follow their calls.
    let mut order: Vec<usize> = (0..transcript.tool_calls.len()).collect();
    let calls = &transcript.tool_calls;
    order.sort_by_cached_key(|&i| {
        calls[i]
            .timestamp
            .as_deref()
            .and_then(|t| humantime::parse_rfc3339_weak(t).ok())
    });
    let mut slots: Vec<Option<ToolCall>> = std::mem::take(&mut transcript.tool_calls)
        .into_iter()
        .map(Some)
        .collect();
    transcript.tool_calls = order.iter().filter_map(|&i| slots[i].take()).collect();
    turns::renumber(&mut transcript.turns, &order);
    transcript.turns.sort_by_cached_key(|t| {
        t.timestamp
            .as_deref()
            .and_then(|t| humantime::parse_rfc3339_weak(t).ok())
    });
}
