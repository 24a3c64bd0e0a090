//! A run's conversation (issue 41): the test's `user:` answering the agent's questions
//! while it runs, through its CLI's channel, and the record of it ([`Dialog`]).
//!
//! The user is the same for every agent ([`Conversation`]: the script tried first, the
//! reply limit, the record); what differs per CLI is how a question arrives and how the
//! reply goes back ([`AskChannel`], implemented beside each adapter: Claude Code's in
//! `claude.rs`). An agent without a channel gets a record that says so
//! ([`Conversation::no_channel`]), and every conversation assertion is then `error`.

use std::sync::Arc;

use crate::spec::user::User;
use crate::transcript::dialog::{Channel, Dialog, Exchange, Reply, ReplySource};

/// What a channel writes back after one line of the agent's stdout.
#[derive(Debug, Default)]
pub struct Feed {
    /// Bytes for the agent's stdin (a whole message, newline included).
    pub write: Option<Vec<u8>>,
    /// The session is over: stdin is closed (a stream-json agent then exits).
    pub close: bool,
}

/// A CLI's channel for its questions: what starts the session on stdin, and how each
/// stdout line is answered.
pub trait AskChannel: Send {
    /// The first message written to stdin (the prompt), when the CLI reads it there.
    fn opening(&mut self, prompt: &str) -> Vec<u8>;
    /// Reads one line of the agent's stdout; a question in it is put to `talk`.
    fn line(&mut self, line: &str, talk: &mut Conversation) -> Feed;
    /// How the questions travel, for the record.
    fn channel(&self) -> Channel;
}

/// The question at the end of an agent's final text: its last paragraph, when that holds
/// a `?` (a plain-text question, as Codex and Gemini CLI ask headless); `None` when the
/// turn ended otherwise.
pub fn question_in(final_text: &str) -> Option<&str> {
    let last = final_text
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .last()?;
    last.contains('?').then_some(last)
}

/// The user of one run, and the record of what was asked and replied.
#[derive(Debug)]
pub struct Conversation {
    user: Arc<User>,
    dialog: Dialog,
}

impl Conversation {
    /// A conversation with `user` over `channel`, nothing asked yet.
    pub fn new(user: Arc<User>, channel: Channel) -> Self {
        Conversation {
            user,
            dialog: Dialog {
                channel,
                exchanges: Vec::new(),
                incomplete: None,
                unwitnessed: None,
            },
        }
    }

    /// The record of a run whose agent has no channel for its questions (`why`).
    pub fn no_channel(why: String) -> Dialog {
        Dialog {
            channel: Channel::None { why },
            exchanges: Vec::new(),
            incomplete: None,
            unwitnessed: None,
        }
    }

    /// The reply to `question`, asked after `calls_before` tool calls, recorded: the first
    /// script line that matches, while the user has replies left; `None` otherwise (the
    /// agent is then told that the user gave no answer).
    pub fn ask(&mut self, question: &str, calls_before: usize) -> Option<String> {
        let replies = self.dialog.replies().count() as u32;
        let reply = if replies >= self.user.max_turns {
            None
        } else {
            match self.user.scripted(question) {
                Some(line) => Some(Reply {
                    text: line.say.clone(),
                    source: ReplySource::Scripted { line: line.line },
                }),
                None => {
                    if self.user.goal.is_some() && self.dialog.incomplete.is_none() {
                        // A question for the simulated user, which is not built yet: the
                        // replies it would have given are missing from the record.
                        self.dialog.incomplete = Some(
                            "a question no script line matched was left unanswered: the \
                             simulated user (`goal:`) does not answer yet"
                                .to_owned(),
                        );
                    }
                    None
                }
            }
        };
        let text = reply.as_ref().map(|r| r.text.clone());
        self.dialog.exchanges.push(Exchange {
            question: question.to_owned(),
            calls_before,
            reply,
        });
        text
    }

    /// Whether the user may still reply.
    pub fn has_replies_left(&self) -> bool {
        (self.dialog.replies().count() as u32) < self.user.max_turns
    }

    /// The record.
    pub fn finish(self) -> Dialog {
        self.dialog
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::user::ScriptLine;
    use std::collections::BTreeMap;

    fn user(goal: Option<&str>, max_turns: u32) -> Arc<User> {
        Arc::new(User {
            persona: None,
            goal: goal.map(str::to_owned),
            knows: BTreeMap::new(),
            script: vec![ScriptLine {
                when: regex::Regex::new("(?i)sides").unwrap(),
                say: "Six.".into(),
                line: 7,
            }],
            max_turns,
        })
    }

    #[test]
    fn a_script_line_answers_until_the_reply_limit() {
        let mut talk = Conversation::new(user(None, 1), Channel::PlainText);
        assert_eq!(talk.ask("How many sides?", 0).as_deref(), Some("Six."));
        assert_eq!(talk.ask("Sides again?", 2), None, "past max_turns");
        assert_eq!(talk.ask("Which name?", 2), None, "no line matches");
        let dialog = talk.finish();
        assert_eq!(dialog.exchanges.len(), 3);
        assert_eq!(
            dialog.exchanges[0].reply.as_ref().map(|r| &r.source),
            Some(&ReplySource::Scripted { line: 7 })
        );
        assert!(
            dialog.incomplete.is_none(),
            "a script-only user is complete"
        );
    }

    #[test]
    fn a_plain_text_question_is_the_last_paragraph_with_a_question_mark() {
        assert_eq!(
            question_in("I looked at the CLI.\n\nHow many sides should the die have?\n"),
            Some("How many sides should the die have?")
        );
        assert_eq!(question_in("Is it done? Yes.\n\nDone."), None);
        assert_eq!(question_in(""), None);
    }

    #[test]
    fn a_question_for_the_simulated_user_marks_the_record_incomplete() {
        let mut talk = Conversation::new(user(Some("a die"), 4), Channel::PlainText);
        assert_eq!(talk.ask("Which name?", 0), None);
        assert!(talk.finish().incomplete.is_some());
    }
}
