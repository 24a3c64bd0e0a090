//! Cutting text to a size for display, without ever showing part of a secret.
//!
//! Redaction ([`crate::shared::redact`]) matches whole secrets: a key cut in half no longer matches
//! and its first half would be shown. So every cut here redacts first — token shapes and
//! the secret values of aptitude's environment — and then never ends inside a token: when
//! the cut falls inside a run of token characters (`A-Z a-z 0-9 _ - + / =`) that began at
//! most [`TOKEN_BACKOFF`] characters earlier, the whole partial run is left out. A secret
//! known only to the caller's [`crate::shared::redact::Redactor`] (a test's `env:`) is therefore
//! either shown whole — and redacted by it — or not at all.
//!
//! Every truncation of text that can hold agent output goes through here: the assertion
//! details ([`crate::shared::text::truncate_lines`], [`crate::shared::text::truncate`]), the
//! HTML, Markdown, JUnit and terminal renderers and the GitHub bodies.

use std::sync::LazyLock;

use crate::shared::redact::Redactor;

/// How far back a cut may move to leave out a partial token, in characters. Longer than
/// any token shape `redact` knows (`sk-ant-…` keys are about 110 characters).
pub const TOKEN_BACKOFF: usize = 160;

/// Token shapes and aptitude's own secret environment values.
static PROCESS: LazyLock<Redactor> = LazyLock::new(|| Redactor::from_process_env([]));

/// Text cut to a bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// The redacted text kept (all of it when nothing was cut).
    pub kept: String,
    /// Characters of the redacted text left out (0 when nothing was cut).
    pub left_out: usize,
}

impl Cut {
    /// Whether anything was left out.
    pub fn was_cut(&self) -> bool {
        self.left_out > 0
    }
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '/' | '=')
}

/// Moves a cut at byte `end` of `text` back to the start of the token it splits, when that
/// token began within [`TOKEN_BACKOFF`] characters.
fn back_off(text: &str, end: usize) -> usize {
    let (head, tail) = text.split_at(end);
    let splits = head.chars().next_back().is_some_and(is_token_char)
        && tail.chars().next().is_some_and(is_token_char);
    if !splits {
        return end;
    }
    let mut start = end;
    for (walked, (i, c)) in head.char_indices().rev().enumerate() {
        if !is_token_char(c) {
            return start;
        }
        if walked >= TOKEN_BACKOFF {
            return end;
        }
        start = i;
    }
    // The token runs from the start of the text.
    if head.chars().count() <= TOKEN_BACKOFF {
        0
    } else {
        end
    }
}

fn cut_at(text: String, end: Option<usize>) -> Cut {
    match end {
        None => Cut {
            kept: text,
            left_out: 0,
        },
        Some(end) => {
            let end = back_off(&text, end);
            Cut {
                left_out: text[end..].chars().count(),
                kept: text[..end].to_owned(),
            }
        }
    }
}

/// `text` cut to at most `max_chars` characters: as it is when it fits (a whole text hides
/// nothing from a later redaction), else redacted, then cut.
pub fn chars(text: &str, max_chars: usize) -> Cut {
    if text.len() <= max_chars || text.chars().count() <= max_chars {
        return cut_at(text.to_owned(), None);
    }
    let text = PROCESS.redact(text);
    let end = text.char_indices().nth(max_chars).map(|(i, _)| i);
    cut_at(text, end)
}

/// The end of a text whose start was cut off (a tail kept from a stream): redacted, and
/// without the token run it starts with when that run is at most [`TOKEN_BACKOFF`]
/// characters long, since it may be the second half of a secret.
pub fn after_cut_start(text: &str) -> String {
    let text = PROCESS.redact(text);
    let mut start = 0;
    for (walked, (i, c)) in text.char_indices().enumerate() {
        if !is_token_char(c) {
            start = i;
            break;
        }
        if walked >= TOKEN_BACKOFF {
            return text;
        }
        start = i + c.len_utf8();
    }
    text[start..].to_owned()
}

/// `text` cut to at most `max_bytes` bytes of UTF-8, on a character boundary: as it is
/// when it fits, else redacted, then cut.
pub fn bytes(text: &str, max_bytes: usize) -> Cut {
    if text.len() <= max_bytes {
        return cut_at(text.to_owned(), None);
    }
    let text = PROCESS.redact(text);
    let end = (text.len() > max_bytes).then(|| {
        let mut end = max_bytes;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        end
    });
    cut_at(text, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: &[&str] = &[
        "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "AIzaSyA0123456789abcdefghijklmnopqrstuv",
        "AKIAABCDEFGHIJKLMNOP",
    ];

    #[test]
    fn a_key_straddling_the_cut_never_shows_in_part() {
        for key in KEYS {
            let text = format!("{} {key} and more text after it", "é".repeat(50));
            for max in 45..text.chars().count() {
                let c = chars(&text, max);
                assert!(!c.kept.contains(&key[..4]), "{max}: {}", c.kept);
                assert!(c.kept.chars().count() <= max);
            }
            for max in 90..text.len() {
                let b = bytes(&text, max);
                assert!(!b.kept.contains(&key[..4]), "{max}: {}", b.kept);
                assert!(b.kept.len() <= max);
            }
            // A text that fits is left whole, so the caller's redaction sees whole keys.
            assert_eq!(chars(&text, text.len()).kept, text);
        }
    }

    #[test]
    fn a_token_too_long_to_be_a_secret_is_cut_where_asked() {
        let c = chars(&"x".repeat(500), 300);
        assert_eq!((c.kept.len(), c.left_out), (300, 200));
        let words = chars("plain words here", 8);
        assert_eq!(words.kept, "plain ");
    }

    #[test]
    fn bytes_cut_on_a_char_boundary() {
        let c = bytes("ééé", 3);
        assert_eq!((c.kept.as_str(), c.left_out), ("é", 2));
        assert!(!bytes("short", 10).was_cut());
    }

    #[test]
    fn a_tail_never_starts_with_the_end_of_a_key() {
        let key = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        let stream = format!("error: token {key} refused\nnext line");
        for start in 0..stream.len() {
            let tail = after_cut_start(&stream[start..]);
            for piece in key.as_bytes().windows(8) {
                let piece = std::str::from_utf8(piece).unwrap();
                assert!(
                    !tail.contains(piece),
                    "start {start}: {tail:?} shows {piece:?}"
                );
            }
        }
        assert_eq!(after_cut_start("abc def"), " def");
        assert_eq!(after_cut_start(" def"), " def");
    }
}
