//! A run's conversation, apart from the executor's run: the questions of a stdio channel
//! answered while the run streams, the follow-up turns that carry the user's replies on
//! the plain-text channel, and the simulated user's model call (issue 41;
//! `docs/conversations.md`).

use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{CliAgent, ExecuteRequest, Spec, StreamParser, Streamed, Task, process};
use crate::agent::conversation::{Ask, Conversation};

impl CliAgent {
    /// A plain-text conversation after the run's stream: while the agent's last turn ends
    /// in a question ([`crate::agent::conversation::question_in`]) and the user replies, the reply
    /// is the prompt of a follow-up turn in the same session ([`crate::agent::AgentCli::follow_up`]),
    /// whose stream is appended to the run's, within what is left of its timeout.
    pub(super) async fn follow_ups(
        &self,
        req: &ExecuteRequest<'_>,
        streamed: &mut Streamed,
        (spec, cancel, user): (
            &Spec,
            &CancellationToken,
            &std::sync::Arc<crate::spec::user::User>,
        ),
        (task, home): (&Task<'_>, &Path),
    ) -> crate::transcript::dialog::Dialog {
        let mut talk = conversation_of(
            req,
            user.clone(),
            crate::transcript::dialog::Channel::PlainText,
        );
        let format = self.cli.stream_format();
        let mut used = streamed.output.duration_ms;
        while talk.has_replies_left()
            && streamed.output.ending == process::Ending::Exited
            && !cancel.is_cancelled()
        {
            let restored = self.cli.conversation_so_far(&crate::agent::Finished {
                home,
                workspace: req.workspace,
                stdout: &streamed.raw,
                process: &streamed.output,
                mcp_servers: req.mcp_servers,
            });
            // The calls before the question: the restored transcript's, else the stream's
            // (read whole, where the kept lines may be cut).
            let (so_far, calls) = match restored {
                Some(so_far) => {
                    let calls = so_far.tool_calls.len();
                    (so_far, calls)
                }
                None => {
                    let mut so_far = StreamParser::new(format);
                    for line in &streamed.raw {
                        so_far.push_line(line);
                    }
                    let so_far = so_far.finish();
                    // A follow-up resumes the session the stream named: none, no follow-up.
                    if so_far.session_id.is_none() {
                        break;
                    }
                    (so_far, streamed.parser.calls().len())
                }
            };
            let question = so_far
                .final_text
                .as_deref()
                .and_then(crate::agent::conversation::question_in);
            let Some(question) = question else {
                break;
            };
            let session = so_far.session_id.as_deref().unwrap_or("");
            let left = spec.timeout.saturating_sub(Duration::from_millis(used));
            let Some(reply) = self
                .answer(
                    &mut talk,
                    (question, crate::agent::conversation::At::text(calls)),
                    (task.model, left, cancel),
                )
                .await
            else {
                break;
            };
            let next = Task {
                prompt: &reply,
                ..*task
            };
            let Some(Ok(invocation)) = self.cli.follow_up(&next, session, home) else {
                break;
            };
            let next = Spec {
                args: invocation.args,
                timeout: spec.timeout.saturating_sub(Duration::from_millis(used)),
                ..spec.clone()
            };
            let (parser, raw) = (&mut streamed.parser, &mut streamed.raw);
            let Ok(output) = process::run(&next, cancel, |line| {
                parser.push_line(line);
                raw.push(line.to_owned());
            })
            .await
            else {
                break;
            };
            used = used.saturating_add(output.duration_ms);
            streamed.output = process::Output {
                duration_ms: used,
                ..output
            };
        }
        let (dialog, replies) = talk.finish_with_replies();
        streamed.user_replies = replies;
        dialog
    }

    /// Answers a stdio channel's questions while the run streams (Claude Code's
    /// `AskUserQuestion`): each [`Ask`] in turn, each of its questions put to the user in
    /// order ([`Self::answer`]: the script, or the simulated user's model call within
    /// what is left before `deadline`), then the channel's answer written to `stdin`.
    /// Returns when no more questions can come (the run's stdout reader is gone); the
    /// caller drops it with the run, so a call still waiting is stopped and its question
    /// recorded unanswered ([`Conversation::finish_with_replies`]).
    pub(super) async fn answer_asks(
        &self,
        talk: &mut Conversation,
        mut asks: tokio::sync::mpsc::UnboundedReceiver<Ask>,
        stdin: &std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedSender<Vec<u8>>>>,
        (model, deadline, cancel): (Option<&str>, std::time::Instant, &CancellationToken),
    ) {
        while let Some(ask) = asks.recv().await {
            let mut replies = Vec::with_capacity(ask.questions.len());
            for question in &ask.questions {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                let reply = self
                    .answer(talk, (question, ask.at), (model, left, cancel))
                    .await;
                replies.push(reply);
            }
            match (ask.respond)(&replies) {
                Some(bytes) => write_stdin(stdin, bytes),
                None => close_stdin(stdin),
            }
        }
    }

    /// The user's reply to `question` (asked after `calls` tool calls), recorded: the
    /// script; else the simulated user — the cassette's reply in a replay, or a one-shot
    /// call of this agent's CLI with no tools in an empty directory ([`Self::simulate`]),
    /// within `left` of the test's time; `None` when nobody replies.
    async fn answer(
        &self,
        talk: &mut Conversation,
        (question, calls): (&str, crate::agent::conversation::At),
        (model, left, cancel): (Option<&str>, Duration, &CancellationToken),
    ) -> Option<String> {
        use crate::agent::conversation::{Next, NoReply};
        match talk.next(question) {
            Next::Scripted(reply) => talk.record(question, calls, Some(reply)),
            Next::Nothing => talk.record(question, calls, None),
            Next::Simulate { prompt } => {
                let outcome = match talk.replayed(question) {
                    Some(replayed) => replayed.map(|r| (r, None)),
                    None => {
                        talk.waiting_for(question, calls);
                        let timeout = left.min(crate::agent::conversation::SIMULATED_USER_TIMEOUT);
                        self.simulate(&prompt, model, timeout, cancel)
                            .await
                            .map(|(text, usage)| (text, Some(usage)))
                            .map_err(NoReply::Call)
                    }
                };
                talk.simulated(question, calls, outcome)
            }
        }
    }

    /// One model call of the simulated user: `prompt` through this agent's grading call
    /// ([`crate::agent::Agent::grade`]: tools-less, in an empty scratch directory, through its own
    /// gateway endpoint, so the spend ledger counts it). Its usage is the CLI's report, or,
    /// when that has no cost, what the gateway metered (tokens and list-price cost), when
    /// it metered every request; its `duration_ms` the call's wall time.
    ///
    /// # Errors
    /// Why the call gave no reply (it failed, timed out, or was refused).
    async fn simulate(
        &self,
        prompt: &str,
        model: Option<&str>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<(String, crate::transcript::Usage), crate::agent::AgentError> {
        let started = std::time::Instant::now();
        let (reply, traffic) = self.grade_metered(prompt, model, timeout, cancel).await?;
        let mut usage = reply.usage;
        let metered = traffic.filter(|t| t.requests > 0 && t.unmetered == 0);
        if let (None, Some(t)) = (usage.cost_usd, metered) {
            usage.input_tokens = t.input_tokens;
            usage.output_tokens = t.output_tokens;
            usage.cache_read_input_tokens = t.cache_read_input_tokens;
            usage.cache_creation_input_tokens = t.cache_creation_input_tokens;
            usage.cost_usd = t.cost_usd;
        }
        // The wall time the call added to the run, whatever the CLI reported.
        usage.duration_ms = Some(started.elapsed().as_millis() as u64);
        Ok((reply.text, usage))
    }
}

/// The conversation of `req`'s run with `user` over `channel`: in a replay, the simulated
/// user answers from the cassette's replies.
pub(super) fn conversation_of(
    req: &ExecuteRequest<'_>,
    user: std::sync::Arc<crate::spec::user::User>,
    channel: crate::transcript::dialog::Channel,
) -> crate::agent::conversation::Conversation {
    let talk = crate::agent::conversation::Conversation::new(user, channel);
    match req.replay {
        Some(replaying) => talk.replaying(replaying.cassette.user.clone()),
        None => talk,
    }
}

/// Closes the agent's stdin: the channel has nothing more to say.
pub(super) fn close_stdin(
    stdin: &std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedSender<Vec<u8>>>>,
) {
    stdin.lock().map(|mut s| *s = None).ok();
}

/// Writes one message to the agent's stdin, unless the channel closed it.
pub(super) fn write_stdin(
    stdin: &std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedSender<Vec<u8>>>>,
    bytes: Vec<u8>,
) {
    if let Ok(stdin) = stdin.lock()
        && let Some(tx) = stdin.as_ref()
    {
        let _ = tx.send(bytes);
    }
}
