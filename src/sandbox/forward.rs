//! The host side of the sandbox's network: each [`Forward`] is a unix socket in the run's
//! private directory (mounted read-only inside at [`super::SOCKET_DIR`]) whose connections
//! aptitude relays to the forward's target address. Inside, the helper ([`super::init`])
//! listens on 127.0.0.1:PORT of the sandbox's own network namespace and relays to the
//! socket, so the agent's URL keeps its port and nothing else is reachable.
//!
//! The relays are tasks of aptitude's runtime: they stop when the run's [`Bridges`] are
//! dropped and can not outlive aptitude.

use std::net::TcpListener;
use std::path::Path;
use std::sync::OnceLock;

use super::Forward;

/// The socket file of the forward of `port`.
pub fn socket_name(port: u16) -> String {
    format!("{port}.sock")
}

/// The relays of one run; stopped when dropped.
#[derive(Debug, Default)]
pub struct Bridges {
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Bridges {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Bridges {
    /// Listens on a unix socket in `dir` (mode 0600) for each forward and relays its
    /// connections to the forward's target.
    ///
    /// # Errors
    /// When a socket can not be made, or no tokio runtime runs this thread.
    pub fn start(dir: &Path, forwards: &[Forward]) -> std::io::Result<Bridges> {
        let mut bridges = Bridges::default();
        if forwards.is_empty() {
            return Ok(bridges);
        }
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|e| std::io::Error::other(format!("no async runtime: {e}")))?;
        for forward in forwards {
            let path = dir.join(socket_name(forward.port));
            let listener = std::os::unix::net::UnixListener::bind(&path)?;
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
            listener.set_nonblocking(true)?;
            let target = forward.target;
            let _guard = runtime.enter();
            let listener = tokio::net::UnixListener::from_std(listener)?;
            bridges.tasks.push(runtime.spawn(async move {
                while let Ok((mut inside, _)) = listener.accept().await {
                    tokio::spawn(async move {
                        match tokio::net::TcpStream::connect(target).await {
                            Ok(mut outside) => {
                                let _ = tokio::io::copy_bidirectional(&mut inside, &mut outside).await;
                            }
                            Err(e) => tracing::debug!(%target, error = %e, "sandbox forward: target refused"),
                        }
                    });
                }
            }));
        }
        Ok(bridges)
    }
}

/// A port on the host's loopback that aptitude listens on and never forwards: reachable
/// only from a sandbox that shares the host's network, which the proof must show it does
/// not. `None` when no port could be opened.
pub fn canary_port() -> Option<u16> {
    static CANARY: OnceLock<Option<TcpListener>> = OnceLock::new();
    CANARY
        .get_or_init(|| TcpListener::bind(("127.0.0.1", 0)).ok())
        .as_ref()
        .and_then(|l| l.local_addr().ok())
        .map(|a| a.port())
}
