//! Text aptitude does not control — an agent's answer, its tool calls and their output, its
//! stderr, the names of the files it made, `verify` output, a judge's reasoning, and
//! anything read back from a results file — made inert for each place aptitude writes it.
//! Every renderer goes through here; none escapes on its own.
//!
//! | sink | made inert by |
//! |---|---|
//! | a terminal | [`terminal`] (one line), [`terminal_lines`] (a block), then [`terminal_output`] on the whole stream |
//! | a GitHub Actions log (stdout, stderr) | [`workflow_commands_defused`] on every line; aptitude's own commands from [`workflow_command`] |
//! | GitHub Flavored Markdown (PR comment, job summary, `--markdown`) | [`markdown_inline`], [`markdown_html_inline`], [`markdown_code_block`] |
//! | check-run annotations | [`single_line`] (titles), [`plain_text`] (messages), [`repository_path`] (paths) |
//! | the HTML report (escaped by askama) | [`document`] for the control bytes |
//!
//! **Control characters are shown, never deleted or passed on.** They are Unicode's `Cc`
//! (C0, DEL, C1), the line and paragraph separators (U+2028, U+2029) and the
//! `Bidi_Control` characters (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069): C0
//! and DEL in caret notation as `cat -v` shows them (`^[` for ESC, `^M` for a carriage
//! return, `^?` for DEL), the others as `<U+XXXX>`. An escape sequence whose ESC is shown
//! is printable text (`^[[2A`, `^[]52;c;…`), so no sequence has to be recognised to be
//! made harmless, and none is guessed at. The HTML report and JUnit escape for their own
//! formats (askama, quick-junit); the HTML report's control bytes are shown by
//! [`document`].
//!
//! **Line terminators.** Readers of aptitude's outputs end lines at different characters:
//! CommonMark and .NET's `ReadLine` (the Actions runner) at `\n`, `\r\n` and a bare `\r`;
//! browsers and some editors also at NEL (U+0085), U+2028 and U+2029. Text bound for
//! Markdown or an annotation is normalised by [`normalize_line_breaks`] before anything is
//! decided on its lines (which fence, which indentation).

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` is shown escaped rather than passed on: `Cc`, `Zl`, `Zp`, `Bidi_Control`.
fn is_control(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') || is_bidi_control(c)
}

/// Unicode's `Bidi_Control` property: the characters that reorder what follows them.
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// Appends the visible form of the control character `c`: `^X` for C0, `^?` for DEL,
/// `<U+XXXX>` for the rest.
fn push_visible(out: &mut String, c: char) {
    let code = u32::from(c);
    match char::from_u32(code + 0x40) {
        Some(caret) if code < 0x20 => {
            out.push('^');
            out.push(caret);
        }
        _ if code == 0x7f => out.push_str("^?"),
        _ => {
            let _ = write!(out, "<U+{code:04X}>");
        }
    }
}

/// `text` with every control character shown, but those `keep` passes.
fn visible(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(|c| is_control(c) && !keep(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_control(c) && !keep(c) {
            push_visible(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` with every line terminator — `\r\n`, a bare `\r`, NEL (U+0085), U+2028, U+2029 —
/// made `\n`.
pub fn normalize_line_breaks(text: &str) -> Cow<'_, str> {
    if !text.contains(['\r', '\u{85}', '\u{2028}', '\u{2029}']) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push('\n');
            }
            '\u{85}' | '\u{2028}' | '\u{2029}' => out.push('\n'),
            other => out.push(other),
        }
    }
    Cow::Owned(out)
}

// ---------------------------------------------------------------------------------------
// Terminal

/// `text` as part of one terminal line: every control character shown (`^[`, `^M`,
/// `<U+202E>`), a line feed as `⏎`, tabs kept. Nothing in it can move the cursor, change
/// colours, set the window title, write the clipboard or make a link.
pub fn terminal(text: &str) -> String {
    let shown = visible(text, |c| c == '\t' || c == '\n');
    if shown.contains('\n') {
        shown.replace('\n', "⏎")
    } else {
        shown.into_owned()
    }
}

/// `text` as lines of a terminal: split at `\n` (a `\r\n` is one line break), each line
/// as [`terminal`] shows it (a bare `\r` is `^M`). The caller indents them under its own
/// prefix, so that no line of agent text starts at column 0.
pub fn terminal_lines(text: &str) -> Vec<String> {
    text.lines().map(terminal).collect()
}

/// The length in bytes of the SGR sequence (`ESC [`, parameters of digits, `;` and `:`,
/// then `m`) `text` starts with.
fn sgr_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if !bytes.starts_with(b"\x1b[") {
        return None;
    }
    let params = bytes[2..]
        .iter()
        .take_while(|b| b.is_ascii_digit() || matches!(b, b';' | b':'))
        .count();
    (bytes.get(2 + params) == Some(&b'm')).then_some(2 + params + 1)
}

/// A whole text on its way to stdout or stderr, built by aptitude: its own styling (SGR
/// sequences: colours, bold, dim) passes, line feeds and tabs pass, every other control
/// character is shown as [`terminal`] shows it. The second line behind [`terminal`]: a
/// renderer that forgot to call it can still not move the cursor, erase a line, set the
/// window title, write the clipboard (OSC 52) or make a link (OSC 8).
pub fn terminal_output(text: &str) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| is_control(c) && !matches!(c, '\n' | '\t'))
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(len) = sgr_len(rest) {
            out.push_str(&rest[..len]);
            rest = &rest[len..];
            continue;
        }
        if is_control(c) && !matches!(c, '\n' | '\t') {
            push_visible(&mut out, c);
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// A whole file aptitude writes for a browser (the HTML report), already HTML-escaped:
/// every control character shown as [`terminal`] shows it (`<U+XXXX>` written as HTML
/// entities) but line feeds, carriage returns and tabs. The file's own
/// markup and script hold none, so only text from elsewhere changes. A browser ignores such
/// bytes; a terminal showing the file (`cat report.html`) would act on them.
pub fn document(text: &str) -> Cow<'_, str> {
    let keep = |c: char| matches!(c, '\n' | '\r' | '\t');
    if !text.chars().any(|c| is_control(c) && !keep(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !is_control(c) || keep(c) {
            out.push(c);
        } else if u32::from(c) < 0x20 || c == '\u{7f}' {
            push_visible(&mut out, c);
        } else {
            // `<U+XXXX>` as HTML shows it: the markup is already escaped.
            let _ = write!(out, "&lt;U+{:04X}&gt;", u32::from(c));
        }
    }
    Cow::Owned(out)
}

// ---------------------------------------------------------------------------------------
// GitHub Actions logs

/// Whether `c` ends a line for some reader of a log: `\n`, `\r` (.NET's `ReadLine`, which
/// the Actions runner reads output with), NEL, U+2028, U+2029.
fn ends_line(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// Where a backslash goes into `line` so that the Actions runner reads no workflow command
/// in it, as byte offsets.
///
/// The runner (`actions/runner`, `ActionCommand.TryParseV2` and `TryParse`) acts on a line
/// that starts, after leading whitespace, with `::` and holds a second `::`
/// (`::name props::data`), and on `##[name props]data` anywhere in a line. It compares with
/// .NET's culture-sensitive `StartsWith` and `IndexOf`, which may skip characters a
/// collation ignores (controls, format characters, some marks), so the line is read here
/// as the runner might at its most lenient: only its printable ASCII characters count, and
/// aptitude's own SGR sequences not at all (`anstream` strips them off a terminal, after
/// this has run).
/// - a line whose first such character other than a space is `:`, followed by another
///   `:`, gets a backslash before that first `:` (`\::error::x`);
/// - every `#`, `#`, `[` among them gets a backslash between the two `#` (`#\#[error]`).
///
/// Both read plainly and neither can be skipped by a collation: a backslash has weight.
fn defusing_points(line: &str) -> Vec<usize> {
    let mut ascii: Vec<(usize, u8)> = Vec::with_capacity(line.len());
    let mut at = 0;
    while let Some(c) = line[at..].chars().next() {
        if let Some(len) = sgr_len(&line[at..]) {
            at += len;
            continue;
        }
        if (' '..='~').contains(&c) {
            ascii.push((at, c as u8));
        }
        at += c.len_utf8();
    }
    let mut points = Vec::new();
    let first = ascii.iter().position(|(_, b)| *b != b' ');
    if let Some(first) = first
        && ascii[first].1 == b':'
        && ascii.get(first + 1).is_some_and(|(_, b)| *b == b':')
    {
        points.push(ascii[first].0);
    }
    for w in ascii.windows(3) {
        if w[0].1 == b'#' && w[1].1 == b'#' && w[2].1 == b'[' {
            // Right after the first `#` (one byte).
            points.push(w[0].0 + 1);
        }
    }
    points.sort_unstable();
    points
}

/// Text written to a log GitHub Actions reads (aptitude's stdout and stderr) with no line
/// the runner would act on as a workflow command: `::add-mask::`, `::stop-commands::`,
/// `::error file=…::`, `##[error]` and the rest are defused with a visible backslash
/// ([`defusing_points`] says where). Lines are split where any reader ends them (`\n`,
/// `\r`, NEL, U+2028, U+2029).
///
/// aptitude applies it to everything it prints, in and out of GitHub Actions (a log can be
/// replayed into a step later), except its own commands ([`workflow_command`]). Why not
/// `::stop-commands::TOKEN` around agent text: the runner reads stdout and stderr on two
/// threads into one stop state, so a resume written on one stream can be acted on before a
/// line written earlier on the other; a line that is no command is safe in any order.
pub fn workflow_commands_defused(text: &str) -> Cow<'_, str> {
    if !text.contains([':', '#']) {
        return Cow::Borrowed(text);
    }
    let mut points = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices().filter(|(_, c)| ends_line(*c)) {
        points.extend(
            defusing_points(&text[start..i])
                .into_iter()
                .map(|p| p + start),
        );
        start = i + c.len_utf8();
    }
    points.extend(
        defusing_points(&text[start..])
            .into_iter()
            .map(|p| p + start),
    );
    if points.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + points.len());
    let mut from = 0;
    for p in points {
        out.push_str(&text[from..p]);
        out.push('\\');
        from = p;
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

/// One workflow command of aptitude's own — `::warning title=aptitude::message` — on one
/// line, escaped as GitHub's toolkit escapes them (`@actions/core`, `command.ts`): in the
/// data `%`, `\r`, `\n` as `%25`, `%0D`, `%0A`; in a property value also `:` and `,` as
/// `%3A` and `%2C`. Every other control character is shown ([`terminal`]). Ends with a line
/// break. The name is aptitude's (`warning`, `notice`, `error`), never a text's.
pub fn workflow_command(name: &'static str, properties: &[(&str, &str)], data: &str) -> String {
    let escape = |text: &str, property: bool| {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            match c {
                '%' => out.push_str("%25"),
                '\r' => out.push_str("%0D"),
                '\n' => out.push_str("%0A"),
                ':' if property => out.push_str("%3A"),
                ',' if property => out.push_str("%2C"),
                c if is_control(c) => push_visible(&mut out, c),
                c => out.push(c),
            }
        }
        out
    };
    let props: Vec<String> = properties
        .iter()
        .map(|(k, v)| format!("{k}={}", escape(v, true)))
        .collect();
    let sep = if props.is_empty() { "" } else { " " };
    format!(
        "::{name}{sep}{}::{}\n",
        props.join(","),
        escape(data, false)
    )
}

// ---------------------------------------------------------------------------------------
// Markdown (GitHub Flavored Markdown, as cmark-gfm renders it)

/// `text` on one line with its controls shown: every line terminator a space.
fn one_line(text: &str) -> String {
    let text = normalize_line_breaks(text);
    visible(&text, |c| c == '\t' || c == '\n').replace('\n', " ")
}

/// Breaks GFM's extended autolinks (`https://`, `http://`, `www.`) with a word joiner
/// (U+2060), which no autolink may contain, so that a URL from a text shows as text.
fn no_autolink(text: String) -> String {
    if !text.contains("://") && !text.to_ascii_lowercase().contains("www.") {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text.as_str();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("://") {
            out.push_str(":\u{2060}//");
            rest = after;
        } else if let Some(after) = rest
            .get(..4)
            .filter(|head| head.eq_ignore_ascii_case("www."))
            .and_then(|_| rest.get(4..))
        {
            // `get`: the four bytes after a multi-byte character need not end on a
            // character boundary ("docs — they" panicked here).
            out.push_str(&rest[..3]);
            out.push('\u{2060}');
            out.push('.');
            rest = after;
        } else if let Some(c) = rest.chars().next() {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Text for a table cell or a line of GFM: one line, controls shown, and no HTML (`&`,
/// `<`, `>` as entities), no table break (`|`), no link (`[`, `]` escaped, and `\` before
/// punctuation; backticks as `'`), no autolink and no `@mention` (a word joiner after `@`
/// and inside `://` and `www.`).
pub fn markdown_inline(text: &str) -> String {
    let text = one_line(text);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // A backslash escapes only ASCII punctuation (CommonMark): `\b` shows as is.
            '\\' if chars.peek().is_some_and(char::is_ascii_punctuation) => {
                out.push_str("\\\\");
            }
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("\\|"),
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            '`' => out.push('\''),
            // A word joiner after `@` keeps the text readable but never pings anyone.
            '@' => out.push_str("@\u{2060}"),
            other => out.push(other),
        }
    }
    no_autolink(out)
}

/// Text for raw HTML inside GFM, such as a `<summary>`, where Markdown is not parsed (a
/// `\|` would show as is): one line (a line break could end the HTML block), controls
/// shown, HTML escapes, no `@mention`, no autolink.
pub fn markdown_html_inline(text: &str) -> String {
    let text = one_line(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '@' => out.push_str("@\u{2060}"),
            other => out.push(other),
        }
    }
    no_autolink(out)
}

/// A fenced code block holding `text`: its line terminators normalised first (a bare
/// `\r`, NEL, U+2028 or U+2029 can not end a line the caller's indentation does not
/// reach), its other controls shown, and a fence longer than any backtick run in it, so
/// that nothing in it closes the block. Inside, GFM renders no HTML, mention or link.
pub fn markdown_code_block(text: &str) -> String {
    let text = normalize_line_breaks(text);
    let text = visible(&text, |c| c == '\t' || c == '\n');
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}text\n{}\n{fence}", text.trim_end())
}

// ---------------------------------------------------------------------------------------
// Check runs and annotations

/// One line for a field GitHub shows on one line (an annotation's `title`): line
/// terminators as spaces, controls shown.
pub fn single_line(text: &str) -> String {
    one_line(text)
}

/// Plain text over several lines (an annotation's `message`, which GitHub shows
/// unrendered): line terminators normalised to `\n`, other controls shown.
pub fn plain_text(text: &str) -> String {
    let text = normalize_line_breaks(text);
    visible(&text, |c| c == '\t' || c == '\n').into_owned()
}

/// Why a path can not be an annotation's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathRefused {
    /// The path is empty.
    #[error("the path is empty")]
    Empty,
    /// It holds a control character or a line terminator.
    #[error("the path holds a control character: {0}")]
    Control(String),
    /// It is absolute (`/x`, `C:\x`) or uses backslashes.
    #[error("the path is not relative to the repository: {0}")]
    NotRelative(String),
    /// A component is `.`, `..` or empty.
    #[error("the path leaves the repository or is not clean: {0}")]
    NotClean(String),
}

/// `path` checked as a clean path relative to the repository root, as GitHub expects an
/// annotation's `path`: not empty, no control character or line terminator, not absolute,
/// `/` between components, no `.`, `..` or empty component.
///
/// # Errors
/// [`PathRefused`] says why.
pub fn repository_path(path: &str) -> Result<&str, PathRefused> {
    if path.is_empty() {
        return Err(PathRefused::Empty);
    }
    if path.chars().any(|c| is_control(c) || ends_line(c)) {
        return Err(PathRefused::Control(terminal(path)));
    }
    let drive = path.as_bytes().get(1) == Some(&b':');
    if path.starts_with('/') || path.contains('\\') || drive {
        return Err(PathRefused::NotRelative(path.to_owned()));
    }
    if path.split('/').any(|c| matches!(c, "" | "." | "..")) {
        return Err(PathRefused::NotClean(path.to_owned()));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 44: an honest AGENTS.md rule made `run --markdown` exit 101, since the check
    /// for `www.` sliced four bytes that ended inside the em dash.
    #[test]
    fn markdown_keeps_a_url_followed_by_multibyte_text_whole() {
        let rule = "Read the docs at https://example.com/docs — they are short.";
        assert_eq!(
            markdown_inline(rule),
            "Read the docs at https:\u{2060}//example.com/docs — they are short."
        );
        assert_eq!(
            markdown_html_inline("www.é—x.com s — www."),
            "www\u{2060}.é—x.com s — www\u{2060}."
        );
        for cut in 0..=rule.len() {
            if let (Some(head), Some(tail)) = (rule.get(..cut), rule.get(cut..)) {
                let _ = markdown_inline(&format!("www.{head}é{tail}"));
            }
        }
    }

    #[test]
    fn a_terminal_sees_every_control_character_as_text() {
        assert_eq!(
            terminal("a\x1b[2A\x1b[2K\r✓ passed\x07"),
            "a^[[2A^[[2K^M✓ passed^G"
        );
        assert_eq!(
            terminal("\x1b]52;c;ZXZpbA==\x07\x1b]8;;https://x\x1b\\l\x1b]8;;\x1b\\"),
            "^[]52;c;ZXZpbA==^G^[]8;;https://x^[\\l^[]8;;^[\\"
        );
        assert_eq!(
            terminal("\u{9b}2J \u{7f} \u{202e}x"),
            "<U+009B>2J ^? <U+202E>x"
        );
        assert_eq!(terminal("two\nlines\tand a tab"), "two⏎lines\tand a tab");
        assert_eq!(terminal_lines("a\r\nb\rc\n\x1b[1m"), ["a", "b^Mc", "^[[1m"]);
    }

    #[test]
    fn the_output_stream_keeps_aptitudes_colours_and_shows_everything_else() {
        let ours = "\x1b[1m\x1b[31mfailed\x1b[0m \x1b[38;5;2mok\x1b[0m\n";
        assert_eq!(terminal_output(ours), ours);
        assert_eq!(
            terminal_output("\x1b[31mx\x1b[0m\x1b[1A\x1b]0;title\x07\r"),
            "\x1b[31mx\x1b[0m^[[1A^[]0;title^G^M"
        );
    }

    #[test]
    fn a_document_keeps_its_lines_and_shows_the_rest() {
        assert_eq!(document("<p>a\r\nb\tc</p>\n"), "<p>a\r\nb\tc</p>\n");
        assert_eq!(document("x\x1b]0;t\x07\u{2028}"), "x^[]0;t^G&lt;U+2028&gt;");
    }

    #[test]
    fn no_line_is_a_workflow_command() {
        let cases = [
            ("::add-mask::x", "\\::add-mask::x"),
            ("  ::error file=a,line=1::b", "  \\::error file=a,line=1::b"),
            ("ok\n::stop-commands::t\n", "ok\n\\::stop-commands::t\n"),
            ("ok\r::warning::x", "ok\r\\::warning::x"),
            ("x\u{2028}::notice::y", "x\u{2028}\\::notice::y"),
            ("text ##[error]boom", "text #\\#[error]boom"),
            ("###[group]", "##\\#[group]"),
            // What a collation might skip is skipped here too.
            ("\u{200b}:\u{2060}:error::x", "\u{200b}\\:\u{2060}:error::x"),
            ("#\x1b#[error]", "#\\\x1b#[error]"),
            // Colours are stripped off a terminal after this has run.
            (
                "    \x1b[33m::hijack::\x1b[0m",
                "    \x1b[33m\\::hijack::\x1b[0m",
            ),
            ("#\x1b[0m#[error]", "#\\\x1b[0m#[error]"),
        ];
        for (text, defused) in cases {
            assert_eq!(workflow_commands_defused(text), defused, "{text:?}");
        }
        for plain in ["a :: b", "x: y", "# heading", "1 ## [x]", "a\n:b"] {
            assert_eq!(workflow_commands_defused(plain), plain);
        }
    }

    #[test]
    fn aptitudes_own_commands_are_one_line_and_escaped() {
        assert_eq!(
            workflow_command("warning", &[("title", "a:b,c")], "50%\r\nnext\x1b"),
            "::warning title=a%3Ab%2Cc::50%25%0D%0Anext^[\n"
        );
        assert_eq!(workflow_command("notice", &[], "x"), "::notice::x\n");
    }

    #[test]
    fn markdown_inline_text_can_not_inject() {
        assert_eq!(
            markdown_inline("<b>@octocat</b> | [x](y)"),
            "&lt;b&gt;@\u{2060}octocat&lt;/b&gt; \\| \\[x\\](y)"
        );
        assert_eq!(markdown_inline("a\nb\rc\u{2028}d"), "a b c d");
        assert_eq!(markdown_inline("a\\|b"), "a\\\\\\|b");
        assert_eq!(markdown_inline("/^cat\\b/"), "/^cat\\b/");
        assert_eq!(
            markdown_inline("see https://evil.example and WWW.evil.example"),
            "see https:\u{2060}//evil.example and WWW\u{2060}.evil.example"
        );
        assert_eq!(markdown_inline("\x1b[31m"), "^\\[\\[31m");
        assert_eq!(
            markdown_html_inline("a | b <i>@x</i>\n`c`"),
            "a | b &lt;i&gt;@\u{2060}x&lt;/i&gt; `c`"
        );
    }

    #[test]
    fn code_blocks_outgrow_the_text_after_line_breaks_are_normalised() {
        assert_eq!(markdown_code_block("plain"), "```text\nplain\n```");
        let f = markdown_code_block("```\n</details>\n````");
        assert!(f.starts_with("`````text\n"), "{f}");
        assert!(f.ends_with("\n`````"), "{f}");
        assert_eq!(
            markdown_code_block("a\rb\u{85}c\u{2029}d\r\ne\x1b"),
            "```text\na\nb\nc\nd\ne^[\n```"
        );
    }

    #[test]
    fn annotation_fields_are_single_line_and_paths_clean() {
        assert_eq!(single_line("t\r\n::error::x"), "t ::error::x");
        assert_eq!(plain_text("a\rb\x1b"), "a\nb^[");
        assert_eq!(
            repository_path("tests/a.aptitude.yaml"),
            Ok("tests/a.aptitude.yaml")
        );
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a//b",
            "./a",
            "a\\b",
            "C:x",
            "a\n::error file=x::y",
            "a\u{2028}b",
        ] {
            assert!(repository_path(bad).is_err(), "{bad:?}");
        }
    }
}
