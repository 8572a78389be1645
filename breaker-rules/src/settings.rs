//! The values a configuration is made of, before any rule looked at them.

use std::fmt;
use std::time::Duration;

use crate::keys::{
    DEFAULT_HEDGES, DEFAULT_RETRY_BACKOFF, DEFAULT_RETRY_BUDGET, DEFAULT_RETRY_FLOOR,
    DEFAULT_THROTTLE_MAX, DEFAULT_THROTTLE_WINDOW,
};

/// Largest count window: memory per breaker stays bounded (one byte per call).
pub const MAX_COUNT_WINDOW: u32 = 1 << 20;
/// Largest number of time-window buckets.
pub const MAX_BUCKETS: u32 = 1 << 12;
/// Least `min_calls` of a window that can hold more than one call: a failure rate judged on
/// one call would let a single glitch open the breaker.
pub const LEAST_MIN_CALLS: u32 = 2;
/// Most retries after the first attempt.
pub const MAX_RETRIES: u32 = 10;
/// The most calls `record` keeps (`Breaker::start_recording`, the attribute's `record = N`): a ring
/// of that many is some 400 MB.
pub const MAX_RECORD: usize = 10_000_000;

/// Most extra attempts a hedged call may start.
pub const MAX_HEDGES: u32 = 5;
/// Longest delay before a hedged attempt starts.
pub const MAX_HEDGE: Duration = Duration::from_secs(60);

/// Buckets of throttling's window: its history expires a tenth at a time.
pub const THROTTLE_BUCKETS: u32 = 10;

/// Longest base delay before a retry.
pub const MAX_RETRY_BACKOFF: Duration = Duration::from_secs(60);
/// Most steps a ramp-up may have.
pub const MAX_RAMP_STEPS: usize = 16;

/// How the breaker remembers recent outcomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// The last `n` completed calls.
    Count(u32),
    /// The calls completed during the last `span`, kept in `buckets` buckets of `span / buckets`.
    Time {
        /// How far back the window reaches.
        span: Duration,
        /// How many buckets the span is cut into; outcomes expire one bucket at a time.
        buckets: u32,
    },
}

/// Slow-call detection: calls slower than `threshold` count as slow, and the breaker opens
/// when the share of slow calls reaches `rate`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlowCalls {
    /// A call is slow when the time from acquire to result is longer than this.
    pub threshold: Duration,
    /// Share of slow calls, in (0, 1], that opens the breaker.
    pub rate: f64,
}

/// Backoff of the open duration: each failed half-open trial makes the next OPEN last
/// `factor` times the previous one, up to `max`. The first OPEN after CLOSED lasts `open_for`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    /// Growth of the open duration after each failed trial, at least 1.
    pub factor: f64,
    /// Longest OPEN, at least `open_for`.
    pub max: Duration,
}

/// Stepwise ramp-up after the half-open probes succeed: the breaker admits each percentage of
/// calls for one `step`, then the next, and closes after the last (which is 100).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RampUp {
    percents: [u32; MAX_RAMP_STEPS],
    /// Steps given, which may exceed `MAX_RAMP_STEPS` in a ramp the rules refuse.
    len: usize,
    step: Duration,
}

impl RampUp {
    /// The ramp through `percents`, each for `step`. The rules refuse it unless the
    /// percentages rise strictly, lie in 1..=100, end at 100 and are at most
    /// [`MAX_RAMP_STEPS`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox_rules::RampUp;
    ///
    /// let ramp = RampUp::new(&[10, 50, 100], Duration::from_secs(5));
    /// assert_eq!((ramp.percents(), ramp.percent(1), ramp.percent(3)), (&[10, 50, 100][..], Some(50), None));
    /// ```
    pub const fn new(percents: &[u32], step: Duration) -> Self {
        let mut kept = [0; MAX_RAMP_STEPS];
        let mut i = 0;
        while i < percents.len() && i < MAX_RAMP_STEPS {
            kept[i] = percents[i];
            i += 1;
        }
        Self {
            percents: kept,
            len: percents.len(),
            step,
        }
    }

    /// The percentages of calls admitted, step by step.
    pub fn percents(&self) -> &[u32] {
        &self.percents[..self.len.min(MAX_RAMP_STEPS)]
    }

    /// How long each step lasts.
    pub const fn step(&self) -> Duration {
        self.step
    }

    /// The percentage of step `index`, or `None` past the last step.
    pub fn percent(&self, index: usize) -> Option<u32> {
        self.percents().get(index).copied()
    }

    /// How many steps were given, kept ones or not.
    pub(crate) const fn len(&self) -> usize {
        self.len
    }

    /// Step `index`, which must be below `min(len, MAX_RAMP_STEPS)`.
    pub(crate) const fn at(&self, index: usize) -> u32 {
        self.percents[index]
    }
}

impl fmt::Debug for RampUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RampUp")
            .field("percents", &self.percents())
            .field("step", &self.step)
            .finish()
    }
}

/// Every value of a configuration, as written or defaulted, for [`Settings::check`] to judge.
///
/// `None` is a field not set: `min_calls` then follows the window, `successes` the probes, and
/// the optional behaviours are off.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// The outcome window.
    pub window: Window,
    /// Calls in the window before the failure rate is judged.
    pub min_calls: Option<u32>,
    /// Failure rate at or above which the breaker opens.
    pub failure_rate: f64,
    /// Slow-call detection.
    pub slow_calls: Option<SlowCalls>,
    /// Adaptive throttling's factor K: a call is refused with probability
    /// `(requests - K * accepts) / (requests + 1)`; `None`: off.
    pub throttle: Option<f64>,
    /// The largest share of calls throttling refuses.
    pub throttle_max: f64,
    /// The history throttling counts.
    pub throttle_window: Duration,
    /// How long OPEN lasts.
    pub open_for: Duration,
    /// Half-open probes in flight at once.
    pub probes: u32,
    /// Probe successes that close.
    pub successes: Option<u32>,
    /// Backoff of the open duration.
    pub backoff: Option<Backoff>,
    /// Stepwise ramp-up after the probes.
    pub ramp_up: Option<RampUp>,
    /// Latency guard of the ramp-up.
    pub ramp_guard: Option<f64>,
    /// Timeout of each attempt.
    pub timeout: Option<Duration>,
    /// Retries after a failed first attempt.
    pub retries: u32,
    /// Base delay before a retry.
    pub retry_backoff: Duration,
    /// Longest delay before a retry; `None`: 10 s, or the base if that is longer.
    pub retry_backoff_max: Option<Duration>,
    /// Retries per first attempt.
    pub retry_budget: f64,
    /// Retries a second allowed beside the budget.
    pub retry_floor: u32,
    /// The delay before an extra attempt starts while the first is still running.
    pub hedge: Option<Duration>,
    /// Extra attempts a hedged call may start.
    pub hedges: u32,
    /// The bulkhead's limit on calls in flight.
    pub max_concurrent: Option<u32>,
    /// How long a half-open probe may run.
    pub probe_timeout: Option<Duration>,
    /// Watch only: admit every call.
    pub shadow: bool,
    /// Share judgement with the fleet's peers.
    pub fleet: bool,
    /// Live peers holding the breaker OPEN that open it; `None`: 2.
    pub fleet_quorum: Option<u32>,
    /// The longest a downstream's pushback opens the breaker for; zero turns it off.
    pub pushback_max: Duration,
    /// For a keyed family: the most of its members, in percent, OPEN at once; `None`: all.
    pub max_open_percent: Option<u32>,
}

impl Settings {
    /// The defaults: count window 20, failure rate 0.5, open 5s, 3 probes, no retries.
    pub const DEFAULT: Settings = Settings {
        window: Window::Count(20),
        min_calls: None,
        failure_rate: 0.5,
        slow_calls: None,
        throttle: None,
        throttle_max: DEFAULT_THROTTLE_MAX,
        throttle_window: DEFAULT_THROTTLE_WINDOW,
        open_for: Duration::from_secs(5),
        probes: 3,
        successes: None,
        backoff: None,
        ramp_up: None,
        ramp_guard: None,
        timeout: None,
        retries: 0,
        retry_backoff: DEFAULT_RETRY_BACKOFF,
        retry_backoff_max: None,
        retry_budget: DEFAULT_RETRY_BUDGET,
        retry_floor: DEFAULT_RETRY_FLOOR,
        hedge: None,
        hedges: DEFAULT_HEDGES,
        max_concurrent: None,
        probe_timeout: None,
        shadow: false,
        fleet: false,
        fleet_quorum: None,
        pushback_max: Duration::from_secs(5 * 60),
        max_open_percent: None,
    };
}

impl Default for Settings {
    fn default() -> Self {
        Self::DEFAULT
    }
}
