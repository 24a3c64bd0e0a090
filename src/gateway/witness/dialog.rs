//! The run's conversation checked against what crossed the gateway (issue 41): each
//! question of an ask tool (Claude Code's `AskUserQuestion`) must be one the model asked
//! in a reply, each question the model asked must be in the record, and each reply must
//! have reached the model in the result the agent sent back. A disagreement, or a run
//! whose traffic was not read, leaves the record unwitnessed and every conversation
//! assertion `error`: what the agent asked rests on the wire, not on its stream. On the
//! plain-text channel, a model call of an ask tool nobody answers (Codex's
//! `request_user_input`) is a question the record lacks, so that record is unwitnessed
//! too.

use serde_json::Value;

use super::super::wire::Wire;
use crate::transcript::dialog::{Channel, Dialog};

/// Checks `dialog` against `wire`, setting [`Dialog::unwitnessed`] when they disagree or
/// nothing can be checked. A plain-text channel's questions are read from the agent's
/// final answer, whose text the wire does not keep: the record says so in
/// [`Dialog::unwitnessed`] when the run did not go through the gateway, when the gateway
/// could not read all of its traffic, or when the model called an ask tool nobody answers.
pub fn check(wire: Option<&Wire>, dialog: &mut Dialog) {
    let Some(wire) = wire else {
        dialog.unwitnessed = Some(
            "the run went direct, not through aptitude's model gateway: what the agent asked \
             can not be witnessed"
                .to_owned(),
        );
        return;
    };
    // Traffic the gateway could not read may hold a question: an ask tool's call, or the
    // model's call of a tool nobody answers on the plain-text channel.
    if wire.partial || wire.unreadable > 0 {
        dialog.unwitnessed = Some(format!(
            "the gateway could not read all of the run's traffic ({} unreadable requests{}): \
             the questions can not be checked",
            wire.unreadable,
            if wire.partial { ", bounds reached" } else { "" }
        ));
        return;
    }
    let Channel::AskTool { tool } = &dialog.channel else {
        if matches!(dialog.channel, Channel::PlainText) {
            dialog.unwitnessed = unanswered_ask_tool(wire);
        }
        return;
    };
    dialog.unwitnessed = disagreement(wire, tool, dialog);
}

/// The questions of every `tool` call on the wire, each with the result sent back for it
/// (when one was).
fn asked_on_wire<'w>(wire: &'w Wire, tool: &str) -> Vec<(String, Option<&'w str>)> {
    let mut asked = Vec::new();
    for (index, call) in wire
        .calls
        .iter()
        .enumerate()
        .filter(|(_, c)| c.name == tool)
    {
        let result = wire.result(index).map(|r| r.text.as_str());
        let questions = call.input.get("questions").and_then(Value::as_array);
        for q in questions.into_iter().flatten() {
            if let Some(text) = q.get("question").and_then(Value::as_str) {
                asked.push((text.to_owned(), result));
            }
        }
    }
    asked
}

/// Ask tools a CLI offers its model but never puts to the user on the plain-text channel:
/// Codex 0.169.0's `request_user_input` (`codex exec` offers it in every run; its output
/// is "request_user_input is unavailable in Default mode", or `{"answers":{}}` with the
/// `default_mode_request_user_input` feature, and `exec --json` shows no item for the
/// call) and Gemini CLI's `ask_user` (removed headless in 0.61.0; listed in case a
/// version offers it again).
const UNANSWERED_ASK_TOOLS: &[&str] = &["request_user_input", "ask_user"];

/// On the plain-text channel, a question the model asked with an ask tool nobody answers
/// is missing from the record: a `did_not_ask` or `user_turns` verdict on that record
/// would be a false pass, so the record is unwitnessed (its assertions `error`).
fn unanswered_ask_tool(wire: &Wire) -> Option<String> {
    let call = wire
        .calls
        .iter()
        .find(|c| UNANSWERED_ASK_TOOLS.contains(&c.name.as_str()))?;
    let question = call
        .input
        .get("questions")
        .and_then(Value::as_array)
        .and_then(|q| q.first())
        .and_then(|q| q.get("question"))
        .and_then(Value::as_str)
        .unwrap_or("");
    Some(format!(
        "the model asked with {} (“{}”), a tool aptitude does not answer on this agent: the \
         record holds only the questions asked in plain text",
        call.name,
        crate::shared::text::truncate(question, 120)
    ))
}

/// Whether a tool result holds `reply`: as text, or as a string inside the result when it
/// is JSON (Codex's `request_user_input` output is `{"answers": {ID: {"answers":
/// [TEXT]}}}`, whose text escapes quotes and line breaks).
fn holds(result: &str, reply: &str) -> bool {
    fn any_string(v: &Value, reply: &str) -> bool {
        match v {
            Value::String(s) => s.contains(reply),
            Value::Array(items) => items.iter().any(|v| any_string(v, reply)),
            Value::Object(map) => map.values().any(|v| any_string(v, reply)),
            _ => false,
        }
    }
    result.contains(reply)
        || serde_json::from_str::<Value>(result).is_ok_and(|v| any_string(&v, reply))
}

/// Why the record and the wire disagree, if they do.
fn disagreement(wire: &Wire, tool: &str, dialog: &Dialog) -> Option<String> {
    let mut on_wire = asked_on_wire(wire, tool);
    // A plain-text question on the same channel (Codex's app server) is no call: it rests
    // on the agent's stream, as on the plain-text channel.
    for exchange in dialog.exchanges.iter().filter(|e| !e.in_text) {
        let Some(at) = on_wire.iter().position(|(q, _)| *q == exchange.question) else {
            return Some(format!(
                "the record holds the question “{}”, which no model reply asked with {tool}",
                crate::shared::text::truncate(&exchange.question, 120)
            ));
        };
        let (_, result) = on_wire.remove(at);
        if let Some(reply) = &exchange.reply
            && !result.is_some_and(|r| holds(r, &reply.text))
        {
            return Some(format!(
                "the reply to “{}” never reached the model in the {tool} result",
                crate::shared::text::truncate(&exchange.question, 120)
            ));
        }
    }
    on_wire.first().map(|(q, _)| {
        format!(
            "the model asked “{}” with {tool}, which the record lacks",
            crate::shared::text::truncate(q, 120)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::wire::WireCall;
    use crate::transcript::dialog::{Exchange, Reply, ReplySource};
    use serde_json::json;

    fn ask(id: &str, question: &str) -> WireCall {
        WireCall {
            id: Some(id.into()),
            name: "AskUserQuestion".into(),
            input: json!({"questions": [{"question": question}]}),
        }
    }

    fn record(questions: &[(&str, Option<&str>)]) -> Dialog {
        Dialog {
            channel: Channel::AskTool {
                tool: "AskUserQuestion".into(),
            },
            exchanges: questions
                .iter()
                .map(|(q, r)| Exchange {
                    question: (*q).into(),
                    calls_before: 0,
                    in_text: false,
                    reply: r.map(|text| Reply {
                        text: text.into(),
                        source: ReplySource::Scripted { line: 1 },
                    }),
                })
                .collect(),
            incomplete: None,
            unwitnessed: None,
            simulated_usage: None,
            goal_met: false,
        }
    }

    #[test]
    fn a_plain_text_record_is_unwitnessed_when_the_model_asked_with_an_unanswered_ask_tool() {
        let mut wire = Wire::default();
        wire.calls.push(WireCall {
            id: Some("call_1".into()),
            name: "request_user_input".into(),
            input: json!({"questions": [{"id": "name", "header": "Name",
                "question": "What should the command be called?",
                "options": [{"label": "roll", "description": "roll"}]}]}),
        });
        let mut dialog = record(&[]);
        dialog.channel = Channel::PlainText;
        check(Some(&wire), &mut dialog);
        let why = dialog.unwitnessed.unwrap_or_default();
        assert!(
            why.contains("request_user_input") && why.contains("What should the command"),
            "{why}"
        );
        // A plain-text record whose model asked with no ask tool stays as it was.
        let mut dialog = record(&[("Which name?", Some("roll"))]);
        dialog.channel = Channel::PlainText;
        check(Some(&Wire::default()), &mut dialog);
        assert_eq!(dialog.unwitnessed, None);
        // Traffic the gateway could not read may hold such a call.
        let mut unread = Wire::default();
        unread.unreadable = 1;
        check(Some(&unread), &mut dialog);
        assert!(
            dialog
                .unwitnessed
                .as_deref()
                .is_some_and(|w| w.contains("could not read")),
            "{:?}",
            dialog.unwitnessed
        );
    }

    #[test]
    fn a_question_the_model_asked_that_the_record_lacks_is_unwitnessed() {
        let mut wire = Wire::default();
        wire.served(vec![ask("toolu_1", "How many sides?")]);
        let mut d = record(&[]);
        check(Some(&wire), &mut d);
        assert!(d.unwitnessed.unwrap().contains("which the record lacks"));
    }

    #[test]
    fn a_recorded_question_no_reply_asked_is_unwitnessed() {
        let wire = Wire::default();
        let mut d = record(&[("How many sides?", None)]);
        check(Some(&wire), &mut d);
        assert!(d.unwitnessed.unwrap().contains("no model reply asked"));
    }

    #[test]
    fn a_reply_that_never_reached_the_model_is_unwitnessed() {
        let mut wire = Wire::default();
        wire.served(vec![ask("toolu_1", "How many sides?")]);
        let mut d = record(&[("How many sides?", Some("Six."))]);
        check(Some(&wire), &mut d);
        assert!(d.unwitnessed.unwrap().contains("never reached the model"));
    }

    /// Codex's app server: the reply reaches the model inside the JSON of the call's
    /// output, escaped; a plain-text question on the same channel is no call.
    #[test]
    fn a_reply_inside_a_json_result_and_a_plain_text_question_agree() {
        let reply = "Six, \"d6\"\nplease";
        let output = json!({"answers": {"sides": {"answers": [reply]}}}).to_string();
        assert!(!output.contains(reply), "escaped in the JSON text");
        assert!(holds(&output, reply));
        assert!(!holds(&output, "Twenty"));
        let mut d = record(&[("Which name?", Some("roll"))]);
        d.channel = Channel::AskTool {
            tool: "request_user_input".into(),
        };
        d.exchanges[0].in_text = true;
        check(Some(&Wire::default()), &mut d);
        assert_eq!(d.unwitnessed, None, "a plain-text question is on no call");
        d.exchanges[0].in_text = false;
        check(Some(&Wire::default()), &mut d);
        assert!(
            d.unwitnessed.is_some(),
            "an ask tool's question must be on the wire"
        );
    }

    #[test]
    fn a_direct_run_is_unwitnessed_and_an_empty_agreement_is_not() {
        let mut d = record(&[]);
        check(None, &mut d);
        assert!(d.unwitnessed.unwrap().contains("went direct"));
        let mut d = record(&[]);
        check(Some(&Wire::default()), &mut d);
        assert_eq!(d.unwitnessed, None);
    }
}
