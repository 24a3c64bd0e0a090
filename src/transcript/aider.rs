//! Aider transcripts: its chat history (`.aider.chat.history.md`), as written by
//! `aider-chat` 0.86.2.
//!
//! Aider has no tool calls and no machine-readable output. Its history is Markdown:
//! `# aider chat started at <time>` opens a run; `> ` lines are aider's own output
//! (`> Aider v0.86.2`, `> Model: M with diff edit format`, `> Tokens: 2.3k sent, 41
//! received. Cost: $0.01 message, $0.02 session.`, `> Applied edit to out.txt`, `> Run
//! shell command? … n`); `#### ` lines are the user's prompt; everything else is the
//! model's reply, whose edits are SEARCH/REPLACE blocks:
//!
//! ````text
//! out.txt
//! ```
//! <<<<<<< SEARCH
//! =======
//! hello
//! >>>>>>> REPLACE
//! ```
//! ````
//!
//! Each block aider **applied** (a later `> Applied edit to <path>`) becomes a call: `Write
//! {file_path, content}` when its SEARCH part is empty (a new file), else `Edit {file_path,
//! old_string, new_string}`. Blocks it did not apply are not calls. Aider runs no shell
//! command headless (it asks, and `--yes-always` does not answer yes), so the transcript
//! says it records only `Edit` and `Write` ([`super::Transcript::records_only`]).

use super::builder::{Builder, Parts, ToolResult};
use super::{Format, Outcome, RecordsOnly, Transcript, Usage};
use crate::spec::tools::Vocabulary;

/// The first line of every aider chat history run.
pub(crate) const RUN_HEADER: &str = "# aider chat started at";

/// Unapplied SEARCH/REPLACE blocks kept per reply (waiting for `Applied edit to`), and the
/// bytes of reply text kept for the answer: a hostile history can not grow memory beyond
/// the calls it makes.
const MAX_PENDING_BLOCKS: usize = 256;
const MAX_REPLY_BYTES: usize = 1024 * 1024;

struct Block {
    path: String,
    search: Vec<String>,
    replace: Vec<String>,
}

enum State {
    Text,
    Search(Block),
    Replace(Block),
}

/// Aider's chat history, line by line.
pub(crate) struct AiderParser {
    b: Builder,
    state: State,
    /// The last two lines of reply text (a block's path precedes its fence).
    previous: [Option<String>; 2],
    pending: Vec<Block>,
    calls: u32,
    runs: u32,
    agent_version: Option<String>,
    model: Option<String>,
    usage: Usage,
    reply: Vec<String>,
    reply_bytes: usize,
    reply_cut: bool,
    final_text: Option<String>,
    prompts: u32,
    replies: u32,
    error: Option<String>,
}

impl AiderParser {
    pub(crate) fn new() -> Self {
        AiderParser {
            b: Builder::default().with_vocabulary(Vocabulary::Aider),
            state: State::Text,
            previous: [None, None],
            pending: Vec::new(),
            calls: 0,
            runs: 0,
            agent_version: None,
            model: None,
            usage: Usage::default(),
            reply: Vec::new(),
            reply_bytes: 0,
            reply_cut: false,
            final_text: None,
            prompts: 0,
            replies: 0,
            error: None,
        }
    }

    /// Ends the reply being read: its text is the answer so far.
    fn close_reply(&mut self) {
        let mut text = self.reply.join("\n").trim().to_owned();
        if self.reply_cut {
            text.push_str("\n… [reply truncated]");
        }
        self.reply.clear();
        self.reply_bytes = 0;
        self.reply_cut = false;
        if !text.is_empty() {
            self.replies = self.replies.saturating_add(1);
            self.final_text = Some(text);
            self.error = None;
        }
    }

    fn applied(&mut self, path: &str) {
        let Some(i) = self.pending.iter().position(|b| b.path == path) else {
            return;
        };
        let block = self.pending.remove(i);
        self.calls = self.calls.saturating_add(1);
        let id = format!("aider-edit-{}", self.calls);
        let (name, input) = if block.search.iter().all(|l| l.trim().is_empty()) {
            (
                "Write",
                serde_json::json!({"file_path": block.path, "content": lines(&block.replace)}),
            )
        } else {
            (
                "Edit",
                serde_json::json!({
                    "file_path": block.path,
                    "old_string": lines(&block.search),
                    "new_string": lines(&block.replace),
                }),
            )
        };
        self.b.call(&id, name, || input, None, None);
        self.b.result(
            &id,
            ToolResult {
                output: format!("Applied edit to {path}"),
                ..ToolResult::default()
            },
        );
    }

    fn aider_line(&mut self, text: &str) {
        if let Some(v) = text.strip_prefix("Aider v") {
            self.agent_version = Some(format!("aider {}", v.trim()));
        } else if let Some(m) = text.strip_prefix("Model: ") {
            self.model = Some(m.split(" with ").next().unwrap_or(m).trim().to_owned());
        } else if let Some(path) = text.strip_prefix("Applied edit to ") {
            self.applied(path.trim());
        } else if let Some(rest) = text.strip_prefix("Tokens: ") {
            self.tokens(rest);
        } else if text.contains("litellm.") && text.contains("Error") {
            self.error = Some(text.to_owned());
        }
    }

    /// `2.3k sent, 41 received. Cost: $0.01 message, $0.02 session.`
    fn tokens(&mut self, rest: &str) {
        let mut usage = Usage::default();
        for part in rest
            .split(',')
            .flat_map(|p| p.split(". "))
            .map(|p| p.trim().trim_end_matches('.'))
        {
            if let Some(n) = part.strip_suffix(" sent") {
                usage.input_tokens = count(n);
            } else if let Some(n) = part.strip_suffix(" received") {
                usage.output_tokens = count(n);
            }
        }
        if let Some((_, cost)) = rest.split_once("Cost: $") {
            usage.cost_usd = cost
                .split_whitespace()
                .next()
                .and_then(|c| c.parse::<f64>().ok());
        }
        usage.turns = Some(1);
        self.usage.add(&usage);
    }

    /// Keeps a line of reply text, up to [`MAX_REPLY_BYTES`].
    fn keep(&mut self, line: &str) {
        if self.reply_bytes.saturating_add(line.len()) > MAX_REPLY_BYTES {
            self.reply_cut = true;
            return;
        }
        self.reply_bytes += line.len() + 1;
        self.reply.push(line.to_owned());
    }

    /// The calls recorded so far.
    pub(crate) fn calls(&self) -> &[super::ToolCall] {
        self.b.calls()
    }

    /// Consumes one line of the history (without its line break).
    pub(crate) fn line(&mut self, raw: &str) {
        let line = raw.trim_end();
        if !matches!(self.state, State::Text) {
            self.keep(line);
        }
        match std::mem::replace(&mut self.state, State::Text) {
            State::Search(mut block) => {
                if line == "=======" {
                    self.state = State::Replace(block);
                } else {
                    block.search.push(raw.to_owned());
                    self.state = State::Search(block);
                }
                return;
            }
            State::Replace(mut block) => {
                if line.starts_with(">>>>>>> REPLACE") {
                    if self.pending.len() >= MAX_PENDING_BLOCKS {
                        self.pending.remove(0);
                        self.b.warn_lost(
                            0,
                            "more unapplied SEARCH/REPLACE blocks in one reply than are kept; the oldest was dropped",
                        );
                    }
                    self.pending.push(block);
                } else {
                    block.replace.push(raw.to_owned());
                    self.state = State::Replace(block);
                }
                return;
            }
            State::Text => {}
        }
        if line.starts_with(RUN_HEADER) {
            self.close_reply();
            self.runs = self.runs.saturating_add(1);
        } else if let Some(text) = line.strip_prefix("> ").or(line.strip_prefix('>')) {
            self.close_reply();
            self.aider_line(text.trim());
        } else if line.starts_with("#### ") {
            self.close_reply();
            self.pending.clear();
            self.prompts = self.prompts.saturating_add(1);
            self.final_text = None;
        } else if line.starts_with("<<<<<<< SEARCH") {
            // The path is the line before the opening fence (or before this line).
            let path = match &self.previous {
                [Some(before), Some(fence)] if fence.starts_with("```") => before.clone(),
                [_, Some(prev)] if !prev.starts_with("```") => prev.clone(),
                _ => String::new(),
            };
            self.keep(line);
            self.state = State::Search(Block {
                path: path.trim().to_owned(),
                search: Vec::new(),
                replace: Vec::new(),
            });
        } else {
            self.keep(line);
        }
        if !line.trim().is_empty() {
            self.previous = [self.previous[1].take(), Some(line.trim().to_owned())];
        }
    }

    /// The transcript of the history read so far.
    pub(crate) fn finish(mut self) -> Transcript {
        self.close_reply();
        let outcome = if let Some(message) = self.error.take() {
            Outcome::ApiError {
                message,
                http_status: None,
            }
        } else if self.prompts > 0 && self.replies == 0 {
            Outcome::Incomplete {
                message: "the history has the prompt but no reply of the model".into(),
            }
        } else {
            Outcome::Completed
        };
        let mut t = self.b.into_transcript(Parts {
            format: Format::AiderChat,
            session_id: None,
            agent_version: self.agent_version,
            model: self.model,
            final_text: self.final_text,
            usage: self.usage,
            outcome,
            runs: self.runs.max(1),
        });
        t.records_only = Some(RecordsOnly::aider());
        t
    }
}

/// Lines joined back into text, with the final line break a file would have.
fn lines(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    if !s.is_empty() {
        s.push('\n');
    }
    s
}

/// `2.3k` → 2300, `41` → 41, `1.2M` → 1 200 000 (aider rounds what it shows).
fn count(text: &str) -> u64 {
    let text = text.trim();
    let (number, scale) = match text.chars().last() {
        Some('k') => (&text[..text.len() - 1], 1e3),
        Some('M') => (&text[..text.len() - 1], 1e6),
        _ => (text, 1.0),
    };
    number
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.0)
        .map_or(0, |n| (n * scale).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unapplied_blocks_and_reply_text_are_bounded() {
        let mut p = AiderParser::new();
        p.line("#### go");
        for i in 0..(MAX_PENDING_BLOCKS + 3) {
            for line in [
                format!("f{i}.txt"),
                "```".into(),
                "<<<<<<< SEARCH".into(),
                "=======".into(),
                "x".repeat(10_000),
                ">>>>>>> REPLACE".into(),
                "```".into(),
            ] {
                p.line(&line);
            }
        }
        assert_eq!(p.pending.len(), MAX_PENDING_BLOCKS);
        p.line("> Applied edit to f0.txt");
        p.line(&format!(
            "> Applied edit to f{}.txt",
            MAX_PENDING_BLOCKS + 2
        ));
        let t = p.finish();
        assert_eq!(t.tool_calls.len(), 1, "the oldest blocks were dropped");
        assert_eq!(t.lost.lines, 3);
        let text = t.final_text.unwrap_or_default();
        assert!(text.len() <= MAX_REPLY_BYTES + 100 && text.ends_with("[reply truncated]"));
    }

    #[test]
    fn token_counts_are_read_with_their_suffix() {
        assert_eq!(count("2.3k"), 2300);
        assert_eq!(count("41"), 41);
        assert_eq!(count("1.5M"), 1_500_000);
        assert_eq!(count("-3"), 0);
        assert_eq!(count("lots"), 0);
    }
}
