//! Why a breaker changed state: the reason every state transition carries to listeners, logs
//! and metrics.

use std::fmt;

use crate::variant_names::variant_names;

/// Why a breaker moved from one state to another, as
/// [`Event::StateTransition`](crate::events::Event::StateTransition) carries it, the `tracing` line
/// logs it (`reason`) and the metrics count it (the `reason` label of
/// `circuitbreaker_state_transitions_total`).
///
/// Resilience4j's `FailureRateExceeded` and `SlowCallRateExceeded` events are the
/// transitions to OPEN for [`FailureRate`](TransitionReason::FailureRate) and
/// [`SlowCallRate`](TransitionReason::SlowCallRate).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use breakerbox::{Breaker, Config, events::Event, State, events::TransitionReason};
///
/// let b = Breaker::new("libraryd", Config::builder().count_window(2).min_calls(2).build()?);
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let log = seen.clone();
/// b.on_event(move |e: &Event| {
///     if let Event::StateTransition { to, reason, .. } = e {
///         log.lock().unwrap().push((*to, *reason));
///     }
/// });
/// b.try_acquire().unwrap().failure();
/// b.try_acquire().unwrap().failure();
/// b.reset();
/// assert_eq!(
///     *seen.lock().unwrap(),
///     [
///         (State::Open, TransitionReason::FailureRate),
///         (State::Closed, TransitionReason::Reset),
///     ]
/// );
/// assert_eq!(TransitionReason::FailureRate.as_str(), "failure_rate");
/// # Ok::<(), breakerbox::config::ConfigError>(())
/// ```
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "snake_case")
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum TransitionReason {
    /// CLOSED to OPEN: the window's failure rate reached `failure_rate`.
    FailureRate,
    /// CLOSED to OPEN: the window's slow-call rate reached the slow calls' rate (when both
    /// rates are reached at once, the failure rate is told).
    SlowCallRate,
    /// OPEN to HALF_OPEN: the open period ended, and the first call after it is a probe.
    OpenElapsed,
    /// HALF_OPEN to OPEN: a probe, or a call admitted by the ramp-up, failed or was slow.
    ProbeFailed,
    /// HALF_OPEN to OPEN: a probe ran for `probe_timeout` without a result.
    ProbeTimedOut,
    /// HALF_OPEN to CLOSED: `successes` probes succeeded, and no ramp-up is configured.
    TrialPassed,
    /// HALF_OPEN to CLOSED: the ramp-up's last step ended. (The ramp's latency guard holds a
    /// step for longer; it never changes the state itself.)
    RampCompleted,
    /// To OPEN: a failed call carried the downstream's pushback (a `Retry-After`, a
    /// `grpc-retry-pushback-ms`), and the breaker stays open as long as it asked.
    Pushback,
    /// To OPEN: [`Breaker::open_for`](crate::Breaker::open_for) or
    /// [`Breaker::open_until`](crate::Breaker::open_until), an operator's open period.
    ManualOpen,
    /// To OPEN: at least `fleet_quorum` live peers of the fleet hold the breaker's name OPEN
    /// (feature `fleet`); the breaker stays open until their OPEN ends.
    FleetOpen,
    /// To FORCED_OPEN: [`Breaker::force_open`](crate::Breaker::force_open).
    Forced,
    /// To DISABLED: [`Breaker::disable`](crate::Breaker::disable).
    Disabled,
    /// To CLOSED: [`Breaker::reset`](crate::Breaker::reset).
    Reset,
    /// A new configuration ([`Breaker::reconfigure`](crate::Breaker::reconfigure)) changed
    /// the state: a lower threshold that the window already reached opened a CLOSED
    /// breaker, or a lower `successes` that the probes already reached ended a trial.
    Reconfigured,
}

variant_names! {
    /// Every reason, in declaration order.
    ///
    /// ```
    /// use breakerbox::events::TransitionReason;
    ///
    /// assert_eq!(TransitionReason::ALL[0], TransitionReason::FailureRate);
    /// assert!(TransitionReason::ALL.contains(&TransitionReason::FleetOpen));
    /// ```
    all;
    /// The name used in logs and metrics, e.g. `"probe_timed_out"`.
    as_str;
    TransitionReason {
        FailureRate => "failure_rate",
        SlowCallRate => "slow_call_rate",
        OpenElapsed => "open_elapsed",
        ProbeFailed => "probe_failed",
        ProbeTimedOut => "probe_timed_out",
        TrialPassed => "trial_passed",
        RampCompleted => "ramp_completed",
        Pushback => "pushback",
        ManualOpen => "manual_open",
        FleetOpen => "fleet_open",
        Forced => "forced",
        Disabled => "disabled",
        Reset => "reset",
        Reconfigured => "reconfigured",
    }
}

impl TransitionReason {
    /// Whether an OPEN entered for this reason lasts as long as it was asked to, not as the
    /// recovery's open duration says: a new configuration leaves its length alone.
    pub(crate) const fn chooses_its_period(self) -> bool {
        matches!(
            self,
            TransitionReason::Pushback | TransitionReason::ManualOpen | TransitionReason::FleetOpen
        )
    }
}

impl fmt::Display for TransitionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
