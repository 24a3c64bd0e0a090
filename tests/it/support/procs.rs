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
