//! Containment: a way to find and kill every process a command started, one the command
//! can not shed.
//!
//! A process group and an environment marker are not enough: an agent's shell can run
//! `setsid env -i daemon &` (new session, new group, empty environment) and the daemon
//! survives both. So every command runs in a [`Jail`], chosen once per aptitude process:
//!
//! 1. **cgroup v2** (Linux, when aptitude's own cgroup is on a writable cgroup2 mount): a
//!    fresh cgroup `aptitude-<pid>-<n>` under aptitude's cgroup per command. The command is
//!    started through `/bin/sh -c 'echo $$ > cgroup.procs; exec "$@"'`, so it is in the
//!    cgroup before any of its code runs, and every descendant inherits it whatever it does
//!    to its session, group or environment. Killing writes `cgroup.kill` (or, on kernels
//!    before 5.14, freezes the cgroup and SIGKILLs each of `cgroup.procs`), then removes it.
//! 2. **Subreaper** (Linux without a usable cgroup, or with `APTITUDE_NO_CGROUP=1`):
//!    aptitude makes itself a child subreaper (`PR_SET_CHILD_SUBREAPER`), so orphans are
//!    re-parented to aptitude instead of init. While a command runs, its process tree is
//!    sampled every [`SAMPLE_EVERY`]; when it ends, the orphans (children of aptitude that
//!    it did not start itself) seen in that tree are killed with their descendants and
//!    reaped. Orphans no sample saw (born and orphaned between two samples) can not be told
//!    apart between concurrent commands: they are killed when no other command is running,
//!    at the latest when the last one ends.
//! 3. **Nothing more** (macOS and other Unixes): only the process group and the
//!    environment marker sweep of [`super::process`] apply.
//!
//! The environment marker sweep runs after each of these as a last layer.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Set (to anything non-empty) to skip cgroups and use the subreaper fallback.
pub const NO_CGROUP_VAR: &str = "APTITUDE_NO_CGROUP";

/// How often a running command's process tree is sampled in subreaper mode.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(200);

/// The containment mechanism in use by this aptitude process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// One cgroup v2 per command, created under this directory (aptitude's own cgroup).
    Cgroup(PathBuf),
    /// aptitude is a child subreaper; orphans are attributed by process-tree samples.
    Subreaper,
    /// Process group and environment marker only.
    Marker,
}

impl Mode {
    /// A short name for messages and docs: `cgroup`, `subreaper`, `marker`.
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Cgroup(_) => "cgroup",
            Mode::Subreaper => "subreaper",
            Mode::Marker => "marker",
        }
    }
}

/// A unique id for one command's processes.
pub fn new_run_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// The mechanism, probed on first use: a cgroup is created and a shell moved into it.
pub fn mode() -> &'static Mode {
    static MODE: OnceLock<Mode> = OnceLock::new();
    MODE.get_or_init(|| {
        let no_cgroup = std::env::var_os(NO_CGROUP_VAR).is_some_and(|v| !v.is_empty());
        if !no_cgroup && let Some(dir) = linux::usable_cgroup() {
            return Mode::Cgroup(dir);
        }
        if linux::become_subreaper() {
            Mode::Subreaper
        } else {
            Mode::Marker
        }
    })
}

/// The processes of one command: created before it starts, killed (all of them) when
/// [`Jail::kill_all`] is called or the jail is dropped.
#[derive(Debug)]
pub struct Jail {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Cgroup { dir: PathBuf, removed: bool },
    Tracked { key: u64, done: bool },
    None,
}

/// Subreaper bookkeeping: running commands by jail key.
#[derive(Default)]
struct Registry {
    runs: HashMap<u64, Track>,
    next: u64,
}

#[derive(Default)]
struct Track {
    /// The command's own process (started by aptitude, reaped by tokio).
    child: Option<i32>,
    /// Processes seen in its tree: (pid, start time in clock ticks).
    seen: HashSet<(i32, u64)>,
}

fn registry() -> &'static Mutex<Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(Mutex::default)
}

fn with_registry<T>(f: impl FnOnce(&mut Registry) -> T) -> T {
    let mut guard = registry()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    f(&mut guard)
}

impl Jail {
    /// A jail for one command, with the process-wide [`mode`].
    pub fn new() -> Jail {
        let kind = match mode() {
            Mode::Cgroup(parent) => {
                let dir = parent.join(format!("aptitude-{}", new_run_id()));
                match std::fs::create_dir(&dir) {
                    Ok(()) => Kind::Cgroup {
                        dir,
                        removed: false,
                    },
                    // The env sweep still applies; nothing better is left for this command.
                    Err(_) => Kind::None,
                }
            }
            Mode::Subreaper => with_registry(|r| {
                r.next += 1;
                let key = r.next;
                r.runs.insert(key, Track::default());
                Kind::Tracked { key, done: false }
            }),
            Mode::Marker => Kind::None,
        };
        Jail { kind }
    }

    /// The program and arguments to start instead of `program args`: in cgroup mode a
    /// shell that enters the cgroup and then `exec`s the program.
    pub fn wrap(&self, program: &Path, args: &[OsString]) -> (PathBuf, Vec<OsString>) {
        match &self.kind {
            Kind::Cgroup { dir, .. } => {
                let mut wrapped: Vec<OsString> = vec![
                    "-c".into(),
                    // A failed move leaves the command to the other layers rather than
                    // failing the run.
                    r#"{ echo $$ > "$0"; } 2>/dev/null; exec "$@""#.into(),
                    dir.join("cgroup.procs").into(),
                    program.into(),
                ];
                wrapped.extend(args.iter().cloned());
                (PathBuf::from("/bin/sh"), wrapped)
            }
            _ => (program.to_owned(), args.to_vec()),
        }
    }

    /// Whether [`Jail::wrap`] changes the command (it then starts through `/bin/sh`).
    pub fn wraps(&self) -> bool {
        matches!(self.kind, Kind::Cgroup { .. })
    }

    /// Whether this jail samples the process tree (it should be told [`Jail::sample`]
    /// every [`SAMPLE_EVERY`]).
    pub fn wants_samples(&self) -> bool {
        matches!(self.kind, Kind::Tracked { .. })
    }

    /// Tells the jail the pid of the command's own process.
    pub fn started(&self, pid: i32) {
        if let Kind::Tracked { key, .. } = self.kind {
            with_registry(|r| {
                if let Some(t) = r.runs.get_mut(&key) {
                    t.child = Some(pid);
                }
            });
            self.sample();
        }
    }

    /// Records the command's current process tree (subreaper mode).
    pub fn sample(&self) {
        let Kind::Tracked { key, .. } = self.kind else {
            return;
        };
        let Some(child) = with_registry(|r| r.runs.get(&key).and_then(|t| t.child)) else {
            return;
        };
        let procs = linux::processes();
        let tree = linux::descendants(&procs, child);
        with_registry(|r| {
            if let Some(t) = r.runs.get_mut(&key) {
                t.seen.extend(tree.iter().map(|p| (p.pid, p.start)));
            }
        });
    }

    /// Puts `limits` on the command where the jail can hold them itself (cgroup v2:
    /// `memory.max`, `pids.max`; before the command starts); returns how they are
    /// enforced, for reports: `cgroup v2`, else the watch of [`super::limits`].
    pub fn limit(&mut self, limits: &crate::spec::limits::RunLimits) -> &'static str {
        if let Kind::Cgroup { dir, .. } = &self.kind
            && std::fs::write(dir.join("memory.max"), limits.memory.to_string()).is_ok()
            && std::fs::write(dir.join("pids.max"), limits.processes.to_string()).is_ok()
        {
            return super::limits::BY_CGROUP;
        }
        super::limits::BY_WATCH
    }

    /// A limit the cgroup enforced during the run (`memory.events` `oom_kill`,
    /// `pids.events` `max`), in words; `None` elsewhere.
    pub fn limit_hit(&self) -> Option<String> {
        let Kind::Cgroup {
            dir,
            removed: false,
        } = &self.kind
        else {
            return None;
        };
        let count = |file: &str, key: &str| {
            std::fs::read_to_string(dir.join(file)).ok().and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix(key)?.trim().parse::<u64>().ok())
            })
        };
        if count("memory.events", "oom_kill ").is_some_and(|n| n > 0) {
            return Some(
                "memory: the cgroup's memory.max was reached (a process was killed)".into(),
            );
        }
        if count("pids.events", "max ").is_some_and(|n| n > 0) {
            return Some(
                "processes: the cgroup's pids.max was reached (a fork was refused)".into(),
            );
        }
        None
    }

    /// The command's live processes: its cgroup's, else the tree of `root` and the orphans
    /// sampled from it.
    pub fn processes(&self, root: i32) -> Vec<i32> {
        match &self.kind {
            Kind::Cgroup {
                dir,
                removed: false,
            } => linux::procs_of(dir),
            Kind::Tracked { key, .. } => {
                let procs = linux::processes();
                let seen =
                    with_registry(|r| r.runs.get(key).map(|t| t.seen.clone())).unwrap_or_default();
                let mut pids: Vec<i32> = std::iter::once(root)
                    .chain(linux::descendants(&procs, root).iter().map(|p| p.pid))
                    .collect();
                for p in procs.iter().filter(|p| seen.contains(&(p.pid, p.start))) {
                    if !pids.contains(&p.pid) {
                        pids.push(p.pid);
                        pids.extend(linux::descendants(&procs, p.pid).iter().map(|d| d.pid));
                    }
                }
                pids.sort_unstable();
                pids.dedup();
                pids
            }
            _ => {
                let procs = linux::processes();
                std::iter::once(root)
                    .chain(linux::descendants(&procs, root).iter().map(|p| p.pid))
                    .collect()
            }
        }
    }

    /// Kills every process of the command that is still alive; returns how many were
    /// found. Idempotent.
    pub fn kill_all(&mut self) -> usize {
        match &mut self.kind {
            Kind::Cgroup { dir, removed } => {
                if *removed {
                    return 0;
                }
                let n = linux::kill_cgroup(dir);
                *removed = true;
                n
            }
            Kind::Tracked { key, done } => {
                if *done {
                    return 0;
                }
                *done = true;
                let key = *key;
                let seen = with_registry(|r| {
                    r.runs
                        .get_mut(&key)
                        .map(|t| {
                            t.child = None;
                            std::mem::take(&mut t.seen)
                        })
                        .unwrap_or_default()
                });
                let n = kill_orphans(key, &seen);
                with_registry(|r| r.runs.remove(&key));
                // The last command out takes every orphan no sample could attribute.
                let last = with_registry(|r| r.runs.is_empty());
                n + if last {
                    kill_orphans(key, &HashSet::new())
                } else {
                    0
                }
            }
            Kind::None => 0,
        }
    }
}

impl Default for Jail {
    fn default() -> Self {
        Jail::new()
    }
}

impl Drop for Jail {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// Kills every process of every jail of this aptitude process, running or not: the
/// last resort when a run is stopped without its commands' own cleanup (a forced exit).
/// Returns how many processes were found.
pub fn kill_everything() -> usize {
    match mode() {
        Mode::Cgroup(parent) => {
            let prefix = format!("aptitude-{}-", std::process::id());
            std::fs::read_dir(parent)
                .map(|entries| {
                    entries
                        .flatten()
                        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                        .map(|e| linux::kill_cgroup(&e.path()))
                        .sum()
                })
                .unwrap_or(0)
        }
        Mode::Subreaper => {
            // Every child in another process group is a command or an orphan of one.
            let me = std::process::id() as i32;
            let my_group = nix::unistd::getpgrp().as_raw();
            let procs = linux::processes();
            let mut targets: Vec<i32> = Vec::new();
            for p in procs.iter().filter(|p| p.ppid == me && p.pgrp != my_group) {
                targets.push(p.pid);
                targets.extend(linux::descendants(&procs, p.pid).iter().map(|d| d.pid));
            }
            for pid in &targets {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(*pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            targets.len()
        }
        Mode::Marker => 0,
    }
}

/// Kills (and reaps) aptitude's orphans that belong to jail `key`: those in `seen` with
/// their descendants, or all of them when no other command is running. Returns how many
/// were killed.
fn kill_orphans(key: u64, seen: &HashSet<(i32, u64)>) -> usize {
    let me = std::process::id() as i32;
    let my_group = nix::unistd::getpgrp().as_raw();
    let mut killed = 0;
    for _ in 0..20 {
        let (live, others) = with_registry(|r| {
            let live: HashSet<i32> = r.runs.values().filter_map(|t| t.child).collect();
            let others = r.runs.keys().any(|k| *k != key);
            (live, others)
        });
        let procs = linux::processes();
        // Children aptitude started itself without a jail keep its process group (helper
        // commands); agents' orphans never do unless they moved there on purpose.
        let orphans: Vec<&linux::Proc> = procs
            .iter()
            .filter(|p| p.ppid == me && !live.contains(&p.pid) && p.pgrp != my_group)
            .collect();
        let mut targets: Vec<i32> = Vec::new();
        for o in &orphans {
            if o.state == 'Z' {
                linux::reap(o.pid);
                continue;
            }
            if !others || seen.contains(&(o.pid, o.start)) {
                targets.push(o.pid);
                targets.extend(linux::descendants(&procs, o.pid).iter().map(|p| p.pid));
            }
        }
        if targets.is_empty() {
            break;
        }
        for pid in &targets {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        killed += targets.len();
        for o in orphans.iter().filter(|o| targets.contains(&o.pid)) {
            linux::reap(o.pid);
        }
    }
    killed
}

#[cfg(target_os = "linux")]
mod linux {
    //! `/proc`, cgroup2 and prctl.

    use std::path::{Path, PathBuf};
    use std::time::Duration;

    /// One line of `/proc/<pid>/stat`, the fields used here.
    #[derive(Debug, Clone)]
    pub struct Proc {
        pub pid: i32,
        pub ppid: i32,
        pub pgrp: i32,
        pub state: char,
        /// Start time after boot, in clock ticks (tells a reused pid apart).
        pub start: u64,
    }

    /// Every process of the machine (that can be read).
    pub fn processes() -> Vec<Proc> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
            .filter_map(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                parse_stat(pid, &stat)
            })
            .collect()
    }

    /// Parses `/proc/<pid>/stat` (`pid (comm) state ppid pgrp session … starttime …`);
    /// `comm` may hold spaces and parentheses, so fields are counted from the last `)`.
    pub fn parse_stat(pid: i32, stat: &str) -> Option<Proc> {
        let rest = &stat[stat.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        Some(Proc {
            pid,
            state: fields.first()?.chars().next()?,
            ppid: fields.get(1)?.parse().ok()?,
            pgrp: fields.get(2)?.parse().ok()?,
            start: fields.get(19)?.parse().ok()?,
        })
    }

    /// The descendants of `root` (not `root` itself) in a process list.
    pub fn descendants(procs: &[Proc], root: i32) -> Vec<Proc> {
        let mut out: Vec<Proc> = Vec::new();
        let mut frontier = vec![root];
        while let Some(parent) = frontier.pop() {
            for p in procs.iter().filter(|p| p.ppid == parent) {
                if p.pid != root && !out.iter().any(|o| o.pid == p.pid) {
                    out.push(p.clone());
                    frontier.push(p.pid);
                }
            }
        }
        out
    }

    /// Reaps `pid` (a child of ours) once it has died, waiting at most 1 s.
    pub fn reap(pid: i32) {
        use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
        for _ in 0..100 {
            match waitpid(nix::unistd::Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) => std::thread::sleep(Duration::from_millis(10)),
                _ => return,
            }
        }
    }

    /// Makes aptitude a child subreaper; whether that worked.
    pub fn become_subreaper() -> bool {
        nix::sys::prctl::set_child_subreaper(true).is_ok()
    }

    /// aptitude's own cgroup directory, when it is on a cgroup2 mount and a child cgroup
    /// can be made there and entered.
    pub fn usable_cgroup() -> Option<PathBuf> {
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let path = own.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let dir = mountinfo.lines().find_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            if right.split_whitespace().next()? != "cgroup2" {
                return None;
            }
            let fields: Vec<&str> = left.split_whitespace().collect();
            let (root, mountpoint) = (*fields.get(3)?, *fields.get(4)?);
            let rel = if root == "/" {
                path
            } else {
                path.strip_prefix(root)?
            };
            Some(PathBuf::from(mountpoint).join(rel.trim_start_matches('/')))
        })?;
        let probe = dir.join(format!("aptitude-{}-probe", std::process::id()));
        std::fs::create_dir(&probe).ok()?;
        let entered = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(r#"echo $$ > "$0""#)
            .arg(probe.join("cgroup.procs"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        kill_cgroup(&probe);
        entered.then_some(dir)
    }

    /// Whether a cgroup still holds live processes (`populated 1` in `cgroup.events`).
    fn populated(dir: &Path) -> bool {
        std::fs::read_to_string(dir.join("cgroup.events"))
            .map(|e| e.lines().any(|l| l.trim() == "populated 1"))
            .unwrap_or(false)
    }

    pub fn procs_of(dir: &Path) -> Vec<i32> {
        std::fs::read_to_string(dir.join("cgroup.procs"))
            .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Kills every process in a cgroup and removes it; returns how many were in it.
    pub fn kill_cgroup(dir: &Path) -> usize {
        let found = procs_of(dir).len();
        if found > 0 && std::fs::write(dir.join("cgroup.kill"), "1").is_err() {
            // Before Linux 5.14: freeze so that nothing forks while it is being killed.
            let _ = std::fs::write(dir.join("cgroup.freeze"), "1");
            for _ in 0..10 {
                let pids = procs_of(dir);
                if pids.is_empty() {
                    break;
                }
                for pid in pids {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = std::fs::write(dir.join("cgroup.freeze"), "0");
        }
        // Dying processes leave the cgroup within moments; a cgroup can only be removed
        // once it is empty.
        for _ in 0..100 {
            if !populated(dir) && std::fs::remove_dir(dir).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        found
    }
}

#[cfg(not(target_os = "linux"))]
mod linux {
    //! No cgroups, no subreaper: empty stand-ins.

    use std::path::{Path, PathBuf};

    #[derive(Debug, Clone)]
    pub struct Proc {
        pub pid: i32,
        pub ppid: i32,
        pub pgrp: i32,
        pub state: char,
        pub start: u64,
    }

    pub fn processes() -> Vec<Proc> {
        Vec::new()
    }

    pub fn descendants(_: &[Proc], _: i32) -> Vec<Proc> {
        Vec::new()
    }

    pub fn reap(_: i32) {}

    pub fn become_subreaper() -> bool {
        false
    }

    pub fn usable_cgroup() -> Option<PathBuf> {
        None
    }

    pub fn kill_cgroup(_: &Path) -> usize {
        0
    }

    pub fn procs_of(_: &Path) -> Vec<i32> {
        Vec::new()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let stat =
            "4242 (a) b (c)) S 17 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10";
        let p = linux::parse_stat(4242, stat).unwrap();
        assert_eq!((p.ppid, p.pgrp, p.state, p.start), (17, 4242, 'S', 987654));
    }
}
