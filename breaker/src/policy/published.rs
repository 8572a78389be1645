//! The call policy as each call reads it: the current configuration's [`Policy`] published
//! into three words when the configuration changes, and the retry budget, made on the first
//! call that may retry.

use std::time::Duration;

// std's, not the model checker's: made with every breaker, and not among the paths the
// loom models check.
use crate::{config::Policy, snapshot::CallTotals};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use super::budget::{Limit, RetryBudget, PPB};

/// What a call reads of its breaker's policy. Durations stay in nanoseconds until needed:
/// a call that never waits never divides them into a `Duration`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The timeout in nanoseconds, 0 for none.
    pub(crate) timeout: u64,
    pub(crate) retries: u32,
    backoff: u64,
    backoff_max: u64,
    /// The delay before a hedged attempt, in nanoseconds; 0 for no hedging.
    pub(crate) hedge: u64,
    /// Extra attempts a hedged call may start.
    pub(crate) hedges: u32,
}

impl Plan {
    /// No timeout, no retries: the plan of a breaker whose configurations never set either.
    pub(crate) const NONE: Plan = Plan {
        timeout: 0,
        retries: 0,
        backoff: 0,
        backoff_max: 0,
        hedge: 0,
        hedges: 0,
    };

    /// The base delay before a retry.
    pub(crate) fn backoff(&self) -> Duration {
        Duration::from_nanos(self.backoff)
    }

    /// The longest delay before a retry.
    pub(crate) fn backoff_max(&self) -> Duration {
        Duration::from_nanos(self.backoff_max)
    }
}

/// A breaker's published policy and retry budget (a field of the breaker's `Identity`).
///
/// The words are written only while the breaker's lock is held, when a configuration takes
/// effect. A call racing with a reconfiguration may read some words of each policy: every
/// field is checked on its own, so any mix is a valid policy, and every call that starts
/// after `reconfigure` returns reads the new one.
pub(crate) struct PolicyState {
    /// The timeout in nanoseconds; 0 for none (a timeout is never zero).
    timeout: AtomicU64,
    /// `backoff nanoseconds << RETRIES_BITS | retries`.
    retries: AtomicU64,
    /// The longest delay before a retry, in nanoseconds (saturated).
    backoff_max: AtomicU64,
    /// `budget in parts per billion << 32 | floor`.
    budget: AtomicU64,
    /// `hedge delay nanoseconds << RETRIES_BITS | hedges`; 0 for no hedging.
    hedge: AtomicU64,
    /// Made by the first call that may retry: a breaker that never retries holds no buckets.
    state: OnceLock<Box<RetryBudget>>,
}

/// Retries are at most [`MAX_RETRIES`](crate::config::MAX_RETRIES), 10.
const RETRIES_BITS: u32 = 8;
const RETRIES_MASK: u64 = (1 << RETRIES_BITS) - 1;

impl Default for PolicyState {
    fn default() -> Self {
        Self::new()
    }
}

impl PolicyState {
    pub(crate) fn new() -> Self {
        Self {
            timeout: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            backoff_max: AtomicU64::new(0),
            budget: AtomicU64::new(0),
            hedge: AtomicU64::new(0),
            state: OnceLock::new(),
        }
    }

    /// Publishes `policy`, taking effect from the next call. Out of line: the lock's paths
    /// publish a configuration rarely.
    #[cold]
    pub(crate) fn publish(&self, policy: &Policy) {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let timeout = policy.timeout().map_or(0, nanos);
        // The backoff is at most 60 s: 36 bits of nanoseconds.
        let retries = nanos(policy.retry_backoff()) << RETRIES_BITS | u64::from(policy.retries());
        // In [0, 1] by the configuration's rules: at most 1e9, 30 bits.
        let ppb = (policy.retry_budget() * PPB as f64).round() as u64;
        let budget = ppb << 32 | u64::from(policy.retry_floor());
        self.timeout.store(timeout, Ordering::Release);
        self.retries.store(retries, Ordering::Release);
        self.backoff_max
            .store(nanos(policy.retry_backoff_max()), Ordering::Release);
        self.budget.store(budget, Ordering::Release);
        // The delay is at most 60 s, and the hedges at most 5.
        let hedge = policy
            .hedge()
            .map_or(0, |d| nanos(d) << RETRIES_BITS | u64::from(policy.hedges()));
        self.hedge.store(hedge, Ordering::Release);
    }

    /// The policy a call starts under.
    #[inline]
    pub(crate) fn plan(&self) -> Plan {
        let timeout = self.timeout.load(Ordering::Acquire);
        let retries = self.retries.load(Ordering::Acquire);
        let hedge = self.hedge.load(Ordering::Acquire);
        Plan {
            timeout,
            retries: (retries & RETRIES_MASK) as u32,
            backoff: retries >> RETRIES_BITS,
            backoff_max: self.backoff_max.load(Ordering::Acquire),
            hedge: hedge >> RETRIES_BITS,
            hedges: (hedge & RETRIES_MASK) as u32,
        }
    }

    /// How many retries the budget allows, as currently configured.
    pub(crate) fn limit(&self) -> Limit {
        let budget = self.budget.load(Ordering::Acquire);
        Limit {
            ppb: budget >> 32,
            floor: budget & u64::from(u32::MAX),
        }
    }

    /// The retry budget, made on first use.
    pub(crate) fn budget(&self) -> &RetryBudget {
        self.state.get_or_init(|| Box::new(RetryBudget::new()))
    }

    /// Whether a call made the budget.
    #[cfg(test)]
    pub(crate) fn budget_made(&self) -> bool {
        self.state.get().is_some()
    }

    /// `totals` with the retries made and the budget's refusals since the breaker was made.
    pub(crate) fn add_totals(&self, totals: CallTotals) -> CallTotals {
        let (retries, retry_budget_exhausted) = self.state.get().map_or((0, 0), |b| b.totals());
        CallTotals {
            retries,
            retry_budget_exhausted,
            ..totals
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    #[test]
    fn a_published_policy_reads_back_whole() {
        let config = Config::builder()
            .timeout(Duration::from_millis(800))
            .retries(10)
            .retry_backoff(Duration::from_secs(60))
            .retry_budget(0.3)
            .retry_floor(u32::MAX)
            .build()
            .unwrap();
        let state = PolicyState::new();
        state.publish(&config.policy());
        let plan = state.plan();
        assert_eq!(plan.timeout, 800_000_000);
        assert_eq!(plan.retries, 10);
        assert_eq!(plan.backoff(), Duration::from_secs(60));
        assert_eq!(plan.backoff_max(), Duration::from_secs(60));
        assert_eq!(
            state.limit(),
            Limit {
                ppb: 300_000_000,
                floor: u64::from(u32::MAX)
            }
        );
        state.publish(&Config::default().policy());
        assert_eq!(state.plan().timeout, 0);
        assert_eq!(state.plan().retries, 0);
        assert_eq!(state.limit().ppb, 200_000_000);
    }
}
