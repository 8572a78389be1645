//! Client-side adaptive throttling (the SRE book, "Handling Overload"): in CLOSED, a call is
//! refused with probability `max(0, (requests - K * accepts) / (requests + 1))`, at most
//! `throttle_max`, so that the share refused grows as the downstream's acceptance falls,
//! long before the failure window opens the breaker at its rate.
//!
//! # What `requests` counts
//!
//! The book counts as `requests` every call the client attempted, those it refused itself
//! included. Then a refusal counts as a request that was not accepted, and feeds the
//! probability that made it: after the downstream recovers, the window still holds the
//! refusals made while the failures were expiring, and with `K = 2` the share still refused a
//! window after the recovery is some 0.75 when it started at 0.9; each window after only
//! doubles the share admitted. With `K = 1` the refusals alone keep it above 0 for good
//! (`p = refused / (requests + 1)`), the fault reported in zeromicro/go-zero#5551.
//!
//! Here `requests` are the calls that reached the downstream and answered: a success is an
//! accept, a failure (per `Classify`) is not; a refused call, a call still running, an
//! ignored or a cancelled one are no request. A refusal never feeds its own probability:
//! once the downstream answers every call again, the probability is 0 as soon as the
//! failures left in the window are at most `(K - 1)` times its successes, and 0 for sure one
//! `throttle_window` after the last failure, when they have all expired. A healthy
//! downstream (no failures in the window) is never refused, since `requests - K * accepts`
//! is then `(1 - K) * requests <= 0`. A downstream that answers no call well still sees a
//! share of calls (at least `1 - throttle_max`, and `1 / (requests + 1)`), which tells the
//! throttle when it is back.
//!
//! # The room
//!
//! The counts are a [`TimeWindow`] of 10 buckets (the time window's, a call a mark: its
//! failures are the requests not accepted), and they belong to one CLOSED: a new generation
//! starts them afresh, and a result of another generation is not counted (it would be
//! stale). A breaker with `throttle` set raises the engine's [`Flag::Throttle`] and times its
//! CLOSED calls, so that CLOSED admission leaves its one-load path for this room, and every
//! result of a CLOSED call comes by it; a breaker without it pays nothing.
//!
//! Refusals are deterministic, which tests rely on: an accumulator adds the probability at
//! each call and refuses when it reaches a whole call, so that of `n` calls at probability
//! `p` exactly `⌊p·n⌋` are refused. A whole call is reached within a billionth, so that a
//! `p` that binary fractions cannot write (2/9) still refuses 2 of 9 calls rather than
//! lose one to rounding. It is emptied when the probability is 0.
//!
//! [`Flag::Throttle`]: crate::engine::Flag::Throttle

use crate::config::Throttling;
use crate::sync::Mutex;
use crate::window::{Mark, TimeWindow};

/// How near a whole call the accumulator must come to refuse one: far above the rounding
/// of its sums, far below any share of a call a probability adds.
const WHOLE: f64 = 1.0 - 1e-9;

/// A breaker's throttle: its counts under a lock of their own, never held with the
/// breaker's. Empty while the configuration has no `throttle`.
#[derive(Debug, Default)]
pub(crate) struct Throttle(Mutex<Option<Counts>>);

#[derive(Debug)]
struct Counts {
    settings: Throttling,
    window: TimeWindow,
    /// The generation of the CLOSED the counts belong to.
    generation: Option<u64>,
    /// Refusals owed, in calls.
    owed: f64,
}

impl Throttle {
    /// Follows a new configuration: the counts are kept if the window's span is unchanged.
    pub(crate) fn configure(&self, settings: Option<Throttling>) {
        let mut counts = self.0.lock();
        match (settings, counts.as_mut()) {
            (None, _) => *counts = None,
            (Some(new), Some(kept)) if new.window() == kept.settings.window() => {
                kept.settings = new;
            }
            (Some(new), _) => {
                *counts = Some(Counts {
                    settings: new,
                    window: TimeWindow::new(new.window(), breakerbox_rules::THROTTLE_BUCKETS, 0),
                    generation: None,
                    owed: 0.0,
                });
            }
        }
    }

    /// Whether the call asking at `now` (ticks) in the CLOSED of `generation` is refused.
    pub(crate) fn refuses(&self, generation: u64, now: Option<u64>) -> bool {
        let mut counts = self.0.lock();
        let Some(c) = counts.as_mut() else {
            return false;
        };
        if c.generation != Some(generation) {
            c.window.clear();
            (c.generation, c.owed) = (Some(generation), 0.0);
        }
        let p = c.probability(now);
        if p == 0.0 {
            c.owed = 0.0;
            return false;
        }
        c.owed += p;
        if c.owed < WHOLE {
            return false;
        }
        c.owed -= 1.0;
        true
    }

    /// Counts the answer of a call admitted in the CLOSED of `generation`, at `now` (ticks):
    /// `accepted` for a success. A stale answer is not counted.
    pub(crate) fn record(&self, generation: u64, accepted: bool, now: Option<u64>) {
        let mut counts = self.0.lock();
        if let Some(c) = counts.as_mut().filter(|c| c.generation == Some(generation)) {
            let mark = Mark {
                failure: !accepted,
                slow: false,
            };
            c.window.record(mark, now);
        }
    }

    /// The probability that a call of the CLOSED of `generation` asking at `now` is refused.
    pub(crate) fn probability(&self, generation: u64, now: Option<u64>) -> f64 {
        let mut counts = self.0.lock();
        match counts.as_mut() {
            Some(c) if c.generation == Some(generation) => c.probability(now),
            _ => 0.0,
        }
    }
}

impl Counts {
    /// `max(0, (requests - K * accepts) / (requests + 1))`, at most `throttle_max`.
    ///
    /// Inlined into [`Throttle::refuses`], on every CLOSED admission: with a second caller (the
    /// operators' read, `Breaker::shed_probability`) the compiler would call it instead.
    #[inline]
    fn probability(&mut self, now: Option<u64>) -> f64 {
        let totals = self.window.totals(now);
        let requests = f64::from(totals.calls);
        let accepts = f64::from(totals.calls - totals.failures);
        let p = (requests - self.settings.factor() * accepts) / (requests + 1.0);
        p.clamp(0.0, self.settings.max())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::Config;

    const SECOND: u64 = 1_000_000_000;

    fn throttle(k: f64, max: f64) -> Throttle {
        let config = Config::builder()
            .throttle(k)
            .throttle_max(max)
            .throttle_window(Duration::from_secs(10))
            .build()
            .unwrap();
        let t = Throttle::default();
        t.configure(config.throttling());
        t
    }

    /// Asks once in generation 1 to own the counts, then records `accepts` successes and
    /// `failures` failures at `now`.
    fn answered(t: &Throttle, accepts: u32, failures: u32, now: u64) {
        assert!(!t.refuses(1, Some(now)));
        (0..accepts).for_each(|_| t.record(1, true, Some(now)));
        (0..failures).for_each(|_| t.record(1, false, Some(now)));
    }

    #[test]
    fn the_probability_is_the_books_formula_capped_at_the_max() {
        let t = throttle(2.0, 0.9);
        answered(&t, 2, 5, 0);
        // (7 - 2 * 2) / 8.
        assert_eq!(t.probability(1, Some(0)), 0.375);
        let capped = throttle(1.5, 0.25);
        answered(&capped, 2, 5, 0);
        assert_eq!(capped.probability(1, Some(0)), 0.25);
    }

    #[test]
    fn of_n_calls_exactly_the_floor_of_p_times_n_are_refused() {
        let t = throttle(2.0, 0.9);
        answered(&t, 2, 5, 0);
        let refused = (0..20).filter(|_| t.refuses(1, Some(0))).count();
        assert_eq!(refused, 7); // ⌊0.375 * 20⌋
    }

    #[test]
    fn a_probability_binary_fractions_cannot_write_still_refuses_the_floor() {
        let t = throttle(2.0, 0.9);
        answered(&t, 3, 5, 0);
        assert_eq!(t.probability(1, Some(0)), 2.0 / 9.0);
        let refused: Vec<u32> = (1..=18).filter(|_| t.refuses(1, Some(0))).collect();
        assert_eq!(refused, [5, 9, 14, 18]);
    }

    #[test]
    fn answers_expire_with_their_bucket_and_the_owed_refusals_with_them() {
        let t = throttle(2.0, 0.9);
        answered(&t, 0, 3, 0);
        assert_eq!(t.probability(1, Some(9 * SECOND)), 0.75);
        assert_eq!(t.probability(1, Some(10 * SECOND)), 0.0);
        assert!(!t.refuses(1, Some(10 * SECOND)));
    }

    #[test]
    fn a_new_generation_starts_afresh_and_stale_answers_are_not_counted() {
        let t = throttle(2.0, 0.9);
        answered(&t, 0, 3, 0);
        assert!(!t.refuses(2, Some(0)));
        t.record(1, false, Some(0));
        assert_eq!(t.probability(2, Some(0)), 0.0);
        assert_eq!(t.probability(1, Some(0)), 0.0);
    }

    #[test]
    fn a_new_window_span_starts_afresh_and_a_new_factor_keeps_the_counts() {
        let t = throttle(2.0, 0.9);
        answered(&t, 1, 3, 0);
        assert_eq!(t.probability(1, Some(0)), 0.4);
        let k3 = Config::builder()
            .throttle(3.0)
            .throttle_window(Duration::from_secs(10))
            .build()
            .unwrap();
        t.configure(k3.throttling());
        assert_eq!(t.probability(1, Some(0)), 0.2);
        let longer = Config::builder().throttle(3.0).build().unwrap();
        t.configure(longer.throttling());
        assert_eq!(t.probability(1, Some(0)), 0.0);
        t.configure(None);
        assert!(!t.refuses(1, Some(0)));
    }
}
