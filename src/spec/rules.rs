//! The rules of an agent's instruction files — `AGENTS.md`, `CLAUDE.md`, `GEMINI.md`,
//! `QWEN.md`, skills' `SKILL.md`, `.cursor/rules`, Copilot's and Kiro's — each with an id
//! that lasts: what a test's `covers:` names and `aptitude coverage` reports on.
//!
//! A file is read as CommonMark (pulldown-cmark): every list item is a rule, and so is
//! every paragraph outside a list, under the path of headings above it. A fenced code
//! block belongs to the rule before it in its section; a table row is a rule; a YAML
//! front matter (`---` … `---`, a skill's name and description) is not.
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
    let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("R{hex}")
}

/// A rule being read.
#[derive(Debug, Default)]
struct Open {
    start: usize,
    end: usize,
    text: String,
}

/// The rules of one file: `file` is its name relative to the workspace, `text` its
/// content.
pub fn rules_of(file: &str, text: &str) -> Vec<Rule> {
    let body = without_front_matter(text);
    let mut split = Splitter {
        file,
        text,
        ..Splitter::default()
    };
    let parser = Parser::new_ext(
        &body,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    );
    for (event, range) in parser.into_offset_iter() {
        split.event(event, range);
    }
    split.rules
}

/// The state of [`rules_of`] while it reads one file's Markdown events.
#[derive(Default)]
struct Splitter<'a> {
    file: &'a str,
    text: &'a str,
    rules: Vec<Rule>,
    /// The headings above the current point: (level, title).
    headings: Vec<(u8, String)>,
    heading: Option<(u8, String)>,
    /// The stack of list items open, each with its own text so far.
    items: Vec<Open>,
    paragraph: Option<Open>,
    code: Option<Open>,
    cell: Option<Open>,
    row: Vec<String>,
}

impl Splitter<'_> {
    /// The 1-based line of byte `offset`.
    fn line_of(&self, offset: usize) -> u32 {
        self.text.get(..offset).map_or(1, |t| {
            u32::try_from(t.bytes().filter(|b| *b == b'\n').count()).unwrap_or(u32::MAX - 1) + 1
        })
    }

    fn path(&self) -> Vec<String> {
        self.headings.iter().map(|(_, h)| h.clone()).collect()
    }

    fn push(&mut self, open: Open) {
        let text = collapse(&open.text);
        if text.is_empty() {
            return;
        }
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
            text: String::new(),
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
            Event::Start(Tag::TableRow) | Event::Start(Tag::TableHead) => self.row.clear(),
            Event::End(TagEnd::TableRow) | Event::End(TagEnd::TableHead) => {
                let text = self.row.join(" | ");
                self.row.clear();
                self.push(Open { text, ..open() });
            }
            Event::Text(t) | Event::Code(t) => self.text_of(&t),
            Event::SoftBreak | Event::HardBreak => {
                if let Some(item) = self.items.last_mut() {
                    item.text.push(' ');
                } else if let Some(p) = self.paragraph.as_mut() {
                    p.text.push(' ');
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
        if let (Some(block), Some(last)) = (self.code.take(), self.rules.last_mut())
            && last.headings == path
        {
            last.text = collapse(&format!("{} {}", last.text, block.text));
            last.id = rule_id(&last.headings, &last.text);
            last.end_line = end_line;
        }
    }

    /// Text goes to the innermost thing open: a heading, a cell, a code block, an item, a
    /// paragraph.
    fn text_of(&mut self, t: &str) {
        let target = if let Some((_, h)) = self.heading.as_mut() {
            h
        } else if let Some(c) = self.cell.as_mut() {
            &mut c.text
        } else if let Some(c) = self.code.as_mut() {
            &mut c.text
        } else if let Some(item) = self.items.last_mut() {
            &mut item.text
        } else if let Some(p) = self.paragraph.as_mut() {
            &mut p.text
        } else {
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

/// Every rule of the instruction files of `workspace`, file by file.
pub fn rules_in(workspace: &Path) -> Vec<Rule> {
    instruction_files(workspace)
        .iter()
        .filter_map(|rel| {
            let bytes =
                crate::shared::files::read_capped(&workspace.join(rel), MAX_FILE_BYTES).ok()?;
            let text = String::from_utf8_lossy(&bytes);
            Some(rules_of(&rel.to_string_lossy().replace('\\', "/"), &text))
        })
        .flatten()
        .collect()
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

#[cfg(test)]
mod tests;
