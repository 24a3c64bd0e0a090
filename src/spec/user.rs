//! A test's simulated user (`user:`) and the conversation assertions about it (`asked`,
//! `did_not_ask`, `user_turns`, `elicited`): the spec side of a conversation (issue 41).
//!
//! A good agent asks before it guesses. `user:` gives its questions someone to answer:
//! a script of deterministic replies, tried first, and (with a `goal:`) a simulated user
//! for the questions no line of the script matches. The user is what answers; what the
//! agent asked is read from the record of the run, never from the agent's word.

use std::collections::BTreeMap;

use regex::Regex;

use super::pattern::NameMatcher;

/// The most replies a user may give when `user.max_turns` is not set.
pub const DEFAULT_USER_TURNS: u32 = 4;

/// The most replies `user.max_turns` may allow: each one is a turn of the agent more.
pub const MAX_USER_TURNS: u32 = 20;

/// `user:` — who answers the agent's questions (see `docs/conversations.md`).
#[derive(Debug, Clone)]
pub struct User {
    /// `persona:` — how the user speaks and what they do not do ("terse; never reads
    /// code"); shown to the simulated user only.
    pub persona: Option<String>,
    /// `goal:` — what the user wants, for a simulated user (a model call, see
    /// [`User::simulator_prompt`]) that answers a question no script line matches.
    /// Without `goal:`, such a question gets no answer and the conversation ends.
    pub goal: Option<String>,
    /// `knows:` — facts revealed only when asked, by name (`sides` → `6`). The simulated
    /// user sees them; the judge never does. A fact counts as revealed ([`User::revealed`])
    /// when its value is in one of the user's replies.
    pub knows: BTreeMap<String, String>,
    /// `script:` — deterministic replies, tried in file order before any model.
    pub script: Vec<ScriptLine>,
    /// `max_turns:` — the most replies the user gives (default [`DEFAULT_USER_TURNS`]);
    /// a question past it gets no answer and the conversation ends.
    pub max_turns: u32,
}

/// What the simulated user says, alone or at the end of a reply, when the goal is met:
/// the conversation then ends (τ²-bench's user simulator ends a dialog the same way).
pub const STOP_TOKEN: &str = "###STOP###";

/// One line of `script:`: `{when: REGEX, say: TEXT}`.
#[derive(Debug, Clone)]
pub struct ScriptLine {
    /// Matched against the agent's question, ignoring case, anywhere in it.
    pub when: Regex,
    /// The reply, sent as written.
    pub say: String,
    /// 1-based line of the script item in the test file, shown beside a scripted reply.
    pub line: u32,
}

impl User {
    /// The script line that answers `question`: the first whose `when` matches.
    pub fn scripted(&self, question: &str) -> Option<&ScriptLine> {
        self.script.iter().find(|l| l.when.is_match(question))
    }

    /// Whether every reply comes from the script: with no `goal:` no model is ever called.
    pub fn script_only(&self) -> bool {
        self.goal.is_none()
    }

    /// The prompt of the simulated user's model call for `question`, after the exchanges
    /// `before` (question, reply) of the same run: the persona, the goal and the `knows:`
    /// facts, never the test's assertions, the workspace or the agent's tool calls. The
    /// model is told to answer as the user in plain text, to reveal a fact only when the
    /// question asks for it, and to answer [`STOP_TOKEN`] when the goal is met.
    pub fn simulator_prompt(&self, before: &[(&str, &str)], question: &str) -> String {
        let mut p = String::from(
            "You play the user of an AI coding agent. The agent is working on your request and \
             has asked you a question. Reply as that user would, in one or two plain sentences, \
             without code and without tools. Reveal one of your facts only when the question \
             asks for it; if you do not know the answer, say so. If the question shows that \
             your goal is met and nothing more is needed, reply with ",
        );
        p.push_str(STOP_TOKEN);
        p.push_str(" alone.\n\n");
        if let Some(persona) = &self.persona {
            p.push_str(&format!("Who you are: {persona}\n"));
        }
        if let Some(goal) = &self.goal {
            p.push_str(&format!("Your goal: {goal}\n"));
        }
        if !self.knows.is_empty() {
            p.push_str("Facts you know (reveal only when asked):\n");
            for (name, value) in &self.knows {
                p.push_str(&format!("- {name}: {value}\n"));
            }
        }
        for (q, r) in before {
            p.push_str(&format!("\nThe agent asked: {q}\nYou replied: {r}\n"));
        }
        p.push_str(&format!(
            "\nThe agent now asks:\n<question>\n{question}\n</question>\n\nYour reply:"
        ));
        p
    }

    /// The names of the `knows:` facts whose value one of `replies` holds (ignoring case),
    /// in name order.
    pub fn revealed<'a>(&'a self, replies: &[&str]) -> Vec<&'a str> {
        let replies: Vec<String> = replies.iter().map(|r| r.to_lowercase()).collect();
        self.knows
            .iter()
            .filter(|(_, value)| {
                let value = value.trim().to_lowercase();
                !value.is_empty() && replies.iter().any(|r| r.contains(&value))
            })
            .map(|(name, _)| name.as_str())
            .collect()
    }
}

/// A conversation assertion: about the questions the agent asked and the user's replies.
#[derive(Debug, Clone)]
pub enum ConversationAssertion {
    /// `asked: {about: REGEX, before: [tools]}` — some question matched `about` (ignoring
    /// case), and, with `before:`, the first such question came before the first call of
    /// any of those tools.
    Asked {
        /// Matched against each question's text.
        about: Regex,
        /// Tools the question must come before (none: no order is checked).
        before: Vec<NameMatcher>,
    },
    /// `did_not_ask: {about: REGEX}` — no question matched `about`.
    DidNotAsk {
        /// Matched against each question's text.
        about: Regex,
    },
    /// `user_turns: {min, max}` — how many replies the user gave (the prompt is not one).
    UserTurns {
        /// At least this many.
        min: Option<u32>,
        /// At most this many.
        max: Option<u32>,
    },
    /// `elicited: [fact, …]` — each named `knows:` fact was revealed in a reply.
    Elicited {
        /// Names of `knows:` facts.
        facts: Vec<String>,
    },
}

impl ConversationAssertion {
    /// The YAML key that names this kind.
    pub fn key(&self) -> &'static str {
        match self {
            ConversationAssertion::Asked { .. } => "asked",
            ConversationAssertion::DidNotAsk { .. } => "did_not_ask",
            ConversationAssertion::UserTurns { .. } => "user_turns",
            ConversationAssertion::Elicited { .. } => "elicited",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user() -> User {
        User {
            persona: None,
            goal: None,
            knows: BTreeMap::from([
                ("sides".to_owned(), "6".to_owned()),
                ("name".to_owned(), "Roll".to_owned()),
            ]),
            script: vec![
                ScriptLine {
                    when: Regex::new("(?i)sides|range").unwrap(),
                    say: "Six-sided, 1 to 6.".into(),
                    line: 3,
                },
                ScriptLine {
                    when: Regex::new("(?i)side").unwrap(),
                    say: "never reached".into(),
                    line: 4,
                },
            ],
            max_turns: 4,
        }
    }

    #[test]
    fn the_first_matching_script_line_answers() {
        let u = user();
        assert_eq!(
            u.scripted("How many SIDES should it have?").map(|l| l.line),
            Some(3)
        );
        assert!(u.scripted("Which file?").is_none());
        assert!(u.script_only());
    }

    #[test]
    fn the_simulator_sees_persona_goal_and_facts_and_the_stop_token() {
        let mut u = user();
        u.persona = Some("Terse analyst".into());
        u.goal = Some("A die roller".into());
        let p = u.simulator_prompt(&[("Which file?", "main.rs")], "How many sides?");
        for part in [
            "Terse analyst",
            "A die roller",
            "- sides: 6",
            "- name: Roll",
            "The agent asked: Which file?\nYou replied: main.rs",
            "<question>\nHow many sides?\n</question>",
            STOP_TOKEN,
        ] {
            assert!(p.contains(part), "{part} in {p}");
        }
    }

    #[test]
    fn a_fact_is_revealed_when_its_value_is_in_a_reply() {
        let u = user();
        assert_eq!(u.revealed(&["Six-sided, 1 to 6."]), vec!["sides"]);
        assert_eq!(u.revealed(&["call it roll"]), vec!["name"]);
        assert!(u.revealed(&["no idea"]).is_empty());
    }
}
