//! Engine diagnostics through `tracing`, apart from what aptitude shows its user: off
//! unless asked for, on stderr only, every line redacted.
//!
//! `RUST_LOG` (an `EnvFilter` directive such as `aptitude=debug` or
//! `aptitude::agent=trace`) turns them on; so does `run -vv` (`aptitude=debug`). With
//! neither, no subscriber is installed and the `tracing` macros cost a check of a static.

use std::io::Write as _;
use std::sync::Arc;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

use crate::shared::redact::Redactor;

/// The filter when only `-vv` asks for diagnostics.
const VERBOSE_FILTER: &str = "aptitude=debug";

/// Installs the stderr subscriber when `RUST_LOG` is set or `verbose` (`-vv`) asks for
/// it. An invalid `RUST_LOG` is reported once and falls back to [`VERBOSE_FILTER`].
pub fn init(verbose: bool) {
    let from_env = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let filter = match (&from_env, verbose) {
        (Some(directives), _) => match EnvFilter::try_new(directives) {
            Ok(filter) => filter,
            Err(e) => {
                super::output::err(&super::error::warning_line(&format!(
                    "RUST_LOG is not a valid filter ({e}); using {VERBOSE_FILTER}"
                )));
                EnvFilter::new(VERBOSE_FILTER)
            }
        },
        (None, true) => EnvFilter::new(VERBOSE_FILTER),
        (None, false) => return,
    };
    let writer = RedactingStderr {
        redactor: Arc::new(Redactor::from_process_env([])),
    };
    // Another subscriber already installed (a library user's) wins.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .with_target(true)
        .try_init();
}

/// Makes one [`RedactedLine`] per event.
#[derive(Clone)]
struct RedactingStderr {
    redactor: Arc<Redactor>,
}

impl<'a> MakeWriter<'a> for RedactingStderr {
    type Writer = RedactedLine;

    fn make_writer(&'a self) -> Self::Writer {
        RedactedLine {
            redactor: Arc::clone(&self.redactor),
            buf: Vec::new(),
        }
    }
}

/// One event's text, buffered whole so that a secret split across writes is still found,
/// redacted and written to stderr when dropped.
struct RedactedLine {
    redactor: Arc<Redactor>,
    buf: Vec<u8>,
}

impl std::io::Write for RedactedLine {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for RedactedLine {
    fn drop(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let text = self.redactor.redact(&String::from_utf8_lossy(&self.buf));
        // Made inert like every other output; a closed stderr loses diagnostics, never
        // the run.
        let text = super::output::inert(&text);
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }
}
