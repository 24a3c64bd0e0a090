//! Peak resident memory of the current process, for the benchmarks that measure memory in
//! a child process (Linux `/proc/self/status`, `VmHWM`).

/// This process's peak resident set size in KiB (0 where `/proc` is not available).
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}
