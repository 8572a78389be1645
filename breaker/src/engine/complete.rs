//! How a permit's result reaches the breaker: one swap into the packed window (or a time
//! window's lane) when it can, the packed window's whole path when it must, the lock for
//! everything else.

use std::time::{Duration, Instant};

use super::packed::Packed;
use super::tally::{Ending, Seat};
use crate::clock::LazyNow;
use crate::machine::{self, Admission};
use crate::{Breaker, Outcome};

use super::word::Stamp;

/// What recording without the lock did.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Recorded {
    /// Counted, or discarded as stale.
    Done,
    /// Counted, and it tripped the window: the breaker must open.
    Tripped,
    /// Not recorded: the lock decides.
    Locked,
}

impl Breaker {
    /// Reports how a permit ended; called by `Permit`. Judged first: a verdict of a CLOSED
    /// permit with a packed window is one compare-and-swap (none for a success into a full
    /// window of successes); then counted in the totals. Everything else takes the lock.
    ///
    /// Inline is only the common case: a success into a full window of successes, or one
    /// swap that neither trips the window nor loses a race, counted by the totals' owner. It
    /// calls no function and holds few values; anything else goes to
    /// `complete_in_lane_or_locked` (a time window's lane) or `complete_packed_or_locked`,
    /// which decides again from the start.
    #[inline(always)]
    pub(crate) fn complete(
        &self,
        stamp: Stamp,
        admission: Admission,
        ending: Ending,
        started: Option<Instant>,
    ) {
        // No check of the admission: only CLOSED admits `Counted`, and only a CLOSED window
        // is open, in its own generation, so a permit of another admission finds the window
        // sealed or another generation's, or (a stale success into a full window of
        // successes) changes nothing, as `complete_packed_or_locked` would have found. Nor of
        // a bulkhead slot: a permit that holds one never equals the word, and no full window
        // is published while it may be held (see `bulkhead.rs`).
        let seat = self.shared().totals_seat();
        // Guessing is asked first here so that the compiler asks watching first, on the
        // flags of the subtraction that made the seat: one instruction less for a healthy
        // breaker's success.
        if seat.guessing() {
            if self.record_from_guess(stamp, ending) {
                return self.shared().count_as(ending, true);
            }
        } else if seat.watching() {
            if self.record_from_word(stamp, ending, true) {
                return self.shared().count_as(ending, true);
            }
        } else if self.record_from_word(stamp, ending, false) {
            return self.shared().count_as(ending, false);
        }
        // A CLOSED call not observed nor timed may be a time window's: its lane first.
        if started.is_none() && admission == Admission::Counted {
            return self.complete_in_lane_or_locked(stamp, ending, seat);
        }
        self.complete_packed_or_locked(stamp, admission, ending, started, seat);
    }

    /// A verdict of a CLOSED call not observed nor timed that `complete` did not record in
    /// the packed window: a time window's lane takes it if it can, by a swap or (the owner's
    /// success) a store (a function apart from `complete_packed_or_locked`, light to call,
    /// so that the lane pays for none of its registers), else the packed window's whole path
    /// or the lock. A guessing owner's verdict skips the lane: the lock makes it watch again.
    #[inline(never)]
    fn complete_in_lane_or_locked(&self, stamp: Stamp, ending: Ending, seat: Seat) {
        if !seat.guessing() && self.record_in_lane(stamp, ending, seat.watching()) {
            return self.shared().count_as(ending, seat.owned());
        }
        self.complete_packed_or_locked(stamp, Admission::Counted, ending, None, seat);
    }

    /// Records a CLOSED permit's verdict into the packed window in one go, if it can: the
    /// breaker is still in the untimed CLOSED of the permit's generation (its admission word
    /// is the permit's [`stamp`]), the window is that generation's, the result cannot trip
    /// it and the swap succeeds at the first try. Says whether it did; if not, nothing was
    /// written.
    ///
    /// This is the way of every thread but the totals' owner, and of the owner while it
    /// *watches* the window: from the window's word as it stands. The owner watches while
    /// the window is full of successes, which a success leaves as it is: such a success
    /// writes nothing, so nothing of the owner's waits to be written back when it reads the
    /// line again. When the owner's own swap leaves the window off that word, it *guesses*
    /// from then on ([`record_from_guess`](Self::record_from_guess)). Changing ways only as
    /// the window enters or leaves its full word, a healthy breaker's success pays one
    /// comparison, and one thread's mixed results no read of the line.
    #[inline(always)]
    fn record_from_word(&self, stamp: Stamp, ending: Ending, watching: bool) -> bool {
        let failure = match ending {
            Ending::Success => false,
            Ending::Failure => true,
            _ => return false,
        };
        let window = self.shared().window();
        let current = window.word();
        // A success into a full window of successes changes nothing, whatever its
        // generation: no write, and no check of the generation needed.
        if !failure && current == self.shared().full_window() {
            return true;
        }
        if !stamp.is(self.shared().word()) {
            return false;
        }
        let swapped = window.record_once(
            current,
            stamp.generation(),
            failure,
            || self.shared().packed_capacity(),
            || self.shared().when_full(),
        );
        match swapped {
            Ok(next) => {
                if watching && next != self.shared().full_window() {
                    self.owner_swapped(next);
                }
                true
            }
            Err(_) => false,
        }
    }

    /// [`record_from_word`](Self::record_from_word) for the totals' owner while it
    /// *guesses*: it swaps from the word its last swap found ([`Shared::owner_seen`]), not
    /// from the window's line, because a read of that line just after the thread's own swap
    /// of it waits for the swap to be written back. A guess that is no longer the word
    /// fails the swap and changes nothing else (`PackedWindow::record_once`). A success
    /// into a full window of successes swaps the word for itself: once, after which the
    /// owner watches again.
    ///
    /// [`Shared::owner_seen`]: super::shared::Shared::owner_seen
    #[inline(always)]
    fn record_from_guess(&self, stamp: Stamp, ending: Ending) -> bool {
        let failure = match ending {
            Ending::Success => false,
            Ending::Failure => true,
            _ => return false,
        };
        if !stamp.is(self.shared().word()) {
            return false;
        }
        let swapped = self.shared().window().record_once(
            self.shared().owner_seen(),
            stamp.generation(),
            failure,
            || self.shared().packed_capacity(),
            || self.shared().when_full(),
        );
        match swapped {
            Ok(next) => {
                self.shared().set_owner_seen(next);
                if !failure && next == self.shared().full_window() {
                    self.shared().set_owner_guessing(false);
                }
                true
            }
            Err(found) => {
                self.shared().set_owner_seen(found);
                false
            }
        }
    }

    /// The watching owner's swap left the window off its full word: from here on it
    /// guesses, from that swap's word.
    #[cold]
    #[inline(never)]
    fn owner_swapped(&self, next: u64) {
        self.shared().set_owner_seen(next);
        self.shared().set_owner_guessing(true);
    }

    /// Records a CLOSED permit's verdict into the packed window, if it has one and the
    /// permit's generation is still the breaker's; a result of another generation is
    /// discarded. Takes no lock.
    fn record_packed(&self, generation: u64, ending: Ending) -> Recorded {
        let failure = match ending {
            Ending::Success => false,
            Ending::Failure => true,
            _ => return Recorded::Locked,
        };
        let capacity = self.shared().packed_capacity();
        if capacity == 0 || self.shared().word().generation() != generation {
            return Recorded::Locked;
        }
        let threshold = || self.shared().threshold();
        match self
            .shared()
            .window()
            .record(generation, capacity, failure, threshold)
        {
            Packed::Counted | Packed::Stale => Recorded::Done,
            Packed::Tripped => Recorded::Tripped,
            // Tripped by another result, or moved to a locked window: the lock decides.
            Packed::Sealed => Recorded::Locked,
        }
    }

    /// What `complete` did not record at once: the packed window's whole path (another try
    /// after a lost race, a result that may trip the window, a stale one), the totals, then
    /// opening the breaker for a result that tripped the window, or the locked path.
    #[inline(never)]
    fn complete_packed_or_locked(
        &self,
        stamp: Stamp,
        admission: Admission,
        ending: Ending,
        started: Option<Instant>,
        seat: Seat,
    ) {
        let owned = seat.owned();
        if stamp.holds_slot() {
            self.free_slot();
        }
        let generation = stamp.generation();
        let recorded = match admission {
            Admission::Counted => self.record_packed(generation, ending),
            _ => Recorded::Locked,
        };
        if owned && recorded == Recorded::Done {
            // The word this result's swaps found or left, for the owner's next swap. Not
            // for a verdict off the packed path (a time window, HALF_OPEN, OPEN, a trip):
            // the owner watches after one (below), and a swap of its own gives it its next
            // guess (`owner_swapped`), so the window's line is not read for nothing.
            self.shared().set_owner_seen(self.shared().window().word());
        }
        self.shared().count_as(ending, owned);
        // Only a call that noted its start is observed or throttled: the flags are read for
        // those alone. Told before the breaker acts on it: a failure that opens it, then the
        // transition.
        if let Some(started) = started {
            if self.shared().observed_or_throttled() {
                self.end_seen(started, ending, generation, admission);
            }
        }
        if seat.guessing()
            && recorded != Recorded::Done
            && matches!(ending, Ending::Success | Ending::Failure)
        {
            // A verdict off the packed path (it tripped the window, or is for the lock):
            // the owner watches again, and so counts its rejections in one comparison. (Not
            // for an ignored or cancelled call, which leaves the window as it was.)
            self.shared().set_owner_guessing(false);
        }
        match recorded {
            Recorded::Done => {}
            Recorded::Tripped => self.open_tripped(generation),
            Recorded::Locked => self.record_locked(stamp, admission, ending.outcome(), started),
        }
    }

    /// Counts a CLOSED success or failure, of a call not observed nor timed, in the time
    /// window's lane, if the lock opened it in the permit's generation for a bucket that
    /// still holds the present and, for a failure, with credit left (`engine/lane.rs`).
    /// Says whether it did.
    #[inline(always)]
    fn record_in_lane(&self, stamp: Stamp, ending: Ending, owner: bool) -> bool {
        let failure = match ending {
            Ending::Success => false,
            Ending::Failure => true,
            _ => return false,
        };
        self.shared().lane().is_some_and(|lane| {
            lane.count(stamp, failure, || self.shared().word(), self.clock(), owner)
        })
    }

    /// The end of a call that noted its start, of a breaker whose calls are observed or
    /// throttled: told to its observers, and a CLOSED call's answer counted by the throttle.
    #[cold]
    #[inline(never)]
    fn end_seen(&self, started: Instant, ending: Ending, generation: u64, admission: Admission) {
        if self.shared().observed() {
            self.observe_end(started, ending, generation);
        }
        let accepted = match ending {
            Ending::Success => true,
            Ending::Failure => false,
            _ => return,
        };
        if admission == Admission::Counted && self.shared().flag(super::Flag::Throttle) {
            if let Some(rare) = self.rare() {
                rare.throttle
                    .record(generation, accepted, self.clock().ticks());
            }
        }
    }

    /// Every verdict off the packed window's path: under the lock, if it still counts.
    fn record_locked(
        &self,
        stamp: Stamp,
        admission: Admission,
        outcome: Outcome,
        started: Option<Instant>,
    ) {
        let generation = stamp.generation();
        if admission == Admission::Passthrough
            || (outcome == Outcome::Ignored && admission != Admission::Probe)
            || self.shared().word().generation() != generation
        {
            return;
        }
        let mut now = LazyNow::new(self.clock());
        if started.is_some() {
            // A timed call's latency, or a probe's age: read before the lock, not under it.
            now.get();
        }
        let (_, events) = if outcome == Outcome::Ignored {
            self.shared()
                .transition(|m| m.release_probe(generation, started, &mut now))
        } else {
            let failure = outcome == Outcome::Failure;
            // A probe carries its start whether its call is timed or not (for
            // `probe_timeout`): its stamp says which. Any other permit only when timed.
            let timed = match admission {
                Admission::Probe => stamp.is_timed_probe(),
                _ => started.is_some(),
            };
            self.shared().transition(|m| {
                match m.record(generation, admission, failure, started, timed, &mut now) {
                    machine::Recorded::Applied(changed) => changed,
                    machine::Recorded::ToPacked => self
                        .shared()
                        .record_packed(m, generation, failure, &mut now),
                }
            })
        };
        self.emit(events);
    }

    /// Reports a failure that carried the downstream's pushback, `asked` (not zero): counted
    /// as a failure; if it still counts and pushback is on, it opens the breaker for that
    /// long (capped by `pushback_max`), else it is recorded as any failure.
    #[cold]
    #[inline(never)]
    pub(crate) fn complete_pushback(
        &self,
        stamp: Stamp,
        admission: Admission,
        started: Option<Instant>,
        asked: Duration,
    ) {
        let generation = stamp.generation();
        if admission == Admission::Passthrough || self.shared().word().generation() != generation {
            return self.complete(stamp, admission, Ending::Failure, started);
        }
        let mut now = LazyNow::new(self.clock());
        let period = self.shared().inspect(|m| m.pushback_period(asked));
        let Some(period) = period else {
            return self.complete(stamp, admission, Ending::Failure, started);
        };
        if stamp.holds_slot() {
            self.free_slot();
        }
        self.shared().count(Ending::Failure);
        if let Some(started) = started {
            if self.shared().observed() {
                self.observe_end(started, Ending::Failure, generation);
            }
        }
        let (_, events) = self
            .shared()
            .transition(|m| m.pushed_back(generation, admission, period, &mut now));
        self.emit(events);
    }

    /// This result tripped the packed window of `generation`: open the breaker.
    #[cold]
    fn open_tripped(&self, generation: u64) {
        let mut now = LazyNow::new(self.clock());
        let events = self.shared().open_tripped(generation, &mut now);
        self.emit(events);
    }
}
