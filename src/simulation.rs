//! A downstream that fails, restarts cold and warms up, under steady traffic through a
//! breaker, in virtual time. `examples/recovery.rs` prints and plots it; the tests compare a
//! classic breaker with a progressive one on the same scenario and seed.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::recording::{CallOutcome, RecordedCall, Recording};
use breakerbox::{events::Event, Breaker, Config, Outcome, RejectReason, State};

/// What happens to the downstream, and the traffic sent to it.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// How long the simulation runs.
    pub length: Duration,
    /// Mean client requests per second (Poisson arrivals).
    pub rate: f64,
    /// When the downstream goes down.
    pub outage_start: Duration,
    /// When it restarts, cold.
    pub outage_end: Duration,
    /// Requests per second the downstream serves when warm.
    pub full_capacity: f64,
    /// How long a cold downstream takes to go from 10% to 100% of its full capacity.
    pub warm_up: Duration,
    /// Seed of the arrivals.
    pub seed: u64,
    /// The share of calls a healthy downstream fails anyway (drawn from its own generator,
    /// so the arrivals do not depend on it).
    pub noise: f64,
}

impl Default for Scenario {
    fn default() -> Self {
        Self {
            length: Duration::from_secs(90),
            rate: 100.0,
            outage_start: Duration::from_secs(10),
            outage_end: Duration::from_secs(30),
            full_capacity: 150.0,
            warm_up: Duration::from_secs(20),
            seed: 7,
            noise: 0.0,
        }
    }
}

impl Scenario {
    /// A downstream that fails 1% of calls, is down from 20 s to 40 s, and comes back warm
    /// with room for all the traffic: the trace `docs/trace.csv` records.
    pub fn outage() -> Self {
        Self {
            outage_start: Duration::from_secs(20),
            outage_end: Duration::from_secs(40),
            full_capacity: 1e6,
            warm_up: Duration::from_millis(1),
            noise: 0.01,
            ..Self::default()
        }
    }
}

/// One second of the timeline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Second {
    /// Start of the second.
    pub at: u32,
    /// The breaker's state at the end of the second.
    pub state: State,
    /// Requests the client sent during the second.
    pub sent: u32,
    /// Requests the breaker let through to the downstream.
    pub admitted: u32,
    /// Requests per second the downstream could serve at the start of the second.
    pub capacity: f64,
}

/// What one run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// Name of the variant.
    pub variant: &'static str,
    /// Client requests sent.
    pub requests: u64,
    /// Requests served by the downstream.
    pub served: u64,
    /// Times the breaker opened after the downstream came back.
    pub reopened: u32,
    /// Requests that reached the downstream beyond its capacity, or while it was down after
    /// falling over from an overload.
    pub overloaded: u64,
    /// From the restart until the breaker closed for good, if it did.
    pub recovery: Option<Duration>,
    /// The timeline, a second at a time.
    pub timeline: Vec<Second>,
}

/// The classic breaker: closes as soon as its probes succeed.
pub fn classic() -> Config {
    Config::builder()
        .count_window(20)
        .min_calls(10)
        .failure_rate(0.5)
        .open_for(Duration::from_secs(5))
        .probes(3)
        .build()
        .expect("a valid configuration")
}

/// The progressive breaker: backs off while the downstream stays down, then ramps up.
pub fn progressive() -> Config {
    classic()
        .to_builder()
        .open_backoff(1.5, Duration::from_secs(20))
        .ramp_up(&[10, 30, 60, 100], Duration::from_secs(5))
        .build()
        .expect("a valid configuration")
}

/// A downstream that is down during the outage, then restarts cold: each second it serves
/// what its warm-up allows. A request beyond that overloads it and it falls over: down for
/// `CRASH_DOWNTIME`, then cold again.
struct Downstream<'a> {
    scenario: &'a Scenario,
    second: u64,
    load: f64,
    /// When it last started cold; `None` while it is warm from the start.
    cold_start: Option<Duration>,
    /// Down until then after falling over.
    down_until: Duration,
}

/// How long an overloaded downstream stays down before it restarts.
const CRASH_DOWNTIME: Duration = Duration::from_secs(2);

/// What happened to one request.
enum Served {
    Ok,
    /// Down: the outage, or a crash after an overload.
    Down {
        after_overload: bool,
    },
    /// Beyond capacity: it fell over.
    Overloaded,
}

impl Downstream<'_> {
    /// Requests per second it can serve at `t`.
    fn capacity(&self, t: Duration) -> f64 {
        let s = self.scenario;
        if t >= s.outage_start && t < s.outage_end || t < self.down_until {
            return 0.0;
        }
        let Some(cold) = self
            .cold_start
            .or((t >= s.outage_end).then_some(s.outage_end))
        else {
            return s.full_capacity;
        };
        let warm = (t.saturating_sub(cold).as_secs_f64() / s.warm_up.as_secs_f64()).min(1.0);
        s.full_capacity * (0.1 + 0.9 * warm)
    }

    fn serve(&mut self, t: Duration) -> Served {
        let second = t.as_secs();
        if second != self.second {
            self.second = second;
            self.load = 0.0;
        }
        if self.capacity(t) == 0.0 {
            return Served::Down {
                after_overload: t < self.down_until,
            };
        }
        self.load += 1.0;
        if self.load <= self.capacity(t) {
            return Served::Ok;
        }
        self.down_until = t + CRASH_DOWNTIME;
        self.cold_start = Some(self.down_until);
        Served::Overloaded
    }
}

/// A small deterministic generator for the arrivals (xorshift64*).
struct Arrivals(u64);

impl Arrivals {
    fn next_gap(&mut self, rate: f64) -> Duration {
        Duration::from_secs_f64(-self.next_uniform().ln() / rate)
    }

    /// A number in `0..n`.
    fn next_below(&mut self, n: u64) -> u64 {
        (self.next_uniform() * n as f64) as u64
    }

    /// A number in (0, 1).
    fn next_uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        (bits as f64 + 0.5) / (1u64 << 53) as f64
    }
}

/// Runs the scenario through a breaker configured with `config`.
pub fn run(variant: &'static str, config: Config, scenario: &Scenario) -> Report {
    run_observed(variant, config, scenario, |_| {})
}

/// Runs the scenario through a breaker configured with `config` and records every call: the
/// trace `docs/trace.csv` holds, named `app::get_book` and giving `config`. A served call takes 8 to 16 ms, a
/// call to a downstream that is down or falls over times out after 1 s.
pub fn record(config: Config, scenario: &Scenario) -> Recording {
    let running = config.clone();
    let mut recording = Vec::new();
    let mut latencies = Arrivals(scenario.seed.wrapping_add(1).max(1));
    run_observed("recorded", config, scenario, |call| {
        let (latency, outcome) = match call.served {
            Some(Served::Ok) => (
                Duration::from_micros(8_000 + latencies.next_below(8_000)),
                CallOutcome::Completed(Outcome::Success),
            ),
            Some(_) => (TIMEOUT, CallOutcome::Completed(Outcome::Failure)),
            None => (
                Duration::ZERO,
                CallOutcome::Rejected(call.rejected.unwrap_or(RejectReason::Open)),
            ),
        };
        recording.push(RecordedCall::new(
            Duration::from_micros(call.at.as_micros() as u64),
            latency,
            outcome,
        ));
    });
    recording
        .into_iter()
        .collect::<Recording>()
        .with_name("app::get_book")
        .with_config(running)
}

/// How long a call to a downstream that does not answer takes to fail.
const TIMEOUT: Duration = Duration::from_secs(1);

/// One call, as `run_observed` tells it.
struct Call<'a> {
    at: Duration,
    /// What the downstream did; `None` when the breaker rejected the call.
    served: Option<&'a Served>,
    rejected: Option<RejectReason>,
}

fn run_observed(
    variant: &'static str,
    config: Config,
    scenario: &Scenario,
    mut observe: impl FnMut(Call<'_>),
) -> Report {
    let clock = ManualClock::new();
    let breaker = Breaker::with_clock(variant, config, clock.clone());
    let opened_after_restart = Arc::new(AtomicU32::new(0));
    let (counter, restart, watch) = (
        opened_after_restart.clone(),
        scenario.outage_end,
        clock.clone(),
    );
    breaker.on_event(move |e| {
        if let Event::StateTransition {
            to: State::Open, ..
        } = e
        {
            if watch.elapsed() >= restart {
                counter.fetch_add(1, Ordering::Relaxed);
            }
        }
    });

    let mut downstream = Downstream {
        scenario,
        second: 0,
        load: 0.0,
        cold_start: None,
        down_until: Duration::ZERO,
    };
    let mut arrivals = Arrivals(scenario.seed.max(1));
    let mut noise = Arrivals(scenario.seed.wrapping_mul(31).max(1));
    let mut report = Report {
        variant,
        requests: 0,
        served: 0,
        reopened: 0,
        overloaded: 0,
        recovery: None,
        timeline: Vec::new(),
    };
    let (mut second, mut asked, mut admitted) = (0u64, 0u32, 0u32);
    let mut closed_since = None;
    let mut t = Duration::ZERO;
    loop {
        t += arrivals.next_gap(scenario.rate);
        while second < t.as_secs().min(scenario.length.as_secs()) {
            report.timeline.push(Second {
                at: second as u32,
                state: breaker.state(),
                sent: asked,
                admitted,
                capacity: downstream
                    .capacity(Duration::from_secs(second))
                    .min(scenario.full_capacity),
            });
            (second, asked, admitted) = (second + 1, 0, 0);
        }
        if t >= scenario.length {
            break;
        }
        clock.advance(t.saturating_sub(clock.elapsed()));
        report.requests += 1;
        asked += 1;
        let permit = match breaker.try_acquire() {
            Ok(permit) => permit,
            Err(rejected) => {
                observe(Call {
                    at: t,
                    served: None,
                    rejected: Some(rejected.reason()),
                });
                continue;
            }
        };
        admitted += 1;
        let mut served = downstream.serve(t);
        if matches!(served, Served::Ok)
            && scenario.noise > 0.0
            && noise.next_uniform() < scenario.noise
        {
            served = Served::Down {
                after_overload: false,
            };
        }
        observe(Call {
            at: t,
            served: Some(&served),
            rejected: None,
        });
        match served {
            Served::Ok => {
                report.served += 1;
                permit.success();
            }
            Served::Down { after_overload } => {
                report.overloaded += u64::from(after_overload);
                permit.failure();
            }
            Served::Overloaded => {
                report.overloaded += 1;
                permit.failure();
            }
        }
        let closed = breaker.state() == State::Closed;
        closed_since = match (closed, closed_since) {
            (true, None) if t >= scenario.outage_end => Some(t),
            (true, since) => since,
            (false, _) => None,
        };
    }
    report.reopened = opened_after_restart.load(Ordering::Relaxed);
    report.recovery = closed_since.map(|since| since - scenario.outage_end);
    report
}
