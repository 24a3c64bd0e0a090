//! Fingerprints: what determines an agent run, hashed, so that `run --reuse BASELINE.json`
//! can tell a test whose agent would see exactly what it saw in the baseline's run.
//!
//! A fingerprint is the SHA-256 of its parts, each itself a SHA-256 (hex), so that a reader
//! can see *what* changed between two results files:
//!
//! | part        | what is hashed |
//! |-------------|----------------|
//! | `agent`     | the agent and its version, as the CLI reports it (`claude 2.1.3 (Claude Code)`) |
//! | `model`     | the model passed to the agent (empty: the agent's default) |
//! | `prompt`    | the prompt, after the variant's `prompt` |
//! | `run`       | the other fields passed to the agent: `max_turns`, `timeout`, `stop` (a routing suite's), the endpoint it talks to (the test's `base_url`, else `--agent-base-url`), `workspace.git`, `mcp_servers` as written (`${VAR}` not expanded) |
//! | `workspace` | every file of the workspace copy after the variant's `remove`/`add`: path, kind and content (a link by its target; `.git` only with `workspace.git`) |
//! | `setup`     | the `setup` commands, in order |
//! | `env`       | each `env` name with the SHA-256 of its value (after the variant's `env`) |
//! | `inputs`    | each `inputs:` glob, and the path and SHA-256 of every file it matches (a directory: every file below it) |
//! | `plugins`   | each `plugins:` directory, in order: its name and its tree, hashed as the workspace is, without what the run's copy leaves out (`.git`, test files) |
//!
//! Not in it: the assertions (a changed assertion is re-evaluated on the recorded run), the
//! test's `name`, `description`, `runs`/`min_pass`, the judge, aptitude's own version, the
//! agent's environment outside `env` (API keys, `PATH`), the model's own version behind its
//! name, and files outside the workspace that no `inputs:` glob or `plugins:` entry names.

use std::collections::BTreeMap;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::shared::hex;

use crate::spec::TestSpec;
pub use crate::verdict::results::Fingerprint;

/// Bumped when what is hashed changes, so that fingerprints of older results never match.
const FINGERPRINT_VERSION: &str = "aptitude-fingerprint-v2";

/// Why a fingerprint could not be made.
#[derive(Debug, thiserror::Error)]
pub enum FingerprintError {
    /// A file of the workspace copy or one an `inputs:` glob matched could not be read.
    #[error("can not read {path} for the fingerprint: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An `inputs:` glob is not a glob (the loader checks them; a file edited since is not).
    #[error("`inputs: {glob}` is not a glob: {source}")]
    Glob {
        /// The glob.
        glob: String,
        /// Why.
        #[source]
        source: globset::Error,
    },
}

/// The test's `mock:` servers as they answer, whatever their lines: each tool's
/// description, schema, replies and `expect:`, and each recording's server and content
/// (its SHA-256; `unreadable` when it can not be read), not its path.
fn mocks_text(spec: &TestSpec) -> String {
    let mut text = String::new();
    for (name, mock) in &spec.mcp_mocks {
        text.push_str(&format!("server {name}\n"));
        if let Some(from) = &mock.from {
            let content = std::fs::read(&from.cassette)
                .map_or_else(|_| "unreadable".to_owned(), |b| hex(&Sha256::digest(&b)));
            text.push_str(&format!("from {} {content}\n", from.server));
        }
        for (tool, t) in &mock.tools {
            let expect: Vec<String> = t
                .expect
                .iter()
                .map(|p| format!("{}={:?}", p.key, p.matcher))
                .collect();
            text.push_str(&format!(
                "tool {tool} {:?} {} {:?} {expect:?}\n",
                t.description, t.input_schema, t.replies
            ));
        }
    }
    text
}

/// The fingerprint of `spec` run by `agent` (its name and reported version), in the
/// workspace copy at `workspace` (after the variant was applied, before `setup`).
/// `base_url` is the endpoint the agent's settings give every run (`--agent-base-url`);
/// the test's own `base_url:` wins over it, as it does when the agent runs.
///
/// # Errors
/// When a workspace file, an `inputs:` file or a `plugins:` directory can not be read.
pub fn of(
    spec: &TestSpec,
    agent: &str,
    base_url: Option<&str>,
    workspace: &Path,
) -> Result<Fingerprint, FingerprintError> {
    let mut parts = BTreeMap::new();
    let mut put = |name: &str, hash: String| {
        parts.insert(name.to_owned(), hash);
    };
    put("agent", hex(&Sha256::digest(agent.as_bytes())));
    put("model", hash_fields(&[spec.model.as_deref().unwrap_or("")]));
    put("prompt", hex(&Sha256::digest(spec.prompt.as_bytes())));
    let timeout = spec.timeout.map(|t| t.as_millis().to_string());
    let max_turns = spec.max_turns.map(|t| t.to_string());
    let mcp = format!("{:?}", spec.mcp_servers);
    // Mocks (and the recordings they answer from) count only where there are any, so that
    // the fingerprints of tests without them are those of earlier versions.
    let mocks = (!spec.mcp_mocks.is_empty()).then(|| mocks_text(spec));
    let mut run = vec![
        "max_turns",
        max_turns.as_deref().unwrap_or(""),
        "timeout_ms",
        timeout.as_deref().unwrap_or(""),
        "base_url",
        spec.agent.base_url.as_deref().or(base_url).unwrap_or(""),
        "workspace.git",
        if spec.workspace_git { "true" } else { "false" },
        "mcp_servers",
        &mcp,
    ];
    if let Some(mocks) = &mocks {
        run.extend(["mcp_mocks", mocks.as_str()]);
    }
    // A run stopped at its first decision is not the same run as a whole one; tests that
    // are never stopped keep the fingerprints of earlier versions.
    if spec.stop != crate::spec::routing::Stop::Never {
        run.extend(["stop", spec.stop.word()]);
    }
    // A run whose own hooks ran is not the same run; tests without `hooks: workspace`
    // keep the fingerprints of earlier versions.
    if spec.hooks == Some(crate::spec::HooksSetting::Workspace) {
        run.extend(["hooks", "workspace"]);
    }
    // A run whose questions get answers is another run; its replies are part of it.
    // Tests without `user:` keep the fingerprints of earlier versions.
    let user = spec.user.as_ref().map(|u| format!("{u:?}"));
    if let Some(user) = &user {
        run.extend(["user", user.as_str()]);
    }
    put("run", hash_fields(&run));
    put("workspace", tree_digest(workspace, spec.workspace_git)?);
    let setup: Vec<&str> = spec.setup.iter().map(String::as_str).collect();
    put("setup", hash_fields(&setup));
    let env: Vec<String> = spec
        .env
        .iter()
        .flat_map(|(k, v)| [k.clone(), hex(&Sha256::digest(v.as_bytes()))])
        .collect();
    let env: Vec<&str> = env.iter().map(String::as_str).collect();
    put("env", hash_fields(&env));
    put("inputs", inputs_digest(spec)?);
    put("plugins", plugins_digest(&spec.plugins)?);
    Ok(from_parts(parts))
}

/// The fingerprint of `parts` (part name → SHA-256 hex).
pub fn from_parts(parts: BTreeMap<String, String>) -> Fingerprint {
    let mut fields = vec![FINGERPRINT_VERSION];
    for (name, hash) in &parts {
        fields.push(name);
        fields.push(hash);
    }
    Fingerprint {
        sha256: hash_fields(&fields),
        parts,
    }
}

/// SHA-256 of `fields`, each length-prefixed so that no two lists hash alike.
fn hash_fields(fields: &[&str]) -> String {
    let mut h = Sha256::new();
    for f in fields {
        h.update((f.len() as u64).to_le_bytes());
        h.update(f.as_bytes());
    }
    hex(&h.finalize())
}

/// SHA-256 of a directory tree: every entry's `/`-separated path, kind and content (a
/// file's bytes, a link's target, never followed), in path order. `.git` is left out unless
/// `with_git`.
///
/// # Errors
/// When a directory or file can not be read.
pub fn tree_digest(root: &Path, with_git: bool) -> Result<String, FingerprintError> {
    digest_where(root, &|dir, name| {
        !with_git && dir == root && name == std::ffi::OsStr::new(".git")
    })
}

/// SHA-256 of the tree at `root` as [`tree_digest`] hashes it, leaving out each entry for
/// which `skip(its directory, its name)` holds (and everything below it).
fn digest_where(
    root: &Path,
    skip: &dyn Fn(&Path, &std::ffi::OsStr) -> bool,
) -> Result<String, FingerprintError> {
    let mut entries = Vec::new();
    collect(root, root, skip, &mut entries)?;
    entries.sort();
    let mut h = Sha256::new();
    for (rel, kind, hash) in &entries {
        for field in [rel.as_str(), kind, hash.as_str()] {
            h.update((field.len() as u64).to_le_bytes());
            h.update(field.as_bytes());
        }
    }
    Ok(hex(&h.finalize()))
}

/// (relative path, kind, content hash) of every entry under `dir` that `skip` keeps.
fn collect(
    root: &Path,
    dir: &Path,
    skip: &dyn Fn(&Path, &std::ffi::OsStr) -> bool,
    out: &mut Vec<(String, &'static str, String)>,
) -> Result<(), FingerprintError> {
    let read_err = |path: &Path| {
        let path = path.display().to_string();
        move |source| FingerprintError::Read { path, source }
    };
    for entry in std::fs::read_dir(dir).map_err(read_err(dir))? {
        let entry = entry.map_err(read_err(dir))?;
        let path = entry.path();
        if skip(dir, &entry.file_name()) {
            continue;
        }
        let file_type = entry.file_type().map_err(read_err(&path))?;
        let rel = relative(root, &path);
        if file_type.is_dir() {
            out.push((rel, "dir", String::new()));
            collect(root, &path, skip, out)?;
        } else if file_type.is_symlink() {
            let target = std::fs::read_link(&path).map_err(read_err(&path))?;
            let target = hex(&Sha256::digest(target.as_os_str().as_encoded_bytes()));
            out.push((rel, "link", target));
        } else if file_type.is_file() {
            out.push((rel, "file", file_sha256(&path)?));
        } else {
            // A FIFO, socket or device is never opened.
            out.push((rel, "special", String::new()));
        }
    }
    Ok(())
}

/// `path` relative to `root`, `/`-separated.
fn relative(root: &Path, path: &Path) -> String {
    crate::shared::files::relative_slash(root, path)
}

/// SHA-256 (hex) of a file's content, streamed.
fn file_sha256(path: &Path) -> Result<String, FingerprintError> {
    let read_err = |source| FingerprintError::Read {
        path: path.display().to_string(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(read_err)?;
    let mut h = Sha256::new();
    std::io::copy(&mut file, &mut h).map_err(read_err)?;
    Ok(hex(&h.finalize()))
}

/// SHA-256 of the test's `inputs:` globs and of every file they match (path relative to the
/// test file's directory, and content), in path order.
fn inputs_digest(spec: &TestSpec) -> Result<String, FingerprintError> {
    let mut fields: Vec<String> = Vec::new();
    let base = spec
        .file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    for glob in &spec.inputs {
        fields.push(glob.clone());
        for (rel, path) in crate::shared::files::matching_files(base, glob).map_err(|source| {
            FingerprintError::Glob {
                glob: glob.to_owned(),
                source,
            }
        })? {
            fields.push(rel);
            fields.push(file_sha256(&path)?);
        }
    }
    let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
    Ok(hash_fields(&fields))
}

/// SHA-256 of the `plugins:` directories, in order: each one's name (the run copies it
/// under that name) and its tree, hashed as [`tree_digest`] does, without what the run's
/// copy leaves out (every `.git`, test files, transcripts and suite files: a plugin that
/// keeps its tests inside it is not changed by an edited assertion). The directories live
/// outside the workspace, so without this part a changed skill would reuse a run made with
/// the old one.
fn plugins_digest(dirs: &[std::path::PathBuf]) -> Result<String, FingerprintError> {
    let mut fields = Vec::new();
    for dir in dirs {
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default();
        fields.push(name);
        fields.push(digest_where(dir, &|_, name| {
            name == std::ffi::OsStr::new(".git")
                || crate::spec::discover::is_aptitude_file(&name.to_string_lossy())
        })?);
    }
    let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
    Ok(hash_fields(&fields))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(yaml: &str, dir: &Path) -> TestSpec {
        crate::spec::load_str(&dir.join("t.aptitude.yaml"), yaml).unwrap()
    }

    #[test]
    fn each_part_changes_only_with_what_it_covers() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(ws.join("src/a.txt"), "one").unwrap();
        std::fs::write(dir.path().join("tool.py"), "print(1)").unwrap();
        let base =
            "name: t\nprompt: p\nenv: {K: v}\ninputs: [\"*.py\"]\nassertions:\n  - tool: Read\n";
        let a = of(&spec(base, dir.path()), "claude 2.1.3", None, &ws).unwrap();
        assert_eq!(a.sha256.len(), 64);
        assert_eq!(
            a.parts.keys().collect::<Vec<_>>(),
            [
                "agent",
                "env",
                "inputs",
                "model",
                "plugins",
                "prompt",
                "run",
                "setup",
                "workspace"
            ]
        );
        let same = of(&spec(base, dir.path()), "claude 2.1.3", None, &ws).unwrap();
        assert_eq!(a, same, "stable");

        // Only an assertion changed: the same fingerprint.
        let other_assertion = base.replace("tool: Read", "tool: Bash");
        let b = of(
            &spec(&other_assertion, dir.path()),
            "claude 2.1.3",
            None,
            &ws,
        )
        .unwrap();
        assert_eq!(a, b);

        let changed = |yaml: &str, agent: &str| {
            let f = of(&spec(yaml, dir.path()), agent, None, &ws).unwrap();
            assert_ne!(f.sha256, a.sha256);
            f.changed_parts(&a)
        };
        assert_eq!(changed(base, "claude 2.1.4"), ["agent"]);
        assert_eq!(
            changed(&base.replace("prompt: p", "prompt: q"), "claude 2.1.3"),
            ["prompt"]
        );
        assert_eq!(
            changed(&base.replace("K: v", "K: w"), "claude 2.1.3"),
            ["env"]
        );
        assert_eq!(
            changed(
                &base.replace("name: t\n", "name: t\nmodel: m\n"),
                "claude 2.1.3"
            ),
            ["model"]
        );
        assert_eq!(
            changed(
                &base.replace("name: t\n", "name: t\nsetup: make\n"),
                "claude 2.1.3"
            ),
            ["setup"]
        );
        assert_eq!(
            changed(
                &base.replace("name: t\n", "name: t\nmax_turns: 3\n"),
                "claude 2.1.3"
            ),
            ["run"]
        );
        // A user who answers is another run, and so is one who answers otherwise.
        let user = |say: &str| {
            base.replace(
                "name: t\n",
                &format!("name: t\nuser: {{script: [{{when: sides, say: {say}}}]}}\n"),
            )
        };
        assert_eq!(changed(&user("six"), "claude 2.1.3"), ["run"]);
        let six = of(&spec(&user("six"), dir.path()), "claude 2.1.3", None, &ws).unwrap();
        let eight = of(&spec(&user("eight"), dir.path()), "claude 2.1.3", None, &ws).unwrap();
        assert_eq!(eight.changed_parts(&six), ["run"]);

        std::fs::write(ws.join("src/a.txt"), "two").unwrap();
        assert_eq!(changed(base, "claude 2.1.3"), ["workspace"]);
        std::fs::write(ws.join("src/a.txt"), "one").unwrap();
        std::fs::write(dir.path().join("tool.py"), "print(2)").unwrap();
        assert_eq!(changed(base, "claude 2.1.3"), ["inputs"]);
    }

    #[test]
    fn mocks_count_by_what_they_answer_not_by_their_lines() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let with = |head: &str, reply: &str| {
            let yaml = format!(
                "{head}name: t\nprompt: p\nmcp_servers:\n  m:\n    mock:\n      tools:\n        t: {{reply: {reply}, expect: {{x: 1}}}}\nassertions:\n  - tool: Read\n"
            );
            of(&spec(&yaml, dir.path()), "claude 2.1.3", None, &ws)
                .unwrap()
                .parts["run"]
                .clone()
        };
        let none = of(
            &spec(
                "name: t\nprompt: p\nassertions:\n  - tool: Read\n",
                dir.path(),
            ),
            "claude 2.1.3",
            None,
            &ws,
        )
        .unwrap()
        .parts["run"]
            .clone();
        let a = with("", "ok");
        assert_ne!(a, none);
        assert_eq!(a, with("# a comment moves every line\n\n", "ok"));
        assert_ne!(a, with("", "other"));
    }

    #[test]
    fn a_renamed_or_emptied_workspace_file_changes_the_workspace_digest() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "x").unwrap();
        let before = tree_digest(dir.path(), false).unwrap();
        std::fs::rename(dir.path().join("a"), dir.path().join("b")).unwrap();
        let renamed = tree_digest(dir.path(), false).unwrap();
        assert_ne!(before, renamed);
        std::fs::write(dir.path().join("b"), "").unwrap();
        assert_ne!(renamed, tree_digest(dir.path(), false).unwrap());
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "ref").unwrap();
        let without = tree_digest(dir.path(), false).unwrap();
        assert_ne!(
            without,
            tree_digest(dir.path(), true).unwrap(),
            "git counts only with workspace.git"
        );
    }

    #[test]
    fn inputs_globs_walk_from_their_literal_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let tests = dir.path().join("tests");
        std::fs::create_dir_all(dir.path().join("src/sub")).unwrap();
        std::fs::create_dir_all(&tests).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "").unwrap();
        std::fs::write(dir.path().join("src/sub/b.rs"), "").unwrap();
        std::fs::write(dir.path().join("src/c.txt"), "").unwrap();
        let names = |glob: &str| {
            crate::shared::files::matching_files(&tests, glob)
                .unwrap()
                .into_iter()
                .map(|(rel, _)| rel)
                .collect::<Vec<_>>()
        };
        assert_eq!(names("../src/**/*.rs"), ["../src/a.rs", "../src/sub/b.rs"]);
        assert_eq!(
            names("../src/*.rs"),
            ["../src/a.rs"],
            "`*` stays in its directory"
        );
        assert_eq!(names("../src/c.txt"), ["../src/c.txt"]);
        assert!(names("../nowhere/*.rs").is_empty());
        assert_eq!(
            names("../src"),
            ["../src/a.rs", "../src/c.txt", "../src/sub/b.rs"],
            "a directory is everything below it"
        );
        assert_eq!(names("../src/sub/"), ["../src/sub/b.rs"]);
    }

    #[test]
    fn a_change_inside_an_inputs_directory_changes_the_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(dir.path().join("tool/lib")).unwrap();
        std::fs::write(dir.path().join("tool/lib/cli.py"), "print(1)").unwrap();
        let yaml = "name: t\nprompt: p\ninputs: tool\nassertions:\n  - tool: Read\n";
        let fp = || of(&spec(yaml, dir.path()), "claude", None, &ws).unwrap();
        let before = fp();
        std::fs::write(dir.path().join("tool/lib/cli.py"), "print(2)").unwrap();
        assert_eq!(fp().changed_parts(&before), ["inputs"]);
    }

    #[test]
    fn a_changed_plugin_file_changes_the_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let skill = dir.path().join("my-plugin/skills/greet/SKILL.md");
        std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
        std::fs::write(&skill, "Say hello.").unwrap();
        std::fs::create_dir_all(dir.path().join("other")).unwrap();
        let yaml = "name: t\nprompt: p\nplugins: [my-plugin]\nassertions:\n  - tool: Read\n";
        let of = |yaml: &str| of(&spec(yaml, dir.path()), "claude", None, &ws).unwrap();
        let before = of(yaml);
        assert_eq!(before, of(yaml), "stable");
        std::fs::write(&skill, "Say goodbye.").unwrap();
        let edited = of(yaml);
        assert_eq!(edited.changed_parts(&before), ["plugins"]);
        std::fs::write(dir.path().join("my-plugin/skills/greet/extra.md"), "").unwrap();
        let added = of(yaml);
        assert_eq!(added.changed_parts(&edited), ["plugins"], "an added file");
        std::fs::write(dir.path().join("my-plugin/t.aptitude.yaml"), "name: t").unwrap();
        std::fs::create_dir_all(dir.path().join("my-plugin/.git")).unwrap();
        std::fs::write(dir.path().join("my-plugin/.git/HEAD"), "ref").unwrap();
        assert_eq!(
            of(yaml),
            added,
            "a test file or .git inside the plugin is not copied, so not hashed"
        );
        let more = yaml.replace("[my-plugin]", "[my-plugin, other]");
        assert_eq!(
            of(&more).changed_parts(&of(yaml)),
            ["plugins"],
            "another plugin"
        );
    }

    #[test]
    fn the_endpoint_the_agent_talks_to_is_part_of_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let yaml = "name: t\nprompt: p\nassertions:\n  - tool: Read\n";
        let test = spec(yaml, dir.path());
        let of_url = |url| of(&test, "claude", url, &ws).unwrap();
        let default = of_url(None);
        let proxy = of_url(Some("http://127.0.0.1:4000"));
        assert_eq!(proxy.changed_parts(&default), ["run"], "--agent-base-url");
        let mut pinned = test.clone();
        pinned.agent.base_url = Some("http://127.0.0.1:4000".into());
        assert_eq!(
            of(&pinned, "claude", Some("http://elsewhere:1"), &ws).unwrap(),
            proxy,
            "the test's base_url wins over the flag, as when the agent runs"
        );
    }
}
