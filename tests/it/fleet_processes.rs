//! The fleet across separate OS processes: `src/bin/fleet_instance.rs` started three times
//! against one `redis-server`. Two instances open by their own judgement; the third, whose
//! calls all succeed, learns of them and rejects with `FleetOpen`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;

/// The instance's binary, which cargo builds for the tests.
fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fleet_instance"))
}

/// A running instance and the lines it printed.
struct Instance {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Instance {
    fn start(server: &RedisServer, id: &str, mode: &str) -> Self {
        let mut child = Command::new(example())
            .args([&server.url(), id, mode])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", example().display()));
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        Self { child, lines }
    }

    /// Waits (at most 10 s) for a line that `wanted` accepts.
    fn expect(&self, what: &str, wanted: impl Fn(&str) -> bool) -> String {
        loop {
            match self.lines.recv_timeout(Duration::from_secs(10)) {
                Ok(line) if wanted(&line) => return line,
                Ok(_) => continue,
                Err(e) => panic!("no line for {what}: {e}"),
            }
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // Closing stdin asks it to exit; the kill makes sure.
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn three_processes_two_open_the_third_rejects_for_the_fleet() {
    let Some(server) = RedisServer::start_or_skip("fleet_processes::three_processes") else {
        return;
    };
    assert!(
        example().exists(),
        "{} is built by `cargo test`",
        example().display()
    );
    let watcher = Instance::start(&server, "web-3", "watch");
    watcher.expect("the watcher ready", |l| l == "ready");
    watcher.expect("no peer open yet", |l| l == "peers 0");

    let first = Instance::start(&server, "web-1", "sick");
    first.expect("web-1 open", |l| l == "open");
    watcher.expect("one peer open", |l| l == "peers 1");
    let second = Instance::start(&server, "web-2", "sick");
    second.expect("web-2 open", |l| l == "open");
    watcher.expect("two peers open", |l| l == "peers 2");
    watcher.expect("the watcher rejects for the fleet", |l| {
        l.starts_with("rejected ")
    });
    let line = watcher.expect("every rejection is the fleet's", |l| {
        l.starts_with("rejected ")
    });
    assert_eq!(line, "rejected FleetOpen");

    // A sick instance killed: its opinion expires, and the fleet no longer holds a quorum.
    drop(first);
    watcher.expect("one peer left", |l| l == "peers 1");
}
