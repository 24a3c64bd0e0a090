//! Enforcing a run's `limits:` (memory, processes, disk) where the jail can not hold them
//! itself, and saying how they were enforced.
//!
//! | limit | cgroup v2 (a delegated cgroup: a systemd user session, the GitHub runner) | otherwise |
//! |---|---|---|
//! | memory | `memory.max` of the run's cgroup | `RLIMIT_DATA` of each process (set by the sandbox's helper), and this watch: the resident memory of the run's processes together |
//! | processes | `pids.max` | this watch: the run's live processes |
//! | disk | this watch | `RLIMIT_FSIZE` of each process (one file's apparent size: 4 × the limit, so that sparse files pass), and this watch: what the run's directories (workspace, home, `/tmp`) grew by |
//!
//! The watch looks every [`WATCH_EVERY`] (the disk every second, or less often when walking
//! the run's directories takes longer than 50 ms: at most 5% of the time): a run is stopped at
//! the first look past a limit, so a fork bomb or a sudden allocation is stopped within
//! that time, not prevented. The run then ends `error`, kind `limit`, naming the limit.

use std::path::PathBuf;
use std::time::Duration;

use crate::spec::limits::{RunLimits, size};

/// How often the watch looks at a run.
pub const WATCH_EVERY: Duration = Duration::from_millis(250);

/// How limits are enforced when the run's cgroup holds them.
pub const BY_CGROUP: &str =
    "by cgroup v2 memory.max and pids.max, and aptitude's watch of the disk";
/// How limits are enforced otherwise.
pub const BY_WATCH: &str = "by RLIMIT_DATA and RLIMIT_FSIZE, and aptitude's watch every 250 ms";

/// The most directory entries one look at the disk walks; more is itself over the limit.
pub const MAX_ENTRIES: u64 = 500_000;

/// What a run may use and where it writes: what [`Watch`] checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watched {
    /// The limits.
    pub limits: RunLimits,
    /// The directories the run writes (its workspace, home and `/tmp`).
    pub dirs: Vec<PathBuf>,
}

/// The watch of one running command.
#[derive(Debug)]
pub struct Watch {
    watched: Watched,
    /// Bytes in the directories when the run started.
    baseline: u64,
    page: u64,
    /// When the disk was last measured, and how long that took: a large tree is walked
    /// less often (at most 5% of the time).
    disk_at: std::time::Instant,
    disk_cost: Duration,
}

impl Watch {
    /// Starts watching (measures the directories as they are now).
    pub fn new(watched: Watched) -> Self {
        let baseline = disk_use(&watched.dirs).map_or(0, |(bytes, _)| bytes);
        let page = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
            .ok()
            .flatten()
            .and_then(|p| u64::try_from(p).ok())
            .unwrap_or(4096);
        Watch {
            watched,
            baseline,
            page,
            disk_at: std::time::Instant::now(),
            disk_cost: Duration::ZERO,
        }
    }

    /// Looks at the run's live processes `pids` (and, when due, its directories): the limit crossed, in words, if one is.
    pub fn look(&mut self, pids: &[i32]) -> Option<String> {
        let limits = self.watched.limits;
        if pids.len() > limits.processes as usize {
            return Some(format!(
                "processes: {} alive, over the limit of {}",
                pids.len(),
                limits.processes
            ));
        }
        let resident: u64 = pids.iter().map(|pid| self.resident(*pid)).sum();
        if resident > limits.memory {
            return Some(format!(
                "memory: {} resident, over the limit of {}",
                size(resident),
                size(limits.memory)
            ));
        }
        let due = Duration::from_secs(1).max(self.disk_cost * 20);
        if self.disk_at.elapsed() >= due {
            let started = std::time::Instant::now();
            let crossed = self.disk();
            self.disk_cost = started.elapsed();
            self.disk_at = std::time::Instant::now();
            return crossed;
        }
        None
    }

    /// The disk check alone (also made once the run ended).
    pub fn disk(&self) -> Option<String> {
        let limit = self.watched.limits.disk;
        match disk_use(&self.watched.dirs) {
            None => Some(format!(
                "disk: over {MAX_ENTRIES} files and directories written"
            )),
            Some((bytes, _)) if bytes.saturating_sub(self.baseline) > limit => Some(format!(
                "disk: {} written, over the limit of {}",
                size(bytes.saturating_sub(self.baseline)),
                size(limit)
            )),
            Some(_) => None,
        }
    }

    /// Resident bytes of `pid` (`/proc/<pid>/statm`'s second field, in pages).
    fn resident(&self, pid: i32) -> u64 {
        std::fs::read_to_string(format!("/proc/{pid}/statm"))
            .ok()
            .and_then(|t| t.split_whitespace().nth(1)?.parse::<u64>().ok())
            .map_or(0, |pages| pages.saturating_mul(self.page))
    }
}

/// Bytes allocated under `dirs` (a sparse file counts what it holds), and entries seen;
/// `None` past [`MAX_ENTRIES`]. Links are not followed.
pub fn disk_use(dirs: &[PathBuf]) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let (mut bytes, mut entries) = (0u64, 0u64);
    let mut stack: Vec<PathBuf> = dirs.to_vec();
    while let Some(dir) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in read.flatten() {
            entries += 1;
            if entries > MAX_ENTRIES {
                return None;
            }
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            bytes = bytes.saturating_add(meta.blocks().saturating_mul(512));
            if meta.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    Some((bytes, entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(memory: u64, processes: u32, disk: u64) -> RunLimits {
        RunLimits {
            memory,
            processes,
            disk,
        }
    }

    #[test]
    fn each_limit_is_named_when_crossed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("before"), vec![1u8; 100_000]).unwrap();
        let mut watch = Watch::new(Watched {
            limits: limits(1 << 40, 3, 1_000_000),
            dirs: vec![dir.path().to_owned()],
        });
        let me = std::process::id() as i32;
        assert_eq!(
            watch.look(&[me]),
            None,
            "what was there before counts for nothing"
        );
        let why = watch.look(&[me, me, me, me]).unwrap();
        assert!(
            why.starts_with("processes: 4 alive, over the limit of 3"),
            "{why}"
        );
        // 2 MB written (a sparse file counts only what it holds).
        std::fs::write(dir.path().join("big"), vec![1u8; 2_000_000]).unwrap();
        let sparse = std::fs::File::create(dir.path().join("sparse")).unwrap();
        sparse.set_len(50_000_000_000).unwrap();
        let why = watch.disk().unwrap();
        assert!(
            why.starts_with("disk: 1.9 MiB written, over the limit of 976.6 KiB"),
            "{why}"
        );
        let mut small = Watch::new(Watched {
            limits: limits(1024, 100, 1 << 40),
            dirs: Vec::new(),
        });
        let why = small.look(&[me]).unwrap();
        assert!(why.starts_with("memory: "), "{why}");
        assert!(why.ends_with("over the limit of 1 KiB"), "{why}");
    }
}
