//! What changed in an agent's surface between two of its releases, as `aptitude drift`
//! shows it: the tools each release offered the model in its first request, mapped onto
//! aptitude's canonical names ([`crate::spec::tools::vocabulary`]), and the tests whose
//! `tool:` assertions name a tool the newer release no longer offers.
//!
//! A tool the newer release offers under a new name that the agent's table does not know
//! is *unknown*: aptitude can not map its calls, so every assertion on the tool it replaced
//! stops matching (Gemini CLI's `search_file_content` → `grep_search`). Such a name is
//! flagged, and the canonical tool it replaced shows as removed. A tool renamed under a
//! name aptitude knows still matches the tests' `tool:` assertions; those tests are named
//! too, because settings and hooks that name the old name no longer match it.
//!
//! Beside the tools, the shape of each release's surface where it can be read
//! ([`shape`]): the events of its output stream and their fields, and its settings and
//! hook payload fields from the JSON schemas its package ships.

pub mod shape;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::spec::tools::{self, Vocabulary};
use crate::spec::{AssertionKind, TestSpec};

/// One tool a release offered.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct OfferedTool {
    /// The name the model was shown.
    pub raw: String,
    /// aptitude's canonical name for it (the raw name when none is known).
    pub canonical: String,
    /// Whether aptitude knows the name (the agent's table, the shared aliases, MCP).
    pub known: bool,
}

/// A canonical tool offered under another name by the newer release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Renamed {
    /// The canonical name.
    pub canonical: String,
    /// The older release's name.
    pub from: String,
    /// The newer release's name.
    pub to: String,
}

/// A test assertion that names a tool the newer release no longer offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Affected {
    /// The test file.
    pub file: String,
    /// 1-based line and column of the assertion.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The test's name.
    pub test: String,
    /// The tool the assertion names, as written.
    pub tool: String,
}

/// The tool lists of two releases compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Drift {
    /// The older release.
    pub from: String,
    /// The newer release.
    pub to: String,
    /// Tools of the newer release whose canonical name the older one did not offer.
    pub added: Vec<OfferedTool>,
    /// Tools of the older release whose canonical name the newer one does not offer.
    pub removed: Vec<OfferedTool>,
    /// Canonical tools offered under a new name (both known to aptitude).
    pub renamed: Vec<Renamed>,
    /// Names of the newer release aptitude does not know (its calls stay unmapped).
    pub unknown: Vec<String>,
    /// Assertions of the tests on this agent naming a removed tool.
    pub affected: Vec<Affected>,
    /// Assertions of the tests on this agent naming a renamed tool: they still match, but
    /// settings and hooks naming the old name do not.
    pub renamed_in_tests: Vec<Affected>,
    /// The output stream's events and fields, compared ([`shape::ShapeDrift`]).
    pub stream: shape::ShapeDrift,
    /// The settings and hook payload fields, compared where the package ships their JSON
    /// schema ([`shape::ShapeDrift`]).
    pub settings: shape::ShapeDrift,
}

impl Drift {
    /// Whether anything changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.renamed.is_empty()
            && self.unknown.is_empty()
    }

    /// The (older, newer) names of the tool a test names as `tool`, when the newer
    /// release renamed it; `("?", "?")` when no rename matches.
    pub fn rename_of(&self, tool: &str) -> (&str, &str) {
        self.renamed
            .iter()
            .find(|r| tools::same_tool(tool, &r.canonical))
            .map_or(("?", "?"), |r| (r.from.as_str(), r.to.as_str()))
    }
}

/// `raw` as aptitude reads it in `vocabulary`.
pub fn offered(vocabulary: Vocabulary, raw: &str) -> OfferedTool {
    let canonical = tools::vocabulary::canonical_name(vocabulary, raw).into_owned();
    let known = raw.starts_with("mcp__")
        || canonical != raw
        || vocabulary.mappings().iter().any(|m| m.raw == raw)
        || tools::is_known_tool(raw);
    OfferedTool {
        raw: raw.to_owned(),
        canonical,
        known,
    }
}

/// Compares the tools `from_tools` (the older release's names) with `to_tools`, and finds
/// the `tool:` assertions of `specs` on `agent` that name a tool no longer offered.
pub fn compare(
    vocabulary: Vocabulary,
    (from, from_tools): (&str, &[String]),
    (to, to_tools): (&str, &[String]),
    specs: &[TestSpec],
    agent: crate::spec::AgentKind,
) -> Drift {
    let by_canonical = |names: &[String]| -> BTreeMap<String, OfferedTool> {
        names
            .iter()
            .map(|raw| offered(vocabulary, raw))
            .filter(|t| t.known)
            .map(|t| (t.canonical.to_ascii_lowercase(), t))
            .collect()
    };
    let (old, new) = (by_canonical(from_tools), by_canonical(to_tools));
    let only = |a: &BTreeMap<String, OfferedTool>, b: &BTreeMap<String, OfferedTool>| {
        a.iter()
            .filter(|(k, _)| !b.contains_key(*k))
            .map(|(_, t)| t.clone())
            .collect::<Vec<_>>()
    };
    let renamed: Vec<Renamed> = old
        .iter()
        .filter_map(|(k, before)| {
            let after = new.get(k)?;
            (after.raw != before.raw).then(|| Renamed {
                canonical: before.canonical.clone(),
                from: before.raw.clone(),
                to: after.raw.clone(),
            })
        })
        .collect();
    let seen_before: BTreeSet<&str> = from_tools.iter().map(String::as_str).collect();
    let unknown = to_tools
        .iter()
        .filter(|raw| !seen_before.contains(raw.as_str()) && !offered(vocabulary, raw).known)
        .cloned()
        .collect();
    let removed = only(&old, &new);
    let affected = affected(&removed, specs, agent);
    let renamed_tools: Vec<OfferedTool> = renamed
        .iter()
        .map(|r: &Renamed| OfferedTool {
            raw: r.to.clone(),
            canonical: r.canonical.clone(),
            known: true,
        })
        .collect();
    let renamed_in_tests = self::affected(&renamed_tools, specs, agent);
    let not_read = || shape::ShapeDrift::NotReadable {
        why: "not read".to_owned(),
    };
    Drift {
        from: from.to_owned(),
        to: to.to_owned(),
        added: only(&new, &old),
        removed,
        renamed,
        unknown,
        affected,
        renamed_in_tests,
        stream: not_read(),
        settings: not_read(),
    }
}

/// The `tool:` assertions of the tests on `agent` that match one of `tools`.
fn affected(
    tools: &[OfferedTool],
    specs: &[TestSpec],
    agent: crate::spec::AgentKind,
) -> Vec<Affected> {
    let mut found = Vec::new();
    for spec in specs.iter().filter(|s| s.agent.kind == agent) {
        for assertion in &spec.assertions {
            let AssertionKind::Tool(tool) = &assertion.kind else {
                continue;
            };
            if tools.iter().any(|r| tool.tool.matches(&r.canonical)) {
                found.push(Affected {
                    file: spec.file.display().to_string(),
                    line: assertion.line,
                    column: assertion.column,
                    test: spec.name.clone(),
                    tool: tool.tool.display().to_owned(),
                });
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::AgentKind;

    fn names(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    fn spec_with_tool_assertion(dir: &std::path::Path, tool: &str) -> Vec<TestSpec> {
        let path = dir.join("t.aptitude.yaml");
        std::fs::write(
            &path,
            format!(
                "name: searches\nagent: gemini\nprompt: find TODOs\nassertions:\n  - output_contains: x\n  - tool: {tool}\n"
            ),
        )
        .unwrap();
        let report = crate::spec::load_files(&[path]);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        report.specs
    }

    /// Gemini CLI renamed `search_file_content` to `grep_search`: with a table that knew
    /// only the old name, the new one is unknown, `Grep` is gone, and the test asserting
    /// on `Grep` is named with its line.
    #[test]
    fn an_unknown_new_name_is_flagged_and_tests_on_the_tool_it_replaced_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let specs = spec_with_tool_assertion(dir.path(), "Grep");
        let drift = compare(
            Vocabulary::Gemini,
            (
                "0.60.0",
                &names(&["run_shell_command", "search_file_content"]),
            ),
            ("0.61.0", &names(&["run_shell_command", "grep_search_v9"])),
            &specs,
            AgentKind::Gemini,
        );
        assert_eq!(drift.unknown, names(&["grep_search_v9"]));
        assert_eq!(
            drift
                .removed
                .iter()
                .map(|t| t.canonical.as_str())
                .collect::<Vec<_>>(),
            ["Grep"]
        );
        assert_eq!(drift.affected.len(), 1);
        assert_eq!(drift.affected[0].line, 6);
        assert_eq!(drift.affected[0].column, 5);
        assert_eq!(drift.affected[0].tool, "Grep");
        assert!(drift.affected[0].file.ends_with("t.aptitude.yaml"));
    }

    #[test]
    fn a_known_rename_is_a_rename_not_a_removal() {
        let drift = compare(
            Vocabulary::Gemini,
            ("a", &names(&["search_file_content"])),
            ("b", &names(&["grep_search"])),
            &[],
            AgentKind::Gemini,
        );
        assert_eq!(
            drift.renamed,
            [Renamed {
                canonical: "Grep".into(),
                from: "search_file_content".into(),
                to: "grep_search".into()
            }]
        );
        assert!(drift.removed.is_empty() && drift.unknown.is_empty());
    }

    /// A test on a tool offered under a new name aptitude knows still matches, and is named
    /// with its line (its deny rules or hooks may name the old name); it fails nothing.
    #[test]
    fn a_test_naming_a_renamed_tool_is_named_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let specs = spec_with_tool_assertion(dir.path(), "Grep");
        let drift = compare(
            Vocabulary::Gemini,
            ("0.60.0", &names(&["search_file_content"])),
            ("0.61.0", &names(&["grep_search"])),
            &specs,
            AgentKind::Gemini,
        );
        assert!(drift.affected.is_empty(), "{:?}", drift.affected);
        assert_eq!(drift.renamed_in_tests.len(), 1);
        assert_eq!(
            (
                drift.renamed_in_tests[0].line,
                drift.renamed_in_tests[0].column
            ),
            (6, 5)
        );
        assert_eq!(drift.renamed_in_tests[0].test, "searches");
    }

    #[test]
    fn added_and_removed_tools_by_canonical_name() {
        let drift = compare(
            Vocabulary::Claude,
            ("1", &names(&["Bash", "Read", "Task"])),
            ("2", &names(&["Bash", "Read", "WebFetch"])),
            &[],
            AgentKind::Claude,
        );
        let canon = |ts: &[OfferedTool]| ts.iter().map(|t| t.canonical.clone()).collect::<Vec<_>>();
        assert_eq!(canon(&drift.added), ["WebFetch"]);
        assert_eq!(canon(&drift.removed), ["Task"]);
        assert!(!drift.is_empty());
        let same = compare(
            Vocabulary::Claude,
            ("1", &names(&["Bash"])),
            ("2", &names(&["Bash"])),
            &[],
            AgentKind::Claude,
        );
        assert!(same.is_empty());
    }
}
