//! Shared text formatting for every stage that writes words for people: durations,
//! numbers, tool inputs in one line, and cuts to a size. Tool calls and usage in words are
//! the transcript's ([`crate::transcript::display`]).
//!
//! It sits below the assertions (whose evidence uses it) and the reporters (which show it),
//! so neither reaches into the other for a helper.

/// `1.2s`, `340ms`, `2m 05s`.
pub fn format_duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m {:02}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

/// `1`, `1 and 3`, `1, 3 and 4`: items in a sentence.
pub fn and_list<T: std::fmt::Display>(items: &[T]) -> String {
    let words: Vec<String> = items.iter().map(T::to_string).collect();
    match words.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// `1,234`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A tool input in one short line: its main field (`command`, `file_path`, `pattern`,
/// `path`, `url`, `query`) as `key="value"`, or its JSON, cut to `max` characters.
pub fn summarize_input(input: &serde_json::Value, max: usize) -> String {
    let text = main_field(input)
        .and_then(|k| input.get(k).map(|v| (k, v)))
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s:?}"),
            other => format!("{k}={other}"),
        })
        .unwrap_or_else(|| input.to_string());
    truncate(&text, max)
}

/// The input field that best identifies a call, shown by [`summarize_input`].
pub fn main_field(input: &serde_json::Value) -> Option<&'static str> {
    const MAIN_FIELDS: &[&str] = &[
        "command",
        "cmd",
        "file_path",
        "notebook_path",
        "pattern",
        "path",
        "url",
        "query",
        "prompt",
    ];
    MAIN_FIELDS
        .iter()
        .copied()
        .find(|k| input.get(*k).is_some())
}

/// Cuts `s` to at most `max` characters, keeping line breaks, and says how much was cut.
/// Redacts before cutting and never shows part of a token ([`crate::shared::cut`]).
pub fn truncate_lines(s: &str, max: usize) -> String {
    let cut = crate::shared::cut::chars(s, max);
    if cut.was_cut() {
        format!(
            "{}\n… [truncated: {} more characters]",
            cut.kept, cut.left_out
        )
    } else {
        cut.kept
    }
}

/// Cuts `s` to at most `max` characters, marking the cut with `…`. Redacts before
/// cutting and never shows part of a token ([`crate::shared::cut`]).
pub fn truncate(s: &str, max: usize) -> String {
    let s = s.replace('\n', "⏎");
    let whole = crate::shared::cut::chars(&s, max);
    if !whole.was_cut() {
        return whole.kept;
    }
    let mut out = crate::shared::cut::chars(&s, max.saturating_sub(1)).kept;
    out.push('…');
    out
}

/// `p = 0.049`, `p < 0.001`: [`p_value`] with its sign, for a sentence.
pub fn p_phrase(p: f64) -> String {
    match p_value(p) {
        shown if shown.starts_with('<') => format!("p {shown}"),
        shown => format!("p = {shown}"),
    }
}

/// A p-value as shown (`0.031`, `< 0.001`), never on the other side of 0.05 — the
/// significance level reports compare against (strictly below is significant,
/// docs/routing.md) — than the value itself: `0.0498` is shown `0.0498`, not `0.050`, so
/// that a regression is never shown with a p that reads as not significant, and
/// `0.0501` as `0.0501`.
pub fn p_value(p: f64) -> String {
    if p < 0.001 {
        return "< 0.001".to_owned();
    }
    for decimals in 3..=6 {
        let shown = format!("{p:.decimals$}");
        let read: f64 = shown.parse().unwrap_or(p);
        if (read < 0.05) == (p < 0.05) {
            return shown;
        }
    }
    format!("{p}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A p-value is never shown on the other side of 0.05 than it is.
    #[test]
    fn a_p_value_never_reads_across_the_significance_level() {
        assert_eq!(p_value(0.0498), "0.0498");
        assert_eq!(p_value(0.04999), "0.04999");
        assert_eq!(p_value(0.0501), "0.050");
        assert_eq!(p_value(0.05), "0.050");
        assert_eq!(p_value(0.031), "0.031");
        assert_eq!(p_value(0.0004), "< 0.001");
        assert_eq!(p_value(1.0), "1.000");
    }

    #[test]
    fn durations_and_numbers() {
        assert_eq!(format_duration(340), "340ms");
        assert_eq!(format_duration(1234), "1.2s");
        assert_eq!(format_duration(125_000), "2m 05s");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(12), "12");
    }
}
