//! Breaker states and the snapshot of a breaker's counts.

use std::fmt;

use crate::CallTotals;

/// Where a breaker stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
/// ```
/// use breaker::{Breaker, Config, State};
///
/// let b = Breaker::new("libraryd", Config::builder().count_window(4).min_calls(2).build()?);
/// b.try_acquire().unwrap().success();
/// let s = b.snapshot();
/// assert_eq!((s.state, s.calls, s.failures, s.failure_rate), (State::Closed, 1, 0, None));
/// b.try_acquire().unwrap().success();
/// assert_eq!(b.snapshot().failure_rate, Some(0.0));
/// # Ok::<(), breaker::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Snapshot {
    /// The current state.
    pub state: State,
    /// Completed calls in the window.
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
}
