//! Enforcing a run's `limits:` (memory, processes, disk) where the jail can not hold them
//! itself, and saying how they were enforced.
//!
//! | limit | cgroup v2 (a delegated cgroup: a systemd user session, the GitHub runner through the action) | otherwise |
//! |---|---|---|
//! | memory | `memory.max` of the run's cgroup (it counts shared memory, memfds and tmpfs too) | `RLIMIT_DATA` of each process (set by the sandbox's helper), and this watch: the resident memory of the run's processes together, plus what they hold outside it ([`Held`]: memfds and removed `/dev/shm` files held open, the sandbox's own `/dev/shm`, and its IPC namespace's System V shared memory segments, attached or not) |
//! | processes | `pids.max` (threads count: it counts tasks) | `RLIMIT_NPROC` (set by the sandbox's helper; the kernel counts the sandbox's user namespace's tasks, threads too, except for the host's root), and this watch: the run's live tasks, processes and their threads |
//! | disk | this watch | `RLIMIT_FSIZE` of each process (one file's apparent size: 4 × the limit, so that sparse files pass), and this watch: what the run's directories (workspace, home, `/tmp`) grew by, plus the files its processes removed but hold open, and at every look what its processes wrote to files by the kernel's count ([`written_by`]), so a file removed between two walks counts |
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
pub const BY_WATCH: &str =
    "by RLIMIT_DATA, RLIMIT_FSIZE and RLIMIT_NPROC, and aptitude's watch every 250 ms";

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
    /// The most bytes the run's processes were seen to have written to files
    /// ([`written_by`]), removed ones included.
    written: u64,
    /// What the watched processes had written before the run (0: a run's processes start
    /// with it; a test watching its own process sets it).
    written_before: u64,
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
            written: 0,
            written_before: 0,
        }
    }

    /// Looks at the run's live processes `pids` (and, when due, its directories): the limit crossed, in words, if one is.
    pub fn look(&mut self, pids: &[i32]) -> Option<String> {
        let limits = self.watched.limits;
        // Threads are tasks as a fork is (cgroup's pids.max counts them too): 1,500
        // threads under a limit of 40 processes are over it.
        let tasks: usize = pids.iter().map(|pid| tasks_of(*pid)).sum();
        if tasks > limits.processes as usize {
            return Some(format!(
                "processes: {tasks} tasks (processes and their threads) alive, over the limit of {}",
                limits.processes
            ));
        }
        let held = Held::by(pids);
        let resident: u64 = pids.iter().map(|pid| self.resident(*pid)).sum();
        let memory = resident.saturating_add(held.memory);
        if memory > limits.memory {
            return Some(format!(
                "memory: {} resident and {} held in shared memory, over the limit of {}",
                size(resident),
                size(held.memory),
                size(limits.memory)
            ));
        }
        // A file written and removed between two walks never shows in one; the kernel's
        // count of what the run's processes wrote does, and costs a read per process.
        self.written = self
            .written
            .max(written_by(pids).saturating_sub(self.written_before));
        if self.written > limits.disk {
            return Some(format!(
                "disk: {} written to files (removed ones included), over the limit of {}",
                size(self.written),
                size(limits.disk)
            ));
        }
        let due = Duration::from_secs(1).max(self.disk_cost * 20);
        if self.disk_at.elapsed() >= due || held.disk > 0 {
            let started = std::time::Instant::now();
            let crossed = self.disk_with(held.disk);
            self.disk_cost = started.elapsed();
            self.disk_at = std::time::Instant::now();
            return crossed;
        }
        None
    }

    /// The disk check alone (also made once the run ended, when no process holds a file).
    pub fn disk(&self) -> Option<String> {
        self.disk_with(0)
    }

    /// The disk check, with `held` bytes of removed files the run's processes hold open.
    fn disk_with(&self, held: u64) -> Option<String> {
        let limit = self.watched.limits.disk;
        match disk_use(&self.watched.dirs) {
            None => Some(format!(
                "disk: over {MAX_ENTRIES} files and directories written"
            )),
            Some((bytes, _)) => {
                let written = bytes.saturating_sub(self.baseline).saturating_add(held);
                (written > limit).then(|| {
                    let removed = if held > 0 {
                        format!(" ({} of it removed but held open)", size(held))
                    } else {
                        String::new()
                    };
                    format!(
                        "disk: {}{removed} written, over the limit of {}",
                        size(written),
                        size(limit)
                    )
                })
            }
        }
    }

    /// The same watch, not counting what `pids` wrote before now (for a test watching its
    /// own, long-lived process).
    #[cfg(test)]
    fn counting_from_now(mut self, pids: &[i32]) -> Self {
        self.written_before = written_by(pids);
        self
    }

    /// Resident bytes of `pid` (`/proc/<pid>/statm`'s second field, in pages).
    fn resident(&self, pid: i32) -> u64 {
        std::fs::read_to_string(format!("/proc/{pid}/statm"))
            .ok()
            .and_then(|t| t.split_whitespace().nth(1)?.parse::<u64>().ok())
            .map_or(0, |pages| pages.saturating_mul(self.page))
    }
}

/// Bytes the processes of `pids` inside the sandbox wrote to files, by the kernel's count
/// (`/proc/<pid>/io` `write_bytes`: pages dirtied on a disk-backed file system, counted
/// when written, so a file removed before the next walk still counts; a process's count
/// holds the children it reaped, so a live process never counts another live one's).
/// Processes in aptitude's own PID namespace (bubblewrap's outer process, the exec
/// record's tracer writing its trace) are not the run's, unless the run is unsandboxed
/// and every process is there.
fn written_by(pids: &[i32]) -> u64 {
    let ns = |pid: &str| std::fs::read_link(format!("/proc/{pid}/ns/pid")).ok();
    let ours = ns("self");
    let inside: Vec<i32> = pids
        .iter()
        .copied()
        .filter(|pid| ns(&pid.to_string()) != ours)
        .collect();
    let counted = if inside.is_empty() { pids } else { &inside };
    counted
        .iter()
        .filter_map(|pid| {
            let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
            io.lines()
                .find_map(|l| l.strip_prefix("write_bytes: "))?
                .trim()
                .parse::<u64>()
                .ok()
        })
        .sum()
}

/// How many tasks `pid` has (itself and its threads: the entries of `/proc/<pid>/task`);
/// 1 when that can not be read (it may have just ended), 0 when it is gone.
fn tasks_of(pid: i32) -> usize {
    match std::fs::read_dir(format!("/proc/{pid}/task")) {
        Ok(tasks) => tasks.count().max(1),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        Err(_) => 1,
    }
}

/// What a run's processes hold beyond the walk of its directories and their resident
/// pages, read from `/proc` (bytes).
///
/// - Files they removed but hold open (`/proc/<pid>/fd/*` → `… (deleted)`), each counted
///   once: in memory when it lives there (a memfd, `/memfd:…`; a file of `/dev/shm`; a
///   SysV segment, `/SYSV…`), else on disk.
/// - The System V shared memory segments of the sandbox's own IPC namespace, attached or
///   not ([`sysv_shm_of`]).
/// - The sandbox's own `/dev` (bubblewrap's `--dev`, a tmpfs of its own with `/dev/shm`
///   in it): what is used there, read through `/proc/<pid>/root` of one process in each
///   mount namespace other than aptitude's.
///
/// A memfd that is also mapped and touched counts twice (in its resident pages too): the
/// watch errs towards stopping a run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// Bytes held in memory outside the processes' resident pages.
    pub memory: u64,
    /// Bytes of removed files held open on disk.
    pub disk: u64,
}

impl Held {
    /// What `pids` hold.
    pub fn by(pids: &[i32]) -> Held {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::MetadataExt;
        let mut held = Held::default();
        let mut files = std::collections::HashSet::new();
        let mut namespaces = std::collections::HashSet::new();
        let own_namespace = std::fs::metadata("/proc/self/ns/mnt").map(|m| m.ino()).ok();
        let mut ipc_namespaces = std::collections::HashSet::new();
        let own_ipc = std::fs::metadata("/proc/self/ns/ipc").map(|m| m.ino()).ok();
        for pid in pids {
            if let Ok(ns) = std::fs::metadata(format!("/proc/{pid}/ns/ipc"))
                && Some(ns.ino()) != own_ipc
                && ipc_namespaces.insert(ns.ino())
            {
                held.memory = held.memory.saturating_add(sysv_shm_of(*pid));
            }
            if let Ok(ns) = std::fs::metadata(format!("/proc/{pid}/ns/mnt"))
                && Some(ns.ino()) != own_namespace
                && namespaces.insert(ns.ino())
            {
                held.memory = held
                    .memory
                    .saturating_add(tmpfs_used(&format!("/proc/{pid}/root/dev/shm")));
            }
            let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
                continue;
            };
            for fd in fds.flatten() {
                let Ok(target) = std::fs::read_link(fd.path()) else {
                    continue;
                };
                let target = target.as_os_str().as_bytes();
                if !target.ends_with(b" (deleted)") {
                    continue;
                }
                let Ok(meta) = std::fs::metadata(fd.path()) else {
                    continue;
                };
                if !meta.is_file() || !files.insert((meta.dev(), meta.ino())) {
                    continue;
                }
                let bytes = meta.blocks().saturating_mul(512);
                let in_memory = [b"/memfd:".as_slice(), b"/dev/shm/", b"/SYSV"]
                    .iter()
                    .any(|p| target.starts_with(p));
                if in_memory {
                    // A removed `/dev/shm` file of the sandbox's own `/dev` is already in
                    // its tmpfs's use.
                    if !target.starts_with(b"/dev/shm/") {
                        held.memory = held.memory.saturating_add(bytes);
                    }
                } else {
                    held.disk = held.disk.saturating_add(bytes);
                }
            }
        }
        held
    }
}

/// Bytes resident in the System V shared memory segments of the IPC namespace `pid` is in
/// (the sum of the `rss` column of that namespace's `/proc/sysvipc/shm`), 0 when it can
/// not be read.
///
/// A segment outlives every process's attachment (`shmget`, `shmat`, write, `shmdt`): its
/// pages are then in no process's resident memory, and five segments of 300 MB written
/// that way held 1.5 GB under a limit of 1 GiB. `/proc/sysvipc/shm` lists the segments of
/// its reader's IPC namespace, so it is read by `nsenter` (util-linux) from inside the
/// sandbox's user and IPC namespaces. An attached segment's touched pages count twice (in
/// the processes' resident pages too): the watch errs towards stopping a run.
fn sysv_shm_of(pid: i32) -> u64 {
    let target = pid.to_string();
    let read = std::process::Command::new("nsenter")
        .args([
            "--target",
            &target,
            "--user",
            "--preserve-credentials",
            "--ipc",
        ])
        .args(["cat", "/proc/sysvipc/shm"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    match read {
        Ok(out) if out.status.success() => sysv_rss(&String::from_utf8_lossy(&out.stdout)),
        _ => 0,
    }
}

/// The sum of the `rss` column of a `/proc/sysvipc/shm` listing (a header line naming
/// the columns, then one segment per line), in bytes.
fn sysv_rss(listing: &str) -> u64 {
    let mut lines = listing.lines();
    let Some(column) = lines
        .next()
        .and_then(|header| header.split_whitespace().position(|c| c == "rss"))
    else {
        return 0;
    };
    lines
        .filter_map(|line| line.split_whitespace().nth(column)?.parse::<u64>().ok())
        .fold(0, u64::saturating_add)
}

/// Bytes used on the file system holding `path` (its blocks less its free blocks); 0
/// when it can not be read or is not a tmpfs (a host's disk is the walk's to measure).
fn tmpfs_used(path: &str) -> u64 {
    let Ok(fs) = nix::sys::statfs::statfs(path) else {
        return 0;
    };
    if fs.filesystem_type() != nix::sys::statfs::TMPFS_MAGIC {
        return 0;
    }
    let used = fs.blocks().saturating_sub(fs.blocks_free());
    used.saturating_mul(u64::try_from(fs.block_size()).unwrap_or(0))
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

    /// Issue 44: threads are tasks (1,500 threads went through a limit of 40 processes);
    /// a memfd or a removed file held open counts (1.2 GB went through limits of 1 GiB of
    /// memory and 16 MiB of disk).
    /// A file written and removed before any walk saw it still counts: the kernel's count
    /// of what a process wrote holds it.
    #[test]
    fn a_file_written_and_removed_still_counts() {
        let me = i32::try_from(std::process::id()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let before = written_by(&[me]);
        let path = dir.path().join("gone");
        std::fs::write(&path, vec![1u8; 8 << 20]).unwrap();
        std::fs::remove_file(&path).unwrap();
        let after = written_by(&[me]);
        assert!(after - before >= 8 << 20, "{before} then {after}");
    }

    /// The `rss` column of a real `/proc/sysvipc/shm` (kernel 6.18) is summed, whatever
    /// its position.
    #[test]
    fn sysv_segments_count_their_resident_bytes() {
        let listing = "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap
-1674893364          0   644              10000000  2302     0      0     0     0     0     0          0          0 1795895394                     0                     0
         0          1  1600             314572800  2310  2310      0     0     0     0     0 1795895400 1795895401 1795895399             314572800                     0
         0          2  1600             314572800  2310  2310      1     0     0     0     0 1795895400          0 1795895399               4096000                     0
";
        assert_eq!(sysv_rss(listing), 314_572_800 + 4_096_000);
        assert_eq!(sysv_rss(""), 0);
        assert_eq!(sysv_rss("key shmid size\n0 1 300\n"), 0);
    }

    #[test]
    fn threads_memfds_and_removed_files_held_open_count() {
        use std::io::Write as _;
        let me = std::process::id() as i32;
        let stop = std::sync::Arc::new(std::sync::Barrier::new(9));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    stop.wait();
                })
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let mut watch = Watch::new(Watched {
            limits: limits(1 << 40, 8, 1_000_000),
            dirs: vec![dir.path().to_owned()],
        })
        .counting_from_now(&[me]);
        let why = watch.look(&[me]).unwrap();
        assert!(why.starts_with("processes: "), "{why}");
        assert!(why.contains("tasks (processes and their threads)"), "{why}");
        stop.wait();
        for t in threads {
            t.join().unwrap();
        }

        let memfd =
            nix::sys::memfd::memfd_create("aptitude-test", nix::sys::memfd::MFdFlags::empty())
                .unwrap();
        let mut memfd = std::fs::File::from(memfd);
        memfd.write_all(&vec![1u8; 3_000_000]).unwrap();
        let removed_path = dir.path().join("removed");
        let mut removed = std::fs::File::create(&removed_path).unwrap();
        removed.write_all(&vec![1u8; 2_000_000]).unwrap();
        removed.sync_all().unwrap();
        std::fs::remove_file(&removed_path).unwrap();
        let held = Held::by(&[me]);
        assert!(held.memory >= 3_000_000, "{held:?}");
        assert!(held.disk >= 2_000_000, "{held:?}");
        let mut watch = Watch::new(Watched {
            limits: limits(1 << 40, 1 << 20, 1_000_000),
            dirs: vec![dir.path().to_owned()],
        })
        .counting_from_now(&[me]);
        let why = watch.look(&[me]).unwrap();
        assert!(why.starts_with("disk: "), "{why}");
        assert!(why.contains("removed but held open"), "{why}");
        drop(removed);
        assert_eq!(
            watch.disk(),
            None,
            "a file closed after its removal is gone"
        );
        let mut watch = Watch::new(Watched {
            limits: limits(1, 1 << 20, 1 << 40),
            dirs: Vec::new(),
        })
        .counting_from_now(&[me]);
        let why = watch.look(&[me]).unwrap();
        assert!(why.starts_with("memory: "), "{why}");
        assert!(why.contains("held in shared memory"), "{why}");
        drop(memfd);
    }

    #[test]
    fn each_limit_is_named_when_crossed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("before"), vec![1u8; 100_000]).unwrap();
        let me = std::process::id() as i32;
        // The test process has a thread per test running: its tasks, with room for more.
        let tasks = tasks_of(me) as u32;
        let mut watch = Watch::new(Watched {
            limits: limits(1 << 40, 4 * tasks + 64, 1_000_000),
            dirs: vec![dir.path().to_owned()],
        })
        .counting_from_now(&[me]);
        assert_eq!(
            watch.look(&[me]),
            None,
            "what was there before counts for nothing"
        );
        let mut few = Watch::new(Watched {
            limits: limits(1 << 40, 3, 1 << 40),
            dirs: Vec::new(),
        })
        .counting_from_now(&[me]);
        let why = few.look(&[me, me, me, me]).unwrap();
        assert!(why.starts_with("processes: "), "{why}");
        assert!(why.ends_with("alive, over the limit of 3"), "{why}");
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
        })
        .counting_from_now(&[me]);
        let why = small.look(&[me]).unwrap();
        assert!(why.starts_with("memory: "), "{why}");
        assert!(why.ends_with("over the limit of 1 KiB"), "{why}");
    }
}
