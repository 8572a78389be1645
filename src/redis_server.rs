//! A real `redis-server` for the fleet's tests and example: started on loopback on a free
//! port, stopped (killed and reaped) when dropped; paused, resumed, killed and restarted on
//! the same port for the failure tests.
//!
//! Without `redis-server` on the `PATH`, [`RedisServer::start_or_skip`] says loudly what is
//! skipped and how to install it, past the test harness's capture, and returns `None`; with
//! `CI=true` it panics instead, so that CI fails rather than skips.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How to install the server, as the skip notice says it.
pub const INSTALL: &str =
    "install it with `apt-get install redis-server` (Debian, Ubuntu) or `brew install redis` (macOS)";

/// A `redis-server` child process on `127.0.0.1`.
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
    /// More configuration, as `redis-server` takes it on its command line.
    extra: Vec<String>,
    /// Whether the port is a TLS port, and the server has no plain one (`--port 0`).
    tls_only: bool,
}

/// Why no server runs.
#[derive(Debug)]
pub enum Unavailable {
    /// `redis-server` is not on the `PATH`.
    Missing,
    /// It is, but did not answer `PING` in time.
    NotReady(String),
}

impl RedisServer {
    /// Whether `redis-server` can be run here.
    pub fn installed() -> bool {
        Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Starts a server on a free port; fails if `redis-server` is missing or never answers.
    pub fn start() -> Result<Self, Unavailable> {
        Self::start_with(&[])
    }

    /// [`start`](Self::start) with more configuration (`--requirepass`, `--tls-port`, ...).
    /// The server still answers a plain `PING` on its port without a password, which tells
    /// that it is up: an `-NOAUTH` reply counts as an answer.
    pub fn start_with(extra: &[&str]) -> Result<Self, Unavailable> {
        Self::start_on_port(extra, false)
    }

    /// A server that speaks TLS only, on a free port (`--port 0 --tls-port PORT`), as a
    /// managed Redis in cluster mode does; `extra` names its certificates (`--tls-cert-file`,
    /// ...). It is up once it takes connections on that port.
    pub fn start_tls_only(extra: &[&str]) -> Result<Self, Unavailable> {
        Self::start_on_port(extra, true)
    }

    fn start_on_port(extra: &[&str], tls_only: bool) -> Result<Self, Unavailable> {
        if !Self::installed() {
            return Err(Unavailable::Missing);
        }
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("breaker-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| Unavailable::NotReady(e.to_string()))?;
        let mut server = Self {
            child: None,
            port,
            dir,
            extra: extra.iter().map(|arg| arg.to_string()).collect(),
            tls_only,
        };
        server.spawn()?;
        Ok(server)
    }

    /// [`start`](Self::start), or `None` after a loud notice naming `what` was skipped when
    /// `redis-server` is missing, unless `CI=true`, where a missing server fails the test.
    pub fn start_or_skip(what: &str) -> Option<Self> {
        Self::start_or_skip_with(what, &[])
    }

    /// [`start_or_skip`](Self::start_or_skip) with more configuration, as
    /// [`start_with`](Self::start_with) takes it.
    pub fn start_or_skip_with(what: &str, extra: &[&str]) -> Option<Self> {
        match Self::start_with(extra) {
            Ok(server) => Some(server),
            Err(Unavailable::Missing) if std::env::var("CI").as_deref() != Ok("true") => {
                // Written to the process's stderr, not through `eprintln!`, which the test
                // harness captures.
                let _ = writeln!(
                    std::io::stderr(),
                    "\n*** SKIPPED {what}: `redis-server` is not on the PATH; {INSTALL}. \
                     (With CI=true this fails instead.) ***\n"
                );
                None
            }
            Err(Unavailable::Missing) => {
                panic!("CI=true and `redis-server` is not on the PATH: {INSTALL}")
            }
            Err(Unavailable::NotReady(why)) => panic!("redis-server did not start: {why}"),
        }
    }

    fn spawn(&mut self) -> Result<(), Unavailable> {
        let port = self.port.to_string();
        let ports = match self.tls_only {
            true => vec!["--port", "0", "--tls-port", &port],
            false => vec!["--port", &port],
        };
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1"])
            .args(ports)
            .args(["--save", "", "--appendonly", "no", "--loglevel", "warning"])
            .arg("--dir")
            .arg(&self.dir)
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Unavailable::NotReady(e.to_string()))?;
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.ping() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.kill();
        Err(Unavailable::NotReady(format!(
            "no PONG on port {} within 10s",
            self.port
        )))
    }

    /// Whether the server answers `PING` within half a second; a server that speaks TLS
    /// only, whether it takes connections.
    pub fn ping(&self) -> bool {
        if self.tls_only {
            return TcpStream::connect(("127.0.0.1", self.port)).is_ok();
        }
        let answer = || -> std::io::Result<bool> {
            let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
            stream.set_read_timeout(Some(Duration::from_millis(500)))?;
            stream.write_all(b"PING\r\n")?;
            let mut reply = [0; 7];
            stream.read_exact(&mut reply)?;
            Ok(&reply == b"+PONG\r\n" || &reply == b"-NOAUTH")
        };
        answer().unwrap_or(false)
    }

    /// `redis://127.0.0.1:PORT`, or `rediss://` for a server that speaks TLS only.
    pub fn url(&self) -> String {
        let scheme = if self.tls_only { "rediss" } else { "redis" };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// The server's port (its TLS port, for a server that speaks TLS only).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The directory the server runs in, removed when it stops.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Freezes the server (SIGSTOP): connections stay open and nothing answers.
    pub fn pause(&self) {
        assert!(self.signal("-STOP"), "SIGSTOP failed");
    }

    /// Thaws a paused server (SIGCONT).
    pub fn resume(&self) {
        assert!(self.signal("-CONT"), "SIGCONT failed");
    }

    /// Sends `signal` with `kill`; false if it failed or no server runs.
    fn signal(&self, signal: &str) -> bool {
        let Some(pid) = self.pid() else {
            return false;
        };
        let status = Command::new("kill")
            .arg(signal)
            .arg(pid.to_string())
            .status();
        status.is_ok_and(|s| s.success())
    }

    /// Kills the server (SIGKILL) and reaps it: its data is gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts a new, empty server on the same port after [`kill`](Self::kill).
    pub fn restart(&mut self) {
        self.kill();
        if let Err(e) = self.spawn() {
            panic!("redis-server did not restart: {e:?}");
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        // A paused server is thawed first, so that nothing is left stopped.
        self.signal("-CONT");
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A port free on loopback now (the kernel's pick, released at once).
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port on loopback");
    listener.local_addr().expect("its address").port()
}
