//! Looking at processes after a run: by pid, by command line, by environment marker.
//!
//! A zombie (dead, not yet reaped) or a reused pid does not count as alive: a process is
//! alive when `/proc/<pid>/cmdline` still holds what it was started with.

/// Whether process `pid` is alive and its command line contains `needle`.
pub fn alive(pid: i32, needle: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
        String::from_utf8_lossy(&c)
            .replace('\0', " ")
            .contains(needle)
    })
}

/// The live processes whose command line contains `needle` (other than this one).
pub fn running(needle: &str) -> Vec<i32> {
    pids()
        .into_iter()
        .filter(|pid| alive(*pid, needle))
        .collect()
}

/// The processes whose environment holds `APTITUDE_RUN_ID=<prefix>…`: what the aptitude
/// process `prefix` names started and marked.
pub fn marked(prefix: &str) -> Vec<i32> {
    let needle = format!("APTITUDE_RUN_ID={prefix}");
    pids()
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|e| String::from_utf8_lossy(&e).contains(&needle))
        })
        .collect()
}

fn pids() -> Vec<i32> {
    let me = std::process::id() as i32;
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
        .filter(|pid| *pid != me)
        .collect()
}

/// The whole numbers in `text` (pids a scripted agent printed).
pub fn numbers(text: &str) -> Vec<i32> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// A FIFO a scripted command writes to when it is running (`echo go > FIFO`): a test waits
/// on that event instead of polling.
pub struct Ready(std::path::PathBuf);

impl Ready {
    /// Makes the FIFO `path`.
    pub fn new(path: std::path::PathBuf) -> Self {
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo {}", path.display());
        Ready(path)
    }

    /// Its path, for the scripted command.
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }

    /// Blocks until something writes to the FIFO, or kills `child` and panics after
    /// `limit` when nothing ever does (the run went wrong before).
    pub fn wait(&self, child: &mut std::process::Child, limit: std::time::Duration) {
        let (tx, rx) = std::sync::mpsc::channel();
        let p = self.0.clone();
        std::thread::spawn(move || {
            let _ = tx.send(std::fs::read_to_string(p));
        });
        if rx.recv_timeout(limit).is_err() {
            let _ = child.kill();
            panic!("{} never became ready", self.0.display());
        }
    }
}
