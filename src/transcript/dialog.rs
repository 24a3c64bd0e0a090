//! The conversation of one run (issue 41): each question the agent asked its user, where
//! it came among the agent's tool calls, and the reply it got — scripted or simulated.
//!
//! The record is filled by the conversation channel of the run's agent (the ask tool
//! answered through the CLI's own protocol, or a plain-text question answered by a
//! follow-up turn); the conversation assertions (`asked`, `did_not_ask`, `user_turns`,
//! `elicited`) read it and nothing else. An agent without a channel leaves
//! [`Channel::None`], and every conversation assertion is then `error`, never a pass.

use serde::{Deserialize, Serialize};

/// One run's conversation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Dialog {
    /// How the agent's questions reached the user.
    pub channel: Channel,
    /// The questions, in the order they were asked, each with its reply.
    pub exchanges: Vec<Exchange>,
    /// Why the record lacks replies a user would have given (a question meant for a
    /// simulated user that could not answer): the assertions on replies (`user_turns`,
    /// `elicited`) are then `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// Why the record disagrees with what crossed aptitude's model gateway (a question
    /// the model asked that the record lacks, one it holds that the model never asked, a
    /// reply that never reached the model), or why nothing could be checked: every
    /// conversation assertion is then `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unwitnessed: Option<String>,
    /// What the simulated user's model calls used (tokens, cost in USD), summed: the
    /// run's simulated-user cost line, apart from the agent's. Absent when no such call
    /// was made (a scripted reply, a replay answered from the cassette).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulated_usage: Option<super::Usage>,
    /// The simulated user said its goal was met (`###STOP###`): the conversation ended.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub goal_met: bool,
}

/// How the agent's questions reach the user.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Channel {
    /// The agent's own ask tool (Claude Code's `AskUserQuestion`), answered through its
    /// protocol; `tool` is the tool's name as the agent calls it.
    AskTool {
        /// The ask tool's name.
        tool: String,
    },
    /// A question in the text at the end of a turn, answered by a follow-up turn in the
    /// same session.
    PlainText,
    /// No channel: the agent's questions reach nobody (`why` says which agent and why).
    None {
        /// Why nothing can answer, e.g. "opencode `run` denies its `question` tool".
        why: String,
    },
}

/// One question and its reply.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Exchange {
    /// The question as the agent asked it (an ask tool's questions joined by newlines).
    pub question: String,
    /// How many of the transcript's tool calls came before the question (so that the
    /// question comes before the call at that index).
    pub calls_before: usize,
    /// The question was asked in plain text at the end of a turn, on a channel that also
    /// carries an ask tool's (Codex's app server): it is not one of the tool's calls.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_text: bool,
    /// The user's reply; `None` when the user gave none (no script line matched and the
    /// user has no `goal:`, or `user.max_turns` was reached).
    pub reply: Option<Reply>,
}

/// A reply of the user.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Reply {
    /// The text sent to the agent.
    pub text: String,
    /// Where it came from.
    pub source: ReplySource,
}

/// Where a reply came from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReplySource {
    /// A `script:` line of the test (its 1-based line in the test file).
    Scripted {
        /// The script item's line.
        line: u32,
    },
    /// The simulated user (a model call through the gateway).
    Simulated,
}

impl Dialog {
    /// The user's replies, in order.
    pub fn replies(&self) -> impl Iterator<Item = &Reply> {
        self.exchanges.iter().filter_map(|e| e.reply.as_ref())
    }
}
