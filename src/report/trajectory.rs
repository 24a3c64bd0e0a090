//! The HTML report's run view: one run of a test as a reader follows it — the trajectory
//! turn by turn (the assistant's text, each tool call with its input, output, error or
//! refusal, MCP calls named by server, a subagent's turns and calls nested under the call
//! that started it, each turn's time and tokens), the files the run changed as unified
//! diffs, and the model requests the gateway saw; and a repeated test's runs side by side,
//! call by call, the first call where a run parts from run 1 marked.
//!
//! Shaped after inspect_ai's log viewer (messages turn by turn, tool calls folded, tokens
//! and time per turn) and `git diff --stat` (a line per file, its diff folded). A run
//! without turns (a format that records none, results written before turns were kept)
//! shows its calls alone, as before. Everything here is bounded: [`MAX_STEPS`] steps,
//! [`MAX_REQUESTS_SHOWN`] requests, [`MAX_SIDE_ROWS`] × [`MAX_SIDE_RUNS`] cells; texts
//! cut at [`OUTPUT_MAX`]. The views hold text only: `templates/run_detail.html`
//! escapes it (askama) and [`crate::shared::inert::document`] shows its control bytes.

use std::collections::HashMap;

use askama::Template;

use crate::shared::text::{format_duration, thousands};
use crate::transcript::align::{CallKey, describe, result_word, trajectory_order};
use crate::transcript::dialog::{Channel, Dialog, Exchange, ReplySource};
use crate::transcript::{ToolCall, Transcript, Turn};
use crate::verdict::results::{TestResult, TestStatus};
use crate::workspace::{ChangeKind, FileChange};

/// The most steps (turns and calls) one run view shows; the rest are counted.
pub const MAX_STEPS: usize = 1_000;

/// The most model requests one run view lists.
pub const MAX_REQUESTS_SHOWN: usize = 200;

/// The most calls of each run side by side.
pub const MAX_SIDE_ROWS: usize = 60;

/// The most runs side by side.
pub const MAX_SIDE_RUNS: usize = 8;

/// The most characters of one tool input, tool output, turn text or answer shown.
pub const OUTPUT_MAX: usize = 4_000;

fn cut(text: &str) -> String {
    crate::shared::text::truncate_lines(text, OUTPUT_MAX)
}

/// A status's CSS class, icon and word: `("failed", "✗", "failed")`.
pub(super) fn status_class(status: TestStatus) -> (&'static str, &'static str, &'static str) {
    match status {
        TestStatus::Passed => ("passed", "✓", "passed"),
        TestStatus::Failed => ("failed", "✗", "failed"),
        TestStatus::Error => ("error", "!", "error"),
        TestStatus::Skipped => ("skipped", "⊘", "skipped"),
    }
}

/// One tool call.
pub(super) struct CallView {
    pub(super) number: usize,
    pub(super) name: String,
    pub(super) agent: Option<String>,
    /// `MCP github · create_issue` for an MCP server's tool.
    pub(super) mcp: Option<String>,
    /// Whether the model's provider ran the tool, not the agent (web search, code
    /// execution, …): shown as `[server-side]`.
    pub(super) server_side: bool,
    pub(super) summary: String,
    pub(super) input: String,
    pub(super) output: String,
    /// The agent's words when its guard refused the call.
    pub(super) blocked: Option<String>,
    pub(super) class: &'static str,
    pub(super) result: String,
}

/// One model reply.
pub(super) struct TurnView {
    /// `Turn 3`, `Subagent turn`.
    pub(super) label: String,
    /// `2.3 s · 1,234 in · 56 out · 10,000 cached`.
    pub(super) meta: String,
    pub(super) text: Option<String>,
}

/// One line of the trajectory: a turn, a call, or the head of a subagent's group, at its
/// nesting depth (0: the main agent).
pub(super) struct Step {
    pub(super) depth: usize,
    pub(super) turn: Option<TurnView>,
    pub(super) call: Option<CallView>,
    pub(super) group: Option<String>,
    pub(super) user: Option<UserView>,
}

/// One question of the agent to the test's `user:` and the reply (issue 41).
pub(super) struct UserView {
    pub(super) question: String,
    pub(super) reply: Option<String>,
    /// `scripted, line 8`, `simulated`, or why there was no reply.
    pub(super) source: String,
}

/// Where a question of the dialog is shown: after a call (by number, from 1), after a
/// turn (by index), or at the end when neither is known.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Anchor {
    Call(usize),
    Turn(usize),
}

/// One line of a unified diff, with its kind (`add`, `del`, `hunk`, `head`, `ctx`).
pub(super) struct DiffLine {
    pub(super) class: &'static str,
    pub(super) text: String,
}

/// A changed file: `+`/`~`/`−`, its path, `+3 −1`, its diff or why it is not shown.
pub(super) struct FileView {
    pub(super) mark: &'static str,
    pub(super) path: String,
    pub(super) stat: Option<String>,
    pub(super) lines: Vec<DiffLine>,
    pub(super) omitted: Option<String>,
}

/// One model request the gateway saw.
pub(super) struct RequestView {
    pub(super) index: u32,
    pub(super) model: String,
    pub(super) status: String,
    pub(super) class: &'static str,
    pub(super) input: String,
    pub(super) output: String,
    pub(super) cache: String,
    pub(super) time: String,
}

/// Everything of one run below its assertions (`templates/run_detail.html`).
pub(super) struct RunDetail {
    /// Whether the transcript recorded turns (else the steps are its calls alone).
    pub(super) turns: bool,
    pub(super) calls: usize,
    pub(super) steps: Vec<Step>,
    pub(super) steps_left_out: usize,
    pub(super) files: Vec<FileView>,
    pub(super) requests: Vec<RequestView>,
    /// `12 requests · 3 failed · 45,678 tokens` and what the list leaves out.
    pub(super) requests_note: Option<String>,
}

impl RunDetail {
    /// Whether there is nothing to show.
    pub(super) fn is_empty(&self) -> bool {
        self.steps.is_empty() && self.files.is_empty() && self.requests.is_empty()
    }
}

/// Renders `detail` for the run `of` names (`x · run 2`, in labels), its headings at
/// `level` (2 under a test's own sections, 3 inside one of its runs).
#[derive(Template)]
#[template(path = "run_detail.html")]
struct DetailTemplate<'a> {
    d: &'a RunDetail,
    of: &'a str,
    level: u8,
}

/// The HTML of `detail` (escaped by askama), to put inside a test's body.
pub(super) fn render_detail(
    detail: &RunDetail,
    of: &str,
    level: u8,
) -> Result<String, askama::Error> {
    DetailTemplate {
        d: detail,
        of,
        level,
    }
    .render()
}

/// The view of `run`: its trajectory, files and model requests.
pub(super) fn run_detail(run: &TestResult) -> RunDetail {
    let (steps, steps_left_out, turns) = match &run.transcript {
        Some(t) => {
            let (steps, left) = steps_with(t, run.dialog.as_ref());
            (steps, left, !t.turns.is_empty())
        }
        None => (Vec::new(), 0, false),
    };
    let (requests, requests_note) = requests(run);
    RunDetail {
        turns,
        calls: run.transcript.as_ref().map_or(0, |t| t.tool_calls.len()),
        steps,
        steps_left_out,
        files: run.files.iter().map(file_view).collect(),
        requests,
        requests_note,
    }
}

fn call_view(number: usize, c: &ToolCall) -> CallView {
    let class = match (&c.blocked, &c.output, c.is_error) {
        (Some(_), _, _) => "blocked",
        (None, None, _) => "pending",
        (None, Some(_), true) => "fail",
        (None, Some(_), false) => "pass",
    };
    let mcp = c
        .canonical
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .map(|(server, tool)| format!("MCP {server} · {tool}"));
    CallView {
        number,
        name: c.name.clone(),
        agent: (!c.is_main()).then(|| c.agent.clone()),
        mcp,
        server_side: c.server_side,
        summary: crate::shared::text::summarize_input(&c.input, 120),
        input: cut(&serde_json::to_string_pretty(&c.input).unwrap_or_default()),
        output: cut(c.output.as_deref().unwrap_or("")),
        blocked: c.blocked.as_deref().map(cut),
        class,
        result: result_word(c),
    }
}

fn turn_view(main_number: Option<usize>, turn: &Turn) -> TurnView {
    let mut meta = Vec::new();
    if let Some(ms) = turn.duration_ms {
        meta.push(format_duration(ms));
    }
    if let Some(t) = turn.tokens {
        meta.push(format!("{} in", thousands(t.input)));
        meta.push(format!("{} out", thousands(t.output)));
        let cached = t.cache_read.saturating_add(t.cache_creation);
        if cached > 0 {
            meta.push(format!("{} cached", thousands(cached)));
        }
    }
    TurnView {
        label: match main_number {
            Some(n) => format!("Turn {n}"),
            None => format!("Subagent turn · {}", turn.agent),
        },
        meta: meta.join(" · "),
        text: turn.text.as_deref().map(cut),
    }
}

/// Either a turn or a call of one agent, in its order.
#[derive(Clone, Copy)]
enum Item {
    Turn(usize),
    Call(usize),
}

/// Builds the steps in reading order (see the module docs).
struct Walk<'a> {
    t: &'a Transcript,
    /// The dialog's questions by where they are shown, in order.
    dialog: HashMap<Anchor, Vec<UserView>>,
    by_agent: HashMap<&'a str, Vec<Item>>,
    done: std::collections::HashSet<&'a str>,
    main_turns: usize,
    steps: Vec<Step>,
    left_out: usize,
}

impl<'a> Walk<'a> {
    fn push(&mut self, step: Step) {
        if self.steps.len() < MAX_STEPS {
            self.steps.push(step);
        } else {
            self.left_out += 1;
        }
    }

    fn call(&mut self, i: usize, depth: usize) {
        let Some(c) = self.t.tool_calls.get(i) else {
            return;
        };
        self.push(Step {
            depth,
            turn: None,
            call: Some(call_view(i + 1, c)),
            group: None,
            user: None,
        });
        // The subagent this call started (Claude Code names it by the call's id).
        if depth < 6 && !c.id.is_empty() && self.by_agent.contains_key(c.id.as_str()) {
            self.agent(&c.id, depth + 1);
        }
        self.users(Anchor::Call(i + 1), depth);
    }

    /// The dialog's questions shown at `anchor`.
    fn users(&mut self, anchor: Anchor, depth: usize) {
        for user in self.dialog.remove(&anchor).unwrap_or_default() {
            self.push(Step {
                depth,
                turn: None,
                call: None,
                group: None,
                user: Some(user),
            });
        }
    }

    fn agent(&mut self, agent: &'a str, depth: usize) {
        if !self.done.insert(agent) {
            return;
        }
        let items = self.by_agent.get(agent).cloned().unwrap_or_default();
        for item in items {
            match item {
                Item::Turn(ti) => {
                    let turn = &self.t.turns[ti];
                    let number = (turn.agent == crate::transcript::MAIN_AGENT).then(|| {
                        self.main_turns += 1;
                        self.main_turns
                    });
                    self.push(Step {
                        depth,
                        turn: Some(turn_view(number, turn)),
                        call: None,
                        group: None,
                        user: None,
                    });
                    for &c in &turn.calls {
                        self.call(c as usize, depth);
                    }
                    self.users(Anchor::Turn(ti), depth);
                }
                Item::Call(ci) => self.call(ci, depth),
            }
        }
    }
}

/// The view of one question and its reply.
fn user_view(e: &Exchange) -> UserView {
    UserView {
        question: cut(&e.question),
        reply: e.reply.as_ref().map(|r| cut(&r.text)),
        source: match e.reply.as_ref().map(|r| &r.source) {
            Some(ReplySource::Scripted { line }) => format!("scripted, line {line}"),
            Some(ReplySource::Simulated) => "simulated".to_owned(),
            None => "no reply".to_owned(),
        },
    }
}

/// Where each question of `dialog` is shown among `t`'s steps: an ask tool's after the
/// call that asked it; a plain-text one after the turn whose text holds it (else after
/// the calls before it).
fn anchored(t: &Transcript, dialog: Option<&Dialog>) -> HashMap<Anchor, Vec<UserView>> {
    let mut by_anchor: HashMap<Anchor, Vec<UserView>> = HashMap::new();
    let Some(dialog) = dialog else {
        return by_anchor;
    };
    let mut from_turn = 0;
    for e in &dialog.exchanges {
        let anchor = match &dialog.channel {
            Channel::AskTool { .. } if !e.in_text => Anchor::Call(e.calls_before + 1),
            _ => match (from_turn..t.turns.len()).find(|&ti| {
                t.turns[ti]
                    .text
                    .as_deref()
                    .is_some_and(|text| text.contains(e.question.as_str()))
            }) {
                Some(ti) => {
                    from_turn = ti + 1;
                    Anchor::Turn(ti)
                }
                None => Anchor::Call(e.calls_before),
            },
        };
        by_anchor.entry(anchor).or_default().push(user_view(e));
    }
    by_anchor
}

/// `t`'s steps in reading order, and how many were left out past [`MAX_STEPS`].
#[cfg(test)]
fn steps(t: &Transcript) -> (Vec<Step>, usize) {
    steps_with(t, None)
}

/// [`steps`] with the run's dialog, each question where it was asked; a question whose
/// place is not among the steps comes last.
fn steps_with(t: &Transcript, dialog: Option<&Dialog>) -> (Vec<Step>, usize) {
    let mut by_agent: HashMap<&str, Vec<Item>> = HashMap::new();
    let mut in_turn = vec![false; t.tool_calls.len()];
    let mut order: Vec<&str> = Vec::new();
    for (ti, turn) in t.turns.iter().enumerate() {
        for &c in &turn.calls {
            if let Some(slot) = in_turn.get_mut(c as usize) {
                *slot = true;
            }
        }
        let agent = turn.agent.as_str();
        if !by_agent.contains_key(agent) {
            order.push(agent);
        }
        by_agent.entry(agent).or_default().push(Item::Turn(ti));
    }
    // Calls no turn holds (every call, without turns), in trajectory order.
    for ci in trajectory_order(t) {
        if in_turn[ci] {
            continue;
        }
        let agent = t.tool_calls[ci].agent.as_str();
        if !by_agent.contains_key(agent) {
            order.push(agent);
        }
        by_agent.entry(agent).or_default().push(Item::Call(ci));
    }
    let mut walk = Walk {
        t,
        dialog: anchored(t, dialog),
        by_agent,
        done: Default::default(),
        main_turns: 0,
        steps: Vec::new(),
        left_out: 0,
    };
    // A question asked before any call comes first.
    walk.users(Anchor::Call(0), 0);
    walk.agent(crate::transcript::MAIN_AGENT, 0);
    for agent in order {
        if !walk.done.contains(agent) {
            walk.push(Step {
                depth: 1,
                turn: None,
                call: None,
                group: Some(format!("Subagent {agent}")),
                user: None,
            });
            walk.agent(agent, 1);
        }
    }
    let mut rest: Vec<Anchor> = walk.dialog.keys().copied().collect();
    rest.sort_by_key(|a| match a {
        Anchor::Call(n) => (0, *n),
        Anchor::Turn(n) => (1, *n),
    });
    for anchor in rest {
        walk.users(anchor, 0);
    }
    (walk.steps, walk.left_out)
}

fn file_view(f: &FileChange) -> FileView {
    let mark = match f.change {
        ChangeKind::Created => "+",
        ChangeKind::Modified => "~",
        ChangeKind::Deleted => "−",
    };
    let lines: Vec<DiffLine> = f
        .diff
        .as_deref()
        .map(|d| {
            d.lines()
                .map(|l| DiffLine {
                    class: if l.starts_with("+++") || l.starts_with("---") {
                        "head"
                    } else if l.starts_with('+') {
                        "add"
                    } else if l.starts_with('-') {
                        "del"
                    } else if l.starts_with("@@") {
                        "hunk"
                    } else {
                        "ctx"
                    },
                    text: l.to_owned(),
                })
                .collect()
        })
        .unwrap_or_default();
    let count = |class: &str| lines.iter().filter(|l| l.class == class).count();
    let stat = f
        .diff
        .is_some()
        .then(|| format!("+{} −{}", count("add"), count("del")));
    FileView {
        mark,
        path: f.path.clone(),
        stat,
        lines,
        omitted: f.diff_omitted.clone(),
    }
}

fn requests(run: &TestResult) -> (Vec<RequestView>, Option<String>) {
    let Some(traffic) = &run.model_traffic else {
        return (Vec::new(), None);
    };
    let shown: Vec<RequestView> = traffic
        .request_log
        .iter()
        .take(MAX_REQUESTS_SHOWN)
        .map(|r| RequestView {
            index: r.index,
            model: r.model.clone().unwrap_or_else(|| "—".into()),
            status: r
                .status
                .map_or_else(|| "no reply".into(), |s| s.to_string()),
            class: if r.failed { "fail" } else { "pass" },
            input: thousands(r.input_tokens),
            output: thousands(r.output_tokens),
            cache: thousands(r.cache_tokens),
            time: r.duration_ms.map_or_else(|| "—".into(), format_duration),
        })
        .collect();
    let mut note = vec![format!(
        "{} request{}",
        traffic.requests,
        if traffic.requests == 1 { "" } else { "s" }
    )];
    if traffic.failed > 0 {
        note.push(format!("{} failed", traffic.failed));
    }
    if traffic.retries > 0 {
        note.push(format!("{} retried", traffic.retries));
    }
    note.push(format!("{} tokens", thousands(traffic.total_tokens())));
    if let Some(cost) = traffic.cost_usd {
        note.push(format!("est. ${cost:.4}"));
    }
    if !traffic.priced_at_dearest.is_empty() {
        note.push(format!(
            "priced at the dearest rates (not in the price table): {}",
            traffic.priced_at_dearest.join(", ")
        ));
    }
    if (shown.len() as u64) < u64::from(traffic.requests) && !shown.is_empty() {
        note.push(format!("the first {} listed", shown.len()));
    }
    if let Some(line) = simulated_user_cost(run) {
        note.push(line);
    }
    (shown, Some(note.join(" · ")))
}

/// The simulated user's own cost line (its model calls are not the agent's requests
/// listed above): "simulated user: 1,234 tokens, est. $0.0012".
pub(super) fn simulated_user_cost(run: &TestResult) -> Option<String> {
    let u = run.dialog.as_ref()?.simulated_usage.as_ref()?;
    let tokens = u.input_tokens
        + u.output_tokens
        + u.cache_read_input_tokens
        + u.cache_creation_input_tokens;
    Some(match u.cost_usd {
        Some(cost) => format!(
            "simulated user: {} tokens, est. ${cost:.4}",
            thousands(tokens)
        ),
        None => format!("simulated user: {} tokens, cost unknown", thousands(tokens)),
    })
}

/// A repeated test's runs side by side, call by call: a column per run (at most
/// [`MAX_SIDE_RUNS`]), a row per position in trajectory order (at most
/// [`MAX_SIDE_ROWS`]); a cell differs when its call is not run 1's call there, or its
/// result is not.
pub(super) struct SideBySide {
    /// Per run: its label (`Run 2 · failed`), status class, and its anchor (`t3-r2`).
    pub(super) columns: Vec<(String, &'static str, String)>,
    /// Per row: its number (1-based), whether it is the first where the runs part, its
    /// cells.
    pub(super) rows: Vec<(usize, bool, Vec<SideCell>)>,
    /// Rows past [`MAX_SIDE_ROWS`], and runs past [`MAX_SIDE_RUNS`].
    pub(super) rows_left_out: usize,
    pub(super) runs_left_out: usize,
    /// The first row where a run parts from run 1 (1-based), for the caption.
    pub(super) first_difference: Option<usize>,
}

/// One cell: the call in words and its result, and `same`, `differs` or `none`.
pub(super) struct SideCell {
    pub(super) text: String,
    pub(super) class: &'static str,
}

/// The side-by-side view of `runs` ((number, anchor, run)); `None` with fewer than two.
pub(super) fn side_by_side(runs: &[(u32, String, &TestResult)]) -> Option<SideBySide> {
    if runs.len() < 2 {
        return None;
    }
    let shown = &runs[..runs.len().min(MAX_SIDE_RUNS)];
    let empty = Transcript::of_calls(Vec::new(), None);
    let seqs: Vec<(&Transcript, Vec<usize>)> = shown
        .iter()
        .map(|(_, _, r)| {
            let t = r.transcript.as_ref().unwrap_or(&empty);
            (t, trajectory_order(t))
        })
        .collect();
    // A call differs from run 1's when it is another call or had another result.
    let keys: Vec<Vec<(CallKey, String)>> = seqs
        .iter()
        .map(|(t, order)| {
            order
                .iter()
                .take(MAX_SIDE_ROWS)
                .map(|&i| {
                    let c = &t.tool_calls[i];
                    (CallKey::of(c), result_word(c))
                })
                .collect()
        })
        .collect();
    let longest = seqs.iter().map(|(_, o)| o.len()).max().unwrap_or(0);
    let mut rows = Vec::new();
    let mut first_difference = None;
    for row in 0..longest.min(MAX_SIDE_ROWS) {
        let reference = keys[0].get(row);
        let cells: Vec<SideCell> = seqs
            .iter()
            .zip(&keys)
            .map(|((t, order), k)| match order.get(row) {
                Some(&i) => {
                    let c = &t.tool_calls[i];
                    SideCell {
                        text: format!("{} → {}", describe(c), result_word(c)),
                        class: if k.get(row) == reference {
                            "same"
                        } else {
                            "differs"
                        },
                    }
                }
                None => SideCell {
                    text: "—".into(),
                    class: "none",
                },
            })
            .collect();
        let parts = first_difference.is_none() && cells.iter().any(|c| c.class != "same");
        if parts {
            first_difference = Some(row + 1);
        }
        rows.push((row + 1, parts, cells));
    }
    Some(SideBySide {
        columns: shown
            .iter()
            .map(|(n, anchor, r)| {
                let (class, _, word) = status_class(r.status);
                (format!("Run {n} · {word}"), class, anchor.clone())
            })
            .collect(),
        rows,
        rows_left_out: longest.saturating_sub(MAX_SIDE_ROWS),
        runs_left_out: runs.len() - shown.len(),
        first_difference,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{ToolCall, TurnTokens};
    use crate::verdict::results::TestStatus;
    use serde_json::json;

    fn call(id: &str, name: &str, agent: &str) -> ToolCall {
        ToolCall {
            output: Some("ok".into()),
            agent: agent.into(),
            ..ToolCall::for_test(id, name, json!({"command": id}))
        }
    }

    fn exchange(question: &str, calls_before: usize, reply: Option<&str>) -> Exchange {
        Exchange {
            question: question.into(),
            calls_before,
            in_text: false,
            reply: reply.map(|text| crate::transcript::dialog::Reply {
                text: text.into(),
                source: ReplySource::Scripted { line: 8 },
            }),
        }
    }

    fn step_names(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .map(|s| match (&s.turn, &s.call, &s.user) {
                (Some(t), _, _) => t.label.clone(),
                (_, Some(c), _) => c.name.clone(),
                (_, _, Some(u)) => format!(
                    "user: {} [{}]",
                    u.reply.clone().unwrap_or_default(),
                    u.source
                ),
                _ => String::new(),
            })
            .collect()
    }

    /// An ask tool's question and its reply come right after the call that asked it,
    /// marked scripted with its line; a plain-text one after the turn that asked it.
    #[test]
    fn the_dialog_is_shown_where_it_happened() {
        let t = Transcript::completed(
            vec![
                call("r", "Read", "main"),
                call("a", "AskUserQuestion", "main"),
                call("w", "Write", "main"),
            ],
            "done",
        );
        let dialog = Dialog {
            channel: Channel::AskTool {
                tool: "AskUserQuestion".into(),
            },
            exchanges: vec![exchange("How many sides?", 1, Some("Six."))],
            incomplete: None,
            unwitnessed: None,
            simulated_usage: None,
            goal_met: false,
        };
        let (steps, _) = steps_with(&t, Some(&dialog));
        assert_eq!(
            step_names(&steps),
            [
                "Read",
                "AskUserQuestion",
                "user: Six. [scripted, line 8]",
                "Write"
            ]
        );
        let mut t = Transcript::completed(vec![call("r", "Read", "main")], "done");
        t.turns = vec![
            Turn {
                agent: "main".into(),
                text: Some("Looking.".into()),
                calls: vec![0],
                ..Turn::default()
            },
            Turn {
                agent: "main".into(),
                text: Some("How many sides?".into()),
                ..Turn::default()
            },
            Turn {
                agent: "main".into(),
                text: Some("Done.".into()),
                ..Turn::default()
            },
        ];
        let plain = Dialog {
            channel: Channel::PlainText,
            exchanges: vec![exchange("How many sides?", 1, None)],
            ..dialog
        };
        let (steps, _) = steps_with(&t, Some(&plain));
        assert_eq!(
            step_names(&steps),
            ["Turn 1", "Read", "Turn 2", "user:  [no reply]", "Turn 3"]
        );
        // Codex's app server carries both: a plain-text question on an ask tool's channel
        // is shown after its turn, not after a call.
        let mut in_text = exchange("How many sides?", 1, None);
        in_text.in_text = true;
        let both = Dialog {
            channel: Channel::AskTool {
                tool: "request_user_input".into(),
            },
            exchanges: vec![in_text],
            ..plain
        };
        let (steps, _) = steps_with(&t, Some(&both));
        assert_eq!(
            step_names(&steps),
            ["Turn 1", "Read", "Turn 2", "user:  [no reply]", "Turn 3"]
        );
    }

    /// The main agent's turns in order, each followed by its calls; a subagent's turn and
    /// call nested under the Task call that started it; a call no turn holds after the
    /// turns of its agent; an MCP call named by its server.
    #[test]
    fn steps_nest_subagents_under_the_call_that_started_them() {
        let mut t = Transcript::completed(
            vec![
                call("task1", "Task", "main"),
                call("s1", "Read", "task1"),
                call("b1", "mcp__github__create_issue", "main"),
                call("x1", "Bash", "main"),
            ],
            "done",
        );
        t.turns = vec![
            Turn {
                agent: "main".into(),
                text: Some("Delegating.".into()),
                calls: vec![0],
                tokens: Some(TurnTokens {
                    input: 1_200,
                    output: 30,
                    ..TurnTokens::default()
                }),
                duration_ms: Some(2_300),
                ..Turn::default()
            },
            Turn {
                agent: "task1".into(),
                calls: vec![1],
                ..Turn::default()
            },
            Turn {
                agent: "main".into(),
                text: Some("Filing it.".into()),
                calls: vec![2],
                ..Turn::default()
            },
        ];
        let (steps, left) = steps(&t);
        assert_eq!(left, 0);
        let shape: Vec<(usize, String)> = steps
            .iter()
            .map(|s| {
                let what = match (&s.turn, &s.call, &s.group) {
                    (Some(turn), _, _) => format!("{} [{}]", turn.label, turn.meta),
                    (_, Some(c), _) => format!(
                        "#{} {}{}",
                        c.number,
                        c.name,
                        c.mcp
                            .as_deref()
                            .map(|m| format!(" ({m})"))
                            .unwrap_or_default()
                    ),
                    (_, _, Some(g)) => g.clone(),
                    _ => String::new(),
                };
                (s.depth, what)
            })
            .collect();
        assert_eq!(
            shape,
            [
                (0, "Turn 1 [2.3s · 1,200 in · 30 out]".to_owned()),
                (0, "#1 Task".to_owned()),
                (1, "Subagent turn · task1 []".to_owned()),
                (1, "#2 Read".to_owned()),
                (0, "Turn 2 []".to_owned()),
                (
                    0,
                    "#3 mcp__github__create_issue (MCP github · create_issue)".to_owned()
                ),
                (0, "#4 Bash".to_owned()),
            ]
        );
    }

    /// A call the model's provider ran (a web search) is marked server-side in the run
    /// view; the agent's own calls are not.
    #[test]
    fn a_server_side_call_is_marked_so() {
        let search = ToolCall {
            server_side: true,
            ..call("ws1", "web_search", "main")
        };
        let t = Transcript::completed(vec![search, call("b", "Bash", "main")], "x");
        let (steps, _) = steps(&t);
        let marks: Vec<bool> = steps
            .iter()
            .filter_map(|s| s.call.as_ref().map(|c| c.server_side))
            .collect();
        assert_eq!(marks, [true, false]);
    }

    #[test]
    fn without_turns_the_calls_alone_in_order() {
        let t = Transcript::completed(
            vec![call("a", "Bash", "main"), call("b", "Read", "main")],
            "x",
        );
        let (steps, _) = steps(&t);
        assert!(steps.iter().all(|s| s.turn.is_none() && s.depth == 0));
        assert_eq!(steps.len(), 2);
    }

    #[test]
    fn runs_side_by_side_mark_where_they_part() {
        let run = |cmds: &[&str], status| TestResult {
            transcript: Some(Transcript::completed(
                cmds.iter().map(|c| call(c, "Bash", "main")).collect(),
                "x",
            )),
            ..TestResult::new("t", "t.aptitude.yaml", status)
        };
        let a = run(&["ls", "pytest"], TestStatus::Passed);
        let b = run(&["ls"], TestStatus::Failed);
        let side = side_by_side(&[(1, "t0-r1".into(), &a), (2, "t0-r2".into(), &b)]).unwrap();
        assert_eq!(side.first_difference, Some(2));
        assert_eq!(side.columns[1].0, "Run 2 · failed");
        assert_eq!(side.rows[1].2[0].text, "ran `pytest` → ok");
        assert_eq!(side.rows[1].2[1].class, "none");
        assert_eq!((side.rows[0].1, side.rows[1].1), (false, true));
        assert!(side_by_side(&[(1, "t0-r1".into(), &a)]).is_none());
    }
}
