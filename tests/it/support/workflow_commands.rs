//! A reader of GitHub Actions workflow commands: given what a step printed, the commands a
//! runner would act on.
//!
//! Written from GitHub's documentation ("Workflow commands for GitHub Actions": the
//! `::name key=value,key=value::data` syntax, `::stop-commands::TOKEN` … `::TOKEN::` in
//! "Stopping and starting workflow commands") and, where the documentation says nothing,
//! as lenient as the runner can be, so that it finds at least what a runner finds:
//! - output is read line by line as the runner reads a process's output with .NET's
//!   `ReadLine`: `\n`, `\r\n` and a bare `\r` end a line; so do NEL, U+2028 and U+2029,
//!   which other readers honour;
//! - a command is a line that, after leading whitespace, starts with `::`, holds a second
//!   `::`, and names a command between them (any name: a name the runner does not know is
//!   still an error annotation in the log);
//! - the legacy form `##[name key=value;…]data`, anywhere in a line (the runner's older
//!   parser looks for `##[` with `IndexOf`);
//! - the runner compares with culture-sensitive .NET string functions, which may skip
//!   characters a collation ignores (controls, format characters, some marks): every
//!   character outside printable ASCII is dropped before a line is matched;
//! - `::stop-commands::TOKEN` stops acting on commands until a line `::TOKEN::` (names
//!   compare without case); both are listed, nothing between them is.

/// One command a runner would act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Its name (`error`, `add-mask`, `stop-commands`, or a stop token resuming).
    pub name: String,
    /// `key=value` properties, as written (not unescaped).
    pub properties: String,
    /// What follows the command, as written.
    pub data: String,
    /// The whole line it was read from, as printed.
    pub line: String,
}

/// The lines a runner reads from `output`.
fn runner_lines(output: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = output.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}') {
            lines.push(&output[start..i]);
            start = i + c.len_utf8();
            if c == '\r' && chars.peek().is_some_and(|(_, n)| *n == '\n') {
                chars.next();
                start += 1;
            }
        }
    }
    if start < output.len() {
        lines.push(&output[start..]);
    }
    lines
}

/// The command `line` holds, read leniently (see the module's docs).
fn parse(line: &str) -> Option<Command> {
    let view: String = line.chars().filter(|c| (' '..='~').contains(c)).collect();
    let trimmed = view.trim_start();
    let command = |info: &str, data: &str, props_sep: char| {
        let (name, properties) = info.split_once(props_sep).unwrap_or((info, ""));
        (!name.is_empty()).then(|| Command {
            name: name.to_owned(),
            properties: properties.to_owned(),
            data: data.to_owned(),
            line: line.to_owned(),
        })
    };
    if let Some(rest) = trimmed.strip_prefix("::")
        && let Some((info, data)) = rest.split_once("::")
        && let Some(found) = command(info, data, ' ')
    {
        return Some(found);
    }
    let at = view.find("##[")?;
    let (info, data) = view[at + 3..].split_once(']')?;
    command(info, data, ' ')
}

/// Every command a runner would act on in `output` (a step's stdout, or stderr: the runner
/// reads both into one stop state), in order.
pub fn commands(output: &str) -> Vec<Command> {
    let mut acted = Vec::new();
    let mut stopped_until: Option<String> = None;
    for line in runner_lines(output) {
        let Some(command) = parse(line) else {
            continue;
        };
        match &stopped_until {
            Some(token) if command.name.eq_ignore_ascii_case(token) => {
                stopped_until = None;
                acted.push(command);
            }
            Some(_) => {}
            None => {
                if command.name.eq_ignore_ascii_case("stop-commands") {
                    stopped_until = Some(command.data.clone());
                }
                acted.push(command);
            }
        }
    }
    acted
}

#[test]
fn the_reader_finds_what_a_runner_acts_on() {
    let log = "plain\n  ::error file=a.rs,line=3::boom\r::add-mask::s3cret\r\n\
               text ##[warning]legacy\n\
               \u{200b}:\u{2060}:notice::hidden\n\
               x\u{2028}::notice::separated\n\
               ::stop-commands::tok\n::error::ignored\n::TOK::\n::debug::after\n\
               a :: b\n::\n::::x\n";
    let found: Vec<(String, String)> = commands(log)
        .into_iter()
        .map(|c| (c.name, c.data))
        .collect();
    let expected: Vec<(String, String)> = [
        ("error", "boom"),
        ("add-mask", "s3cret"),
        ("warning", "legacy"),
        ("notice", "hidden"),
        ("notice", "separated"),
        ("stop-commands", "tok"),
        ("TOK", ""),
        ("debug", "after"),
    ]
    .iter()
    .map(|(n, d)| (n.to_string(), d.to_string()))
    .collect();
    assert_eq!(found, expected);
    assert_eq!(
        commands("  ::error file=a.rs,line=3::boom")[0].properties,
        "file=a.rs,line=3"
    );
}
