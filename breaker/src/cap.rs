//! A keyed family's count of its members out of the pool, against `max_open_percent`.
//!
//! Every member of a family holds a [`Seat`] on the family's one [`OpenCount`]. A member
//! takes a place in the count as it leaves CLOSED or DISABLED for OPEN, HALF_OPEN or
//! FORCED_OPEN, and gives it back as it enters CLOSED or DISABLED, as it leaves the family
//! (removed, evicted) and as it is dropped: the place is the seat's, never lost with it.
//!
//! A trip of the member's own judgement (a window's failure or slow-call rate, a new
//! configuration's threshold) asks for a place: a compare-and-swap on the count, made under
//! the member's lock before the trip is published, which two members tripping at once cannot
//! both pass (the loom model `breaker/tests/loom_open_cap.rs`). Refused, the member stays
//! CLOSED. Every other way out of the pool (pushback, the fleet, an operator) takes its place
//! whatever the count. A member keeps its place through HALF_OPEN and the ramp: a failed probe
//! reopens a member known to be sick, and is never refused.
//!
//! The count is kept whether the family has a cap or not, so that a cap set by an override
//! judges the members out of the pool already.

use std::sync::Arc;

use crate::events::TransitionReason;
use crate::sync::{AtomicU32, AtomicU64, Ordering};
use crate::State;

/// A family's members out of the pool, the family's size, and the trips its cap refused.
#[derive(Debug, Default)]
pub(crate) struct OpenCount {
    open: AtomicU32,
    members: AtomicU32,
    refused: AtomicU64,
}

/// A trip the cap refused: its reason, the members out of the pool and the most allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) reason: TransitionReason,
    pub(crate) open: u32,
    pub(crate) limit: u32,
}

impl OpenCount {
    /// The most members of `members` out of the pool at once under `percent`: ⌊members ×
    /// percent / 100⌋, but never fewer than one; all of them without a cap.
    pub(crate) fn limit(members: u32, percent: Option<u32>) -> u32 {
        match percent {
            Some(percent) => {
                let share = u64::from(members) * u64::from(percent) / 100;
                u32::try_from(share).unwrap_or(u32::MAX).max(1)
            }
            None => u32::MAX,
        }
    }

    /// Told by the family under its write lock, as members join and leave.
    pub(crate) fn set_members(&self, members: usize) {
        let members = u32::try_from(members).unwrap_or(u32::MAX);
        self.members.store(members, Ordering::Relaxed);
    }

    /// Members out of the pool now.
    #[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
    pub(crate) fn open(&self) -> u32 {
        self.open.load(Ordering::Relaxed)
    }

    /// Trips refused so far.
    #[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
    pub(crate) fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Takes a place if fewer than the limit are taken. The count is one word, and every
    /// change of it a read-modify-write, so of two members racing for the last place, one
    /// swap fails and finds the count at the limit.
    fn try_take(&self, percent: Option<u32>, reason: TransitionReason) -> Result<(), Refusal> {
        let limit = Self::limit(self.members.load(Ordering::Relaxed), percent);
        let mut open = self.open.load(Ordering::Relaxed);
        loop {
            if open >= limit {
                return Err(Refusal {
                    reason,
                    open,
                    limit,
                });
            }
            match self.open.compare_exchange_weak(
                open,
                open + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(()),
                Err(seen) => open = seen,
            }
        }
    }
}

/// A member's seat on its family's count: whether it holds a place.
#[derive(Debug)]
pub(crate) struct Seat {
    count: Arc<OpenCount>,
    holds: bool,
}

/// Whether a state is out of the pool: it holds a place in the count.
fn out_of_pool(state: State) -> bool {
    matches!(state, State::Open | State::HalfOpen | State::ForcedOpen)
}

/// Whether a change for `reason` is the breaker's own judgement, which the cap may refuse.
fn refusable(reason: TransitionReason) -> bool {
    matches!(
        reason,
        TransitionReason::FailureRate
            | TransitionReason::SlowCallRate
            | TransitionReason::Reconfigured
    )
}

impl Seat {
    /// A seat on `count` for a member in `state`, taking its place if it is out of the pool.
    pub(crate) fn new(count: Arc<OpenCount>, state: State) -> Self {
        let holds = out_of_pool(state);
        if holds {
            count.open.fetch_add(1, Ordering::Relaxed);
        }
        Self { count, holds }
    }

    /// Called under the member's lock before it moves to `to` for `reason`: takes the
    /// member's place if it leaves the pool, or refuses the trip that would pass the cap of
    /// `percent`.
    pub(crate) fn enter(
        &mut self,
        to: State,
        reason: TransitionReason,
        percent: Option<u32>,
    ) -> Result<(), Refusal> {
        if self.holds || !out_of_pool(to) {
            return Ok(());
        }
        if refusable(reason) {
            self.count.try_take(percent, reason)?;
        } else {
            self.count.open.fetch_add(1, Ordering::Relaxed);
        }
        self.holds = true;
        Ok(())
    }

    /// Called under the member's lock once it is in `state`: gives its place back if it is
    /// back in the pool.
    pub(crate) fn entered(&mut self, state: State) {
        if self.holds && !out_of_pool(state) {
            self.give_back();
        }
    }

    /// Counts a refused trip: once an operation, as its event is told once.
    pub(crate) fn count_refusal(&self) {
        self.count.refused.fetch_add(1, Ordering::Relaxed);
    }

    fn give_back(&mut self) {
        self.holds = false;
        self.count.open.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        if self.holds {
            self.give_back();
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_limit_rounds_down_but_never_below_one() {
        let limits: Vec<u32> = [1, 2, 3, 10]
            .iter()
            .flat_map(|&n| [10, 50, 100].map(|p| OpenCount::limit(n, Some(p))))
            .collect();
        assert_eq!(limits, [1, 1, 1, 1, 1, 2, 1, 1, 3, 1, 5, 10]);
        assert_eq!(OpenCount::limit(0, Some(50)), 1);
        assert_eq!(OpenCount::limit(7, None), u32::MAX);
    }

    #[test]
    fn a_seat_holds_one_place_from_its_trip_to_its_close_or_its_drop() {
        let count = Arc::new(OpenCount::default());
        count.set_members(2);
        let mut a = Seat::new(count.clone(), State::Closed);
        let mut b = Seat::new(count.clone(), State::Closed);
        let trip = TransitionReason::FailureRate;
        assert_eq!(a.enter(State::Open, trip, Some(50)), Ok(()));
        assert_eq!(
            a.enter(State::HalfOpen, TransitionReason::OpenElapsed, Some(50)),
            Ok(())
        );
        let refusal = Refusal {
            reason: trip,
            open: 1,
            limit: 1,
        };
        assert_eq!(b.enter(State::Open, trip, Some(50)), Err(refusal));
        b.count_refusal();
        // An operator's open is never refused, and counts.
        assert_eq!(
            b.enter(State::ForcedOpen, TransitionReason::Forced, Some(50)),
            Ok(())
        );
        assert_eq!((count.open(), count.refused()), (2, 1));
        a.entered(State::Closed);
        drop(b);
        assert_eq!(count.open(), 0);
    }
}
