//! The conversation assertions — `asked`, `did_not_ask`, `user_turns`, `elicited` —
//! checked against the run's [`Dialog`]: the questions the agent asked and the replies it
//! got. A run with no record of a conversation, or whose agent has no channel for its
//! questions, gets `error`: "it did not ask" can not be told from "nobody could hear".

use super::{AssertionStatus, Verdict};
use crate::spec::user::{ConversationAssertion, User};
use crate::transcript::ToolCall;
use crate::transcript::dialog::{Channel, Dialog};

/// Evaluates one conversation assertion. `user` is the test's `user:` (the loader makes
/// every conversation assertion need one); `dialog` the run's record, `None` when the run
/// kept none.
pub(super) fn evaluate(
    assertion: &ConversationAssertion,
    user: Option<&User>,
    dialog: Option<&Dialog>,
    calls: &[ToolCall],
) -> Verdict {
    let description = describe(assertion);
    let dialog = match dialog {
        None => {
            return (
                AssertionStatus::Error,
                description,
                Some(
                    "this run kept no record of a conversation: the agent's questions were \
                     not answered on this path, so what it asked can not be known"
                        .to_owned(),
                ),
            );
        }
        Some(Dialog {
            channel: Channel::None { why },
            ..
        }) => {
            return (
                AssertionStatus::Error,
                description,
                Some(format!("no channel carries the agent's questions: {why}")),
            );
        }
        Some(d) => d,
    };
    if let Some(why) = &dialog.unwitnessed {
        return (AssertionStatus::Error, description, Some(why.clone()));
    }
    if let (
        Some(why),
        ConversationAssertion::UserTurns { .. } | ConversationAssertion::Elicited { .. },
    ) = (&dialog.incomplete, assertion)
    {
        return (AssertionStatus::Error, description, Some(why.clone()));
    }
    match assertion {
        ConversationAssertion::Asked { about, before } => {
            let Some((i, first)) = dialog
                .exchanges
                .iter()
                .enumerate()
                .find(|(_, e)| about.is_match(&e.question))
            else {
                return (AssertionStatus::Fail, description, Some(asked_list(dialog)));
            };
            let shown = format!("question {}: {}", i + 1, quoted(&first.question));
            let late = before.iter().find_map(|tool| {
                calls
                    .iter()
                    .position(|c| tool.matches(&c.canonical))
                    .filter(|&at| at < first.calls_before)
                    .map(|at| (tool, at))
            });
            match late {
                Some((tool, at)) => (
                    AssertionStatus::Fail,
                    description,
                    Some(format!(
                        "{shown}\nasked after call {} ({})",
                        at + 1,
                        tool.display()
                    )),
                ),
                None => (AssertionStatus::Pass, description, Some(shown)),
            }
        }
        ConversationAssertion::DidNotAsk { about } => {
            match dialog
                .exchanges
                .iter()
                .enumerate()
                .find(|(_, e)| about.is_match(&e.question))
            {
                Some((i, e)) => (
                    AssertionStatus::Fail,
                    description,
                    Some(format!("question {}: {}", i + 1, quoted(&e.question))),
                ),
                None => (AssertionStatus::Pass, description, Some(asked_list(dialog))),
            }
        }
        ConversationAssertion::UserTurns { min, max } => {
            let n = dialog.replies().count() as u32;
            let ok = min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m);
            let shown = format!("{n} {}", if n == 1 { "reply" } else { "replies" });
            (AssertionStatus::pass_if(ok), description, Some(shown))
        }
        ConversationAssertion::Elicited { facts } => {
            let replies: Vec<&str> = dialog.replies().map(|r| r.text.as_str()).collect();
            let revealed = user.map(|u| u.revealed(&replies)).unwrap_or_default();
            let missing: Vec<&str> = facts
                .iter()
                .map(String::as_str)
                .filter(|f| !revealed.contains(f))
                .collect();
            let shown = if missing.is_empty() {
                format!("revealed: {}", facts.join(", "))
            } else {
                format!("never revealed: {}", missing.join(", "))
            };
            (
                AssertionStatus::pass_if(missing.is_empty()),
                description,
                Some(shown),
            )
        }
    }
}

/// What the assertion checks, in words.
fn describe(assertion: &ConversationAssertion) -> String {
    match assertion {
        ConversationAssertion::Asked { about, before } => {
            let about = pattern(about);
            if before.is_empty() {
                format!("asked about /{about}/")
            } else {
                let tools: Vec<&str> = before.iter().map(|t| t.display()).collect();
                format!("asked about /{about}/ before {}", tools.join(", "))
            }
        }
        ConversationAssertion::DidNotAsk { about } => {
            format!("did not ask about /{}/", pattern(about))
        }
        ConversationAssertion::UserTurns { min, max } => match (min, max) {
            (Some(lo), Some(hi)) => format!("the user replied {lo} to {hi} times"),
            (Some(lo), None) => format!("the user replied at least {lo} times"),
            (None, Some(hi)) => format!("the user replied at most {hi} times"),
            (None, None) => "the user's replies".to_owned(),
        },
        ConversationAssertion::Elicited { facts } => {
            format!("the user revealed {}", facts.join(", "))
        }
    }
}

/// The regex as written (without the `(?i)` the loader adds).
fn pattern(regex: &regex::Regex) -> &str {
    regex.as_str().trim_start_matches("(?i)")
}

/// A question, cut short and quoted.
fn quoted(question: &str) -> String {
    format!("“{}”", crate::shared::text::truncate(question.trim(), 200))
}

/// The questions the agent asked, for a detail.
fn asked_list(dialog: &Dialog) -> String {
    if dialog.exchanges.is_empty() {
        return "the agent asked nothing".to_owned();
    }
    let lines: Vec<String> = dialog
        .exchanges
        .iter()
        .enumerate()
        .map(|(i, e)| format!("question {}: {}", i + 1, quoted(&e.question)))
        .collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::pattern::NameMatcher;
    use crate::transcript::dialog::{Exchange, Reply, ReplySource};
    use regex::Regex;
    use std::collections::BTreeMap;

    fn dialog(questions: &[(&str, usize, Option<&str>)]) -> Dialog {
        Dialog {
            channel: Channel::AskTool {
                tool: "AskUserQuestion".into(),
            },
            exchanges: questions
                .iter()
                .map(|(q, at, reply)| Exchange {
                    question: (*q).into(),
                    calls_before: *at,
                    in_text: false,
                    reply: reply.map(|text| Reply {
                        text: text.into(),
                        source: ReplySource::Scripted { line: 5 },
                    }),
                })
                .collect(),
            incomplete: None,
            unwitnessed: None,
            simulated_usage: None,
            goal_met: false,
        }
    }

    fn calls(names: &[&str]) -> Vec<ToolCall> {
        names
            .iter()
            .map(|n| ToolCall::new(n, serde_json::json!({})))
            .collect()
    }

    fn asked(about: &str, before: &[&str]) -> ConversationAssertion {
        ConversationAssertion::Asked {
            about: Regex::new(&format!("(?i){about}")).unwrap(),
            before: before
                .iter()
                .map(|t| NameMatcher::new(t).unwrap())
                .collect(),
        }
    }

    #[test]
    fn asked_passes_when_a_question_matches_before_the_first_write() {
        let d = dialog(&[("How many Sides?", 1, Some("Six."))]);
        let (status, description, _) = evaluate(
            &asked("sides", &["Write"]),
            None,
            Some(&d),
            &calls(&["Read", "Write"]),
        );
        assert_eq!(status, AssertionStatus::Pass);
        assert_eq!(description, "asked about /sides/ before Write");
    }

    #[test]
    fn asked_after_writing_fails_and_says_after_which_call() {
        let d = dialog(&[("How many sides?", 2, Some("Six."))]);
        let (status, _, detail) = evaluate(
            &asked("sides", &["Write"]),
            None,
            Some(&d),
            &calls(&["Write", "Read"]),
        );
        assert_eq!(status, AssertionStatus::Fail);
        assert!(detail.unwrap().contains("asked after call 1 (Write)"));
    }

    #[test]
    fn a_run_that_asked_nothing_fails_asked_and_passes_did_not_ask() {
        let d = dialog(&[]);
        let (status, _, detail) = evaluate(&asked("sides", &[]), None, Some(&d), &[]);
        assert_eq!(status, AssertionStatus::Fail);
        assert_eq!(detail.as_deref(), Some("the agent asked nothing"));
        let dna = ConversationAssertion::DidNotAsk {
            about: Regex::new("(?i)name").unwrap(),
        };
        assert_eq!(evaluate(&dna, None, Some(&d), &[]).0, AssertionStatus::Pass);
    }

    #[test]
    fn without_a_record_or_a_channel_every_conversation_assertion_is_an_error() {
        let none = Dialog {
            channel: Channel::None {
                why: "opencode `run` denies its `question` tool".into(),
            },
            exchanges: Vec::new(),
            incomplete: None,
            unwitnessed: None,
            simulated_usage: None,
            goal_met: false,
        };
        let dna = ConversationAssertion::DidNotAsk {
            about: Regex::new("(?i)name").unwrap(),
        };
        let turns = ConversationAssertion::UserTurns {
            min: None,
            max: Some(2),
        };
        for a in [&dna, &turns] {
            assert_eq!(evaluate(a, None, None, &[]).0, AssertionStatus::Error);
            let (status, _, detail) = evaluate(a, None, Some(&none), &[]);
            assert_eq!(status, AssertionStatus::Error);
            assert!(detail.unwrap().contains("opencode"));
        }
    }

    #[test]
    fn a_record_the_wire_contradicts_is_an_error_for_every_assertion() {
        let mut d = dialog(&[("How many sides?", 0, Some("Six."))]);
        d.unwitnessed = Some("the model asked 2 questions, the record holds 1".into());
        let dna = ConversationAssertion::DidNotAsk {
            about: Regex::new("(?i)name").unwrap(),
        };
        for a in [&asked("sides", &[]), &dna] {
            let (status, _, detail) = evaluate(a, None, Some(&d), &[]);
            assert_eq!(status, AssertionStatus::Error);
            assert!(detail.unwrap().contains("2 questions"));
        }
    }

    #[test]
    fn user_turns_counts_replies_not_questions() {
        let d = dialog(&[("a?", 0, Some("x")), ("b?", 0, None), ("c?", 0, Some("y"))]);
        let max1 = ConversationAssertion::UserTurns {
            min: None,
            max: Some(1),
        };
        let (status, _, detail) = evaluate(&max1, None, Some(&d), &[]);
        assert_eq!(status, AssertionStatus::Fail);
        assert_eq!(detail.as_deref(), Some("2 replies"));
        let two = ConversationAssertion::UserTurns {
            min: Some(2),
            max: Some(2),
        };
        assert_eq!(evaluate(&two, None, Some(&d), &[]).0, AssertionStatus::Pass);
    }

    #[test]
    fn elicited_needs_each_fact_in_a_reply() {
        let user = User {
            persona: None,
            goal: Some("a die roller".into()),
            knows: BTreeMap::from([
                ("sides".to_owned(), "6".to_owned()),
                ("name".to_owned(), "roll".to_owned()),
            ]),
            script: Vec::new(),
            max_turns: 4,
        };
        let d = dialog(&[("How many sides?", 0, Some("6 sides"))]);
        let both = ConversationAssertion::Elicited {
            facts: vec!["sides".into(), "name".into()],
        };
        let (status, _, detail) = evaluate(&both, Some(&user), Some(&d), &[]);
        assert_eq!(status, AssertionStatus::Fail);
        assert_eq!(detail.as_deref(), Some("never revealed: name"));
        let sides = ConversationAssertion::Elicited {
            facts: vec!["sides".into()],
        };
        assert_eq!(
            evaluate(&sides, Some(&user), Some(&d), &[]).0,
            AssertionStatus::Pass
        );
    }
}
