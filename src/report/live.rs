//! The live terminal reporter: turns run [`Event`]s into the text shown as they happen —
//! each test's block when it finishes, `-v` tool calls, the summary line — and keeps what
//! is running for a progress line.
//!
//! It only builds text; the CLI's output module writes it (and draws the progress bar), so
//! `run` and `analyze` show tests the same way.

use crate::report::terminal;
use crate::run::events::Event;
use crate::shared::inert;
use crate::shared::redact::Redactor;

/// The live reporter's state: test names, what is running, whether to show tool calls.
pub struct LiveReporter {
    names: Vec<String>,
    running: Vec<usize>,
    verbose: bool,
    redactor: Redactor,
}

impl LiveReporter {
    /// A reporter; `verbose` shows each tool call; everything shown goes through `redactor`.
    pub fn new(verbose: bool, redactor: Redactor) -> Self {
        LiveReporter {
            names: Vec::new(),
            running: Vec::new(),
            verbose,
            redactor,
        }
    }

    /// The text to show for `event` (already redacted), if any.
    pub fn handle(&mut self, event: &Event) -> Option<String> {
        match event {
            Event::RunStarted { names } => {
                self.names.clone_from(names);
                None
            }
            Event::TestStarted { index, .. } => {
                self.running.push(*index);
                None
            }
            Event::ToolCall { index, run, call } if self.verbose => {
                let run = if *run > 1 {
                    format!(" (run {run})")
                } else {
                    String::new()
                };
                let line = format!(
                    "  ↳ {}{run}: {}\n",
                    inert::terminal(self.name(*index)),
                    inert::terminal(
                        crate::transcript::display::describe_call(0, call)
                            .trim_start_matches("#0 ")
                    )
                );
                Some(self.redactor.redact(&line))
            }
            Event::ToolCall { .. } | Event::RunOfTestFinished { .. } => None,
            Event::TestFinished { index, result } => {
                self.running.retain(|i| i != index);
                Some(match self.redactor.redact_value(result.as_ref()) {
                    Ok(t) => {
                        let mut block = terminal::render_test(&t);
                        if let (true, Some(why)) = (self.verbose, &t.not_reused) {
                            block.push_str(&format!("  not reused: {}\n", inert::terminal(why)));
                        }
                        block + "\n"
                    }
                    Err(e) => format!("error: can not redact the output: {e}\n"),
                })
            }
            Event::RunFinished { summary } => Some(terminal::render_summary(summary)),
        }
    }

    /// The names of the tests running now, in the order they started, each one line made
    /// inert for a terminal.
    pub fn running(&self) -> Vec<String> {
        self.running
            .iter()
            .map(|i| inert::terminal(self.name(*i)))
            .collect()
    }

    /// How many tests the run has.
    pub fn total(&self) -> usize {
        self.names.len()
    }

    fn name(&self, index: usize) -> &str {
        self.names.get(index).map_or("?", String::as_str)
    }
}
