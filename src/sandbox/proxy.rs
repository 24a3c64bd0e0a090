//! The `network:` allowlist: an HTTP proxy outside the sandbox, the only way out of it
//! besides the model and the test's MCP servers. Its port is forwarded into the sandbox
//! like the others, and the command gets `HTTPS_PROXY`/`HTTP_PROXY` (and their lowercase
//! forms) naming it; every agent and package manager we run honours them.
//!
//! - `CONNECT host:port` (HTTPS, and the tunnels Node agents open even for `http://`): the
//!   host and port must match an entry, else `403`.
//! - A plain-HTTP request in absolute form (`GET http://host/path`): the same check; it is
//!   sent on as one request (`Connection: close`), so a kept-alive connection can not carry
//!   a second request to another host.
//!
//! An entry is `HOST`, `*.DOMAIN` (any subdomain, not the domain itself) or either with
//! `:PORT`; without a port it allows 443 and 80. Hosts compare case-insensitively; an IP
//! address matches only an entry naming that address.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The longest request head read, in bytes.
const MAX_HEAD: usize = 16 * 1024;

/// How long a client may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);

/// A running allowlist proxy; it stops when dropped.
#[derive(Debug)]
pub struct Proxy {
    port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Listens on the host's 127.0.0.1 (a free port) for `allow` (the `network:` entries).
    ///
    /// # Errors
    /// When no port can be opened or no tokio runtime runs this thread.
    pub fn start(allow: Vec<String>) -> std::io::Result<Proxy> {
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|e| std::io::Error::other(format!("no async runtime: {e}")))?;
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        std_listener.set_nonblocking(true)?;
        let port = std_listener.local_addr()?.port();
        let _guard = runtime.enter();
        let listener = TcpListener::from_std(std_listener)?;
        let task = runtime.spawn(async move {
            let allow = std::sync::Arc::new(allow);
            while let Ok((client, _)) = listener.accept().await {
                let allow = std::sync::Arc::clone(&allow);
                tokio::spawn(async move {
                    if let Err(e) = handle(client, &allow).await {
                        tracing::debug!(error = %e, "network proxy: connection ended");
                    }
                });
            }
        });
        Ok(Proxy { port, task })
    }

    /// The port on the host's loopback.
    pub fn port(&self) -> u16 {
        self.port
    }
}

/// One client connection: its request checked against `allow`, then relayed.
async fn handle(mut client: TcpStream, allow: &[String]) -> std::io::Result<()> {
    let (head, rest) = match tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client)).await {
        Ok(read) => read?,
        Err(_) => return Ok(()),
    };
    let Some(request) = Request::parse(&head) else {
        return refuse(&mut client, "400 Bad Request", "not an HTTP proxy request").await;
    };
    if !allowed(allow, &request.host, request.port) {
        let why = format!(
            "aptitude's sandbox allows no connection to {}:{} (add it to the test's `network:`)",
            request.host, request.port
        );
        return refuse(&mut client, "403 Forbidden", &why).await;
    }
    let mut upstream = match TcpStream::connect((request.host.as_str(), request.port)).await {
        Ok(s) => s,
        Err(e) => return refuse(&mut client, "502 Bad Gateway", &e.to_string()).await,
    };
    if request.connect {
        client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await?;
    } else {
        upstream.write_all(request.origin_head.as_bytes()).await?;
    }
    upstream.write_all(&rest).await?;
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
    Ok(())
}

/// The request head (up to the blank line) and what the client sent after it.
async fn read_head(client: &mut TcpStream) -> std::io::Result<(String, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "closed before its request",
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Ok((String::from_utf8_lossy(&buf).into_owned(), rest));
        }
        if buf.len() > MAX_HEAD {
            return Err(std::io::Error::other("request head too large"));
        }
    }
}

async fn refuse(client: &mut TcpStream, status: &str, why: &str) -> std::io::Result<()> {
    let body = format!("{why}\n");
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(response.as_bytes()).await
}

/// A proxy request: where it goes, and for plain HTTP the head to send there.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    connect: bool,
    host: String,
    port: u16,
    /// Plain HTTP: the request in origin form with `Connection: close`.
    origin_head: String,
}

impl Request {
    fn parse(head: &str) -> Option<Request> {
        let mut lines = head.split("\r\n");
        let first = lines.next()?;
        let mut words = first.split(' ');
        let (method, target, version) = (words.next()?, words.next()?, words.next()?);
        if method.eq_ignore_ascii_case("CONNECT") {
            let (host, port) = split_host_port(target, 443)?;
            return Some(Request {
                connect: true,
                host,
                port,
                origin_head: String::new(),
            });
        }
        let url = url::Url::parse(target).ok()?;
        if url.scheme() != "http" {
            return None;
        }
        let host = url
            .host_str()?
            .trim_matches(['[', ']'])
            .to_ascii_lowercase();
        let port = url.port().unwrap_or(80);
        let mut path = url.path().to_owned();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        let mut out = format!("{method} {path} {version}\r\n");
        for line in lines.filter(|l| !l.is_empty()) {
            let name = line
                .split(':')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            if !matches!(
                name.as_str(),
                "connection" | "proxy-connection" | "keep-alive" | "proxy-authorization"
            ) {
                out.push_str(line);
                out.push_str("\r\n");
            }
        }
        out.push_str("Connection: close\r\n\r\n");
        Some(Request {
            connect: false,
            host,
            port,
            origin_head: out,
        })
    }
}

fn split_host_port(target: &str, default: u16) -> Option<(String, u16)> {
    let (host, port) = match target.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(':') || h.starts_with('[') => (h, p.parse().ok()?),
        _ => (target, default),
    };
    Some((host.trim_matches(['[', ']']).to_ascii_lowercase(), port))
}

/// Whether `host:port` matches an entry of `allow` (see the module docs).
pub fn allowed(allow: &[String], host: &str, port: u16) -> bool {
    let host = host.to_ascii_lowercase();
    allow.iter().any(|entry| {
        let (pattern, ports): (&str, Vec<u16>) = match entry.rsplit_once(':') {
            Some((h, p)) => match p.parse() {
                Ok(p) => (h, vec![p]),
                Err(_) => return false,
            },
            None => (entry.as_str(), vec![443, 80]),
        };
        if !ports.contains(&port) {
            return false;
        }
        match pattern.strip_prefix("*.") {
            Some(domain) => {
                host.len() > domain.len() + 1
                    && host.ends_with(domain)
                    && host.as_bytes()[host.len() - domain.len() - 1] == b'.'
            }
            None => host == pattern,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_match_hosts_subdomains_and_ports() {
        let allow = vec![
            "registry.npmjs.org".to_owned(),
            "*.pypi.org".to_owned(),
            "github.com:22".to_owned(),
        ];
        assert!(allowed(&allow, "registry.npmjs.org", 443));
        assert!(allowed(&allow, "REGISTRY.npmjs.org", 80));
        assert!(!allowed(&allow, "registry.npmjs.org", 8080));
        assert!(!allowed(&allow, "evil-registry.npmjs.org", 443));
        assert!(allowed(&allow, "files.pypi.org", 443));
        assert!(
            !allowed(&allow, "pypi.org", 443),
            "a wildcard is subdomains only"
        );
        assert!(!allowed(&allow, "evilpypi.org", 443));
        assert!(allowed(&allow, "github.com", 22));
        assert!(!allowed(&allow, "github.com", 443));
        assert!(!allowed(&[], "anything", 443));
    }

    #[test]
    fn requests_are_read_as_tunnels_or_one_plain_request() {
        let r =
            Request::parse("CONNECT files.pypi.org:443 HTTP/1.1\r\nHost: files.pypi.org:443\r\n")
                .unwrap();
        assert!(r.connect);
        assert_eq!((r.host.as_str(), r.port), ("files.pypi.org", 443));
        let r = Request::parse(
            "GET http://Example.org:8080/a?b=1 HTTP/1.1\r\nHost: example.org\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n",
        )
        .unwrap();
        assert!(!r.connect);
        assert_eq!((r.host.as_str(), r.port), ("example.org", 8080));
        assert!(
            r.origin_head.starts_with("GET /a?b=1 HTTP/1.1\r\n"),
            "{}",
            r.origin_head
        );
        assert!(r.origin_head.contains("Accept: */*\r\n"));
        assert!(!r.origin_head.to_ascii_lowercase().contains("keep-alive"));
        assert!(r.origin_head.ends_with("Connection: close\r\n\r\n"));
        assert!(Request::parse("GET /relative HTTP/1.1\r\n").is_none());
        assert!(Request::parse("GET https://x/ HTTP/1.1\r\n").is_none());
    }

    #[tokio::test]
    async fn a_host_off_the_list_is_refused_and_one_on_it_is_tunnelled() {
        let target = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let target_port = target.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = target.accept().await {
                let _ = s.write_all(b"hello from the target").await;
            }
        });
        let proxy = Proxy::start(vec![format!("127.0.0.1:{target_port}")]).unwrap();
        async fn ask(port: u16, head: String) -> String {
            let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            s.write_all(head.as_bytes()).await.unwrap();
            let mut out = Vec::new();
            let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await;
            String::from_utf8_lossy(&out).into_owned()
        }
        let ok = ask(
            proxy.port(),
            format!("CONNECT 127.0.0.1:{target_port} HTTP/1.1\r\n\r\n"),
        )
        .await;
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        assert!(ok.contains("hello from the target"), "{ok}");
        let refused = ask(
            proxy.port(),
            "CONNECT example.com:443 HTTP/1.1\r\n\r\n".into(),
        )
        .await;
        assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
        assert!(refused.contains("network:"), "{refused}");
    }
}
