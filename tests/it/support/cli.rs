//! The one way the tests run the `aptitude` binary (and the scripts that call it): a cleared
//! environment, a sandbox of its own for `HOME` and `TMPDIR`, optionally the scripted model
//! and the pinned agent CLIs, a time limit, and the insta filters that make its output
//! stable (paths, durations, ids, versions).
//!
//! ```ignore
//! let out = Aptitude::new().args(["analyze", "examples/"]).output();
//! assert_eq!(out.code, 1);
//! out.settings().bind(|| insta::assert_snapshot!("analyze_examples", out.stdout));
//! ```
//!
//! Nothing of the test process's environment reaches the binary unless a test asks for it
//! ([`Aptitude::inherit_path`], [`Aptitude::model`]): a developer's `ANTHROPIC_API_KEY`,
//! `GITHUB_TOKEN` or `APTITUDE_*` can not change a result.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use super::model::ScriptedModel;
use super::{claude_bin, root};

/// How long one command may run before the test fails: a hang fails instead of stalling
/// the suite. Runs of the real agent set their own, longer limit.
const DEFAULT_LIMIT: Duration = Duration::from_secs(120);

/// The `aptitude` binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_aptitude"))
}

/// A directory holding the `HOME` and `TMPDIR` of one command: either a temp dir of its own
/// (removed when the last [`Output`] or [`Running`] holding it is dropped) or `home/` and
/// `tmp/` inside a test's directory.
#[derive(Clone)]
pub struct Sandbox {
    root: PathBuf,
    _owned: Option<Arc<tempfile::TempDir>>,
}

impl Sandbox {
    fn fresh() -> Self {
        let dir = tempfile::tempdir().unwrap();
        Sandbox::with(dir.path().to_owned(), Some(Arc::new(dir)))
    }

    fn with(root: PathBuf, owned: Option<Arc<tempfile::TempDir>>) -> Self {
        std::fs::create_dir_all(root.join("home")).unwrap();
        std::fs::create_dir_all(root.join("tmp")).unwrap();
        share_agent_versions(&root.join("home"));
        Sandbox {
            root,
            _owned: owned,
        }
    }

    /// The command's `HOME`.
    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    /// The command's `TMPDIR`: aptitude's workspace copies and agent config dirs go here.
    pub fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }
}

/// Links `home`'s kept agent versions (`~/.cache/aptitude/agents/versions`,
/// src/agent/probe.rs) to one directory for the whole suite, as one CI job's `HOME` keeps
/// them across its `aptitude` invocations: each installed agent's `--version` is probed
/// once, not on every invocation (1–2 CPU-s each for pi, Gemini CLI and opencode). A kept
/// answer is keyed by the binary's identity, so a test's own stand-in binary is always
/// probed. Nothing else in the cache is shared.
fn share_agent_versions(home: &Path) {
    let agents = home.join(".cache/aptitude/agents");
    let link = agents.join("versions");
    if link.symlink_metadata().is_ok() {
        return;
    }
    let shared = Path::new(env!("CARGO_TARGET_TMPDIR")).join("agent-versions");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::create_dir_all(&agents).unwrap();
    std::os::unix::fs::symlink(&shared, &link).unwrap();
}

/// A command to run: `aptitude` itself ([`Aptitude::new`]), a script that calls it
/// ([`Aptitude::program`]) or an agent CLI ([`Aptitude::agent_cli`]).
pub struct Aptitude {
    cmd: std::process::Command,
    sandbox: Sandbox,
    cwd: PathBuf,
    limit: Duration,
    /// Directories put first on `PATH`.
    path_dirs: Vec<PathBuf>,
    /// Whether the test process's `PATH` follows them.
    inherit_path: bool,
    /// What the command reads on stdin ([`Aptitude::stdin`]); none by default.
    stdin: Option<Vec<u8>>,
}

impl Default for Aptitude {
    fn default() -> Self {
        Self::new()
    }
}

impl Aptitude {
    /// `aptitude` in the repository root, with a cleared environment but for a fresh
    /// `HOME` and `TMPDIR`.
    pub fn new() -> Self {
        Self::command(bin(), Vec::new())
    }

    /// Another program (the GitHub Action's run script) run the same way, with the
    /// directory of the `aptitude` under test first on its `PATH`.
    pub fn program(program: impl AsRef<OsStr>) -> Self {
        let dir = bin().parent().map(Path::to_owned).into_iter().collect();
        Self::command(program, dir)
    }

    /// An agent CLI run directly the same way (the scripted model's own tests, which check
    /// the test double against the real clients).
    pub fn agent_cli(bin: impl AsRef<OsStr>) -> Self {
        Self::command(bin, Vec::new())
    }

    fn command(program: impl AsRef<OsStr>, path_dirs: Vec<PathBuf>) -> Self {
        let mut cmd = std::process::Command::new(program);
        // No drift check by default: a test's fake agent reporting another version than
        // the pinned one would install the pinned release from npm into a fresh home. The
        // tests of the check turn it back on.
        cmd.env_clear()
            .env("APTITUDE_NO_DRIFT_CHECK", "true")
            .stdin(Stdio::null());
        let mut this = Aptitude {
            cmd,
            sandbox: Sandbox::fresh(),
            cwd: root(),
            limit: DEFAULT_LIMIT,
            path_dirs,
            inherit_path: false,
            stdin: None,
        };
        this.apply_sandbox();
        this
    }

    fn apply_sandbox(&mut self) {
        self.cmd
            .env("HOME", self.sandbox.home())
            .env("TMPDIR", self.sandbox.tmp());
    }

    /// Puts `HOME` and `TMPDIR` in `dir/home` and `dir/tmp` (created), where the test can
    /// look at them after the run.
    pub fn sandbox_in(&mut self, dir: &Path) -> &mut Self {
        self.sandbox = Sandbox::with(dir.to_owned(), None);
        self.apply_sandbox();
        self
    }

    /// Runs in `dir` (the repository root otherwise).
    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.cwd = dir.as_ref().to_owned();
        self
    }

    /// Adds one argument.
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        self.cmd.arg(arg);
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(&mut self, args: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.cmd.args(args);
        self
    }

    /// Sets one environment variable.
    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Self {
        self.cmd.env(key, value);
        self
    }

    /// Sets environment variables.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.cmd.envs(vars);
        self
    }

    /// Passes the test process's `PATH` on (the agent CLIs run `node`, `bash`…).
    pub fn inherit_path(&mut self) -> &mut Self {
        self.inherit_path = true;
        self
    }

    /// Puts `dir` on `PATH`, before the test process's `PATH` when it is passed on.
    pub fn path_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.path_dirs.push(dir.as_ref().to_owned());
        self
    }

    /// The working directory and `PATH`, set last.
    fn prepare(&mut self) {
        self.cmd.current_dir(&self.cwd);
        if !self.path_dirs.is_empty() || self.inherit_path {
            let inherited = if self.inherit_path {
                std::env::var_os("PATH").unwrap_or_default()
            } else {
                Default::default()
            };
            let dirs = self
                .path_dirs
                .iter()
                .cloned()
                .chain(std::env::split_paths(&inherited));
            self.cmd.env("PATH", std::env::join_paths(dirs).unwrap());
        }
    }

    /// Points the agents at the scripted model (its URL and a test key) and passes `PATH`
    /// on.
    pub fn model(&mut self, model: &ScriptedModel) -> &mut Self {
        self.inherit_path();
        self.cmd.envs(model.claude_env());
        self
    }

    /// `--claude-bin` naming the pinned `claude` installed by `scripts/test`.
    pub fn claude(&mut self) -> &mut Self {
        self.cmd.arg("--claude-bin").arg(claude_bin());
        self
    }

    /// Gives the command `input` on stdin (with [`Aptitude::output`]), as a person typing
    /// answers would.
    pub fn stdin(&mut self, input: impl Into<Vec<u8>>) -> &mut Self {
        self.stdin = Some(input.into());
        self
    }

    /// Fails the test when the command runs longer than `limit`.
    pub fn limit(&mut self, limit: Duration) -> &mut Self {
        self.limit = limit;
        self
    }

    /// Runs to the end, within the time limit. A builder runs once: the command is taken.
    pub fn output(&mut self) -> Output {
        self.prepare();
        let mut cmd = assert_cmd::Command::from_std(std::mem::replace(
            &mut self.cmd,
            std::process::Command::new("true"),
        ));
        if let Some(input) = self.stdin.take() {
            cmd.write_stdin(input);
        }
        let out = cmd.timeout(self.limit).output().unwrap();
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            sandbox: self.sandbox.clone(),
            cwd: self.cwd.clone(),
        }
    }

    /// Starts it with stdout and stderr piped, for a test that acts while it runs (sends
    /// a signal); no time limit but the test's own.
    pub fn spawn(&mut self) -> Running {
        self.prepare();
        let child = self
            .cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Running {
            child,
            _sandbox: self.sandbox.clone(),
        }
    }
}

/// A started command ([`Aptitude::spawn`]); its sandbox lives as long as it does.
pub struct Running {
    /// The process.
    pub child: std::process::Child,
    _sandbox: Sandbox,
}

impl Running {
    /// Its pid.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` to it.
    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.id() as i32), signal).unwrap();
    }
}

/// What a finished command printed.
pub struct Output {
    /// The exit code (`-1` when killed by a signal).
    pub code: i32,
    /// Stdout, lossily decoded.
    pub stdout: String,
    /// Stderr, lossily decoded.
    pub stderr: String,
    sandbox: Sandbox,
    cwd: PathBuf,
}

impl Output {
    /// Stdout and stderr, for an assertion message.
    pub fn both(&self) -> String {
        format!("stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr)
    }

    /// Asserts the exit code, showing both streams otherwise; returns `self`.
    #[track_caller]
    pub fn code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "exit code\n{}", self.both());
        self
    }

    /// Insta settings with this command's filters: its sandbox, working directory and the
    /// repository root as `[TMP]`, `[HOME]`, `[CWD]`, `[SANDBOX]`, `[ROOT]`, and the filters
    /// of `add_general_filters`.
    pub fn settings(&self) -> insta::Settings {
        let mut s = insta::Settings::clone_current();
        // Filters apply in order. The most specific path first: the sandbox may be inside
        // the working directory; then the general filters.
        for (path, name) in [
            (self.sandbox.tmp(), "[TMP]"),
            (self.sandbox.home(), "[HOME]"),
            (self.cwd.clone(), "[CWD]"),
            (self.sandbox.root.clone(), "[SANDBOX]"),
            (root(), "[ROOT]"),
        ] {
            s.add_filter(&regex::escape(&path.display().to_string()), name);
        }
        add_general_filters(&mut s);
        s
    }
}

/// The filters every CLI snapshot needs: durations, `duration_ms`, `started_at`, aptitude's version,
/// session ids (UUIDs) and the random part of aptitude's temp dir names.
fn add_general_filters(s: &mut insta::Settings) {
    s.add_filter(r"\b\d+m \d\ds\b", "[DURATION]");
    s.add_filter(r"\b\d+(\.\d+)?(ms|s)\b", "[DURATION]");
    s.add_filter(r#""duration_ms": \d+"#, r#""duration_ms": "[MS]""#);
    s.add_filter(r#""started_at": "[^"]+""#, r#""started_at": "[TIME]""#);
    s.add_filter(
        r#""aptitude_version": "[^"]+""#,
        r#""aptitude_version": "[VERSION]""#,
    );
    s.add_filter(&regex::escape(env!("CARGO_PKG_VERSION")), "[VERSION]");
    // The sandbox tool's version is the machine's (Debian 12: 0.8.0; Ubuntu 24.04: 0.9.0).
    s.add_filter(r"bubblewrap \d+\.\d+(\.\d+)?", "bubblewrap [VERSION]");
    s.add_filter(
        r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
        "[UUID]",
    );
    s.add_filter(r"/tmp/\.tmp[A-Za-z0-9]+", "[TEMP]");
    // aptitude's temp dirs: `aptitude-ws-XXXXXX`, `aptitude-claude-config-XXXXXX`.
    s.add_filter(
        r"\b(aptitude-(?:ws|claude-config)-)[A-Za-z0-9]{6}\b",
        "${1}[ID]",
    );
}
