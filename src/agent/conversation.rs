//! A run's conversation (issue 41): the test's `user:` answering the agent's questions
//! while it runs, through its CLI's channel, and the record of it ([`Dialog`]).
//!
//! The user is the same for every agent ([`Conversation`]: the script tried first, the
//! reply limit, the record); what differs per CLI is how a question arrives and how the
//! reply goes back ([`AskChannel`], implemented beside each adapter: Claude Code's in
//! `claude.rs`). An agent without a channel gets a record that says so
//! ([`Conversation::no_channel`]), and every conversation assertion is then `error`.

use std::sync::Arc;

use crate::gateway::cassette::UserReply;
use crate::spec::user::{STOP_TOKEN, User};
use crate::transcript::Usage;
use crate::transcript::dialog::{Channel, Dialog, Exchange, Reply, ReplySource};

/// What a channel writes back after one line of the agent's stdout.
#[derive(Debug, Default)]
pub struct Feed {
    /// Bytes for the agent's stdin (a whole message, newline included).
    pub write: Option<Vec<u8>>,
    /// Questions the agent asked in this line, to be put to the user; their answer is
    /// written to stdin when the user has replied (a model call may take seconds).
    pub ask: Option<Ask>,
    /// The session is over: stdin is closed (a stream-json agent then exits).
    pub close: bool,
}

/// Questions an agent asked at once (Claude Code's `AskUserQuestion` holds 1 to 4), and
/// how the channel answers them. The executor puts each question to the user in order
/// ([`Conversation::next`]; the simulated user's model call is awaited while the agent's
/// stdout is still read) and writes `respond(replies)` to the agent's stdin.
pub struct Ask {
    /// The questions, in the agent's order.
    pub questions: Vec<String>,
    /// Where they came among the agent's tool calls, and how.
    pub at: At,
    /// The message for stdin (a whole line) given each question's reply (`None`: no
    /// reply); `None`: nothing more to say, stdin is closed (the agent ends its session).
    pub respond: Respond,
}

/// How a channel turns the replies to an [`Ask`]'s questions (in order; `None`: no
/// reply) into the message for the agent's stdin, or `None` to close it.
pub type Respond = Box<dyn FnOnce(&[Option<String>]) -> Option<Vec<u8>> + Send>;

/// Where a question came in a run: after how many of its tool calls, and whether in the
/// text at the end of a turn rather than through an ask tool (a channel may carry both:
/// Codex's app server).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct At {
    /// How many tool calls the agent made before the question.
    pub calls_before: usize,
    /// Asked in plain text at the end of a turn.
    pub in_text: bool,
}

impl At {
    /// A question of an ask tool's call, after `calls_before` calls.
    pub fn call(calls_before: usize) -> Self {
        At {
            calls_before,
            in_text: false,
        }
    }

    /// A plain-text question at the end of a turn, after `calls_before` calls.
    pub fn text(calls_before: usize) -> Self {
        At {
            calls_before,
            in_text: true,
        }
    }
}

impl std::fmt::Debug for Ask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ask")
            .field("questions", &self.questions)
            .field("at", &self.at)
            .finish_non_exhaustive()
    }
}

/// A CLI's channel for its questions: what starts the session on stdin, and how each
/// stdout line is answered.
pub trait AskChannel: Send {
    /// The first message written to stdin (the prompt), when the CLI reads it there.
    fn opening(&mut self, prompt: &str) -> Vec<u8>;
    /// Reads one line of the agent's stdout: what to write back at once, and the
    /// questions in it ([`Feed::ask`]).
    fn line(&mut self, line: &str) -> Feed;
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

/// How long one model call of the simulated user may take (within what is left of the
/// test's `timeout`).
pub const SIMULATED_USER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// What answers a question, before any reply is recorded ([`Conversation::next`]).
#[derive(Debug)]
pub enum Next {
    /// A `script:` line.
    Scripted(Reply),
    /// The simulated user: a model call with this prompt ([`User::simulator_prompt`]), or,
    /// in a replay, the cassette's reply ([`Conversation::replayed`]).
    Simulate {
        /// The simulated user's prompt.
        prompt: String,
    },
    /// Nobody: the user has no replies left, or no line matches and there is no `goal:`.
    Nothing,
}

/// Why the simulated user gave no reply ([`Conversation::simulated`]); the record says
/// `the simulated user could not answer: ` and this.
#[derive(Debug, thiserror::Error)]
pub enum NoReply {
    /// A replay whose cassette holds no reply to the question ([`Conversation::replayed`]).
    #[error("the cassette holds no reply of the simulated user to this question")]
    NotInCassette,
    /// Its model call failed, timed out or was refused.
    #[error(transparent)]
    Call(#[from] super::AgentError),
}

/// The user of one run, and the record of what was asked and replied.
#[derive(Debug)]
pub struct Conversation {
    user: Arc<User>,
    dialog: Dialog,
    /// In a replay, the simulated user's replies the cassette holds, not yet given.
    recorded: Option<Vec<UserReply>>,
    /// The simulated user's replies given in this run, for the run's cassette.
    kept: Vec<UserReply>,
    /// The question the simulated user is being asked (its model call not yet returned),
    /// with the calls before it: a run that ends meanwhile records it unanswered.
    waiting: Option<(String, At)>,
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
                simulated_usage: None,
                goal_met: false,
            },
            recorded: None,
            kept: Vec::new(),
            waiting: None,
        }
    }

    /// The conversation of a replayed run: the simulated user answers from `recorded`
    /// (the cassette's replies), never from the model.
    pub fn replaying(mut self, recorded: Vec<UserReply>) -> Self {
        self.recorded = Some(recorded);
        self
    }

    /// The record of a run whose agent has no channel for its questions (`why`).
    pub fn no_channel(why: String) -> Dialog {
        Dialog {
            channel: Channel::None { why },
            exchanges: Vec::new(),
            incomplete: None,
            unwitnessed: None,
            simulated_usage: None,
            goal_met: false,
        }
    }

    /// What answers `question`: the first script line that matches, while the user has
    /// replies left; else the simulated user when the test has a `goal:`; else nobody.
    pub fn next(&self, question: &str) -> Next {
        if !self.has_replies_left() {
            return Next::Nothing;
        }
        if let Some(line) = self.user.scripted(question) {
            return Next::Scripted(Reply {
                text: line.say.clone(),
                source: ReplySource::Scripted { line: line.line },
            });
        }
        if self.user.goal.is_none() {
            return Next::Nothing;
        }
        let before: Vec<(&str, &str)> = self
            .dialog
            .exchanges
            .iter()
            .filter_map(|e| Some((e.question.as_str(), e.reply.as_ref()?.text.as_str())))
            .collect();
        Next::Simulate {
            prompt: self.user.simulator_prompt(&before, question),
        }
    }

    /// In a replay, the cassette's reply of the simulated user to `question` (the first
    /// not yet given that was a reply to the same question), or
    /// [`NoReply::NotInCassette`]; `None` when the run is not a replay (the model is asked).
    pub fn replayed(&mut self, question: &str) -> Option<Result<String, NoReply>> {
        let recorded = self.recorded.as_mut()?;
        Some(match recorded.iter().position(|r| r.question == question) {
            Some(i) => Ok(recorded.remove(i).reply),
            None => Err(NoReply::NotInCassette),
        })
    }

    /// Records `question`, asked `at` (after how many tool calls, and how), with `reply`
    /// (`None`: the agent is told that the user gave no answer), and returns the reply's
    /// text.
    pub fn record(&mut self, question: &str, at: At, reply: Option<Reply>) -> Option<String> {
        let text = reply.as_ref().map(|r| r.text.clone());
        self.dialog.exchanges.push(Exchange {
            question: question.to_owned(),
            calls_before: at.calls_before,
            in_text: at.in_text,
            reply,
        });
        text
    }

    /// Records the simulated user's answer to `question`: the model's reply and what its
    /// call used, or why there is none (the record is then incomplete, and the assertions
    /// on replies `error`). A reply holding [`STOP_TOKEN`] ends the conversation (the goal
    /// is met); what it says besides the token is still sent. Returns the text to send.
    pub fn simulated(
        &mut self,
        question: &str,
        at: At,
        outcome: Result<(String, Option<Usage>), NoReply>,
    ) -> Option<String> {
        self.waiting = None;
        let reply = match outcome {
            Ok((raw, usage)) => {
                if let Some(usage) = usage {
                    self.dialog
                        .simulated_usage
                        .get_or_insert_with(Usage::default)
                        .add(&usage);
                }
                self.kept.push(UserReply {
                    question: question.to_owned(),
                    reply: raw.clone(),
                });
                let said = raw.replace(STOP_TOKEN, "").trim().to_owned();
                if raw.contains(STOP_TOKEN) {
                    self.dialog.goal_met = true;
                } else if said.is_empty() {
                    self.incomplete("the simulated user's reply was empty".to_owned());
                }
                (!said.is_empty()).then_some(Reply {
                    text: said,
                    source: ReplySource::Simulated,
                })
            }
            Err(why) => {
                self.incomplete(format!("the simulated user could not answer: {why}"));
                None
            }
        };
        self.record(question, at, reply)
    }

    fn incomplete(&mut self, why: String) {
        self.dialog.incomplete.get_or_insert(why);
    }

    /// Notes that the simulated user is being asked `question` (asked `at`): until
    /// [`Self::simulated`] records its answer, a run that ends ([`Self::finish`]) records
    /// it unanswered and the record incomplete.
    pub fn waiting_for(&mut self, question: &str, at: At) {
        self.waiting = Some((question.to_owned(), at));
    }

    /// Whether the user may still reply: replies left and the goal not met.
    pub fn has_replies_left(&self) -> bool {
        (self.dialog.replies().count() as u32) < self.user.max_turns && !self.dialog.goal_met
    }

    /// The record.
    pub fn finish(self) -> Dialog {
        self.finish_with_replies().0
    }

    /// The record, and the simulated user's replies for the run's cassette. A question
    /// the simulated user was still being asked is recorded unanswered (the run ended
    /// first: its timeout, an interruption, or the agent's exit).
    pub fn finish_with_replies(mut self) -> (Dialog, Vec<UserReply>) {
        if let Some((question, at)) = self.waiting.take() {
            self.incomplete(
                "the run ended while the simulated user was being asked a question".to_owned(),
            );
            self.record(&question, at, None);
        }
        (self.dialog, self.kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentError;
    use crate::spec::user::ScriptLine;
    use std::collections::BTreeMap;

    /// The executor's answer to `question` with no model: the script, else the cassette's
    /// reply (a question the cassette lacks is a failed call).
    fn ask(talk: &mut Conversation, question: &str, calls: usize) -> Option<String> {
        let calls = At::text(calls);
        match talk.next(question) {
            Next::Scripted(reply) => talk.record(question, calls, Some(reply)),
            Next::Nothing => talk.record(question, calls, None),
            Next::Simulate { .. } => {
                let outcome = talk.replayed(question).unwrap_or_else(|| {
                    Err(AgentError::Grade("no model in this test".into()).into())
                });
                talk.simulated(question, calls, outcome.map(|r| (r, None)))
            }
        }
    }

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
        assert_eq!(
            ask(&mut talk, "How many sides?", 0).as_deref(),
            Some("Six.")
        );
        assert_eq!(ask(&mut talk, "Sides again?", 2), None, "past max_turns");
        assert_eq!(ask(&mut talk, "Which name?", 2), None, "no line matches");
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
    fn a_run_that_ends_while_the_simulated_user_is_asked_records_the_question_unanswered() {
        let mut talk = Conversation::new(user(Some("a die"), 4), Channel::PlainText);
        talk.waiting_for("Which name?", At::text(2));
        let dialog = talk.finish();
        assert_eq!(dialog.exchanges.len(), 1);
        assert_eq!(dialog.exchanges[0].calls_before, 2);
        assert!(dialog.exchanges[0].reply.is_none());
        let why = dialog.incomplete.unwrap();
        assert!(
            why.contains("while the simulated user was being asked"),
            "{why}"
        );

        let mut talk = Conversation::new(user(Some("a die"), 4), Channel::PlainText);
        talk.waiting_for("Which name?", At::text(0));
        talk.simulated("Which name?", At::text(0), Ok(("roll".into(), None)));
        let dialog = talk.finish();
        assert_eq!(
            dialog.exchanges.len(),
            1,
            "an answered question is recorded once"
        );
        assert!(dialog.incomplete.is_none());
    }

    #[test]
    fn the_simulated_user_answers_what_the_script_does_not_and_its_cost_is_kept() {
        let mut talk = Conversation::new(user(Some("a die"), 4), Channel::PlainText);
        let Next::Simulate { prompt } = talk.next("Which name?") else {
            panic!("the simulated user answers");
        };
        assert!(prompt.contains("a die") && prompt.contains("Which name?"));
        let usage = Usage {
            output_tokens: 5,
            cost_usd: Some(0.01),
            ..Usage::default()
        };
        let sent = talk.simulated(
            "Which name?",
            At::text(1),
            Ok(("Call it roll.".into(), Some(usage))),
        );
        assert_eq!(sent.as_deref(), Some("Call it roll."));
        assert!(matches!(talk.next("How many sides?"), Next::Scripted(_)));
        let (dialog, kept) = talk.finish_with_replies();
        assert_eq!(
            dialog.exchanges[0].reply.as_ref().map(|r| &r.source),
            Some(&ReplySource::Simulated)
        );
        assert_eq!(dialog.simulated_usage.and_then(|u| u.cost_usd), Some(0.01));
        assert_eq!(kept[0].reply, "Call it roll.");
        assert!(dialog.incomplete.is_none());
    }

    #[test]
    fn the_stop_token_ends_the_conversation_and_a_failed_call_is_incomplete() {
        let mut talk = Conversation::new(user(Some("a die"), 4), Channel::PlainText);
        let sent = talk.simulated(
            "Anything else?",
            At::default(),
            Ok((STOP_TOKEN.to_owned(), None)),
        );
        assert_eq!(sent, None, "the token alone is no reply");
        assert!(!talk.has_replies_left(), "the goal is met");
        let dialog = talk.finish();
        assert!(dialog.goal_met && dialog.incomplete.is_none());

        let mut talk = Conversation::new(user(Some("a die"), 4), Channel::PlainText);
        assert_eq!(
            talk.simulated(
                "Which?",
                At::default(),
                Err(AgentError::Grade("timed out".into()).into())
            ),
            None
        );
        let why = talk.finish().incomplete.unwrap();
        assert!(why.contains("timed out"), "{why}");
    }

    #[test]
    fn a_replay_answers_from_the_cassette_and_never_from_the_model() {
        let recorded = vec![UserReply {
            question: "Which name?".into(),
            reply: "roll".into(),
        }];
        let mut talk =
            Conversation::new(user(Some("a die"), 4), Channel::PlainText).replaying(recorded);
        assert_eq!(ask(&mut talk, "Which name?", 0).as_deref(), Some("roll"));
        assert_eq!(
            ask(&mut talk, "Which colour?", 0),
            None,
            "not in the cassette"
        );
        let dialog = talk.finish();
        assert!(
            dialog
                .incomplete
                .unwrap()
                .contains("cassette holds no reply")
        );
    }
}
