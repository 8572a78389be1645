//! The bulkhead: at most `max_concurrent` calls of a breaker in flight, the next rejected at
//! once (no queue). A count of the calls holding a slot, beside the packed window; the limit
//! is published with the configuration, and the admission word's `LIMITED` bit sends every
//! call of a limited breaker here, off the one-load path of the unlimited CLOSED.
//!
//! A slot is taken before the state is asked, and freed when the state rejects. A permit
//! that holds one says so in its stamp (`IN_SLOT`), which no admission word equals: its
//! result always leaves `complete`'s inline path, and frees the slot on the path out of line
//! (`complete.rs`), however the permit ends. So the unlimited paths carry no test of a slot.
//! A count, not a set: a reconfiguration that changes or removes the limit leaves the calls
//! already in flight counted until they end, and the new limit applies to the calls after it.
//!
//! The one inline path that does not compare the stamp, a success into a full window of
//! successes, is never published while a slot may be held (`Shared::publish`). A limit
//! removed while calls take slots is the race: `publish` stores the limit, then swaps the
//! count (a swap that changes nothing); a call swaps the count, then reads the limit. Swaps
//! of one word are in one order, each reading the one before with acquire and release: if
//! the call's comes first, `publish` sees its slot; if `publish`'s does, the call sees the
//! limit gone and gives its slot back. A holder's reading of the full window comes before
//! its swap that frees the slot, so before any `publish` that sees the slot freed, or the
//! one the last holder makes after a limit was removed (`free_slot`).

use std::fmt;

use super::tally::RareEnding;
use crate::machine::Admission;
use crate::sync::Ordering;
use crate::{Breaker, Permit, RejectReason, Rejected};

use super::admit::Ticket;
use super::word::{Stamp, Word};
use super::Flag;

/// A bulkhead slot held for a whole call: its attempts ask the breaker with
/// [`Breaker::try_acquire_in_slot`], which takes no slot of its own. Freed when dropped,
/// also while unwinding from a panic.
#[must_use = "a slot is freed as soon as it is dropped"]
#[allow(dead_code)] // for the call policy, which holds one slot across its attempts
pub(crate) struct Slot<'a> {
    breaker: &'a Breaker,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.breaker.free_slot();
    }
}

impl fmt::Debug for Slot<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slot")
            .field("breaker", &self.breaker.name())
            .finish()
    }
}

/// What a call of the call policy holds for all its attempts.
#[allow(dead_code)] // for the call policy
#[derive(Debug)]
pub(crate) enum CallSlot<'a> {
    /// No bulkhead: nothing to hold.
    Unlimited,
    /// A slot, freed when dropped.
    Held(Slot<'a>),
    /// A shadow breaker's full bulkhead: an enforcing one would have rejected the call. It
    /// holds no slot, and its attempt is admitted as a shadow rejection (counted once, by
    /// [`Breaker::bulkhead_slot`]), whose result the window never sees.
    Shadowed,
}

impl CallSlot<'_> {
    /// Admission for an attempt of the call holding this.
    // Held across a call's attempts by the call policy.
    #[cfg_attr(not(feature = "policy"), allow(dead_code))]
    #[inline]
    pub(crate) fn admit<'b>(&self, breaker: &'b Breaker) -> Result<Permit<'b>, Rejected> {
        match self {
            CallSlot::Shadowed => {
                let ticket = breaker.shadow_ticket(breaker.shared().word().generation());
                breaker.permit_or_rejected(ticket)
            }
            CallSlot::Unlimited | CallSlot::Held(_) => breaker.try_acquire_in_slot(),
        }
    }
}

/// What asking the bulkhead for a slot gave.
enum Taken {
    /// No bulkhead: nothing to take.
    Unlimited,
    /// A slot, to free when the call ends.
    Slot,
    /// Every slot is held; the limit.
    Full(u32),
}

impl Breaker {
    /// A bulkhead slot for a whole call, held until the [`CallSlot`] is dropped. A full
    /// bulkhead rejects, counted as any rejection; a shadow breaker's lets the call go on as
    /// a shadow rejection, without a slot, and its attempt is admitted as one.
    // Held across a call's attempts by the call policy.
    #[cfg_attr(not(feature = "policy"), allow(dead_code))]
    pub(crate) fn bulkhead_slot(&self) -> Result<CallSlot<'_>, Rejected> {
        match self.take_slot() {
            Taken::Unlimited => Ok(CallSlot::Unlimited),
            Taken::Slot => Ok(CallSlot::Held(Slot { breaker: self })),
            Taken::Full(_) if self.shared().flag(Flag::Shadow) => {
                self.shared().count_rare(RareEnding::ShadowRejected);
                Ok(CallSlot::Shadowed)
            }
            Taken::Full(limit) => Err(self.bulkhead_rejection(limit)),
        }
    }

    /// Admission for a call that holds a bulkhead slot already (see
    /// [`bulkhead_slot`](Self::bulkhead_slot)), or whose breaker has none: the state decides,
    /// as in [`try_acquire`](Self::try_acquire), and the permit takes no slot.
    #[inline]
    // Held across a call's attempts by the call policy.
    #[cfg_attr(not(feature = "policy"), allow(dead_code))]
    pub(crate) fn try_acquire_in_slot(&self) -> Result<Permit<'_>, Rejected> {
        let word = self.shared().word();
        if word.is_untimed_closed() {
            // The word as read: the permit's result may then take the one swap.
            return Ok(Permit::new(
                self,
                Stamp::of_word(word),
                Admission::Counted,
                None,
            ));
        }
        self.permit_or_rejected(self.admit_in_slot(word))
    }

    #[inline(never)]
    // Held across a call's attempts by the call policy.
    #[cfg_attr(not(feature = "policy"), allow(dead_code))]
    fn admit_in_slot(&self, word: Word) -> Ticket {
        if word.is_open() {
            return self.reject_open::<false>(word);
        }
        self.admit_in_state(word, false)
    }

    /// Admission for a word with the `LIMITED` bit: the bulkhead first, then the state. In
    /// OPEN a look at the count is enough: a rejection takes no slot, and a call let
    /// through when the period ends takes one then.
    #[inline(never)]
    pub(super) fn admit_limited(&self, word: Word) -> Ticket {
        if word.is_open() {
            let limit = self.shared().max_concurrent();
            if limit != 0 && self.in_flight() >= limit {
                return self.reject_bulkhead(limit);
            }
            return self.reject_open::<true>(word);
        }
        self.in_new_slot(|| self.admit_in_state(word, false))
    }

    /// Takes a slot, then lets `admit` decide: its permit holds the slot (its stamp marked
    /// `IN_SLOT`), its rejection frees it. A full bulkhead rejects without asking `admit`.
    #[inline(always)]
    pub(super) fn in_new_slot(&self, admit: impl FnOnce() -> Ticket) -> Ticket {
        match self.take_slot() {
            Taken::Full(limit) => self.reject_bulkhead(limit),
            // The limit was removed since the word was read.
            Taken::Unlimited => admit(),
            Taken::Slot => match admit() {
                // A shadow's admission of a call the state rejects holds no slot, as the
                // rejection it stands for would not (see `admit_shadow`).
                Ticket::Admit {
                    stamp,
                    admission,
                    started,
                } if !super::shadowed(stamp, admission) => Ticket::Admit {
                    stamp: stamp.in_slot(),
                    admission,
                    started,
                },
                rejected_or_shadowed => {
                    self.free_slot();
                    rejected_or_shadowed
                }
            },
        }
    }

    /// Takes a slot if the count is below the limit. The count never exceeds the limit it
    /// was taken under: it only grows by a compare-and-swap from below it.
    ///
    /// A slot taken as the limit is removed is given back (see the module's notes).
    fn take_slot(&self) -> Taken {
        let limit = self.shared().max_concurrent();
        if limit == 0 {
            return Taken::Unlimited;
        }
        let count = self.shared().in_flight();
        let mut held = count.load(Ordering::Relaxed);
        loop {
            if held >= limit {
                return Taken::Full(limit);
            }
            match count.compare_exchange_weak(held, held + 1, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => held = now,
            }
        }
        if self.shared().limit_after_swap() == 0 {
            self.free_slot();
            return Taken::Unlimited;
        }
        Taken::Slot
    }

    /// Frees a slot taken by [`take_slot`](Self::take_slot). The last slot held under a
    /// limit removed since publishes the breaker again, so that a success into a full window
    /// is settled inline again.
    #[inline(never)]
    pub(crate) fn free_slot(&self) {
        let held = self.shared().in_flight().fetch_sub(1, Ordering::AcqRel);
        if held == 1 && self.shared().limit_after_swap() == 0 {
            self.publish_again();
        }
    }

    #[cold]
    fn publish_again(&self) {
        let ((), events) = self.shared().transition(|_| ());
        self.emit(events);
    }

    /// Counts a rejection by a full bulkhead of `limit` slots, and tells it.
    #[cold]
    fn reject_bulkhead(&self, limit: u32) -> Ticket {
        if self.shared().flag(Flag::Shadow) {
            return self.admit_shadow(self.shared().word().generation());
        }
        self.shared().count_rare(RareEnding::RejectedBulkhead);
        self.observe_rejection(RejectReason::Bulkhead);
        Ticket::Reject {
            reason: RejectReason::Bulkhead,
            detail: u64::from(limit),
        }
    }

    /// [`reject_bulkhead`](Self::reject_bulkhead), told to the caller.
    // Held across a call's attempts by the call policy.
    #[cfg_attr(not(feature = "policy"), allow(dead_code))]
    fn bulkhead_rejection(&self, limit: u32) -> Rejected {
        self.shared().count_rare(RareEnding::RejectedBulkhead);
        self.observe_rejection(RejectReason::Bulkhead);
        let name = self.identity().rejected_name().clone();
        Rejected::after_nanos(name, RejectReason::Bulkhead, u64::from(limit))
    }
}

#[cfg(test)]
mod tests {
    use std::panic::{self, AssertUnwindSafe};

    use crate::{Breaker, Config, RejectReason, State};

    fn limited(calls: u32) -> Breaker {
        let config = Config::builder()
            .count_window(2)
            .min_calls(2)
            .max_concurrent(calls)
            .build()
            .unwrap();
        Breaker::new("libraryd", config)
    }

    #[test]
    fn a_call_holding_a_slot_admits_its_attempts_without_another() {
        let b = limited(1);
        let slot = b.bulkhead_slot().unwrap();
        assert!(matches!(slot, super::CallSlot::Held(_)), "a bulkhead");
        assert_eq!(b.in_flight(), 1);
        assert_eq!(
            b.try_acquire().unwrap_err().reason(),
            RejectReason::Bulkhead
        );
        for _ in 0..3 {
            b.try_acquire_in_slot().expect("closed").success();
            assert_eq!(b.in_flight(), 1);
        }
        let s = b.snapshot();
        assert_eq!((s.calls, s.totals.success, s.totals.rejected), (2, 3, 1));
        drop(slot);
        assert_eq!(b.in_flight(), 0);
    }

    #[test]
    fn a_full_bulkhead_refuses_a_slot_and_counts_the_rejection() {
        let b = limited(1);
        let _held = b.try_acquire().unwrap();
        let rejected = b.bulkhead_slot().unwrap_err();
        assert_eq!(
            rejected.to_string(),
            "circuit 'libraryd' is at its limit of 1 calls in flight"
        );
        let t = b.snapshot().totals;
        assert_eq!((t.rejected, t.rejected_by.bulkhead), (1, 1));
    }

    #[test]
    fn a_breaker_without_a_bulkhead_has_no_slot_to_give() {
        let b = Breaker::new("libraryd", Config::default());
        assert!(matches!(
            b.bulkhead_slot().unwrap(),
            super::CallSlot::Unlimited
        ));
        b.try_acquire_in_slot().expect("closed").success();
        assert_eq!(b.in_flight(), 0);
    }

    #[test]
    fn attempts_in_a_slot_are_judged_by_the_state() {
        let b = limited(1);
        let slot = b.bulkhead_slot().unwrap();
        assert!(matches!(slot, super::CallSlot::Held(_)), "a bulkhead");
        b.try_acquire_in_slot().unwrap().failure();
        b.try_acquire_in_slot().unwrap().failure();
        assert_eq!(b.state(), State::Open);
        let rejected = b.try_acquire_in_slot().unwrap_err();
        assert_eq!(rejected.reason(), RejectReason::Open);
        b.force_open();
        let rejected = b.try_acquire_in_slot().unwrap_err();
        assert_eq!(rejected.reason(), RejectReason::ForcedOpen);
        assert_eq!(b.in_flight(), 1);
    }

    #[test]
    fn a_slot_is_freed_while_its_call_unwinds() {
        let b = limited(1);
        let unwound = panic::catch_unwind(AssertUnwindSafe(|| {
            let _slot = b.bulkhead_slot();
            assert_eq!(b.in_flight(), 1);
            panic::resume_unwind(Box::new("the call panicked"));
        }));
        assert!(unwound.is_err());
        assert_eq!(b.in_flight(), 0);
    }
}
