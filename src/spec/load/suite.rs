//! `aptitude.yaml`: suite defaults, read with the test loader's checks and diagnostics.
//!
//! ```yaml
//! agents: [claude, codex]
//! model: claude-sonnet-4-5
//! timeout: 5m
//! runs: 3
//! min_pass: 2
//! env: {LOG_LEVEL: debug}
//! mcp_servers:
//!   docs: {command: node, args: [server.js]}
//! judge: {model: claude-haiku-4-5, threshold: 8, votes: 3}
//! coverage: {exclude: [docs/CONTRIBUTING.md, "AGENTS.md#Release process"]}
//! ```

use std::path::Path;

use super::super::MAX_VOTES;
use super::super::diagnostic::{Diagnostic, FileDiagnostics};
use super::super::node::{self, Node, Pos, Value};
use super::super::suite::{JudgeDefaults, Origin, Setting, SuiteDefaults};
use super::{Ctx, Fields};

/// The keys an `aptitude.yaml` may set.
pub(in crate::spec) const SUITE_KEYS: &[&str] = &[
    "agent",
    "agents",
    "model",
    "timeout",
    "max_turns",
    "runs",
    "min_pass",
    "env",
    "mcp_servers",
    "judge",
    "sandbox",
    "hooks",
    "network",
    "limits",
    "coverage",
];

/// The keys of `judge:`.
pub(in crate::spec) const JUDGE_KEYS: &[&str] = &[
    "model",
    "agent",
    "threshold",
    "votes",
    "labels",
    "gate",
    "min_lower_bound",
];

/// Test keys that belong to one test and can not be suite defaults.
const TEST_ONLY_KEYS: &[&str] = &[
    "name",
    "description",
    "prompt",
    "workspace",
    "setup",
    "assertions",
    "variants",
    "covers",
];

/// A function that makes a [`Setting`] of a value written at `key` of `fields`.
fn setter<T>(path: &Path, fields: &Fields<'_>, key: &str) -> impl Fn(T) -> Setting<T> {
    let origin = Origin {
        file: path.to_owned(),
        line: fields.key_pos(key).line,
    };
    move |value| Setting {
        value,
        origin: origin.clone(),
    }
}

/// Reads and validates one `aptitude.yaml`.
///
/// # Errors
/// Its diagnostics, as for a test file.
pub fn load_suite_file(path: &Path) -> Result<SuiteDefaults, FileDiagnostics> {
    let fail = |source: String, diagnostics: Vec<Diagnostic>| FileDiagnostics {
        path: path.to_owned(),
        source,
        diagnostics,
    };
    let source = super::read_source(path, "suite defaults file")?;
    load_suite_str(path, &source).map_err(|diagnostics| fail(source, diagnostics))
}

/// Validates the text of an `aptitude.yaml` at `path`.
///
/// # Errors
/// Every problem found, in file order.
pub fn load_suite_str(path: &Path, source: &str) -> Result<SuiteDefaults, Vec<Diagnostic>> {
    let root = node::parse(source).map_err(|err| {
        vec![
            Diagnostic::new(
                err.pos.unwrap_or_default(),
                format!("invalid YAML: {}", err.message),
            )
            .label("here"),
        ]
    })?;
    let mut ctx = Ctx::default();
    let defaults = ctx.suite(path, &root);
    let mut diags = std::mem::take(&mut ctx.diags);
    if diags.is_empty() {
        Ok(defaults)
    } else {
        diags.sort_by_key(|d| (d.pos.line, d.pos.column));
        Err(diags)
    }
}

impl Ctx {
    fn suite(&mut self, path: &Path, root: &Node) -> SuiteDefaults {
        // An empty file (or one with only comments) sets nothing.
        if matches!(root.value, Value::Null) {
            return SuiteDefaults::default();
        }
        let Value::Map(entries) = &root.value else {
            self.push(
                Diagnostic::new(root.pos, "`aptitude.yaml` must be a mapping of defaults")
                    .label(format!("found {}", root.value.type_name()))
                    .hint(format!("allowed keys: {}", super::list(SUITE_KEYS))),
            );
            return SuiteDefaults::default();
        };
        let fields = Fields {
            entries,
            pos: Pos {
                line: 1,
                column: 1,
                len: 0,
            },
        };
        self.suite_keys(&fields);

        let agents = self.agents(&fields);
        let agents = (!agents.is_empty()).then(|| {
            let key = if fields.get("agent").is_some() {
                "agent"
            } else {
                "agents"
            };
            setter(path, &fields, key)(agents)
        });
        let model = fields
            .get("model")
            .and_then(|n| self.non_empty_string(n, "model"))
            .map(|v| setter(path, &fields, "model")(v));
        let timeout = fields
            .get("timeout")
            .and_then(|n| self.duration(n, "timeout"))
            .map(|v| setter(path, &fields, "timeout")(v));
        let max_turns = fields
            .get("max_turns")
            .and_then(|n| self.at_least_one(n, "max_turns", u32::MAX))
            .map(|v| setter(path, &fields, "max_turns")(v));
        let runs = fields
            .get("runs")
            .and_then(|n| self.at_least_one(n, "runs", super::super::MAX_RUNS))
            .map(|v| setter(path, &fields, "runs")(v));
        let min_pass = fields
            .get("min_pass")
            .and_then(|n| self.at_least_one(n, "min_pass", super::super::MAX_RUNS))
            .map(|v| setter(path, &fields, "min_pass")(v));
        if let (Some(k), Some(r)) = (&min_pass, &runs)
            && k.value > r.value
        {
            self.push(
                Diagnostic::new(
                    fields.key_pos("min_pass"),
                    format!("`min_pass: {}` is more than `runs: {}`", k.value, r.value),
                )
                .label("can never be reached")
                .hint("min_pass counts passing runs out of `runs`"),
            );
        }
        let env = self.suite_env(path, &fields);
        let (mcp_servers, mcp_mocks) = self.suite_mcp_servers(path, &fields);
        let sandbox = fields
            .get("sandbox")
            .and_then(|n| self.sandbox_setting(n))
            .map(|v| setter(path, &fields, "sandbox")(v));
        let hooks = fields
            .get("hooks")
            .and_then(|n| self.hooks_setting(n))
            .map(|v| setter(path, &fields, "hooks")(v));
        let network = fields
            .get("network")
            .map(|n| self.network(n))
            .filter(|hosts| !hosts.is_empty())
            .map(|v| setter(path, &fields, "network")(v));
        let judge = fields
            .get("judge")
            .map(|n| self.judge_defaults(n, path))
            .unwrap_or_default();
        let limits = fields
            .get("limits")
            .map(|n| self.limits(n))
            .filter(|l| !l.is_empty())
            .map(|v| setter(path, &fields, "limits")(v));
        let coverage_exclude = self.suite_coverage(path, &fields);
        SuiteDefaults {
            coverage_exclude,
            agents,
            model,
            timeout,
            max_turns,
            runs,
            min_pass,
            env,
            mcp_servers,
            mcp_mocks,
            judge,
            sandbox,
            hooks,
            network,
            limits,
        }
    }

    /// Reports test-only keys (they can not be defaults) and unknown keys of `aptitude.yaml`.
    fn suite_keys(&mut self, fields: &Fields<'_>) {
        let entries = fields.entries;
        for (key, _) in entries {
            if misplaced_in_suite(self, key) {
                continue;
            }
            if TEST_ONLY_KEYS.contains(&key.name.as_str()) {
                self.push(
                    Diagnostic::new(
                        key.pos,
                        format!(
                            "`{}` is test-only: it can not be a default in `aptitude.yaml`",
                            key.name
                        ),
                    )
                    .label("test-only key")
                    .hint(format!(
                        "write it in each test file; defaults here: {}",
                        super::list(SUITE_KEYS)
                    )),
                );
            }
        }
        let unknown: Vec<(super::super::node::Key, Node)> = entries
            .iter()
            .filter(|(k, _)| {
                !TEST_ONLY_KEYS.contains(&k.name.as_str())
                    && !super::super::discover::DISCOVERY_KEYS.contains(&k.name.as_str())
            })
            .cloned()
            .collect();
        self.unknown_keys(
            &Fields {
                entries: &unknown,
                pos: fields.pos,
            },
            SUITE_KEYS,
            "`aptitude.yaml`",
        );
    }

    /// The suite's `env:`, each variable with the line that set it.
    fn suite_env(
        &mut self,
        path: &Path,
        fields: &Fields<'_>,
    ) -> std::collections::BTreeMap<String, Setting<String>> {
        let env_line = |name: &str| {
            fields
                .get("env")
                .and_then(|n| match &n.value {
                    Value::Map(entries) => entries
                        .iter()
                        .find(|(k, _)| k.name == name)
                        .map(|(k, _)| k.pos.line),
                    _ => None,
                })
                .unwrap_or(1)
        };
        fields
            .get("env")
            .map(|n| self.env(n))
            .unwrap_or_default()
            .into_iter()
            .map(|(name, value)| {
                let line = env_line(&name);
                let setting = Setting {
                    value,
                    origin: Origin {
                        file: path.to_owned(),
                        line,
                    },
                };
                (name, setting)
            })
            .collect()
    }

    /// The suite's `mcp_servers:` (its `mock:` ones apart), each server with the line that
    /// declared it.
    fn suite_mcp_servers(
        &mut self,
        path: &Path,
        fields: &Fields<'_>,
    ) -> (
        std::collections::BTreeMap<String, Setting<crate::spec::McpServer>>,
        std::collections::BTreeMap<String, Setting<crate::spec::MockServer>>,
    ) {
        let Some(n) = fields.get("mcp_servers") else {
            return Default::default();
        };
        let lines: Vec<(String, u32)> = match &n.value {
            Value::Map(entries) => entries
                .iter()
                .map(|(k, _)| (k.name.clone(), k.pos.line))
                .collect(),
            _ => Vec::new(),
        };
        let origin = |name: &str| Origin {
            file: path.to_owned(),
            line: lines.iter().find(|(n, _)| n == name).map_or(1, |(_, l)| *l),
        };
        let (servers, mocks) = self.mcp_servers(n, path);
        let servers = servers
            .into_iter()
            .map(|(name, value)| {
                let origin = origin(&name);
                (name, Setting { value, origin })
            })
            .collect();
        let mocks = mocks
            .into_iter()
            .map(|(name, value)| {
                let origin = origin(&name);
                (name, Setting { value, origin })
            })
            .collect();
        (servers, mocks)
    }

    /// A whole number from 1 to `max`.
    fn at_least_one(&mut self, node: &Node, key: &str, max: u32) -> Option<u32> {
        let n = self.count(node, key)?;
        if !(1..=max).contains(&n) {
            self.push(
                Diagnostic::new(
                    node.pos,
                    format!("`{key}` must be between 1 and {max}, found {n}"),
                )
                .label("out of range"),
            );
            return None;
        }
        Some(n)
    }

    fn judge_defaults(&mut self, node: &Node, path: &Path) -> JudgeDefaults {
        let Some(fields) = self.map(node, "judge") else {
            return JudgeDefaults::default();
        };
        self.unknown_keys(&fields, JUDGE_KEYS, "`judge`");
        let model = fields
            .get("model")
            .and_then(|n| self.non_empty_string(n, "judge.model"))
            .map(|v| setter(path, &fields, "model")(v));
        let agent = fields
            .get("agent")
            .and_then(|n| self.agent_name(n, "judge.agent"))
            .map(|v| setter(path, &fields, "agent")(v));
        let threshold = fields
            .get("threshold")
            .and_then(|n| self.at_least_one(n, "judge.threshold", 10))
            .and_then(|t| u8::try_from(t).ok())
            .map(|v| setter(path, &fields, "threshold")(v));
        let votes = fields
            .get("votes")
            .and_then(|n| self.at_least_one(n, "judge.votes", MAX_VOTES))
            .map(|v| setter(path, &fields, "votes")(v));
        let labels = fields
            .get("labels")
            .and_then(|n| self.non_empty_string(n, "judge.labels"))
            .map(|dir| {
                // Relative to this file, as `coverage.exclude` is: the suite moves with it.
                let base = path.parent().unwrap_or(Path::new(""));
                setter(path, &fields, "labels")(base.join(dir))
            });
        let gate = fields
            .get("gate")
            .and_then(|n| self.gate(n, "judge.gate"))
            .map(|v| setter(path, &fields, "gate")(v));
        let min_lower_bound = fields
            .get("min_lower_bound")
            .and_then(|n| self.lower_bound(n))
            .map(|v| setter(path, &fields, "min_lower_bound")(v));
        JudgeDefaults {
            model,
            agent,
            threshold,
            votes,
            labels,
            gate,
            min_lower_bound,
        }
    }
}

impl Ctx {
    /// `judge.min_lower_bound`: a number above 0 and at most 1.
    fn lower_bound(&mut self, node: &Node) -> Option<f64> {
        let value = match node.value {
            Value::Float(f) => f,
            // Any whole number but 1 is out of range; a huge one stays out of it.
            Value::Int(i) => i32::try_from(i).map_or(f64::INFINITY, f64::from),
            _ => {
                self.type_error(node, "judge.min_lower_bound", "a number between 0 and 1");
                return None;
            }
        };
        if !(value > 0.0 && value <= 1.0) {
            self.push(
                Diagnostic::new(
                    node.pos,
                    format!("`judge.min_lower_bound` must be above 0 and at most 1, found {value}"),
                )
                .label("out of range")
                .hint("the lowest Wilson 95% lower bound of the TPR and TNR; 0.80 is the default"),
            );
            return None;
        }
        Some(value)
    }
}

/// Reports discovery keys written in `aptitude.yaml` (they belong in `.aptitude.yaml`);
/// true for a key that is one.
fn misplaced_in_suite(ctx: &mut Ctx, key: &super::super::node::Key) -> bool {
    if !super::super::discover::DISCOVERY_KEYS.contains(&key.name.as_str()) {
        return false;
    }
    ctx.push(
        Diagnostic::new(
            key.pos,
            format!(
                "`{}` is discovery configuration: `aptitude.yaml` gives defaults to tests, \
                 it does not choose them",
                key.name
            ),
        )
        .label("discovery key")
        .hint(
            "write it in `.aptitude.yaml` (with a leading dot), which says which files are tests",
        ),
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{AgentKind, AssertionKind, load_files};

    /// Each diagnostic as `line:col message`, with its hint.
    fn shown(errors: &[Diagnostic]) -> Vec<(String, Option<String>)> {
        errors
            .iter()
            .map(|d| {
                (
                    format!("{}:{} {}", d.pos.line, d.pos.column, d.message),
                    d.hint.clone(),
                )
            })
            .collect()
    }

    fn messages(source: &str) -> Vec<String> {
        load_suite_str(Path::new("aptitude.yaml"), source)
            .unwrap_err()
            .into_iter()
            .map(|d| format!("{}:{} {}", d.pos.line, d.pos.column, d.message))
            .collect()
    }

    #[test]
    fn test_only_and_unknown_keys_are_errors_at_their_position() {
        assert_eq!(
            messages("assertions: []\nmodle: x\njudge: {treshold: 8}\n"),
            [
                "1:1 `assertions` is test-only: it can not be a default in `aptitude.yaml`",
                "2:1 unknown key `modle` in `aptitude.yaml`",
                "3:9 unknown key `treshold` in `judge`",
            ]
        );
        assert_eq!(
            messages("runs: 2\nmin_pass: 3\n"),
            ["2:1 `min_pass: 3` is more than `runs: 2`"]
        );
        assert_eq!(
            messages("- claude\n"),
            ["1:1 `aptitude.yaml` must be a mapping of defaults"]
        );
    }

    /// `coverage.exclude` names files relative to the `aptitude.yaml` and sections by
    /// heading path; a file or a heading that is not there is an error at the entry with a
    /// "did you mean", and so is an unknown key of `coverage:`.
    #[test]
    fn coverage_exclusions_name_files_and_sections_that_exist() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(
            root.join("AGENTS.md"),
            "# Rules\n\n- Run the tests.\n\n## Release process\n\n- Tag the release.\n",
        )
        .unwrap();
        std::fs::write(root.join("docs/CONTRIBUTING.md"), "- Sign your commits.\n").unwrap();
        let path = root.join("aptitude.yaml");
        let d = load_suite_str(
            &path,
            "coverage:\n  exclude:\n    - docs/CONTRIBUTING.md\n    - \"AGENTS.md#Rules > Release process\"\n    - AGENTS.md # release PROCESS\n",
        )
        .unwrap();
        let got: Vec<(String, Option<String>, u32)> = d
            .coverage_exclude
            .iter()
            .map(|s| {
                (
                    s.value.written.clone(),
                    s.value.section.clone(),
                    s.origin.line,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("docs/CONTRIBUTING.md".to_owned(), None, 3),
                (
                    "AGENTS.md#Rules > Release process".to_owned(),
                    Some("Rules > Release process".to_owned()),
                    4
                ),
                // A YAML comment: the whole file.
                ("AGENTS.md".to_owned(), None, 5),
            ]
        );
        let errors = load_suite_str(
            &path,
            "coverage:\n  exclude:\n    - docs/CONTRIBUTNG.md\n    - \"AGENTS.md#Release proces\"\n    - \"#Rules\"\n  exclud: []\n",
        )
        .unwrap_err();
        let shown = shown(&errors);
        assert_eq!(
            shown,
            [
                (
                    "3:7 `coverage.exclude`: `docs/CONTRIBUTNG.md` is not a file".to_owned(),
                    Some("did you mean `docs/CONTRIBUTING.md`?".to_owned())
                ),
                (
                    "4:7 `coverage.exclude`: `AGENTS.md` has no section `Release proces`"
                        .to_owned(),
                    Some("did you mean `AGENTS.md#Rules > Release process`?".to_owned())
                ),
                (
                    "5:7 `#Rules` names no file".to_owned(),
                    Some(
                        "write `FILE` or `FILE#heading path`, e.g. `AGENTS.md#Release process`"
                            .to_owned()
                    )
                ),
                (
                    "6:3 unknown key `exclud` in `coverage`".to_owned(),
                    Some("did you mean `exclude`?".to_owned())
                ),
            ]
        );
    }

    #[test]
    fn the_judge_gate_labels_and_bound_are_read_and_checked_at_their_position() {
        let d = load_suite_str(
            Path::new("suite/aptitude.yaml"),
            "judge: {gate: certified, labels: people, min_lower_bound: 0.9}\n",
        )
        .unwrap();
        assert_eq!(
            d.judge.gate.unwrap().value,
            crate::spec::judge_gate::JudgeGate::Certified
        );
        assert_eq!(d.judge.labels.unwrap().value, Path::new("suite/people"));
        assert_eq!(d.judge.min_lower_bound.unwrap().value, 0.9);
        let errors = load_suite_str(
            Path::new("aptitude.yaml"),
            "judge:\n  gate: certifed\n  min_lower_bound: 1.5\n  label: x\n",
        )
        .unwrap_err();
        let shown = shown(&errors);
        assert_eq!(
            shown,
            [
                (
                    "2:9 unknown `judge.gate` value `certifed`".to_owned(),
                    Some("did you mean `certified`?".to_owned())
                ),
                (
                    "3:20 `judge.min_lower_bound` must be above 0 and at most 1, found 1.5"
                        .to_owned(),
                    Some(
                        "the lowest Wilson 95% lower bound of the TPR and TNR; 0.80 is the default"
                            .to_owned()
                    )
                ),
                (
                    "4:3 unknown key `label` in `judge`".to_owned(),
                    Some("did you mean `labels`?".to_owned())
                ),
            ]
        );
    }

    #[test]
    fn each_default_keeps_the_line_it_was_written_on() {
        let d = load_suite_str(
            Path::new("dir/aptitude.yaml"),
            "# defaults\nagent: codex\nenv:\n  A: \"1\"\n  B: 2\njudge:\n  votes: 3\n",
        )
        .unwrap();
        let agents = d.agents.unwrap();
        assert_eq!(agents.value[0].kind, AgentKind::Codex);
        assert_eq!(agents.origin.line, 2);
        assert_eq!(agents.origin.file, Path::new("dir/aptitude.yaml"));
        assert_eq!(d.env["A"].origin.line, 4);
        assert_eq!(d.env["B"].value, "2");
        assert_eq!(d.env["B"].origin.line, 5);
        assert_eq!(d.judge.votes.unwrap().origin.line, 7);
        assert_eq!(
            load_suite_str(Path::new("a"), "# only a comment\n").unwrap(),
            SuiteDefaults::default()
        );
    }

    /// The test's own values win; the rest come from the nearest file, and a review
    /// without a threshold gets the suite's. A broken `aptitude.yaml` is reported once,
    /// however many tests it covers, and none of them loads.
    #[test]
    fn load_files_applies_the_defaults_and_reports_a_broken_suite_file_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("t")).unwrap();
        std::fs::write(
            root.join("aptitude.yaml"),
            "model: m\nruns: 2\nenv: {A: suite, B: suite}\njudge: {threshold: 9, model: judge-m}\n",
        )
        .unwrap();
        let test = root.join("t/a.aptitude.yaml");
        std::fs::write(
            &test,
            "name: a\nprompt: p\nruns: 1\nenv: {A: test}\nassertions:\n  - stdout: {review: ok}\n  - stdout: {review: ok, threshold: 4}\n",
        )
        .unwrap();
        let report = load_files(std::slice::from_ref(&test));
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        let spec = &report.specs[0];
        assert_eq!(spec.model.as_deref(), Some("m"));
        assert_eq!(spec.runs, Some(1));
        assert_eq!(spec.env["A"], "test");
        assert_eq!(spec.env["B"], "suite");
        let reviews: Vec<(u8, Option<&str>)> = spec
            .assertions
            .iter()
            .filter_map(|a| match &a.kind {
                AssertionKind::Review(r) => Some((r.threshold, r.model.as_deref())),
                _ => None,
            })
            .collect();
        assert_eq!(reviews, [(9, Some("judge-m")), (4, Some("judge-m"))]);

        std::fs::write(root.join("t/aptitude.yaml"), "prompt: no\n").unwrap();
        let other = root.join("t/b.aptitude.yaml");
        std::fs::copy(&test, &other).unwrap();
        let report = load_files(&[test.clone(), other.clone()]);
        assert!(report.specs.is_empty());
        assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
        assert_eq!(report.errors[0].path, root.join("t/aptitude.yaml"));

        // `min_pass` from a default above the test's own `runs`: it could never pass.
        std::fs::write(root.join("t/aptitude.yaml"), "min_pass: 2\n").unwrap();
        let report = load_files(std::slice::from_ref(&test));
        assert!(report.specs.is_empty());
        let message = &report.errors[0].diagnostics[0].message;
        assert!(
            message.starts_with("`min_pass: 2` (from ")
                && message.contains("t/aptitude.yaml:1) is more than `runs: 1` (from this test)"),
            "{message}"
        );
    }
}
