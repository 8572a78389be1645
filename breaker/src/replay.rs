//! A breaker's rules replayed on one thread, at times the caller gives: what a configuration
//! would have done with recorded calls, and fast enough to try thousands of them.
//!
//! A [`Replay`] decides every call as a [`Breaker`](crate::Breaker) of the same
//! configuration would: the same state machine, window, trip rule, probes, backoff and
//! ramp-up, and the same generations (a result of a call admitted before the last state
//! change is discarded). It differs in what a replay does not need: no lock, no atomics, no
//! clock (each call gives its time, from the start of the replay), no listeners (the state
//! changes are kept, [`Replay::transitions`]), no totals. It replays an enforcing breaker:
//! shadow mode, the bulkhead (`max_concurrent`) and the fleet are not replayed, nor is a
//! keyed family's cap (`max_open_percent`): a replay is one breaker, with no family whose
//! members it could count, so it trips as an uncapped member would (a member the cap held
//! CLOSED was recorded CLOSED, and its replay may open where it did not). Adaptive
//! throttling (`throttle`) is replayed: its refusals are [`RejectReason::Shed`].
//!
//! ```
//! use std::time::Duration;
//! use breakerbox::replay::Replay;
//! use breakerbox::{Config, Outcome, RejectReason, State};
//!
//! let config = Config::builder()
//!     .count_window(4)
//!     .min_calls(2)
//!     .failure_rate(0.5)
//!     .open_for(Duration::from_secs(1))
//!     .probes(1)
//!     .build()
//!     .unwrap();
//! let mut replay = Replay::new(config);
//! let ms = Duration::from_millis;
//! // Two calls start at 0 ms and fail at 10 ms: the second one opens the breaker.
//! let a = replay.try_acquire(ms(0)).unwrap();
//! let b = replay.try_acquire(ms(0)).unwrap();
//! replay.record(a, Outcome::Failure, ms(10));
//! replay.record(b, Outcome::Failure, ms(10));
//! let refused = replay.try_acquire(ms(500)).unwrap_err();
//! assert_eq!(refused.reason, RejectReason::Open);
//! assert_eq!(refused.retry_after, Some(ms(510)));
//! // A second after it opened, a probe; its success closes the breaker.
//! let probe = replay.try_acquire(ms(1010)).unwrap();
//! replay.record(probe, Outcome::Success, ms(1020));
//! assert_eq!(
//!     replay.transitions(),
//!     [(ms(10), State::Open), (ms(1010), State::HalfOpen), (ms(1020), State::Closed)]
//! );
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::clock::{Clock, ClockSource, LazyNow};
use crate::machine::{Admission, Machine, Recorded};
use crate::{Config, Outcome, RejectReason, State};

/// A breaker replayed on one thread at the times given to it (see the [module](self)).
///
/// Times are durations from the start of the replay, and must not go back from one call of
/// [`try_acquire`](Self::try_acquire) or [`record`](Self::record) to the next.
#[derive(Debug)]
pub struct Replay {
    machine: Machine,
    /// Never read: every time is given, and the machine reads ticks from its origin.
    clock: ClockSource,
    origin: Instant,
    /// Whether permits note when their call started (slow calls, the ramp's latency guard).
    timed: bool,
    /// Adaptive throttling's counts, if the configuration throttles.
    throttle: Option<crate::throttle::Throttle>,
    transitions: Vec<(Duration, State)>,
}

/// A call the [`Replay`] let through: give it back to [`Replay::record`] with the outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayPermit {
    generation: u64,
    admission: Admission,
    /// When the call started: for a timed call and for every probe, as a breaker notes it.
    started: Option<Instant>,
    timed: bool,
}

/// A call the [`Replay`] rejected: why, and for how long an open breaker goes on rejecting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused {
    /// Why, as [`Rejected::reason`](crate::Rejected::reason) says.
    pub reason: RejectReason,
    /// As [`Rejected::retry_after`](crate::Rejected::retry_after): the time left in the
    /// open period, `None` when no period is known (the half-open trial is full, or the
    /// ramp-up throttles).
    pub retry_after: Option<Duration>,
}

/// The clock handed to the machine: it is never asked, every time being given.
#[derive(Debug)]
struct Given(Instant);

impl Clock for Given {
    fn now(&self) -> Instant {
        self.0
    }
}

impl Replay {
    /// A closed breaker of `config` at time zero.
    pub fn new(config: Config) -> Replay {
        let origin = Instant::now();
        let clock = ClockSource::custom(Given(origin));
        let throttle = config.throttling().map(|throttling| {
            let throttle = crate::throttle::Throttle::default();
            throttle.configure(Some(throttling));
            throttle
        });
        let machine = Machine::unpacked(Arc::new(config), &mut LazyNow::at(&clock, origin));
        Replay {
            throttle,
            timed: machine.times_calls(),
            machine,
            clock,
            origin,
            transitions: Vec::new(),
        }
    }

    /// Asks for a call starting at `at`, as [`Breaker::try_acquire`](crate::Breaker::try_acquire) does.
    #[inline]
    pub fn try_acquire(&mut self, at: Duration) -> Result<ReplayPermit, Refused> {
        // CLOSED admits every call but those throttling refuses, and changes nothing.
        if self.machine.state() == State::Closed {
            if let Some(throttle) = &self.throttle {
                if throttle.refuses(self.machine.generation(), Some(ticks(at))) {
                    return Err(Refused {
                        reason: RejectReason::Shed,
                        retry_after: None,
                    });
                }
            }
            return Ok(ReplayPermit {
                generation: self.machine.generation(),
                admission: Admission::Counted,
                started: self.timed.then(|| self.origin + at),
                timed: self.timed,
            });
        }
        let instant = self.origin + at;
        let mut now = given(&self.clock, instant, at);
        let generation = self.machine.generation();
        let admitted = self.machine.acquire(&mut now);
        self.note_transition(generation, at);
        match admitted {
            Ok(admission) => Ok(ReplayPermit {
                generation: self.machine.generation(),
                admission,
                started: (self.timed || admission == Admission::Probe).then_some(instant),
                timed: self.timed,
            }),
            Err((reason, retry_after)) => Err(Refused {
                reason,
                retry_after,
            }),
        }
    }

    /// Reports how the call of `permit` ended, at `at`, as [`Permit::record`](crate::Permit::record)
    /// does.
    #[inline]
    pub fn record(&mut self, permit: ReplayPermit, outcome: Outcome, at: Duration) {
        let generation = self.machine.generation();
        if permit.generation != generation {
            return;
        }
        let mut now = given(&self.clock, self.origin + at, at);
        match outcome {
            // Ignored: nothing counts, but a probe frees its slot.
            Outcome::Ignored if permit.admission == Admission::Probe => {
                let _ = self
                    .machine
                    .release_probe(permit.generation, permit.started, &mut now);
            }
            Outcome::Ignored => return,
            _ => {
                if let Some(throttle) = self
                    .throttle
                    .as_ref()
                    .filter(|_| permit.admission == Admission::Counted)
                {
                    let accepted = outcome == Outcome::Success;
                    throttle.record(permit.generation, accepted, Some(ticks(at)));
                }
                let recorded = self.machine.record(
                    permit.generation,
                    permit.admission,
                    outcome == Outcome::Failure,
                    permit.started,
                    permit.timed,
                    &mut now,
                );
                debug_assert!(!matches!(recorded, Recorded::ToPacked), "no packed window");
            }
        }
        self.note_transition(generation, at);
    }

    /// Reports that the call of `permit` failed at `at` carrying the downstream's pushback
    /// `asked`, as [`Permit::failure_with_pushback`](crate::Permit::failure_with_pushback)
    /// does: the breaker opens at once for it, capped by `pushback_max`, if the permit still
    /// counts and pushback is on; else it is recorded as any failure.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::replay::Replay;
    /// use breakerbox::{Config, Outcome, State};
    ///
    /// let ms = Duration::from_millis;
    /// let mut replay = Replay::new(Config::builder().probes(1).build()?);
    /// let permit = replay.try_acquire(ms(0)).unwrap();
    /// replay.record_pushback(permit, Duration::from_secs(4), ms(10));
    /// assert_eq!(replay.try_acquire(ms(20)).unwrap_err().retry_after, Some(ms(3990)));
    /// let probe = replay.try_acquire(ms(4010)).unwrap();
    /// replay.record(probe, Outcome::Success, ms(4020));
    /// assert_eq!(
    ///     replay.transitions(),
    ///     [(ms(10), State::Open), (ms(4010), State::HalfOpen), (ms(4020), State::Closed)]
    /// );
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    pub fn record_pushback(&mut self, permit: ReplayPermit, asked: Duration, at: Duration) {
        let generation = self.machine.generation();
        let period = match self.machine.pushback_period(asked) {
            Some(period) if permit.generation == generation && !asked.is_zero() => period,
            _ => return self.record(permit, Outcome::Failure, at),
        };
        let mut now = given(&self.clock, self.origin + at, at);
        let _ = self
            .machine
            .pushed_back(permit.generation, permit.admission, period, &mut now);
        self.note_transition(generation, at);
    }

    /// The state the breaker is in.
    pub fn state(&self) -> State {
        self.machine.state()
    }

    /// Every state change so far, with its time, in order.
    pub fn transitions(&self) -> &[(Duration, State)] {
        &self.transitions
    }

    /// Every state change, with its time, in order.
    pub fn into_transitions(self) -> Vec<(Duration, State)> {
        self.transitions
    }

    /// Keeps the state change of the operation that began in `generation`, if it made one:
    /// every state change starts a new generation.
    #[inline]
    fn note_transition(&mut self, generation: u64, at: Duration) {
        if self.machine.generation() != generation {
            if let Some(t) = self.machine.take_events().transition {
                self.transitions.push((at, t.to));
            }
        }
    }
}

/// The time `at` from the start, `instant`, as the machine reads it: the replay's start is
/// the clock's origin, so its ticks are `at` in nanoseconds.
fn given(clock: &ClockSource, instant: Instant, at: Duration) -> LazyNow<'_> {
    LazyNow::given(clock, instant, ticks(at))
}

/// The time `at` from the start in the clock's ticks.
fn ticks(at: Duration) -> u64 {
    u64::try_from(at.as_nanos()).unwrap_or(u64::MAX)
}
