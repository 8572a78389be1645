//! The fleet at scale, against a real `redis-server`: many instances (tasks in one process,
//! each its own fleet and connection, 50 by default) × 1,000 names each, a tenth of them OPEN.
//! It measures the store's commands per second at rest and during a mass OPEN, the time from a
//! quorum forming to every instance adopting it, the bytes of one instance's fleet and view,
//! and the snapshot's cost as the names grow. A measurement, not a test: it prints its figures,
//! and a state it waits for that is not reached in time is printed as far as it got.
//!
//! Run with `cargo bench -p breaker-benches --bench fleet_scale` (`FLEET_SCALE_INSTANCES` and
//! `FLEET_SCALE_NAMES` change the size); `benches/README.md` has the figures of one run and
//! `docs/fleet.md` the limits they imply.

use std::sync::Arc;
use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::fleet::Fleet;
use breakerbox::{Breaker, Config, State};
use redis::aio::MultiplexedConnection;
use tokio::time::Instant;

/// Records `n` failures through `b`, which admits them.
fn fail_n(b: &Breaker, n: usize) {
    for _ in 0..n {
        b.try_acquire().expect("a closed breaker admits").failure();
    }
}

// dhat's allocator counts the bytes the process holds while its profiler runs (the snapshot
// part only); otherwise it is the system's.
#[global_allocator]
static ALLOCATOR: dhat::Alloc = dhat::Alloc;

/// The ttl of every instance: renewals every ttl/3 from every instance are the store's load at
/// rest, and a ttl of a few seconds leaves room for a renewal heard late on a loaded machine.
const TTL: Duration = Duration::from_secs(15);
/// A snapshot per ttl: heals a lost message before its opinion could expire.
const SNAPSHOT_EVERY: Duration = Duration::from_secs(15);
/// The longest wait for any state.
const PATIENCE: Duration = Duration::from_secs(90);
/// The names whose quorum's adoption is timed, one after the other.
const TIMED: usize = 5;
/// The process's resident bytes past which a wait gives up: the fleet's backlogs are bounded
/// (before they were, a mass OPEN took 12 GiB), and a run must never take the machine's memory.
const RSS_CAP: u64 = 4 << 30;

/// The process's resident bytes, from `/proc/self/status` (0 where there is none).
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// The most resident bytes [`rss`] read, every 10 ms, since the last [`Peak::reset`].
#[derive(Clone, Default)]
struct Peak(Arc<std::sync::atomic::AtomicU64>);

impl Peak {
    fn start() -> Self {
        let peak = Peak::default();
        let watched = peak.clone();
        // A sampler of the process's memory on the real clock: what it measures takes real time.
        let mut every = tokio::time::interval(Duration::from_millis(10));
        tokio::spawn(async move {
            loop {
                every.tick().await;
                watched
                    .0
                    .fetch_max(rss(), std::sync::atomic::Ordering::Relaxed);
            }
        });
        peak
    }

    fn reset(&self) {
        self.0.store(rss(), std::sync::atomic::Ordering::Relaxed);
    }

    fn get(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / 1048576.0)
}

fn size(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn name(i: usize) -> String {
    format!("svc::downstream[{i}]")
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn breaker(name: &str) -> Arc<Breaker> {
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .open_for(Duration::from_secs(600))
        .probes(1)
        .fleet(true)
        .build()
        .expect("a valid configuration");
    Arc::new(Breaker::new(name, config))
}

fn instance(url: &str, id: &str, names: usize, peers: usize) -> Fleet {
    Fleet::builder(url)
        .instance(id)
        .ttl(TTL)
        .timeout(Duration::from_secs(2))
        .snapshot_every(SNAPSHOT_EVERY)
        .bounds(names, peers * 2)
        .start()
        .expect("a valid fleet")
}

async fn connection(url: &str) -> Option<MultiplexedConnection> {
    let client = redis::Client::open(url).ok()?;
    client.get_multiplexed_async_connection().await.ok()
}

/// A field of `INFO section`, as a number (0 if the store does not answer).
async fn info(conn: &mut MultiplexedConnection, section: &str, field: &str) -> f64 {
    let text: String = redis::cmd("INFO")
        .arg(section)
        .query_async(conn)
        .await
        .unwrap_or_default();
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

/// `calls` and `usec` of one command in `INFO commandstats`.
async fn command_stat(conn: &mut MultiplexedConnection, command: &str) -> (f64, f64) {
    let text: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await
        .unwrap_or_default();
    let Some(line) = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("cmdstat_{command}:")))
    else {
        return (0.0, 0.0);
    };
    let field = |key: &str| -> f64 {
        line.split(',')
            .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    (field("calls"), field("usec"))
}

/// Commands per second the store served over `span`, and `EVALSHA`s (the fleet's scripts)
/// per second.
async fn commands_per_second(conn: &mut MultiplexedConnection, span: Duration) -> (f64, f64) {
    let before = info(conn, "stats", "total_commands_processed").await;
    let (scripts_before, _) = command_stat(conn, "evalsha").await;
    let start = Instant::now();
    tokio::time::sleep(span).await;
    let after = info(conn, "stats", "total_commands_processed").await;
    let (scripts_after, _) = command_stat(conn, "evalsha").await;
    let secs = start.elapsed().as_secs_f64();
    (
        (after - before) / secs,
        (scripts_after - scripts_before) / secs,
    )
}

/// Waits, polling every 5 ms, until `done`, or until `patience` ran out or the process holds
/// more than `RSS_CAP`: how long it took, or `None`.
async fn time_until(patience: Duration, mut done: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    loop {
        if done() {
            return Some(start.elapsed());
        }
        if start.elapsed() >= patience || rss() > RSS_CAP {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    if !RedisServer::installed() {
        println!("fleet_scale: no redis-server on the PATH; nothing measured");
        return;
    }
    println!("load at start: {}", load());
    if std::env::var_os("FLEET_SCALE_NO_SNAPSHOT").is_none() {
        runtime.block_on(snapshot_cost());
    }
    let instances = size("FLEET_SCALE_INSTANCES", 50).max(3);
    let names = size("FLEET_SCALE_NAMES", 1_000).max(20);
    runtime.block_on(fleet_at_scale(instances, names));
    println!("load at end: {}", load());
}

/// Opinions of two peers, OPEN for ten minutes, written by hand into the store for the first
/// tenth of `names`: no peer runs, so that the store's scripts and the process's bytes are
/// the observer's alone.
async fn plant(conn: &mut MultiplexedConnection, names: &[String]) -> bool {
    let Ok((secs, _)): Result<(u64, u64), _> = redis::cmd("TIME").query_async(conn).await else {
        return false;
    };
    let far = (secs + 600) * 1000;
    let mut pipe = redis::pipe();
    for name in &names[..names.len() / 10] {
        for (seq, peer) in ["p1", "p2"].into_iter().enumerate() {
            pipe.cmd("ZADD")
                .arg(format!("breaker:fleet:{{{name}}}:live"))
                .arg(far)
                .arg(peer)
                .ignore();
            pipe.cmd("HSET")
                .arg(format!("breaker:fleet:{{{name}}}:until"))
                .arg(peer)
                .arg(format!("{far} {}", seq + 1))
                .ignore();
        }
    }
    pipe.query_async::<()>(conn).await.is_ok()
}

/// One observer instance tracking `n` names, a tenth held OPEN by two peers: the store's time
/// per snapshot, and the bytes the observer's fleet and view hold.
async fn snapshot_cost() {
    println!("## one instance: its bytes and its snapshot's cost");
    println!(
        "names | scripts per snapshot | store µs per snapshot | µs per name | bytes of the fleet, its task and view | bytes per name"
    );
    let profiler = dhat::Profiler::builder().testing().build();
    for n in [100, 1_000, 10_000] {
        let Ok(server) = RedisServer::start() else {
            println!("{n} | redis-server did not start");
            continue;
        };
        let url = server.url();
        let Some(mut conn) = connection(&url).await else {
            println!("{n} | no connection");
            continue;
        };
        let names: Vec<String> = (0..n).map(name).collect();
        if !plant(&mut conn, &names).await {
            println!("{n} | the peers' opinions could not be written");
            continue;
        }
        let own: Vec<Arc<Breaker>> = names.iter().map(|n| breaker(n)).collect();
        let before = dhat::HeapStats::get().curr_bytes;
        let observer = instance(&url, "observer", n, 2);
        for b in &own {
            observer.join(b, 2);
        }
        let _ = tokio::time::timeout(PATIENCE, observer.flush()).await;
        let observer_ref = &observer;
        let counted = time_until(PATIENCE, || {
            (0..n / 10).all(|i| observer_ref.peers_open(&name(i)) == 2)
        })
        .await;
        let bytes = dhat::HeapStats::get().curr_bytes as f64 - before as f64;
        if counted.is_none() {
            let seen = (0..n / 10)
                .filter(|&i| observer.peers_open(&name(i)) == 2)
                .count();
            println!(
                "{n} | the observer counted both peers on {seen} of {} names after {} s",
                n / 10,
                PATIENCE.as_secs()
            );
        }
        // Two snapshot periods: the observer holds no opinion, so every script is a snapshot's.
        let (calls0, usec0) = command_stat(&mut conn, "evalsha").await;
        tokio::time::sleep(SNAPSHOT_EVERY * 2 + Duration::from_millis(500)).await;
        let (calls1, usec1) = command_stat(&mut conn, "evalsha").await;
        let per_snapshot = n.div_ceil(64) as f64;
        let snapshots = (calls1 - calls0) / per_snapshot;
        let usec = if snapshots > 0.0 {
            (usec1 - usec0) / snapshots
        } else {
            f64::NAN
        };
        println!(
            "{n} | {per_snapshot} | {usec:.0} | {:.2} | {bytes:.0} | {:.0}",
            usec / n as f64,
            bytes / n as f64
        );
        drop(observer);
    }
    drop(profiler);
}

async fn fleet_at_scale(instances: usize, names: usize) {
    let open_at_rest = names / 10;
    let timed = open_at_rest..open_at_rest + TIMED;
    let mass_names = size("FLEET_SCALE_MASS", names - open_at_rest - TIMED);
    let mass = open_at_rest + TIMED..(open_at_rest + TIMED + mass_names).min(names);
    println!(
        "## {instances} instances × {names} names, {open_at_rest} OPEN by every instance; ttl {} s, a snapshot every {} s",
        TTL.as_secs(),
        SNAPSHOT_EVERY.as_secs()
    );
    let Ok(server) = RedisServer::start() else {
        println!("redis-server did not start");
        return;
    };
    let url = server.url();
    let Some(mut conn) = connection(&url).await else {
        println!("no connection to the store");
        return;
    };
    let all_names: Vec<String> = (0..names).map(name).collect();
    let start = Instant::now();
    let mut fleets = Vec::new();
    let mut breakers: Vec<Vec<Arc<Breaker>>> = Vec::new();
    for i in 0..instances {
        let fleet = instance(&url, &format!("i{i}"), names, instances);
        let own: Vec<Arc<Breaker>> = all_names.iter().map(|n| breaker(n)).collect();
        // Opened before they join, so that every instance holds the tenth OPEN by its own
        // judgement and renews it (the most the store serves at rest), none adopted.
        for b in &own[..open_at_rest] {
            fail_n(b, 2);
        }
        for b in &own {
            fleet.join(b, 2);
        }
        fleets.push(fleet);
        breakers.push(own);
    }
    for fleet in &fleets {
        let _ = tokio::time::timeout(PATIENCE, fleet.flush()).await;
    }
    println!(
        "started and joined in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    let peers = instances - 1;
    let fleets_ref = &fleets;
    let settled = time_until(PATIENCE, || {
        fleets_ref
            .iter()
            .all(|f| (0..open_at_rest).all(|n| f.peers_open(&all_names[n]) == peers))
    })
    .await;
    match settled {
        Some(took) => println!(
            "every instance counts all {peers} peers on the OPEN tenth after {:.1} s more",
            took.as_secs_f64()
        ),
        None => {
            let counts: Vec<usize> = fleets
                .iter()
                .flat_map(|f| (0..open_at_rest).map(|n| f.peers_open(&all_names[n])))
                .collect();
            let full = counts.iter().filter(|&&c| c == peers).count();
            println!(
                "NOT SETTLED after {} s: {full} of {} (instance, name) pairs count all {peers} peers; fewest counted {}; {} instances degraded",
                PATIENCE.as_secs(),
                counts.len(),
                counts.iter().min().copied().unwrap_or(0),
                fleets.iter().filter(|f| f.is_degraded()).count()
            );
        }
    }
    let peak = Peak::start();
    let rss_before = rss();
    let (at_rest, scripts) = commands_per_second(&mut conn, TTL).await;
    println!(
        "at rest: {at_rest:.0} commands/s ({scripts:.0} scripts/s); {} opinions renewed every {:.0} s; the process held {} then {}",
        instances * open_at_rest,
        TTL.as_secs_f64() / 3.0,
        mib(rss_before),
        mib(rss())
    );

    // A quorum forms: instances 0 and 1 open a name; every other instance adopts it.
    let mut adoption = Vec::new();
    for n in timed {
        fail_n(&breakers[0][n], 2);
        // The second opinion after every other instance heard the first: the quorum forms
        // when the second is heard, which the time below measures.
        let first = &all_names[n];
        if time_until(PATIENCE, || {
            fleets[2..].iter().all(|f| f.peers_open(first) >= 1)
        })
        .await
        .is_none()
        {
            println!(
                "{first}: the first opinion was not heard by every instance within {} s",
                PATIENCE.as_secs()
            );
        }
        fail_n(&breakers[1][n], 2);
        let all = &breakers;
        let took = time_until(Duration::from_secs(20), || {
            all[2..].iter().all(|own| own[n].state() == State::Open)
        })
        .await;
        match took {
            Some(took) => adoption.push(took),
            None => println!(
                "quorum on {}: {} of {} instances adopted it within 20 s",
                all_names[n],
                breakers[2..]
                    .iter()
                    .filter(|own| own[n].state() == State::Open)
                    .count(),
                instances - 2
            ),
        }
    }
    adoption.sort();
    if let (Some(median), Some(max)) = (adoption.get(adoption.len() / 2), adoption.last()) {
        println!(
            "quorum to every instance adopting it: median {}, max {} ({} names timed)",
            ms(*median),
            ms(*max),
            adoption.len()
        );
    }

    println!("after the quorums the process holds {}", mib(rss()));
    // A mass OPEN: every instance's downstream fails for the next names at once (by default
    // every other name); each opens what its peers have not opened for it already.
    let before = info(&mut conn, "stats", "total_commands_processed").await;
    let (scripts_before, _) = command_stat(&mut conn, "evalsha").await;
    let dropped =
        |fleets: &[Fleet]| -> u64 { fleets.iter().map(|f| f.health().messages_dropped).sum() };
    let dropped_before = dropped(&fleets);
    peak.reset();
    let start = Instant::now();
    for own in &breakers {
        for b in &own[mass.clone()] {
            if b.state() != State::Open {
                fail_n(b, 2);
            }
        }
    }
    let tripped = start.elapsed();
    let all = &breakers;
    let open = time_until(PATIENCE, || {
        all.iter()
            .all(|own| own[mass.clone()].iter().all(|b| b.state() == State::Open))
    })
    .await;
    let mut flushed = 0;
    for fleet in &fleets {
        if rss() > RSS_CAP {
            break;
        }
        if tokio::time::timeout(Duration::from_secs(5), fleet.flush())
            .await
            .is_ok()
        {
            flushed += 1;
        }
    }
    let served = start.elapsed();
    let after = info(&mut conn, "stats", "total_commands_processed").await;
    let (scripts_after, _) = command_stat(&mut conn, "evalsha").await;
    println!(
        "mass OPEN of {} names × {instances} instances: calls failed in {:.2} s, every breaker OPEN {}, {flushed} of {instances} tasks done after {:.2} s; meanwhile {:.0} commands/s ({:.0} scripts/s)",
        mass.len(),
        tripped.as_secs_f64(),
        open.map_or_else(|| format!("NOT within {} s", PATIENCE.as_secs()), |d| format!("after {:.2} s", d.as_secs_f64())),
        served.as_secs_f64(),
        (after - before) / served.as_secs_f64(),
        (scripts_after - scripts_before) / served.as_secs_f64(),
    );
    println!("the process holds {}", mib(rss()));
    if rss() > RSS_CAP {
        println!("stopped: the process holds more than {}", mib(RSS_CAP));
        return;
    }
    let (busy, scripts) = commands_per_second(&mut conn, TTL).await;
    println!(
        "after it, {} names OPEN by every instance: {busy:.0} commands/s ({scripts:.0} scripts/s); the process holds {}",
        open_at_rest + TIMED + mass.len(),
        mib(rss())
    );
    println!(
        "peak of the process from the mass OPEN to here: {}; messages dropped past the backlogs meanwhile: {}",
        mib(peak.get()),
        dropped(&fleets) - dropped_before
    );
    let memory = info(&mut conn, "memory", "used_memory").await;
    println!("the store's used_memory: {:.1} MiB", memory / 1048576.0);
    let degraded = fleets.iter().filter(|f| f.is_degraded()).count();
    println!("instances degraded at the end: {degraded} of {instances}");
    drop(fleets);
}
