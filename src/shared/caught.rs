//! A panic turned into a value, for the few places where a bug in aptitude's own code
//! must not cost the user what was already decided: publishing (a pull request must not
//! keep an earlier ✅ because rendering this run's comment panicked) and writing reports.
//!
//! The panic's own message often quotes the text that broke the code (`byte index 4 is
//! not a char boundary; it is inside '—' … of `…``), which is agent or repository text:
//! callers print it only through the redactor and `shared::inert`.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `f`; a panic in it is `Err` with the panic's message (or `"a panic with no
/// message"`). The panic hook still runs first (the CLI's prints it inert, see
/// `cli::main`). Only for code whose state a panic can not leave half-changed for the
/// caller: pure renderers, or writes the caller reports as failed.
pub fn caught<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| message(payload.as_ref()))
}

/// The message of a panic's payload: a `&str` or a `String`, as `panic!` makes them.
pub fn message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with no message".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_message_and_a_value_passes_through() {
        assert_eq!(caught(|| 7), Ok(7));
        let text = "docs — they";
        let index = text.find('—').map_or(0, |i| i + 1);
        let err = caught(|| text[index..].len()).unwrap_err();
        assert!(err.contains("char boundary"), "{err}");
        assert_eq!(
            caught(|| -> u8 { std::panic::panic_any(5u8) }).unwrap_err(),
            "a panic with no message"
        );
    }
}
