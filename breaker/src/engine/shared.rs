//! What a breaker's threads share: the machine under its lock, and the words it publishes
//! for the paths that take no lock (the admission word, the open period, the packed window,
//! the call totals).
//!
//! Only this file writes the published words from the machine: every change of the machine
//! goes through [`Shared::transition`], which locks, changes, publishes and unlocks, and hands
//! back the events to emit. The lock-free paths read the words through the accessors below,
//! and write only the packed window (one swap per result), the totals and the bulkhead's
//! count of calls in flight. Under the lock, the packed window's word is sealed, read and
//! written for the machine by `packed_owner.rs`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::breaker::Identity;
use crate::clock::{ClockSource, LazyNow};
use crate::config::Config;
use crate::events::TransitionReason;
use crate::machine::{Events, Machine};
use crate::sync::{AtomicU32, AtomicU64, Mutex, MutexGuard, Ordering};
use crate::RejectReason;
use crate::State;

use super::flags::{Flag, Flags};
use super::lane::TimeLane;
use super::packed::{PackedWindow, Threshold};
use super::tally::{CallTotals, Ending, OwnerRow, RareEnding, Seat, Tally};
use super::word::Word;

/// The breaker's state behind its lock and in the words published from it.
///
/// `hot` with `totals`, `totals_row` and `counts` are written by different paths (the lock,
/// the totals' owner, every recorder), so they are laid out at least 128 bytes apart, the
/// breaker's own fields (`identity`, read on slow paths only) and the machine as spacing
/// between them.
/// Spacing rather than `CachePadded`, whose 128-byte alignment would add some 300 bytes to
/// every breaker (and its `Arc`), a third of a keyed breaker's budget.
#[repr(C)]
pub(crate) struct Shared {
    /// Read by every call, written only under the lock.
    hot: Hot,
    /// Read by every end of a call, written by the first to count, when the stripes are
    /// grown and when the owner changes how it records (as its own swap makes or leaves the
    /// window's full word): beside the admission word, away from the window word, which a
    /// thread reads slowly just after its swap of it.
    totals: Tally,
    identity: Identity,
    clock: ClockSource,
    /// Written by the thread that owns the call totals, at every end of a call.
    totals_row: OwnerRow,
    /// The packed window's word as the totals' owner last found it by a swap, written by it
    /// alone: the word its next swap tries while it guesses (see `engine/complete.rs`).
    owner_seen: AtomicU64,
    machine: Mutex<Machine>,
    /// Written by every result recorded in CLOSED (but a success into a full window of
    /// successes), and by every call of a limited breaker.
    counts: Counts,
}

// `hot`, `totals_row` and `counts` never share a cache line, nor a pair of them that the
// hardware prefetches together, wherever the breaker is placed.
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(
        offset_of!(Shared, hot) == 0
            && offset_of!(Shared, totals_row)
                >= offset_of!(Shared, totals) + size_of::<Tally>() + 128
            && offset_of!(Shared, owner_seen)
                == offset_of!(Shared, totals_row) + size_of::<OwnerRow>()
            && offset_of!(Shared, counts)
                >= offset_of!(Shared, owner_seen) + size_of::<AtomicU64>() + 128,
        "the admission word, the owner's totals and the window word must be 128 bytes apart"
    );
};

/// What admission and lock-free recording read; written only by [`Shared::publish`].
struct Hot {
    /// `generation << 5 | LIMITED | TIMED | state`: CLOSED admits with one atomic load.
    word: AtomicU64,
    /// The current OPEN as `[from, until)` in clock ticks, for rejecting without the lock;
    /// `until` is 0 when the period cannot be told in ticks.
    open_from: AtomicU64,
    open_until: AtomicU64,
    /// The same period on the coarse clock (see `clock::CoarsePeriod`); `coarse_until` is 0
    /// when there is none.
    coarse_from: AtomicU64,
    coarse_until: AtomicU64,
    /// The capacity of the packed window; 0 when the window is kept under the lock.
    packed: AtomicU32,
    /// The packed window's word once full of successes in the current CLOSED, which a
    /// success leaves as it is; `PackedWindow::NEVER` in other states or windows.
    full_window: AtomicU64,
    /// The machine's [`Threshold`] for the packed window, field by field.
    min_calls: AtomicU32,
    when_full: AtomicU32,
    /// `f64` bits.
    failure_rate: AtomicU64,
    /// The optional parts' named flags (see `flags.rs`).
    flags: Flags,
    /// The bulkhead's limit of calls in flight; 0 for none.
    max_concurrent: AtomicU32,
}

struct Counts {
    window: PackedWindow,
    /// Calls holding a bulkhead slot, written by every call of a limited breaker: beside
    /// the window word that its results write too.
    in_flight: AtomicU32,
}

impl Shared {
    pub(crate) fn new(config: Arc<Config>, clock: ClockSource, identity: Identity) -> Self {
        let counts = Counts {
            window: PackedWindow::new(),
            in_flight: AtomicU32::new(0),
        };
        let mut now = LazyNow::at(&clock, clock.origin_now());
        let machine = Machine::new(config, &mut now);
        let hot = Hot {
            word: AtomicU64::new(0),
            open_from: AtomicU64::new(0),
            open_until: AtomicU64::new(0),
            coarse_from: AtomicU64::new(0),
            coarse_until: AtomicU64::new(0),
            packed: AtomicU32::new(0),
            full_window: AtomicU64::new(PackedWindow::NEVER),
            min_calls: AtomicU32::new(0),
            when_full: AtomicU32::new(0),
            failure_rate: AtomicU64::new(0),
            flags: Flags::new(),
            max_concurrent: AtomicU32::new(0),
        };
        let shared = Self {
            hot,
            totals: Tally::new(),
            identity,
            clock,
            totals_row: OwnerRow::new(),
            owner_seen: AtomicU64::new(PackedWindow::NEVER),
            machine: Mutex::new(machine),
            counts,
        };
        shared.publish(&mut shared.lock());
        shared
    }

    /// The one way to change the machine: locks it, runs `change`, publishes what the lock-free
    /// paths read, unlocks, and returns `change`'s result with the events to emit (with no lock
    /// held, so that a listener may call back into the breaker).
    ///
    /// Inline, publishing too: a result into a locked window comes here every call, and a
    /// call out of line would move the events through memory.
    #[inline(always)]
    pub(crate) fn transition<R>(&self, change: impl FnOnce(&mut Machine) -> R) -> (R, Events) {
        let mut m = self.lock();
        let out = change(&mut m);
        self.publish(&mut m);
        let events = m.take_events();
        drop(m);
        (out, events)
    }

    /// Reads the machine under its lock. `read` changes nothing that is published (a time
    /// window moving on to the present is not).
    pub(crate) fn inspect<R>(&self, read: impl FnOnce(&mut Machine) -> R) -> R {
        let mut m = self.lock();
        let out = read(&mut m);
        self.open_lane(&mut m);
        out
    }

    /// Locks the machine, and closes the time window's lane into it (see `engine/lane.rs`):
    /// whatever is done under the lock finds the window's exact counts, and a success that
    /// read the lane before fails its swap.
    #[inline(always)]
    fn lock(&self) -> MutexGuard<'_, Machine> {
        // No user code runs under this lock: listeners are called after it is released.
        let mut m = self.machine.lock();
        if m.lane_open() {
            self.close_lane(&mut m);
        }
        if m.owner_has_lane() {
            self.take_owned(&mut m);
        }
        m
    }

    /// Takes what the totals' owner counted in the lane it was given, and the machine did
    /// not take yet, into the machine (see `engine/lane.rs`).
    #[inline]
    fn take_owned(&self, m: &mut Machine) {
        if let Some(late) = self.lane().and_then(TimeLane::take_owned) {
            m.owner_counted(late);
        }
    }

    /// Closes the open lane, counting what it counted into the machine's window.
    #[inline]
    fn close_lane(&self, m: &mut Machine) {
        let counted = self.lane().and_then(TimeLane::close);
        m.lane_closed(counted.unwrap_or_default());
    }

    /// The time window's lane, once it was first opened.
    #[inline(always)]
    pub(crate) fn lane(&self) -> Option<&TimeLane> {
        self.identity.rare().map(|rare| &rare.lane)
    }

    /// Under the lock, last: opens the lane if the machine says no success can trip its
    /// window (`Machine::lane`).
    #[inline(always)]
    fn open_lane(&self, m: &mut Machine) {
        if let Some(bucket) = m.lane() {
            let lane = &self.identity.rare_made().lane;
            lane.open(bucket);
            m.lane_opened();
            // The owner's count of the lane before was taken when the lock was taken, and
            // only the owner writes it: this thread, here.
            if self.totals.seat().owned() {
                lane.give_owner(m.generation());
                m.owner_given();
            }
        }
    }

    /// Publishes the machine to the lock-free paths: the packed window's threshold and the
    /// bulkhead's limit (after a new configuration), the packed window's word as the machine
    /// asked, the open period, then the admission word, so that a reader of the word finds
    /// what it publishes (and a recorder of an opened window, the threshold to judge by).
    #[inline(always)]
    fn publish(&self, m: &mut Machine) {
        let hot = &self.hot;
        if m.take_configured() {
            let threshold = m.threshold();
            hot.packed
                .store(m.packed_capacity().unwrap_or(0), Ordering::Relaxed);
            hot.min_calls.store(threshold.min_calls, Ordering::Relaxed);
            hot.when_full.store(threshold.when_full, Ordering::Relaxed);
            hot.failure_rate
                .store(threshold.failure_rate.to_bits(), Ordering::Relaxed);
            hot.flags.set(Flag::Shadow, m.config().shadow());
            hot.flags
                .set(Flag::Throttle, self.publish_throttle(m.config()));
            #[cfg(feature = "policy")]
            self.publish_policy(&m.config().policy());
            // Before the count is swapped below: see `engine/bulkhead.rs`.
            hot.max_concurrent
                .store(m.config().max_concurrent().unwrap_or(0), Ordering::Release);
        }
        self.write_window(m);
        if let Some((opened, open_for)) = m.open_period() {
            self.publish_open_period(opened, open_for);
            let fleet = m.open_reason() == Some(TransitionReason::FleetOpen);
            hot.flags.set(Flag::FleetOpen, fleet);
        }
        let state = m.state();
        let limited = m.config().max_concurrent().is_some();
        // A success into a full window of successes is settled inline without a look at its
        // permit, so never while a permit may hold a bulkhead slot that it must free: not
        // while limited, nor while slots taken under a limit removed since are held (the last
        // of them publishes again when it frees its slot, see `Breaker::free_slot`); and
        // never while calls are observed, as an observed success must be told.
        let full_window = match m.packed_capacity() {
            Some(_)
                if state == State::Closed
                    && !limited
                    && self.slots_free()
                    && !self.observed()
                    && !self.flag(Flag::Throttle) =>
            {
                PackedWindow::full_of_successes(m.generation())
            }
            _ => PackedWindow::NEVER,
        };
        hot.full_window.store(full_window, Ordering::Relaxed);
        // The flags read where they are used, not kept: a test of the word in memory each
        // time. A throttled CLOSED is timed so that its calls leave the one-load admission.
        let flags = hot.flags.read();
        let timed = m.times_calls() || flags.has_either(Flag::Observed, Flag::Throttle);
        let word = Word::new(m.generation(), state, limited, timed);
        hot.word.store(word.bits(), Ordering::Release);
        // After the word: a success that reads the opened lane finds its generation.
        if state == State::Closed {
            self.open_lane(m);
        }
    }

    /// Stores the period of OPEN that rejection without the lock reads, in the clock's
    /// ticks and on the coarse clock. A period the ticks cannot tell is `(0, 0)`: no clock
    /// reading falls in it, and OPEN then rejects under the lock.
    #[cold]
    fn publish_open_period(&self, opened: Instant, open_for: Duration) {
        let period = || {
            let from = self.clock.ticks_of(opened)?;
            let length = u64::try_from(open_for.as_nanos()).ok()?;
            Some((from, from.checked_add(length)?))
        };
        let (from, until) = period().unwrap_or_default();
        let coarse = self.clock.coarse_period(from, until).unwrap_or_default();
        self.hot.open_from.store(from, Ordering::Release);
        self.hot.open_until.store(until, Ordering::Release);
        self.hot.coarse_from.store(coarse.from, Ordering::Release);
        self.hot.coarse_until.store(coarse.until, Ordering::Release);
    }

    /// Hands a new configuration's throttling to the throttle, and says whether it is on; a
    /// breaker that never throttled makes no room for it while it does not.
    #[cold]
    fn publish_throttle(&self, config: &Config) -> bool {
        let throttling = config.throttling();
        let rare = match self.identity.rare() {
            Some(rare) => rare,
            None if throttling.is_none() => return false,
            None => self.identity.rare_made(),
        };
        rare.throttle.configure(throttling);
        throttling.is_some()
    }

    /// Publishes a new configuration's call policy; a breaker that never had one makes no
    /// room for it while it has none.
    #[cfg(feature = "policy")]
    #[cold]
    fn publish_policy(&self, policy: &crate::config::Policy) {
        let rare = match self.identity.rare() {
            Some(rare) => rare,
            None if policy.timeout().is_none()
                && policy.retries() == 0
                && policy.hedge().is_none() =>
            {
                return
            }
            None => self.identity.rare_made(),
        };
        rare.policy.publish(policy);
    }

    pub(crate) fn identity(&self) -> &Identity {
        &self.identity
    }

    pub(crate) fn clock(&self) -> &ClockSource {
        &self.clock
    }

    /// The admission word.
    #[inline(always)]
    pub(crate) fn word(&self) -> Word {
        Word::from_bits(self.hot.word.load(Ordering::Acquire))
    }

    /// The state as published. An expired OPEN still reads `Open` until the next call asks.
    #[inline]
    pub(crate) fn state(&self) -> State {
        self.word().state()
    }

    /// Whether `flag` is set.
    #[inline(always)]
    pub(crate) fn flag(&self, flag: Flag) -> bool {
        self.hot.flags.get(flag)
    }

    /// The published OPEN on the coarse clock: `until` and how to read `from`.
    #[inline(always)]
    pub(crate) fn coarse_period(&self) -> (u64, impl Fn() -> u64 + '_) {
        let until = self.hot.coarse_until.load(Ordering::Acquire);
        (until, || self.hot.coarse_from.load(Ordering::Acquire))
    }

    /// The published OPEN in clock ticks, `(from, until)`.
    #[inline(always)]
    pub(crate) fn open_period(&self) -> (u64, u64) {
        let from = self.hot.open_from.load(Ordering::Acquire);
        (from, self.hot.open_until.load(Ordering::Acquire))
    }

    /// Why the published OPEN rejects: [`RejectReason::FleetOpen`] in the fleet's OPEN, else
    /// [`RejectReason::Open`]. Stored with the period, before the word that publishes it.
    #[inline(always)]
    pub(crate) fn open_rejects(&self) -> RejectReason {
        if self.flag(Flag::FleetOpen) {
            RejectReason::FleetOpen
        } else {
            RejectReason::Open
        }
    }

    /// The packed window; recorders swap its word, and only the lock opens or seals it
    /// (`packed_owner.rs`).
    #[inline(always)]
    pub(crate) fn window(&self) -> &PackedWindow {
        &self.counts.window
    }

    /// The packed window's word once full of successes in the current CLOSED.
    #[inline(always)]
    pub(crate) fn full_window(&self) -> u64 {
        self.hot.full_window.load(Ordering::Relaxed)
    }

    /// The packed window's capacity; 0 when the window is kept under the lock.
    #[inline(always)]
    pub(crate) fn packed_capacity(&self) -> u32 {
        self.hot.packed.load(Ordering::Relaxed)
    }

    /// Why the published OPEN rejects a call, when nothing but counting it is to be done:
    /// `None` when a shadow admits it instead or calls are observed (the slow path decides).
    /// One read of the flags for both.
    #[inline(always)]
    pub(crate) fn plain_open_rejection(&self) -> Option<RejectReason> {
        let flags = self.hot.flags.read();
        if flags.has_either(Flag::Shadow, Flag::Observed) {
            return None;
        }
        Some(if flags.has(Flag::FleetOpen) {
            RejectReason::FleetOpen
        } else {
            RejectReason::Open
        })
    }

    /// Whether calls are observed or throttled: a call that noted its start must then be
    /// told to its observers or counted by the throttle when it ends. One read of the flags.
    #[inline(always)]
    pub(crate) fn observed_or_throttled(&self) -> bool {
        self.hot
            .flags
            .read()
            .has_either(Flag::Observed, Flag::Throttle)
    }

    /// Whether calls are observed (a call listener, a recording): calls that noted their
    /// start, and rejections, must be told (`breaker/observe.rs`).
    #[inline(always)]
    pub(crate) fn observed(&self) -> bool {
        self.flag(Flag::Observed)
    }

    /// Publishes whether calls are observed: while a recording is on or a call listener was
    /// added. Decided under the lock, so that of a recording stopped and a listener added at
    /// once, the later decision sees both.
    pub(crate) fn publish_observed(&self) {
        self.set_flags(|_| {});
    }

    /// Sets or clears [`Flag::Recording`]: recorded calls are timed, and rejections
    /// recorded.
    #[cfg_attr(not(feature = "recording"), allow(dead_code))]
    pub(crate) fn set_recording(&self, on: bool) {
        self.set_flags(|flags| flags.set(Flag::Recording, on));
    }

    /// Under the lock, `change`s the flags, then decides [`Flag::Observed`] and publishes.
    fn set_flags(&self, change: impl FnOnce(&Flags)) {
        let ((), none) = self.transition(|_| {
            let flags = &self.hot.flags;
            change(flags);
            let listened = self
                .identity
                .rare()
                .is_some_and(|rare| !rare.call_listeners.is_empty());
            flags.set(Flag::Observed, flags.get(Flag::Recording) || listened);
        });
        drop(none);
    }

    /// The fewest failures that trip the full packed window.
    #[inline(always)]
    pub(crate) fn when_full(&self) -> u32 {
        self.hot.when_full.load(Ordering::Relaxed)
    }

    /// The packed window's threshold as published.
    pub(crate) fn threshold(&self) -> Threshold {
        Threshold {
            min_calls: self.hot.min_calls.load(Ordering::Relaxed),
            failure_rate: f64::from_bits(self.hot.failure_rate.load(Ordering::Relaxed)),
            when_full: self.when_full(),
        }
    }

    /// The bulkhead's limit of calls in flight, 0 for none.
    #[inline(always)]
    pub(crate) fn max_concurrent(&self) -> u32 {
        self.hot.max_concurrent.load(Ordering::Relaxed)
    }

    /// The bulkhead's limit, read after a swap of the count: at least the limit of the last
    /// `publish` whose swap of the count came before it (see `engine/bulkhead.rs`).
    pub(crate) fn limit_after_swap(&self) -> u32 {
        self.hot.max_concurrent.load(Ordering::Acquire)
    }

    /// Whether no call holds a bulkhead slot. A swap that changes nothing, not a load: swaps
    /// of one word are in one order, so this one comes before or after each call's, and the
    /// limit stored before it reaches a call whose swap comes after (`engine/bulkhead.rs`).
    /// Read only in the few publishes of a CLOSED with a packed window.
    fn slots_free(&self) -> bool {
        self.counts.in_flight.fetch_add(0, Ordering::AcqRel) == 0
    }

    /// Calls holding a bulkhead slot now.
    pub(crate) fn calls_in_flight(&self) -> u32 {
        self.counts.in_flight.load(Ordering::Relaxed)
    }

    /// The count of calls holding a bulkhead slot; only `engine/bulkhead.rs` changes it.
    #[inline(always)]
    pub(crate) fn in_flight(&self) -> &AtomicU32 {
        &self.counts.in_flight
    }

    /// Counts one end of a call in the lifetime totals.
    #[inline(always)]
    pub(crate) fn count(&self, ending: Ending) {
        self.totals.add(&self.totals_row, ending);
    }

    /// How this thread stands to the call totals: their owner, which alone writes their row
    /// and [`owner_seen`](Self::owner_seen), watching the window or guessing its word; or
    /// another thread.
    #[inline(always)]
    pub(crate) fn totals_seat(&self) -> Seat {
        self.totals.seat()
    }

    /// Notes whether the totals' owner records from [`owner_seen`](Self::owner_seen) (its
    /// guess of the window's word) or from the window's word; by the owner only, when that
    /// changes.
    #[inline]
    pub(crate) fn set_owner_guessing(&self, guessing: bool) {
        self.totals.set_guessing(guessing);
    }

    /// Counts one end of a call in the lifetime totals, for the totals' owner if `owned`.
    #[inline(always)]
    pub(crate) fn count_as(&self, ending: Ending, owned: bool) {
        self.totals.add_as(&self.totals_row, ending, owned);
    }

    /// The packed window's word as the totals' owner last found it by a swap: a guess of
    /// the word for its next swap, read from a line its swaps do not write.
    #[inline(always)]
    pub(crate) fn owner_seen(&self) -> u64 {
        self.owner_seen.load(Ordering::Relaxed)
    }

    /// Notes the word the totals' owner found in the packed window; by the owner only.
    #[inline(always)]
    pub(crate) fn set_owner_seen(&self, word: u64) {
        self.owner_seen.store(word, Ordering::Relaxed);
    }

    /// Counts one rare end of a call (see [`RareEnding`]) in the lifetime totals.
    pub(crate) fn count_rare(&self, rare: RareEnding) {
        self.totals.add_rare(rare);
    }

    /// Counts a rejection for `reason` in the lifetime totals.
    pub(crate) fn count_rejection(&self, reason: RejectReason) {
        match RareEnding::rejected(reason) {
            Some(rare) => self.count_rare(rare),
            None => self.count(Ending::RejectedOpen),
        }
    }

    /// The lifetime totals.
    pub(crate) fn call_totals(&self) -> CallTotals {
        self.totals.read(&self.totals_row)
    }
}
