//! Breaker states and the snapshot of a breaker's counts.

use std::fmt;

use crate::snapshot::CallTotals;

/// Where a breaker stands.
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "snake_case")
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum State {
    /// Calls flow; outcomes are counted.
    Closed,
    /// Calls are rejected until the open duration has passed.
    Open,
    /// A few probes may run at once; their results decide between CLOSED and OPEN.
    HalfOpen,
    /// An operator forced the breaker open: everything is rejected until `reset`.
    ForcedOpen,
    /// An operator disabled the breaker: everything is admitted, nothing counted, until `reset`.
    Disabled,
}

impl State {
    /// The name used in logs and metrics, e.g. `"half_open"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            State::Closed => "closed",
            State::Open => "open",
            State::HalfOpen => "half_open",
            State::ForcedOpen => "forced_open",
            State::Disabled => "disabled",
        }
    }

    pub(crate) const fn code(self) -> u64 {
        match self {
            State::Closed => 0,
            State::Open => 1,
            State::HalfOpen => 2,
            State::ForcedOpen => 3,
            State::Disabled => 4,
        }
    }

    pub(crate) const fn from_code(code: u64) -> State {
        match code {
            0 => State::Closed,
            1 => State::Open,
            2 => State::HalfOpen,
            3 => State::ForcedOpen,
            _ => State::Disabled,
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A consistent view of a breaker's state and window counts.
///
/// # What the window's counts mean in each state
///
/// `calls`, `failures`, `slow_calls` and the two rates are those of the window of completed
/// calls, the one the trip rule judges. Only a call admitted in CLOSED enters it; rejected
/// calls never do, and neither do probes or the ramp-up's calls. So:
///
/// | state | `calls`, `failures`, `slow_calls` | `failure_rate`, `slow_call_rate` | [`trial`](Self::trial) |
/// |---|---|---|---|
/// | CLOSED | the completed calls of the window, as they come in | the ratios, once `min_calls` completed; `None` before | `None` |
/// | OPEN | the window as it stood when the breaker left CLOSED, frozen: the calls that tripped it (after a failed trial, still those), or whatever it held when an open period was asked for ([`open_for`](crate::Breaker::open_for), a pushback) | the same window's | `None` |
/// | HALF_OPEN, the probes' trial | still the window that opened the breaker: probes do not enter it | the same window's | `Some`: the probes of this trial |
/// | HALF_OPEN, the ramp-up ([`admit_percent`](Self::admit_percent) below 100) | still the window that opened the breaker: the ramp's calls do not enter it (any failure reopens at once) | the same window's | `None`: the trial passed |
/// | FORCED_OPEN | the window as it stood when the breaker was forced open | the same window's | `None` |
/// | DISABLED | the window as it stood when the breaker was disabled: nothing is counted | the same window's | `None` |
///
/// A time window (`time_window`) keeps ageing in every state: its calls leave it as their
/// seconds pass, frozen or not. The window is emptied when the breaker closes (a passed
/// trial, the end of the ramp-up, [`reset`](crate::Breaker::reset)), so a new CLOSED starts
/// from zero. The lifetime counts of every call, however admitted, are in
/// [`totals`](Self::totals).
///
/// ```
/// use breakerbox::{Breaker, Config, State};
///
/// let b = Breaker::new("libraryd", Config::builder().count_window(4).min_calls(2).build()?);
/// b.try_acquire().unwrap().success();
/// let s = b.snapshot();
/// assert_eq!((s.state, s.calls, s.failures, s.failure_rate), (State::Closed, 1, 0, None));
/// b.try_acquire().unwrap().success();
/// assert_eq!(b.snapshot().failure_rate, Some(0.0));
/// assert_eq!(b.snapshot().trial, None);
/// # Ok::<(), breakerbox::config::ConfigError>(())
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Snapshot {
    /// The current state.
    pub state: State,
    /// Completed calls in the window (see the table above for what it holds in each state).
    pub calls: u32,
    /// Failed calls in the window.
    pub failures: u32,
    /// Slow calls in the window (0 without slow-call detection).
    pub slow_calls: u32,
    /// `failures / calls`, once at least `min_calls` calls are in the window.
    pub failure_rate: Option<f64>,
    /// `slow_calls / calls`, once at least `min_calls` calls are in the window.
    pub slow_call_rate: Option<f64>,
    /// Calls rejected since the breaker was created (`totals.rejected`).
    pub rejected: u64,
    /// Percentage of calls admitted: the current step during a ramp-up, 100 otherwise.
    pub admit_percent: u32,
    /// Every call since the breaker was created, by how it ended.
    pub totals: CallTotals,
    /// The half-open trial under way: `Some` in HALF_OPEN while its probes decide, `None` in
    /// every other state and during the ramp-up that follows a passed trial.
    pub trial: Option<Trial>,
}

/// The probes of the half-open trial under way, as [`Snapshot::trial`] shows them.
///
/// A trial starts from zero each time the breaker half-opens, and again when a new
/// configuration changes the window during a trial: the probes out before are then of an
/// earlier generation, and their results count for nothing. It ends when a probe fails or
/// hangs (OPEN again) or when `successes` probes succeeded (CLOSED, or the ramp-up).
///
/// ```
/// use std::time::Duration;
/// use breakerbox::clock::ManualClock;
/// use breakerbox::{Breaker, Config, State};
///
/// let config = Config::builder().count_window(2).min_calls(2).probes(3).successes(2).build()?;
/// let clock = ManualClock::new();
/// let b = Breaker::with_clock("libraryd", config, clock.clone());
/// b.try_acquire().unwrap().failure();
/// b.try_acquire().unwrap().failure();
/// clock.advance(Duration::from_secs(5)); // the default open_for
///
/// let first = b.try_acquire().unwrap(); // the call that half-opens the breaker
/// let second = b.try_acquire().unwrap();
/// first.success();
/// let s = b.snapshot();
/// let trial = s.trial.unwrap();
/// assert_eq!(s.state, State::HalfOpen);
/// assert_eq!((trial.admitted, trial.in_flight, trial.succeeded), (2, 1, 1));
/// // The window is still the one that opened the breaker.
/// assert_eq!((s.calls, s.failures, s.failure_rate), (2, 2, Some(1.0)));
///
/// second.success(); // the second success closes it
/// assert_eq!((b.state(), b.snapshot().trial), (State::Closed, None));
/// # Ok::<(), breakerbox::config::ConfigError>(())
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Trial {
    /// Probes let through since the breaker half-opened, the call that half-opened it
    /// included; a probe that ended (or was cancelled) stays counted.
    pub admitted: u32,
    /// Probes admitted and not ended yet (at most `probes`): a probe cancelled (its permit
    /// dropped) or ignored by `Classify` frees its slot.
    pub in_flight: u32,
    /// Probes that succeeded in this trial; the trial passes at `successes`.
    pub succeeded: u32,
}
