//! Turns: the model's replies in a transcript, each with the assistant's text, the tool
//! calls it made, its tokens and its time — what a reader needs to follow a run turn by
//! turn (the HTML report's trajectory) rather than as a bare list of calls.
//!
//! A turn is one model reply (one assistant message: Claude Code writes a reply over
//! several lines with the same `message.id`, one content block each). Formats that record
//! no replies (Aider's edits, `gemini -o json`) have no turns; a report then falls back
//! to the list of calls. Parsers fill turns through [`TurnLog`], which bounds them: at most
//! [`MAX_TURNS`] turns are kept (the rest are counted in `Transcript::turns_left_out`) and
//! each text is cut at [`TURN_TEXT_MAX`] characters ([`crate::shared::cut`]: never part of
//! a secret).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// The most turns a transcript keeps; the rest are counted.
pub const MAX_TURNS: usize = 2_000;

/// The most characters of a turn's text kept; a longer text is cut with a marker.
pub const TURN_TEXT_MAX: usize = 2_000;

/// One model reply.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Turn {
    /// `main`, or the subagent that got the reply (as [`super::ToolCall::agent`]).
    pub agent: String,
    /// The assistant's text in the reply (text blocks joined by a blank line), cut at
    /// [`TURN_TEXT_MAX`] characters; absent when the reply held only tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The calls the reply made: 0-based indices into the transcript's `tool_calls`, in
    /// the order made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<u32>,
    /// The request's tokens as the agent recorded them with the reply; absent when the
    /// format records none per reply. (Claude Code's stream-json records the output count
    /// of the reply's start: the gateway's `model_traffic.request_log` has the true one.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TurnTokens>,
    /// When the reply was recorded (RFC 3339), when the format says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// Milliseconds from the event before the reply (the prompt, or the last tool result)
    /// to the reply's last line: the model's time. Absent without timestamps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// A reply's tokens.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct TurnTokens {
    /// Input tokens, not counting cache reads and writes.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the prompt cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_creation: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl TurnTokens {
    /// Every token of the request: input, output and cache.
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_creation)
    }

    /// The larger of each count: a reply recorded over several lines repeats its usage,
    /// sometimes updated.
    fn max(self, other: TurnTokens) -> TurnTokens {
        TurnTokens {
            input: self.input.max(other.input),
            output: self.output.max(other.output),
            cache_read: self.cache_read.max(other.cache_read),
            cache_creation: self.cache_creation.max(other.cache_creation),
        }
    }
}

/// A turn's text while it is collected: bounded however long the reply.
#[derive(Debug, Default)]
struct Text {
    kept: String,
    chars: usize,
}

/// Collects turns while a parser reads (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct TurnLog {
    turns: Vec<Turn>,
    texts: Vec<Text>,
    by_message: HashMap<String, usize>,
    left_out: u64,
    /// The timestamp of the last event that was not a reply: a turn's time starts there.
    since: Option<String>,
}

impl TurnLog {
    /// An event that is not a reply (the prompt, a tool result) at `timestamp`.
    pub fn event(&mut self, timestamp: Option<&str>) {
        if let Some(ts) = timestamp {
            self.since = Some(ts.to_owned());
        }
    }

    /// A line of a reply of `agent` (message `message_id`, recorded at `timestamp`, with
    /// `tokens`): the turn it belongs to, new for a message not seen yet; `None` once
    /// [`MAX_TURNS`] turns are kept.
    pub fn reply(
        &mut self,
        message_id: Option<&str>,
        agent: &str,
        timestamp: Option<&str>,
        tokens: Option<TurnTokens>,
    ) -> Option<usize> {
        let known = message_id.and_then(|id| self.by_message.get(id).copied());
        let index = match known {
            Some(i) => i,
            None => {
                if self.turns.len() >= MAX_TURNS {
                    self.left_out = self.left_out.saturating_add(1);
                    return None;
                }
                self.turns.push(Turn {
                    agent: agent.to_owned(),
                    timestamp: timestamp.map(str::to_owned),
                    ..Turn::default()
                });
                self.texts.push(Text::default());
                if let Some(id) = message_id {
                    self.by_message.insert(id.to_owned(), self.turns.len() - 1);
                }
                self.turns.len() - 1
            }
        };
        let turn = &mut self.turns[index];
        if let Some(t) = tokens {
            turn.tokens = Some(turn.tokens.map_or(t, |old| old.max(t)));
        }
        if let (Some(since), Some(ts)) = (&self.since, timestamp) {
            turn.duration_ms = super::millis_between(since, ts).or(turn.duration_ms);
        }
        Some(index)
    }

    /// Appends the assistant's `text` to turn `index` (after a blank line).
    pub fn text(&mut self, index: usize, text: &str) {
        let Some(t) = self.texts.get_mut(index) else {
            return;
        };
        if text.trim().is_empty() {
            return;
        }
        let sep = if t.chars > 0 { 2 } else { 0 };
        t.chars = t.chars.saturating_add(sep + text.chars().count());
        // Enough is kept to cut at the bound later (with room for the backing off of a
        // cut that would split a token); the rest is only counted.
        let room = (TURN_TEXT_MAX + crate::shared::cut::TOKEN_BACKOFF) * 4;
        if t.kept.len() < room {
            if sep > 0 {
                t.kept.push_str("\n\n");
            }
            let end = text
                .char_indices()
                .map(|(i, _)| i)
                .find(|&i| t.kept.len() + i >= room)
                .unwrap_or(text.len());
            t.kept.push_str(&text[..end]);
        }
    }

    /// Records that turn `index` made the call at `call` in the transcript's calls.
    pub fn call(&mut self, index: usize, call: usize) {
        if let (Some(turn), Ok(call)) = (self.turns.get_mut(index), u32::try_from(call))
            && !turn.calls.contains(&call)
        {
            turn.calls.push(call);
        }
    }

    /// The turns, texts cut to [`TURN_TEXT_MAX`], and how many were left out.
    pub fn finish(self) -> (Vec<Turn>, u64) {
        let turns = self
            .turns
            .into_iter()
            .zip(self.texts)
            .map(|(mut turn, text)| {
                if text.chars > 0 {
                    let cut = crate::shared::cut::chars(&text.kept, TURN_TEXT_MAX);
                    let left = text.chars.saturating_sub(cut.kept.chars().count());
                    turn.text = Some(if left > 0 {
                        format!("{}\n… [truncated: {left} more characters]", cut.kept)
                    } else {
                        cut.kept
                    });
                }
                turn
            })
            .collect();
        (turns, self.left_out)
    }
}

/// Reorders `turns`' call indices after the calls were permuted: `order[new] = old`.
pub(crate) fn renumber(turns: &mut [Turn], order: &[usize]) {
    let mut new_of = vec![u32::MAX; order.len()];
    for (new, &old) in order.iter().enumerate() {
        if let (Some(slot), Ok(new)) = (new_of.get_mut(old), u32::try_from(new)) {
            *slot = new;
        }
    }
    for turn in turns {
        for call in &mut turn.calls {
            *call = new_of.get(*call as usize).copied().unwrap_or(u32::MAX);
        }
        turn.calls.retain(|c| *c != u32::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_one_message_are_one_turn_with_its_text_calls_and_time() {
        let mut log = TurnLog::default();
        log.event(Some("2026-01-01T00:00:00Z"));
        let tokens = TurnTokens {
            input: 5,
            output: 1,
            ..TurnTokens::default()
        };
        let a = log.reply(
            Some("m1"),
            "main",
            Some("2026-01-01T00:00:01Z"),
            Some(tokens),
        );
        log.text(a.unwrap(), "Let me look.");
        let b = log.reply(
            Some("m1"),
            "main",
            Some("2026-01-01T00:00:02.500Z"),
            Some(TurnTokens {
                output: 40,
                ..tokens
            }),
        );
        assert_eq!(a, b, "one message, one turn");
        log.call(b.unwrap(), 0);
        log.event(Some("2026-01-01T00:00:03Z"));
        let c = log.reply(Some("m2"), "main", Some("2026-01-01T00:00:04Z"), None);
        log.text(c.unwrap(), "Done.");
        let (turns, left_out) = log.finish();
        assert_eq!(left_out, 0);
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0].text.as_deref(), Some("Let me look."));
        assert_eq!(turns[0].calls, [0]);
        assert_eq!(turns[0].duration_ms, Some(2_500));
        assert_eq!(turns[0].tokens.map(|t| t.output), Some(40));
        assert_eq!(turns[1].duration_ms, Some(1_000));
    }

    #[test]
    fn turns_and_their_texts_are_bounded() {
        let mut log = TurnLog::default();
        for i in 0..(MAX_TURNS + 3) {
            if let Some(t) = log.reply(Some(&format!("m{i}")), "main", None, None) {
                log.text(t, &"x".repeat(10_000));
                log.text(t, &"y".repeat(10_000));
            }
        }
        let (turns, left_out) = log.finish();
        assert_eq!((turns.len(), left_out), (MAX_TURNS, 3));
        let text = turns[0].text.as_deref().unwrap();
        assert!(
            text.ends_with(&format!(
                "[truncated: {} more characters]",
                20_002 - TURN_TEXT_MAX
            )),
            "{}",
            &text[text.len() - 60..]
        );
    }

    #[test]
    fn renumbering_follows_a_permutation_of_the_calls() {
        let mut turns = vec![
            Turn {
                calls: vec![0, 2],
                ..Turn::default()
            },
            Turn {
                calls: vec![1, 7],
                ..Turn::default()
            },
        ];
        // New order: old 2, old 0, old 1.
        renumber(&mut turns, &[2, 0, 1]);
        assert_eq!(turns[0].calls, [1, 0]);
        assert_eq!(turns[1].calls, [2], "an index out of range is dropped");
    }
}
