//! Progressive recovery: backoff of the open duration, the stepwise ramp-up of HALF_OPEN,
//! and its latency guard.

use std::time::{Duration, Instant};

use crate::config::Config;
use crate::latency::LatencyHistogram;

/// What the ramp-up says of one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RampDecision {
    /// Admit the call at the current step.
    Admit,
    /// Not this call: the step admits only its percentage.
    Throttle,
    /// The last step has passed: close the breaker.
    Close,
}

/// What an operation did besides a state change that listeners and logs hear of, once the
/// lock is released: a step of the ramp, or a trip the keyed family's cap refused (one slot:
/// a refusal leaves the breaker CLOSED, where the ramp has no news).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum News {
    /// The ramp entered the step at `step` of the percentages: the first when the probes
    /// succeeded, then each it climbs.
    Step { step: u32, percent: u32 },
    /// A step's time is up, and the latency guard holds it for another: the step's p99
    /// exceeds the guard's factor times the baseline's.
    Held {
        step: u32,
        percent: u32,
        p99: Duration,
        baseline: Duration,
    },
    /// The keyed family's cap refused the breaker's trip (`cap.rs`).
    TripRefused(crate::cap::Refusal),
}

/// The ramp-up's progress: the data of a HALF_OPEN whose probes succeeded.
#[derive(Debug)]
pub(crate) struct Ramp {
    /// At most `MAX_RAMP_STEPS`.
    step: u32,
    started: Instant,
    /// Calls asked during this step; admission follows `asked * percent / 100`.
    asked: u64,
}

#[derive(Debug)]
pub(crate) struct Recovery {
    /// How long the current (or next) OPEN lasts.
    open_for: Duration,
    /// With the latency guard on; boxed, as few breakers have one.
    guard: Option<Box<Guard>>,
    /// Taken by the breaker under the lock, after the operation that set it.
    news: Option<News>,
}

/// The latency guard's two histograms.
///
/// The baseline holds the latencies of successful CLOSED calls (slow successes included,
/// failures never), across every CLOSED of the breaker's life, halved as it grows so that
/// it follows recent traffic. A new breaker (a restarted process) has none, nor has one
/// whose recovery settings were reconfigured: with no baseline the guard holds no step, and
/// a ramp climbs on time alone until CLOSED calls have built one.
#[derive(Debug)]
struct Guard {
    /// p99 of successful calls' latencies while CLOSED.
    baseline: LatencyHistogram,
    /// Latencies of the current ramp step.
    step: LatencyHistogram,
}

impl Recovery {
    pub(crate) fn new(config: &Config) -> Self {
        let guarded = config.ramp_latency_guard().is_some();
        Self {
            open_for: config.open_for(),
            guard: guarded.then(|| {
                Box::new(Guard {
                    baseline: LatencyHistogram::new(),
                    step: LatencyHistogram::new(),
                })
            }),
            news: None,
        }
    }

    pub(crate) fn open_for(&self) -> Duration {
        self.open_for
    }

    /// Entering OPEN: after a failed half-open trial the open duration grows by the backoff.
    /// Returns how long this OPEN lasts.
    pub(crate) fn on_open(&mut self, config: &Config, after_trial: bool) -> Duration {
        self.open_for = match config.open_backoff() {
            Some(backoff) if after_trial => {
                let grown = self.open_for.as_secs_f64() * backoff.factor;
                Duration::try_from_secs_f64(grown)
                    .unwrap_or(backoff.max)
                    .min(backoff.max)
            }
            _ => config.open_for(),
        };
        self.open_for
    }

    /// Entering CLOSED, or any operator action: forget the backoff.
    pub(crate) fn on_close(&mut self, config: &Config) {
        self.open_for = config.open_for();
    }

    /// The probes succeeded: the ramp's first step, if one is configured.
    pub(crate) fn start_ramp(&mut self, config: &Config, now: Instant) -> Option<Ramp> {
        let steps = config.ramp_up()?;
        if let Some(guard) = &mut self.guard {
            guard.step.clear();
        }
        self.news = Some(News::Step {
            step: 0,
            percent: steps.percent(0).unwrap_or(100),
        });
        Some(Ramp {
            step: 0,
            started: now,
            asked: 0,
        })
    }

    /// What the ramp did, or the trip refused, since the last time this was asked.
    pub(crate) fn take_news(&mut self) -> Option<News> {
        self.news.take()
    }

    /// Tells of a trip the cap refused; whether it is the operation's first (a result that
    /// trips a sealed window twice, judged then recorded, is one refusal, told once).
    pub(crate) fn trip_refused(&mut self, refusal: crate::cap::Refusal) -> bool {
        let first = !matches!(self.news, Some(News::TripRefused(_)));
        self.news = Some(News::TripRefused(refusal));
        first
    }

    /// The share of calls admitted now, in percent: 100 outside the ramp.
    pub(crate) fn admit_percent(ramp: Option<&Ramp>, config: &Config) -> u32 {
        match (ramp, config.ramp_up()) {
            (Some(ramp), Some(steps)) => steps.percent(ramp.step as usize).unwrap_or(100),
            _ => 100,
        }
    }

    /// Decides one call during the ramp, first moving to the next step if this one is over.
    pub(crate) fn ramp_admit(
        &mut self,
        ramp: &mut Ramp,
        config: &Config,
        now: Instant,
    ) -> RampDecision {
        let Some(steps) = config.ramp_up() else {
            return RampDecision::Admit;
        };
        if now.saturating_duration_since(ramp.started) >= steps.step() {
            let held = match (config.ramp_latency_guard(), &self.guard) {
                (Some(factor), Some(guard)) => match (guard.baseline.p99(), guard.step.p99()) {
                    (Some(base), Some(step)) => {
                        (step.as_secs_f64() > base.as_secs_f64() * factor).then_some((step, base))
                    }
                    _ => None,
                },
                _ => None,
            };
            let percent = |step: u32| steps.percent(step as usize).unwrap_or(100);
            self.news = Some(match held {
                Some((p99, baseline)) => News::Held {
                    step: ramp.step,
                    percent: percent(ramp.step),
                    p99,
                    baseline,
                },
                None => {
                    ramp.step += 1;
                    if ramp.step as usize >= steps.percents().len() {
                        return RampDecision::Close;
                    }
                    News::Step {
                        step: ramp.step,
                        percent: percent(ramp.step),
                    }
                }
            });
            ramp.started = now;
            ramp.asked = 0;
            if let Some(guard) = &mut self.guard {
                guard.step.clear();
            }
        }
        let percent = u64::from(steps.percent(ramp.step as usize).unwrap_or(100));
        let before = ramp.asked * percent / 100;
        ramp.asked += 1;
        if ramp.asked * percent / 100 > before {
            RampDecision::Admit
        } else {
            RampDecision::Throttle
        }
    }

    /// A successful call's latency: the baseline while CLOSED, the step's during the ramp.
    pub(crate) fn record_latency(&mut self, latency: Duration, ramping: bool) {
        if let Some(guard) = &mut self.guard {
            let histogram = if ramping {
                &mut guard.step
            } else {
                &mut guard.baseline
            };
            histogram.record(latency);
        }
    }
}
