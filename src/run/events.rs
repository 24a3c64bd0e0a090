//! Run events: what happens while tests run, in the order it happens.
//!
//! The runner (and `analyze`) emit them; reporters consume them — the live terminal
//! reporter ([`crate::report::live`]) prints each test's block as its [`Event::TestFinished`]
//! arrives. Nothing that emits an event prints. Every event names its test by its position
//! in the input order (`index`); a test repeated `runs: N` times also names the run
//! (1-based), so a reporter can follow each run apart.

use crate::transcript::ToolCall;
use crate::verdict::results::{Summary, TestResult, TestStatus};

/// What happens during a run, for reporters.
#[derive(Debug, Clone)]
pub enum Event {
    /// The run began: these tests (names, in input order) will be run or evaluated.
    RunStarted {
        /// Every test's name, by index.
        names: Vec<String>,
    },
    /// A test started: its first run is preparing its workspace.
    TestStarted {
        /// Position of the test in the input order.
        index: usize,
        /// The test's name.
        name: String,
    },
    /// An agent made a tool call (while its test runs).
    ToolCall {
        /// Position of the test in the input order.
        index: usize,
        /// Which run of the test made it, 1-based.
        run: u32,
        /// The call (its result may not be known yet).
        call: Box<ToolCall>,
    },
    /// One run of a test repeated `runs: N` times finished (tests run once emit only
    /// [`Event::TestFinished`]).
    RunOfTestFinished {
        /// Position of the test in the input order.
        index: usize,
        /// Which run, 1-based.
        run: u32,
        /// How many runs the test has.
        runs: u32,
        /// That run's verdict.
        status: TestStatus,
    },
    /// A test finished (every run of it); its result is final.
    TestFinished {
        /// Position of the test in the input order.
        index: usize,
        /// The result.
        result: Box<TestResult>,
    },
    /// Every test finished; the totals.
    RunFinished {
        /// The run's totals.
        summary: Box<Summary>,
    },
}
