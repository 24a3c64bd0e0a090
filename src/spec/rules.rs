//! The rules of an agent's instruction files — `AGENTS.md`, `CLAUDE.md`, `GEMINI.md`,
//! `QWEN.md`, skills' `SKILL.md`, `.cursor/rules`, Copilot's and Kiro's — each with an id
//! that lasts: what a test's `covers:` names and `aptitude coverage` reports on.
//!
//! A file is read as CommonMark (pulldown-cmark), and **a rule is an instruction**: a list
//! item, or a paragraph outside a list, one of whose sentences is imperative (it starts
//! with a verb of [`VERBS`]: `Run just test`, `Never push to main`) or directive (it says
//! must, should, never, always, do not, avoid, prefer, make sure …: [`DIRECTIVES`]), under
//! the path of headings above it. A table row is a rule only where it instructs (a cell
//! says one of [`DIRECTIVES`]: a command table's `| just test | Run the tests |` is a
//! reference, not a rule) and a header row never is. A code span is no verb (`` `make
//! style` runs ruff`` describes), a label followed only by commands (`` Lint: `make lint` ``)
//! is a reference, and a bold line without a full stop (`**Commands (Run Early)**`) a
//! label. Headings, descriptive prose (`This
//! repository holds the CLI.`), an `@file` import (Claude Code's `@AGENTS.md`: the
//! imported file's rules count, [`rules_in`] follows it) and a YAML front matter (`---` …
//! `---`, a skill's name and description) are not rules. A fenced code block belongs to
//! the rule just before it in its section.
//!
//! **Left out on purpose**, by an HTML comment in the file:
//! - `<!-- aptitude: ignore -->` leaves out the block after it — a paragraph, a whole list
//!   or table — or, before a heading, that heading's whole section;
//! - `<!-- aptitude: ignore-start -->` … `<!-- aptitude: ignore-end -->` everything between;
//! - `<!-- aptitude: ignore-file -->` anywhere, the whole file.
//!
//! Or from `aptitude.yaml`, without touching the file: `coverage: {exclude: [FILE,
//! "FILE#Heading > Path"]}` ([`exclude`]), applied where coverage is counted.
//!
//! A rule's id is `R` and 8 hex digits of the SHA-256 of its heading path and its text,
//! both with whitespace collapsed and letters lowercased: re-wrapping the text or
//! reordering the sections keeps it, changing the rule's words (or its heading's) makes a
//! new one.

use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde::{Deserialize, Serialize};
use sha2::Digest;

/// Names of instruction files, found at any depth of a workspace (a nested `AGENTS.md`
/// applies to its subtree).
pub const INSTRUCTION_NAMES: &[&str] = &[
    "AGENTS.md",
    "AGENT.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    "GEMINI.md",
    "QWEN.md",
    "SKILL.md",
    "CONVENTIONS.md",
    "copilot-instructions.md",
];

/// Directories whose every Markdown file is instructions: Cursor's rules, Kiro's
/// steering, GitHub Copilot's instruction files.
pub const INSTRUCTION_DIRS: &[&str] = &[".cursor/rules", ".kiro/steering", ".github/instructions"];

/// Directories never searched.
const SKIPPED: &[&str] = &[
    "node_modules",
    ".git",
    "target",
    ".venv",
    "venv",
    "dist",
    "build",
];

/// The most files read from one workspace, and the most bytes of one file.
const MAX_FILES: usize = 200;
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// One rule of an instruction file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    /// `R` and 8 hex digits (see the module docs).
    pub id: String,
    /// The file, relative to the workspace (`AGENTS.md`, `.claude/skills/pdf/SKILL.md`).
    pub file: String,
    /// The line the rule starts on (1-based).
    pub line: u32,
    /// The line it ends on.
    pub end_line: u32,
    /// The headings above it, outermost first (`["Testing", "Before you commit"]`).
    pub headings: Vec<String>,
    /// Its text, whitespace collapsed (Markdown marks removed, code kept).
    pub text: String,
}

impl Rule {
    /// `Testing > Before you commit`.
    pub fn heading_path(&self) -> String {
        self.headings.join(" > ")
    }
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The id of a rule with `headings` and `text` (see the module docs).
pub fn rule_id(headings: &[String], text: &str) -> String {
    let key = format!(
        "{}\n{}",
        collapse(&headings.join(" > ")).to_lowercase(),
        collapse(text).to_lowercase()
    );
    let digest = sha2::Sha256::digest(key.as_bytes());
    format!("R{}", crate::shared::hex(&digest[..4]))
}

/// The verbs an imperative sentence of an instruction file starts with (lowercase).
pub const VERBS: &[&str] = &[
    "add",
    "always",
    "apply",
    "ask",
    "assess",
    "attempt",
    "avoid",
    "be",
    "bump",
    "call",
    "change",
    "check",
    "cite",
    "clean",
    "commit",
    "compile",
    "configure",
    "confirm",
    "consider",
    "copy",
    "create",
    "declare",
    "define",
    "delete",
    "describe",
    "determine",
    "distinguish",
    "do",
    "document",
    "don't",
    "edit",
    "ensure",
    "explain",
    "export",
    "follow",
    "fix",
    "format",
    "generate",
    "group",
    "handle",
    "ignore",
    "implement",
    "import",
    "include",
    "indent",
    "install",
    "keep",
    "leave",
    "limit",
    "lint",
    "list",
    "load",
    "log",
    "look",
    "make",
    "mark",
    "merge",
    "migrate",
    "mock",
    "move",
    "name",
    "never",
    "note",
    "only",
    "open",
    "override",
    "pass",
    "pin",
    "place",
    "prefer",
    "prefix",
    "preserve",
    "print",
    "prioritize",
    "provide",
    "push",
    "put",
    "raise",
    "read",
    "rebase",
    "refactor",
    "regenerate",
    "remember",
    "reread",
    "remove",
    "rename",
    "replace",
    "reply",
    "report",
    "request",
    "require",
    "rerun",
    "re-run",
    "reset",
    "resolve",
    "respect",
    "return",
    "reuse",
    "review",
    "run",
    "search",
    "send",
    "set",
    "sign",
    "skip",
    "sort",
    "split",
    "squash",
    "stage",
    "start",
    "stay",
    "stick",
    "stop",
    "store",
    "strip",
    "submit",
    "tag",
    "test",
    "treat",
    "try",
    "type",
    "update",
    "upgrade",
    "use",
    "validate",
    "verify",
    "wait",
    "wrap",
    "write",
];

/// Words and phrases that make a sentence an instruction wherever they stand (lowercase,
/// matched as whole words).
pub const DIRECTIVES: &[&str] = &[
    "must",
    "mustn't",
    "should",
    "shouldn't",
    "never",
    "always",
    "do not",
    "don't",
    "avoid",
    "prefer",
    "make sure",
    "ensure",
    "need to",
    "needs to",
    "is required",
    "are required",
    "not allowed",
    "forbidden",
    "please",
    "instead of",
];

/// What a code span reads as when a text is classified: a word that is no verb, so that a
/// command (`` `make style` runs ruff``, `` Lint: `make lint` ``) never starts an
/// imperative sentence.
const CODE: &str = "`code`";

/// Whether `text` holds a word or phrase of [`DIRECTIVES`] as whole words, or says that
/// something requires doing (`Adding a doc requires updating the index`, unlike the fact
/// `Requires Python 3.10`).
fn directive(lower: &str) -> bool {
    let words: Vec<&str> = lower.split_whitespace().collect();
    if words
        .windows(2)
        .any(|w| matches!(w[0], "require" | "requires") && w[1].ends_with("ing"))
    {
        return true;
    }
    DIRECTIVES.iter().any(|d| {
        lower.match_indices(d).any(|(at, _)| {
            let before = lower[..at].chars().next_back();
            let after = lower[at + d.len()..].chars().next();
            let edge = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric() && c != '\'');
            edge(before) && edge(after)
        })
    })
}

/// Whether `text` (a list item or a paragraph, Markdown marks removed) is an instruction:
/// one of its sentences is imperative or directive (see the module docs).
pub fn is_instruction(text: &str) -> bool {
    let lower = text.to_lowercase();
    if directive(&lower) {
        return true;
    }
    // A one-word label before a colon and a description is a term being defined (`fix:
    // Bug fix` in a list of commit types), not a verb: only what follows it can instruct.
    // Before commands it stays a verb (`Install: \`uv sync\``).
    let body = match lower.split_once(':') {
        Some((label, rest))
            if !rest.trim().is_empty()
                && !rest.contains(CODE)
                && label.split_whitespace().count() == 1 =>
        {
            rest
        }
        _ => lower.as_str(),
    };
    // Sentences and their clauses (`When X, use Y`), and what follows a leading label
    // (`Testing: run just test`).
    body.split(['.', ';', '!', '?', ':', ',', '(', ')', '\n'])
        .any(|sentence| {
            let first = sentence
                .split_whitespace()
                .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-'))
                .find(|w| !w.is_empty() && !w.chars().all(|c| c.is_ascii_digit()));
            first.is_some_and(|w| VERBS.contains(&w))
        })
}

/// Whether `plain` (a text with its code spans read as [`CODE`]) is a command reference:
/// a label, a colon, and only commands after it (`Style/format: \`make style\``,
/// `Run list: \`pytest -n 8\``), as a command table's row is.
fn command_reference(plain: &str) -> bool {
    let Some((label, rest)) = plain.split_once(':') else {
        return false;
    };
    !label.contains(CODE)
        && rest.contains(CODE)
        && rest
            .replace(CODE, " ")
            .split(|c: char| !c.is_alphanumeric())
            .all(|w| w.is_empty() || matches!(w, "or" | "and"))
}

/// Whether `text` is only `@file` imports (Claude Code's `@AGENTS.md`).
fn only_imports(text: &str) -> bool {
    let mut words = text.split_whitespace().peekable();
    words.peek().is_some() && words.all(|w| w.starts_with('@') && w.len() > 1)
}

/// The files `text` imports with `@path` (Claude Code's memory imports): words that start
/// with `@` and name a path (holding `/` or a `.md` ending), outside code spans.
pub fn imports_of(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        for word in line.split_whitespace() {
            let Some(path) = word.strip_prefix('@') else {
                continue;
            };
            let path = path.trim_end_matches([',', ';', ')', '.']);
            let path = path.trim_end_matches('.');
            if (path.ends_with(".md") || path.contains('/'))
                && !path.starts_with('~')
                && !path.contains("://")
                && !out.iter().any(|p| p == path)
            {
                out.push(path.to_owned());
            }
        }
    }
    out
}

/// A rule being read.
#[derive(Debug, Default)]
struct Open {
    start: usize,
    end: usize,
    text: String,
    /// The text with each code span as [`CODE`]: what is classified.
    plain: String,
    /// Some of its text is outside `**strong**` (else it is all bold: a label when it
    /// ends without a full stop, `**Commands (Run Early)**`).
    unbold: bool,
}

/// The rules of one file: `file` is its name relative to the workspace, `text` its
/// content.
pub fn rules_of(file: &str, text: &str) -> Vec<Rule> {
    let body = without_front_matter(text);
    let mut split = Splitter {
        file,
        lines: std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect(),
        ..Splitter::default()
    };
    let parser = Parser::new_ext(
        &body,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    );
    for (event, range) in parser.into_offset_iter() {
        split.marker(&event);
        split.depth_of(&event);
        split.event(event, range);
        // A block left out ends with the top-level block it was (its rules read first).
        if split.depth == 0 {
            split.ignoring_block = false;
        }
    }
    if split.ignore_file {
        return Vec::new();
    }
    split.rules
}

/// The state of [`rules_of`] while it reads one file's Markdown events.
#[derive(Default)]
struct Splitter<'a> {
    file: &'a str,
    /// The byte offset where each line starts.
    lines: Vec<usize>,
    rules: Vec<Rule>,
    /// Whether the block before the current one was kept as a rule (a code block
    /// belongs only to a rule just before it).
    last_kept: bool,
    /// Tags open (Markdown nesting).
    depth: usize,
    /// `<!-- aptitude: ignore -->` was read: the next block is left out.
    ignore_next: bool,
    /// A block left out is open.
    ignoring_block: bool,
    /// The level of a heading whose section is left out.
    ignoring_section: Option<u8>,
    /// Between `ignore-start` and `ignore-end`.
    ignoring_range: bool,
    /// `ignore-file` was read.
    ignore_file: bool,
    /// Table rows are rules only where they instruct; a header row never is.
    in_table_head: bool,
    /// The headings above the current point: (level, title).
    headings: Vec<(u8, String)>,
    heading: Option<(u8, String)>,
    /// The stack of list items open, each with its own text so far.
    items: Vec<Open>,
    paragraph: Option<Open>,
    code: Option<Open>,
    cell: Option<Open>,
    row: Vec<String>,
    /// `**strong**` spans open.
    strong: usize,
}

impl Splitter<'_> {
    /// The 1-based line of byte `offset` (a binary search: a file of 100,000 rules must
    /// not be read once per rule).
    fn line_of(&self, offset: usize) -> u32 {
        let line = self.lines.partition_point(|start| *start <= offset);
        u32::try_from(line.max(1)).unwrap_or(u32::MAX)
    }

    /// Reads an `<!-- aptitude: … -->` marker (see the module docs).
    fn marker(&mut self, event: &Event<'_>) {
        let (Event::Html(t) | Event::InlineHtml(t)) = event else {
            return;
        };
        let mut rest = t.as_ref();
        while let Some(at) = rest.find("aptitude:") {
            rest = &rest[at + "aptitude:".len()..];
            let word: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            match word.as_str() {
                "ignore" => self.ignore_next = true,
                "ignore-start" => self.ignoring_range = true,
                "ignore-end" => self.ignoring_range = false,
                "ignore-file" => self.ignore_file = true,
                _ => {}
            }
        }
    }

    /// Tracks the nesting, and which top-level block or section a marker leaves out.
    fn depth_of(&mut self, event: &Event<'_>) {
        match event {
            Event::Start(tag) => {
                if self.depth == 0 {
                    if let Tag::Heading { level, .. } = tag {
                        let level = *level as u8;
                        if self.ignoring_section.is_some_and(|l| level <= l) {
                            self.ignoring_section = None;
                        }
                        if self.ignore_next {
                            self.ignore_next = false;
                            self.ignoring_section = Some(level);
                        }
                    } else if self.ignore_next && !matches!(tag, Tag::HtmlBlock) {
                        self.ignore_next = false;
                        self.ignoring_block = true;
                    }
                }
                self.depth += 1;
            }
            Event::End(_) => {
                self.depth = self.depth.saturating_sub(1);
            }
            _ => {}
        }
    }

    fn ignoring(&self) -> bool {
        self.ignoring_block || self.ignoring_section.is_some() || self.ignoring_range
    }

    fn path(&self) -> Vec<String> {
        self.headings.iter().map(|(_, h)| h.clone()).collect()
    }

    fn push(&mut self, open: Open) {
        let text = collapse(&open.text);
        if text.is_empty() {
            return;
        }
        self.last_kept = false;
        let plain = collapse(&open.plain);
        // A bold line without a full stop is a heading written as a paragraph.
        let label = !open.unbold && !text.ends_with(['.', '!', '?']);
        if self.ignoring()
            || only_imports(&text)
            || label
            || command_reference(&plain)
            || !is_instruction(&plain)
        {
            return;
        }
        self.last_kept = true;
        let headings = self.path();
        self.rules.push(Rule {
            id: rule_id(&headings, &text),
            file: self.file.to_owned(),
            line: self.line_of(open.start),
            end_line: self.line_of(open.end.saturating_sub(1).max(open.start)),
            headings,
            text,
        });
    }

    fn event(&mut self, event: Event<'_>, range: std::ops::Range<usize>) {
        let open = || Open {
            start: range.start,
            end: range.end,
            ..Open::default()
        };
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                self.heading = Some((level as u8, String::new()));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, title)) = self.heading.take() {
                    self.headings.retain(|(l, _)| *l < level);
                    self.headings.push((level, collapse(&title)));
                }
            }
            Event::Start(Tag::Item) => self.item_starts(range.start, open()),
            Event::End(TagEnd::Item) => {
                if let Some(mut item) = self.items.pop() {
                    item.end = range.end;
                    self.push(item);
                }
            }
            Event::Start(Tag::Paragraph) if self.items.is_empty() => {
                self.paragraph = Some(open());
            }
            Event::End(TagEnd::Paragraph) if self.items.is_empty() => {
                if let Some(p) = self.paragraph.take() {
                    self.push(p);
                }
            }
            Event::Start(Tag::CodeBlock(_)) if self.items.is_empty() => self.code = Some(open()),
            Event::End(TagEnd::CodeBlock) if self.items.is_empty() => self.code_ends(range.end),
            Event::Start(Tag::TableCell) => self.cell = Some(Open::default()),
            Event::End(TagEnd::TableCell) => {
                if let Some(c) = self.cell.take() {
                    self.row.push(collapse(&c.text));
                }
            }
            Event::Start(Tag::TableHead) => {
                self.row.clear();
                self.in_table_head = true;
            }
            Event::End(TagEnd::TableHead) => {
                self.row.clear();
                self.in_table_head = false;
                self.last_kept = false;
            }
            Event::Start(Tag::TableRow) => self.row.clear(),
            Event::End(TagEnd::TableRow) => {
                let text = self.row.join(" | ");
                self.row.clear();
                if directive(&text.to_lowercase()) {
                    // A row is kept for what it says (above): classified as it reads.
                    self.push(Open {
                        plain: text.clone(),
                        unbold: true,
                        text,
                        ..open()
                    });
                } else {
                    self.last_kept = false;
                }
            }
            Event::Text(t) => self.text_of(&t, false),
            Event::Code(t) => self.text_of(&t, true),
            Event::Start(Tag::Strong) => self.strong += 1,
            Event::End(TagEnd::Strong) => self.strong = self.strong.saturating_sub(1),
            Event::SoftBreak | Event::HardBreak => {
                if let Some(item) = self.items.last_mut() {
                    item.text.push(' ');
                    item.plain.push(' ');
                } else if let Some(p) = self.paragraph.as_mut() {
                    p.text.push(' ');
                    p.plain.push(' ');
                }
            }
            _ => {}
        }
    }

    /// A list item starts at `at`: the parent item's own text so far is a rule of its own.
    fn item_starts(&mut self, at: usize, item: Open) {
        if let Some(parent) = self.items.last_mut() {
            let own = Open {
                start: parent.start,
                end: at,
                text: std::mem::take(&mut parent.text),
                plain: std::mem::take(&mut parent.plain),
                unbold: std::mem::take(&mut parent.unbold),
            };
            parent.start = at;
            self.push(own);
        }
        self.items.push(item);
    }

    /// A fenced block belongs to the rule before it in the same section.
    fn code_ends(&mut self, end: usize) {
        let path = self.path();
        let end_line = self.line_of(end.saturating_sub(1));
        let block = self.code.take();
        if self.ignoring() || !self.last_kept {
            return;
        }
        if let (Some(block), Some(last)) = (block, self.rules.last_mut())
            && last.headings == path
        {
            last.text = collapse(&format!("{} {}", last.text, block.text));
            last.id = rule_id(&last.headings, &last.text);
            last.end_line = end_line;
        }
    }

    /// Text goes to the innermost thing open: a heading, a cell, a code block, an item, a
    /// paragraph; `code` when it is a code span.
    fn text_of(&mut self, t: &str, code: bool) {
        let target = if let Some((_, h)) = self.heading.as_mut() {
            h
        } else if let Some(c) = self.cell.as_mut() {
            &mut c.text
        } else if let Some(c) = self.code.as_mut() {
            &mut c.text
        } else {
            let strong = self.strong > 0;
            let Some(open) = self.items.last_mut().or(self.paragraph.as_mut()) else {
                return;
            };
            open.text.push_str(t);
            open.plain.push_str(if code { CODE } else { t });
            open.unbold |= !strong && !t.trim().is_empty();
            return;
        };
        target.push_str(t);
    }
}

/// `text` with a leading YAML front matter blanked out (its lines kept, so that offsets
/// still give the right line numbers).
fn without_front_matter(text: &str) -> String {
    let Some(rest) = text.strip_prefix("---\n") else {
        return text.to_owned();
    };
    let Some(end) = rest
        .find("\n---\n")
        .or_else(|| rest.find("\n---").filter(|e| e + 4 == rest.len()))
    else {
        return text.to_owned();
    };
    let front = 4 + end + 4;
    let blanked: String = text[..front.min(text.len())]
        .chars()
        .map(|c| if c == '\n' { '\n' } else { ' ' })
        .collect();
    format!("{blanked}{}", &text[front.min(text.len())..])
}

/// The instruction files of a workspace, relative to it, sorted (see [`INSTRUCTION_NAMES`]
/// and [`INSTRUCTION_DIRS`]); links are not followed.
pub fn instruction_files(workspace: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![workspace.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = path.symlink_metadata() else {
                continue;
            };
            let name = entry.file_name().to_string_lossy().into_owned();
            if meta.is_dir() {
                if !SKIPPED.contains(&name.as_str()) {
                    stack.push(path);
                }
                continue;
            }
            if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
                continue;
            }
            let Ok(rel) = path.strip_prefix(workspace) else {
                continue;
            };
            let rel_text = rel.to_string_lossy().replace('\\', "/");
            let in_dir = INSTRUCTION_DIRS.iter().any(|d| {
                rel_text.starts_with(&format!("{d}/"))
                    && (rel_text.ends_with(".md") || rel_text.ends_with(".mdc"))
            });
            if INSTRUCTION_NAMES.contains(&name.as_str()) || in_dir {
                found.push(rel.to_owned());
                if found.len() >= MAX_FILES {
                    found.sort();
                    return found;
                }
            }
        }
    }
    found.sort();
    found
}

/// Every rule of the instruction files of `workspace`, file by file, and of the files
/// they import with `@path` (relative to the importing file, inside the workspace; each
/// file once, at most [`MAX_FILES`]).
pub fn rules_in(workspace: &Path) -> Vec<Rule> {
    let mut files: Vec<PathBuf> = instruction_files(workspace);
    let mut rules = Vec::new();
    let mut i = 0;
    while i < files.len() {
        let rel = files[i].clone();
        i += 1;
        let Ok(bytes) = crate::shared::files::read_capped(&workspace.join(&rel), MAX_FILE_BYTES)
        else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        for import in imports_of(&text) {
            let joined = rel.parent().unwrap_or(Path::new("")).join(&import);
            let Some(normal) = normalized(&joined) else {
                continue;
            };
            if files.len() < MAX_FILES && !files.contains(&normal) {
                let path = workspace.join(&normal);
                if path.symlink_metadata().is_ok_and(|m| m.is_file()) {
                    files.push(normal);
                }
            }
        }
        rules.extend(rules_of(&rel.to_string_lossy().replace('\\', "/"), &text));
    }
    rules
}

/// `a/../b/./c.md` as `b/c.md`; `None` when it leads out of the workspace or is absolute.
fn normalized(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::Normal(p) => out.push(p),
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            _ => return None,
        }
    }
    Some(out)
}

/// What a test's `covers:` entry names: a rule id, a heading path, or a part of a rule's
/// text, optionally in one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Selector {
    /// `R1a2b3c4d`.
    Id(String),
    /// `# Testing > Before you commit`: the rules under that heading path (its last
    /// headings, in order).
    Heading(String),
    /// `"run the linter"`: the rules whose text holds it (whitespace and case ignored).
    Text(String),
}

impl Selector {
    /// Reads a `covers:` string: an id (`R` and 8 hex digits), `#` and a heading path, a
    /// `"quoted"` part of a rule's text, or else (unquoted) a part of a rule's text.
    pub fn parse(text: &str) -> Selector {
        let t = text.trim();
        if t.len() == 9
            && t.starts_with(['R', 'r'])
            && t[1..].chars().all(|c| c.is_ascii_hexdigit())
        {
            return Selector::Id(format!("R{}", t[1..].to_ascii_lowercase()));
        }
        if let Some(path) = t.strip_prefix('#') {
            return Selector::Heading(collapse(path.trim_start_matches('#')));
        }
        let unquoted = t
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(t);
        Selector::Text(collapse(unquoted))
    }

    /// Whether `rule` is one this selector names.
    pub fn matches(&self, rule: &Rule) -> bool {
        match self {
            Selector::Id(id) => rule.id == *id,
            Selector::Heading(path) => {
                let wanted: Vec<String> = path
                    .split('>')
                    .map(|h| collapse(h).to_lowercase())
                    .filter(|h| !h.is_empty())
                    .collect();
                let have: Vec<String> = rule.headings.iter().map(|h| h.to_lowercase()).collect();
                !wanted.is_empty() && have.windows(wanted.len()).any(|w| w == wanted.as_slice())
            }
            Selector::Text(part) => {
                !part.is_empty() && rule.text.to_lowercase().contains(&part.to_lowercase())
            }
        }
    }

    /// The selector as written back (`R1a2b3c4d`, `# Testing`, `"run the linter"`).
    pub fn display(&self) -> String {
        match self {
            Selector::Id(id) => id.clone(),
            Selector::Heading(path) => format!("# {path}"),
            Selector::Text(part) => format!("\"{part}\""),
        }
    }
}

pub mod exclude;

#[cfg(test)]
mod tests;
