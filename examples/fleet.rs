//! Why a fleet: 20 instances of a service call one downstream, which fails for 60 seconds.
//! Two instances are busy (100 calls a second each), eighteen are quiet (5 a second each).
//! Alone, each quiet instance needs its own 10 failed calls (2 seconds of its traffic) before
//! it stops calling, and then every instance probes the sick downstream after each of its
//! OPENs; with the fleet on, an instance opens as soon as two peers hold the downstream OPEN,
//! one instance at a time probes (the probe lease), and when its probe passes every other
//! half-opens at once.
//!
//! Runs in real time (about 2 × 66 s) against a `redis-server` it starts on loopback (it says
//! so and stops if there is none), prints the calls that reached the sick downstream, the time
//! until the fleet stopped calling it, the probes sent into the outage, and the time from
//! recovery until every instance was closed, with the fleet off and on, and writes the calls
//! per bucket to `docs/fleet.svg` (or the path given as the first argument). A second
//! argument sets the outage in seconds (`cargo run --example fleet -- docs/fleet.svg 10`).

use std::error::Error;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_workspace::redis_server::{RedisServer, Unavailable, INSTALL};
use breakerbox::fleet::Fleet;
use breakerbox::{Breaker, Config, State};
use plotters::prelude::*;
use tokio::time::Instant;

const INSTANCES: usize = 20;
const BUSY: usize = 2;
const OUTAGE_START: Duration = Duration::from_secs(1);

/// The outage and the run around it.
#[derive(Clone, Copy)]
struct Scenario {
    outage_end: Duration,
    length: Duration,
    bucket: Duration,
}

impl Scenario {
    fn new(outage: Duration) -> Self {
        let outage_end = OUTAGE_START + outage;
        let length = outage_end + Duration::from_secs(5);
        let bucket = match length > Duration::from_secs(10) {
            true => Duration::from_millis(500),
            false => Duration::from_millis(100),
        };
        Self {
            outage_end,
            length,
            bucket,
        }
    }
}

/// The downstream, as it counts what reaches it.
#[derive(Default)]
struct Downstream {
    /// Calls that reached it while sick.
    sick_calls: AtomicU32,
    /// Calls per bucket of the run.
    per_bucket: Mutex<Vec<u32>>,
    /// Half-open probes sent into the outage, in flight, and the most in flight at once.
    probes: AtomicU32,
    probing: AtomicU32,
    most_probing: AtomicU32,
}

struct Report {
    fleet: bool,
    sick_calls: u32,
    stopped_after: Duration,
    probes: u32,
    most_probing: u32,
    /// From the downstream's recovery until every instance was closed.
    all_closed_after: Option<Duration>,
    per_bucket: Vec<u32>,
}

fn main() -> Result<(), Box<dyn Error>> {
    let server = match RedisServer::start() {
        Ok(server) => server,
        Err(Unavailable::Missing) => {
            println!("this example needs `redis-server` on the PATH: {INSTALL}");
            return Ok(());
        }
        Err(e) => return Err(format!("redis-server did not start: {e:?}").into()),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let outage = match std::env::args().nth(2) {
        Some(secs) => {
            Duration::from_secs(secs.parse().map_err(|_| "the outage is in whole seconds")?)
        }
        None => Duration::from_secs(60),
    };
    let scenario = Scenario::new(outage);
    let reports = [
        runtime.block_on(run(&server, scenario, false)),
        runtime.block_on(run(&server, scenario, true)),
    ];
    println!(
        "{INSTANCES} instances ({BUSY} busy at 100 calls/s, the rest at 5 calls/s), a downstream sick from {}s to {}s\n",
        OUTAGE_START.as_secs(),
        scenario.outage_end.as_secs()
    );
    println!(
        "{:<6} {:>22} {:>24} {:>22} {:>13} {:>24}",
        "fleet",
        "calls to the sick one",
        "time to stop calling it",
        "probes into the outage",
        "most at once",
        "recovery to all closed"
    );
    for r in &reports {
        let closed = r.all_closed_after.map_or_else(
            || "never".to_string(),
            |d| format!("{:.2}s", d.as_secs_f64()),
        );
        println!(
            "{:<6} {:>22} {:>23.2}s {:>22} {:>13} {:>24}",
            if r.fleet { "on" } else { "off" },
            r.sick_calls,
            r.stopped_after.as_secs_f64(),
            r.probes,
            r.most_probing,
            closed
        );
    }
    let path = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from("docs/fleet.svg"), PathBuf::from);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    plot(&path, &reports, scenario)?;
    println!(
        "\ncalls per {} ms written to {}",
        scenario.bucket.as_millis(),
        path.display()
    );
    Ok(())
}

/// One run of the scenario, the fleet off or on.
async fn run(server: &RedisServer, scenario: Scenario, fleet_on: bool) -> Report {
    let downstream = Arc::new(Downstream::default());
    let buckets = (scenario.length.as_millis() / scenario.bucket.as_millis()) as usize;
    *downstream.per_bucket.lock().unwrap() = vec![0; buckets];
    let start = Instant::now();
    let mut fleets = Vec::new();
    let mut tasks = Vec::new();
    let mut breakers = Vec::new();
    for i in 0..INSTANCES {
        let config = Config::builder()
            .count_window(10)
            .min_calls(10)
            .failure_rate(0.5)
            .open_for(Duration::from_millis(700))
            .probes(2)
            .successes(2)
            .fleet(fleet_on)
            .build()
            .expect("a valid configuration");
        // One name per run, so that the first run's opinions do not reach the second.
        let name = format!("inventory-{}", if fleet_on { "on" } else { "off" });
        let b = Arc::new(Breaker::new(name, config));
        breakers.push(Arc::clone(&b));
        if fleet_on {
            let fleet = Fleet::builder(server.url())
                .instance(format!("web-{i}"))
                .ttl(Duration::from_millis(900))
                .timeout(Duration::from_millis(100))
                .snapshot_every(Duration::from_millis(500))
                .start()
                .expect("a valid fleet");
            fleet.join(&b, 2);
            fleets.push(fleet);
        }
        let every = if i < BUSY {
            Duration::from_millis(10)
        } else {
            Duration::from_millis(200)
        };
        // Spread the quiet instances' calls over their period.
        let offset = every * i as u32 / INSTANCES as u32;
        tasks.push(tokio::spawn(traffic(
            b,
            Arc::clone(&downstream),
            (start, scenario),
            every,
            offset,
        )));
    }
    // From the recovery on, watch for the moment every instance is closed.
    let watch = tokio::spawn(async move {
        tokio::time::sleep_until(start + scenario.outage_end).await;
        while start.elapsed() < scenario.length {
            if breakers.iter().all(|b| b.state() == State::Closed) {
                return Some(start.elapsed() - scenario.outage_end);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        None
    });
    // The fleet stopped calling once every instance had rejected a call.
    let mut stopped_after = Duration::ZERO;
    for task in tasks {
        let first_rejection = task.await.expect("traffic ran").unwrap_or(scenario.length);
        stopped_after = stopped_after.max(first_rejection.saturating_sub(OUTAGE_START));
    }
    let per_bucket = downstream.per_bucket.lock().unwrap().clone();
    Report {
        fleet: fleet_on,
        sick_calls: downstream.sick_calls.load(Ordering::Relaxed),
        stopped_after,
        probes: downstream.probes.load(Ordering::Relaxed),
        most_probing: downstream.most_probing.load(Ordering::Relaxed),
        all_closed_after: watch.await.expect("the watch ran"),
        per_bucket,
    }
}

/// One instance's calls, one every `every` after `offset`, until the run ends; returns when
/// it first rejected a call after the outage began.
async fn traffic(
    b: Arc<Breaker>,
    downstream: Arc<Downstream>,
    (start, scenario): (Instant, Scenario),
    every: Duration,
    offset: Duration,
) -> Option<Duration> {
    let mut tick = tokio::time::interval_at(start + offset, every);
    let mut first_rejection = None;
    loop {
        tick.tick().await;
        let at = start.elapsed();
        if at >= scenario.length {
            return first_rejection;
        }
        let sick = at >= OUTAGE_START && at < scenario.outage_end;
        let probe = b.state() != State::Closed;
        let Ok(permit) = b.try_acquire() else {
            if at >= OUTAGE_START {
                first_rejection.get_or_insert(at);
            }
            continue;
        };
        let bucket = (at.as_millis() / scenario.bucket.as_millis()) as usize;
        downstream.per_bucket.lock().unwrap()[bucket] += 1;
        if probe && sick {
            downstream.probes.fetch_add(1, Ordering::Relaxed);
        }
        if probe {
            let now = downstream.probing.fetch_add(1, Ordering::Relaxed) + 1;
            downstream.most_probing.fetch_max(now, Ordering::Relaxed);
        }
        // The call takes 5 ms, and fails while the downstream is sick.
        tokio::time::sleep(Duration::from_millis(5)).await;
        if probe {
            downstream.probing.fetch_sub(1, Ordering::Relaxed);
        }
        if sick {
            downstream.sick_calls.fetch_add(1, Ordering::Relaxed);
            permit.failure();
        } else {
            permit.success();
        }
    }
}

fn plot(path: &PathBuf, reports: &[Report], scenario: Scenario) -> Result<(), Box<dyn Error>> {
    let root = SVGBackend::new(path, (960, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let top = reports
        .iter()
        .flat_map(|r| r.per_bucket.iter().copied())
        .max()
        .unwrap_or(1)
        + 5;
    let seconds = scenario.length.as_secs_f64();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "20 instances, one downstream sick from 1 s to {} s: calls that reach it",
                scenario.outage_end.as_secs()
            ),
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(50)
        .build_cartesian_2d(0f64..seconds, 0u32..top)?;
    chart
        .configure_mesh()
        .x_desc("seconds")
        .y_desc(format!("calls per {} ms", scenario.bucket.as_millis()))
        .disable_mesh()
        .draw()?;
    chart.draw_series([Rectangle::new(
        [
            (OUTAGE_START.as_secs_f64(), 0),
            (scenario.outage_end.as_secs_f64(), top),
        ],
        RGBColor(245, 190, 190).filled(),
    )])?;
    for (report, color) in reports.iter().zip([RGBColor(150, 150, 150), BLUE]) {
        let bucket = scenario.bucket.as_secs_f64();
        chart
            .draw_series(LineSeries::new(
                report
                    .per_bucket
                    .iter()
                    .enumerate()
                    .map(|(i, n)| (i as f64 * bucket, *n)),
                color.stroke_width(2),
            ))?
            .label(format!(
                "fleet {}: {} calls while sick",
                if report.fleet { "on" } else { "off" },
                report.sick_calls
            ))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
