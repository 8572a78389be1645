//! Admission: which path a call takes to its permit or its rejection, by the admission word.
//!
//! `Breaker::try_acquire` admits the untimed, unlimited CLOSED inline; every other word comes
//! here, out of line: the unlimited OPEN first (rejected on the clock, without the lock),
//! then a bulkhead slot (`bulkhead.rs`), a timed CLOSED or DISABLED (without the lock), and
//! the rest under the lock, decided by the machine. `docs/design.md` shows the whole flow.

use std::time::Instant;

use super::tally::{Ending, RareEnding};
use crate::clock::{ClockSource, LazyNow};
use crate::machine::Admission;
use crate::rejected::retry_nanos;
use crate::{Breaker, Permit, RejectReason, Rejected, State};

use super::word::{Stamp, Word};
use super::Flag;

/// Whether a permit of this stamp and admission was admitted by a shadow breaker where an
/// enforcing one would have rejected the call (see [`Breaker::admit_shadow`]): a passthrough
/// stamped OPEN, which no other admission is.
pub(crate) fn shadowed(stamp: Stamp, admission: Admission) -> bool {
    admission == Admission::Passthrough && stamp.is_shadowed()
}

/// What admission off the fast path decided: the parts of a [`Permit`] or a [`Rejected`].
pub(super) enum Ticket {
    Admit {
        /// The permit's generation as `Permit` carries it.
        stamp: Stamp,
        admission: Admission,
        started: Option<Instant>,
    },
    /// Already counted in the totals. `detail`: the limit of a bulkhead rejection; for
    /// others the time left in nanoseconds, `retry_nanos(None)` for none.
    Reject { reason: RejectReason, detail: u64 },
}

impl Breaker {
    /// Admission, the engine's first door: the untimed, unlimited CLOSED admits with one
    /// load, inline; every other word goes out of line.
    #[inline(always)]
    pub(crate) fn admit(&self) -> Result<Permit<'_>, Rejected> {
        let word = self.shared().word();
        if word.is_plain_closed() {
            return Ok(self.admit_closed(word));
        }
        self.permit_or_rejected(self.admit_by_state(word))
    }

    /// Admits a call in the untimed CLOSED: the word is the stamp of its generation, and the
    /// permit carries it as it is.
    #[inline(always)]
    pub(super) fn admit_closed(&self, word: Word) -> Permit<'_> {
        Permit::new(self, Stamp::of_word(word), Admission::Counted, None)
    }

    /// Makes the caller's permit or rejection from what a path off the untimed CLOSED one
    /// decided. Those paths return a [`Ticket`], not the `Result`: a `Result` written by a
    /// function out of line lives in memory, and the caller's fast path would then write
    /// its permit to the stack and read it back too.
    #[inline(always)]
    pub(super) fn permit_or_rejected(&self, ticket: Ticket) -> Result<Permit<'_>, Rejected> {
        match ticket {
            Ticket::Admit {
                stamp,
                admission,
                started,
            } => Ok(Permit::new(self, stamp, admission, started)),
            Ticket::Reject { reason, detail } => Err(Rejected::after_nanos(
                self.identity().rejected_name().clone(),
                reason,
                detail,
            )),
        }
    }

    /// Admission for every word but the untimed, unlimited CLOSED's, out of line so that
    /// callers inline only that. The unlimited OPEN first: rejecting it is the other path a
    /// caller takes often, and a function of its own keeps it small enough to inline what it
    /// calls.
    #[inline(never)]
    pub(super) fn admit_by_state(&self, word: Word) -> Ticket {
        if word.is_unlimited_open() {
            return self.reject_open::<false>(word);
        }
        self.admit_timed_or_locked(word)
    }

    /// A timed CLOSED and DISABLED admit without the lock; HALF_OPEN and FORCED_OPEN decide
    /// under it; a limited word takes a bulkhead slot first (`bulkhead.rs`).
    #[inline(never)]
    fn admit_timed_or_locked(&self, word: Word) -> Ticket {
        if word.is_limited() {
            return self.admit_limited(word);
        }
        // Timed, if CLOSED: the untimed CLOSED was admitted in `try_acquire`.
        self.admit_in_state(word, true)
    }

    /// Admission by any word but OPEN's, taking no slot: CLOSED (timed for sure if
    /// `closed_is_timed`, else as the word says) and DISABLED admit without the lock; the
    /// rest decide under it.
    #[inline(always)]
    pub(super) fn admit_in_state(&self, word: Word, closed_is_timed: bool) -> Ticket {
        match word.state() {
            State::Closed => {
                let timed = closed_is_timed || word.is_timed();
                // A throttled CLOSED is timed: an untimed one never reads the flag.
                if timed && self.shared().flag(Flag::Throttle) {
                    return self.admit_throttled(word);
                }
                Ticket::Admit {
                    // The word as read, but for `TIMED`: a timed call's result is recorded
                    // with its latency, never by the one swap that compares the two.
                    stamp: Stamp::untimed(word),
                    admission: Admission::Counted,
                    started: timed.then(|| self.clock().now()),
                }
            }
            State::Disabled => Ticket::Admit {
                stamp: Stamp::of(word.generation()),
                admission: Admission::Passthrough,
                started: self.shared().observed().then(|| self.clock().now()),
            },
            _ => self.admit_locked(),
        }
    }

    /// Admission in a throttled CLOSED (`throttle.rs`): a call the throttle refuses is
    /// rejected as [`RejectReason::Shed`], counted and told as any rejection, and never
    /// enters the window; a shadow admits it instead, counted as a shadow rejection.
    #[cold]
    #[inline(never)]
    fn admit_throttled(&self, word: Word) -> Ticket {
        let now = self.clock().now();
        let refused = self.rare().is_some_and(|rare| {
            rare.throttle
                .refuses(word.generation(), self.clock().ticks_of(now))
        });
        if !refused {
            return Ticket::Admit {
                stamp: Stamp::untimed(word),
                admission: Admission::Counted,
                started: Some(now),
            };
        }
        if self.shared().flag(Flag::Shadow) {
            return self.admit_shadow(word.generation());
        }
        self.shared().count_rejection(RejectReason::Shed);
        self.observe_rejection(RejectReason::Shed);
        Ticket::Reject {
            reason: RejectReason::Shed,
            detail: retry_nanos(None),
        }
    }

    /// Rejects in OPEN without the lock while the clock is inside the open period read with
    /// `word`; anything else (expiry, a clock before the period) goes to the lock.
    ///
    /// The period is stored before the word that publishes it; reading the word again after
    /// the period proves the two belong together: a period of a later OPEN is stored after
    /// a word of another state was published, so the second read would differ.
    ///
    /// (A reconfiguration in OPEN may store a new period under the same word; a reader may
    /// then mix the two, which are both periods of this OPEN. Each path decides and counts
    /// the time left from one `until`, so the time left it tells is never negative.)
    ///
    /// The production clock rejects on the coarse clock while it is sure of the period (see
    /// `clock::CoarsePeriod`), and reads the precise one only near the period's end. The
    /// time left it tells is then never less than the precise one (a coarse reading is never
    /// ahead), and at most one coarse tick and a millisecond more.
    ///
    /// `SLOT`: whether a call let through takes a bulkhead slot first.
    #[inline(always)]
    pub(super) fn reject_open<const SLOT: bool>(&self, word: Word) -> Ticket {
        let (until, from) = self.shared().coarse_period();
        if let Some(left) = ClockSource::coarse_left(from, until) {
            if self.shared().word() == word {
                return self.count_open_rejection(left);
            }
        }
        self.reject_open_precise::<SLOT>(word)
    }

    /// OPEN without a coarse period, or near its end: on the breaker's own clock.
    #[inline(never)]
    fn reject_open_precise<const SLOT: bool>(&self, word: Word) -> Ticket {
        // The clock first: fewer values live across its call.
        let Some(now) = self.clock().ticks() else {
            return self.past_open::<SLOT>();
        };
        let (from, until) = self.shared().open_period();
        if !(from <= now && now < until && self.shared().word() == word) {
            return self.past_open::<SLOT>();
        }
        self.count_open_rejection(until - now)
    }

    /// An OPEN whose period may have ended: the lock decides, after a bulkhead slot is taken
    /// if `SLOT`.
    #[inline(always)]
    fn past_open<const SLOT: bool>(&self) -> Ticket {
        if SLOT {
            self.in_new_slot(|| self.admit_locked())
        } else {
            self.admit_locked()
        }
    }

    /// Counts a rejection in OPEN with `left` nanoseconds to go, and tells it; a shadow
    /// breaker admits instead, and an observed rejection is told to its observers.
    #[inline(always)]
    fn count_open_rejection(&self, left: u64) -> Ticket {
        let Some(reason) = self.shared().plain_open_rejection() else {
            return self.open_rejection_seen(left);
        };
        match reason {
            RejectReason::Open => self.shared().count(Ending::RejectedOpen),
            other => self.shared().count_rejection(other),
        }
        Ticket::Reject {
            reason,
            detail: left,
        }
    }

    /// [`count_open_rejection`](Self::count_open_rejection) of a shadow breaker, or of one
    /// whose calls are observed.
    #[cold]
    #[inline(never)]
    fn open_rejection_seen(&self, left: u64) -> Ticket {
        if self.shared().flag(Flag::Shadow) {
            return self.admit_shadow(self.shared().word().generation());
        }
        let reason = self.shared().open_rejects();
        self.shared().count_rejection(reason);
        self.observe_rejection(reason);
        Ticket::Reject {
            reason,
            detail: left,
        }
    }

    /// Admission decided by the machine, under the lock: HALF_OPEN's probes and ramp, an
    /// OPEN that expired (or a clock that cannot tell), FORCED_OPEN.
    #[cold]
    fn admit_locked(&self) -> Ticket {
        let mut now = LazyNow::new(self.clock());
        let ((admitted, generation, timed, shadow), events) = self.shared().transition(|m| {
            let admitted = m.acquire(&mut now);
            (
                admitted,
                m.generation(),
                m.times_calls(),
                m.config().shadow(),
            )
        });
        self.emit(events);
        match admitted {
            Ok(admission) => {
                let probe = admission == Admission::Probe;
                Ticket::Admit {
                    // A timed probe says so in its stamp, which no admission word equals (a
                    // probe's result never takes the one swap): its start is noted untimed
                    // too, for `probe_timeout`.
                    stamp: if probe && timed {
                        Stamp::of(generation).timed_probe()
                    } else {
                        Stamp::of(generation)
                    },
                    admission,
                    // When calls are timed (slow calls, latency guard, a recording), the time
                    // a call starts; a probe's always (the instant the machine noted).
                    started: (timed || probe || self.shared().observed()).then(|| now.get()),
                }
            }
            Err(_) if shadow => self.admit_shadow(generation),
            Err((reason, retry_after)) => {
                self.shared().count_rejection(reason);
                self.observe_rejection(reason);
                Ticket::Reject {
                    reason,
                    detail: retry_nanos(retry_after),
                }
            }
        }
    }

    /// Admits, as a shadow breaker does, a call the breaker rejected in `generation`:
    /// counted as a shadow rejection, and its result recorded nowhere but the totals, so that
    /// the machine moves exactly as an enforcing breaker's would.
    ///
    /// Its stamp carries OPEN's code whatever the state: the one swap into the packed window
    /// takes a result whose stamp equals the admission word, and a word with OPEN's code has
    /// its window sealed, so the result goes to the lock, which drops a passthrough's. (A
    /// bulkhead's rejection comes in CLOSED, whose word a plain stamp could equal once the
    /// limit is gone.)
    #[cold]
    pub(super) fn admit_shadow(&self, generation: u64) -> Ticket {
        self.shared().count_rare(RareEnding::ShadowRejected);
        self.shadow_ticket(generation)
    }

    /// [`admit_shadow`](Self::admit_shadow)'s ticket, for a shadow rejection counted already.
    pub(super) fn shadow_ticket(&self, generation: u64) -> Ticket {
        Ticket::Admit {
            stamp: Stamp::of(generation).shadowed(),
            admission: Admission::Passthrough,
            // The call runs: observers are told its real outcome.
            started: self.shared().observed().then(|| self.clock().now()),
        }
    }
}
