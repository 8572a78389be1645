//! The `Breaker`: admission, recording and operator actions over the state machine.

use std::fmt;
use std::future::IntoFuture;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::clock::{Clock, ClockSource, LazyNow};
use crate::config::Config;
use crate::events::{Event, Listeners};
use crate::machine::{Admission, Machine, Transition};
use crate::permit::OwnedPermit;
use crate::recovery::RampNews;
use crate::rejected::{retry_nanos, Name};
use crate::sync::{AtomicU32, AtomicU64, Mutex, MutexGuard, Ordering};
use crate::tally::{Ending, OwnerRow, Tally};
use crate::window::{Packed, PackedWindow, Threshold};
use crate::{Classify, Outcome, Permit, RejectReason, Rejected, Snapshot, State};

/// The admission word: `generation << GENERATION_SHIFT | TIMED? | state`.
const STATE_MASK: u64 = 0b111;
/// Set while calls are timed (slow calls, the latency guard): admission must note the start.
const TIMED: u64 = 0b1000;
const GENERATION_SHIFT: u32 = 4;
const CLOSED: u64 = State::Closed.code();
const OPEN: u64 = State::Open.code();

/// A permit's generation as the admission word of an untimed CLOSED holds it: `try_acquire`
/// takes that word as it is, and completion compares it with the word in one instruction.
pub(crate) const fn stamp(generation: u64) -> u64 {
    generation << GENERATION_SHIFT
}

/// The generation of a [`stamp`].
pub(crate) const fn generation_of(stamp: u64) -> u64 {
    stamp >> GENERATION_SHIFT
}

const _: () = assert!(
    CLOSED == 0,
    "an untimed CLOSED word is its generation's stamp"
);

/// A circuit breaker guarding one downstream.
///
/// ```
/// use std::time::Duration;
/// use breaker::{Breaker, Config, State};
/// use breaker::clock::ManualClock;
///
/// let config = Config::builder().count_window(4).min_calls(4).probes(1).build()?;
/// let clock = ManualClock::new();
/// let b = Breaker::with_clock("libraryd", config, clock.clone());
///
/// for _ in 0..2 {
///     b.try_acquire().unwrap().success();
///     b.try_acquire().unwrap().failure();
/// }
/// assert_eq!(b.state(), State::Open); // 2 of 4 failed: 0.5 >= 0.5
///
/// let rejected = b.try_acquire().unwrap_err();
/// assert_eq!(rejected.retry_after(), Some(Duration::from_secs(5)));
///
/// clock.advance(Duration::from_secs(5));
/// b.try_acquire().unwrap().success(); // the first call after 5s is a probe
/// assert_eq!(b.state(), State::Closed);
/// # Ok::<(), breaker::ConfigError>(())
/// ```
///
/// # The fast paths
///
/// Admission reads one word, `generation << 4 | timed << 3 | state`, written only under the
/// lock. In CLOSED with a count window of up to 20 calls and no call timing, a result is
/// recorded by one compare-and-swap on a word that packs the whole window with its
/// generation (none at all for a success into a full window of successes); only the result
/// that trips the breaker takes the lock, and a result of an earlier generation is never
/// counted. OPEN rejects by comparing the clock's ticks with its deadline, without the
/// lock; on the production clock ([`MonotonicClock`](crate::clock::MonotonicClock)), by
/// the kernel's coarse clock while the deadline is more than 20 ms (and a 1024th of the
/// period) away. Every end of a call is also counted in the lifetime
/// [`CallTotals`](crate::CallTotals): by the first thread to count with plain stores into a
/// row of its own, by any other into a per-core stripe. The admission word, that row and
/// the window word are laid out at least 128 bytes apart (never on one pair of cache
/// lines), so recording on one core does not evict the admission word from the others.
/// Other windows record under the lock; a time window on the production clock reads no
/// clock while the coarse clock proves its newest bucket still holds the present.
#[repr(C)]
pub struct Breaker {
    /// Read by every call, written only under the lock.
    hot: Hot,
    // Between `hot` and `counts`: fields read on slow paths only, or written under the lock,
    // and the owner's row of call totals, 128 bytes from both. Spacing rather than
    // `CachePadded`, whose 128-byte alignment would add some 300 bytes to every breaker
    // (and its `Arc`), a third of a keyed breaker's budget.
    name: Arc<str>,
    /// For a breaker of a keyed family, named `family[key]`: where the key's text starts in
    /// the name; 0 for other breakers. (In the 8 bytes `rejected_name`'s alignment leaves.)
    key_at: usize,
    /// The name as rejections carry it.
    rejected_name: Name,
    clock: ClockSource,
    listeners: Listeners,
    /// Written by the thread that owns the call totals, at every end of a call.
    totals_row: OwnerRow,
    machine: Mutex<Machine>,
    /// Written by every result recorded in CLOSED (but a success into a full window of
    /// successes), and by the totals of every call until they are striped.
    counts: Counts,
}

// `hot`, `totals_row` and `counts` never share a cache line, nor a pair of them that the
// hardware prefetches together, wherever the breaker is placed.
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(
        offset_of!(Breaker, hot) == 0
            && offset_of!(Breaker, totals_row) >= size_of::<Hot>() + 128
            && offset_of!(Breaker, counts)
                >= offset_of!(Breaker, totals_row) + size_of::<OwnerRow>() + 128,
        "the admission word, the owner's totals and the window word must be 128 bytes apart"
    );
};

/// What admission and lock-free recording read; written under the lock.
struct Hot {
    /// `generation << 3 | state`: CLOSED admits with one atomic load.
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
    min_calls: AtomicU32,
    when_full: AtomicU32,
    /// `f64` bits.
    failure_rate: AtomicU64,
}

/// What admission off the fast path decided: the parts of a [`Permit`] or a [`Rejected`].
enum Ticket {
    Admit {
        generation: u64,
        admission: Admission,
        started: Option<Instant>,
    },
    /// Already counted in the totals; `left` in nanoseconds, `retry_nanos(None)` for none.
    Reject { reason: RejectReason, left: u64 },
}

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

struct Counts {
    window: PackedWindow,
    totals: Tally,
}

impl Breaker {
    /// A breaker named `name` on the default clock.
    pub fn new(name: impl Into<Arc<str>>, config: Config) -> Self {
        Self::with_source(name.into(), Arc::new(config), ClockSource::default_clock())
    }

    /// A breaker on a clock of your own, typically a [`ManualClock`](crate::clock::ManualClock).
    pub fn with_clock(name: impl Into<Arc<str>>, config: Config, clock: impl Clock) -> Self {
        Self::with_source(name.into(), Arc::new(config), ClockSource::custom(clock))
    }

    fn with_source(name: Arc<str>, config: Arc<Config>, clock: ClockSource) -> Self {
        let counts = Counts {
            window: PackedWindow::new(),
            totals: Tally::new(),
        };
        let mut now = LazyNow::at(&clock, clock.origin_now());
        let machine = Machine::new(config, &mut now, &counts.window);
        let hot = Hot {
            word: AtomicU64::new(admission_word(&machine)),
            open_from: AtomicU64::new(0),
            open_until: AtomicU64::new(0),
            coarse_from: AtomicU64::new(0),
            coarse_until: AtomicU64::new(0),
            packed: AtomicU32::new(0),
            full_window: AtomicU64::new(full_window(&machine)),
            min_calls: AtomicU32::new(0),
            when_full: AtomicU32::new(0),
            failure_rate: AtomicU64::new(0),
        };
        hot.configure(&machine);
        Self {
            hot,
            counts,
            rejected_name: Name::new(&name),
            name,
            key_at: 0,
            clock,
            listeners: Listeners::default(),
            totals_row: OwnerRow::new(),
            machine: Mutex::new(machine),
        }
    }

    /// The breaker of `family` for the key whose text is `key`, named `family[key]`, e.g.
    /// `app::get[10.0.0.1:7000]` with key `10.0.0.1:7000`.
    pub(crate) fn keyed(family: &str, key: &str, config: Arc<Config>) -> Self {
        let name = format!("{family}[{key}]");
        Self {
            key_at: family.len() + 1,
            ..Self::with_source(name.into(), config, ClockSource::default_clock())
        }
    }

    /// The breaker's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key of a breaker created per key by `#[circuit_breaker(key = ...)]`, as its
    /// `Display` text; `None` for other breakers.
    pub fn key(&self) -> Option<&str> {
        (self.key_at != 0).then(|| &self.name[self.key_at..self.name.len() - 1])
    }

    /// The breaker's current configuration.
    pub fn config(&self) -> Config {
        self.lock().config().clone()
    }

    /// Replaces the configuration of a running breaker, keeping its state: an operator's
    /// runtime override. A different window shape starts an empty window, and results of
    /// calls admitted before are then discarded. A CLOSED breaker whose window the new
    /// configuration trips (a lower failure rate or minimum of calls) opens at once, and one
    /// left closed is not opened later by a result judged under the old configuration; a
    /// HALF_OPEN one whose probes already reach a lower `successes` ends its trial at once.
    /// Turning slow calls off drops the slow marks of the calls in the window, so that
    /// turning them on again counts none of them.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker::{Breaker, Config, State};
    ///
    /// let b = Breaker::new("libraryd", Config::default());
    /// b.reconfigure(Config::builder().count_window(1).min_calls(1).build()?);
    /// b.try_acquire().unwrap().failure();
    /// assert_eq!(b.state(), State::Open);
    /// assert_eq!(b.config().min_calls(), 1);
    /// # Ok::<(), breaker::ConfigError>(())
    /// ```
    pub fn reconfigure(&self, config: Config) {
        let mut now = LazyNow::new(&self.clock);
        now.get();
        let (transition, news) = {
            let mut m = self.lock();
            let transition = m.reconfigure(config, &mut now, &self.counts.window);
            self.hot.configure(&m);
            self.publish(&m);
            (transition, m.take_ramp_news())
        };
        self.emit(transition);
        self.emit_ramp(news);
    }

    /// The current state. An expired OPEN still reads `Open` until the next call asks.
    pub fn state(&self) -> State {
        State::from_code(self.hot.word.load(Ordering::Acquire) & STATE_MASK)
    }

    /// Like [`try_acquire`](Breaker::try_acquire), for a breaker behind an `Arc`: the
    /// permit holds a share of the breaker, so it can move into a `'static` future.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breaker::{Breaker, Config};
    ///
    /// let b = Arc::new(Breaker::new("libraryd", Config::default()));
    /// let permit = b.try_acquire_owned()?;
    /// permit.success();
    /// assert_eq!(b.snapshot().calls, 1);
    /// # Ok::<(), breaker::Rejected>(())
    /// ```
    pub fn try_acquire_owned(self: &Arc<Self>) -> Result<OwnedPermit, Rejected> {
        self.try_acquire()
            .map(|permit| permit.into_owned(Arc::clone(self)))
    }

    /// Asks to make one call: a [`Permit`] to report its result with, or why not.
    ///
    /// In CLOSED this is one atomic load; the clock is read only when slow calls are judged.
    /// In OPEN it reads the clock (on Linux, the production clock's cheaper coarse twin while
    /// the period is far from its end), not the lock.
    ///
    /// ```
    /// use breaker::{Breaker, Config};
    ///
    /// let b = Breaker::new("libraryd", Config::builder().count_window(1).build()?);
    /// b.try_acquire().expect("closed").failure();
    /// let rejected = b.try_acquire().unwrap_err();
    /// assert_eq!(rejected.to_string(), "circuit 'libraryd' is open; retry in 5.0s");
    /// # Ok::<(), breaker::ConfigError>(())
    /// ```
    #[inline(always)]
    pub fn try_acquire(&self) -> Result<Permit<'_>, Rejected> {
        let word = self.hot.word.load(Ordering::Acquire);
        if word & (STATE_MASK | TIMED) == CLOSED {
            // Untimed CLOSED: the word is the stamp of its generation.
            return Ok(Permit::new(self, word, Admission::Counted, None));
        }
        self.redeem(self.acquire_other(word))
    }

    /// Makes the caller's permit or rejection from what a path off the untimed CLOSED one
    /// decided. Those paths return a [`Ticket`], not the `Result`: a `Result` written by a
    /// function out of line lives in memory, and the caller's fast path would then write
    /// its permit to the stack and read it back too.
    #[inline(always)]
    fn redeem(&self, ticket: Ticket) -> Result<Permit<'_>, Rejected> {
        match ticket {
            Ticket::Admit {
                generation,
                admission,
                started,
            } => Ok(Permit::new(self, stamp(generation), admission, started)),
            Ticket::Reject { reason, left } => Err(Rejected::after_nanos(
                self.rejected_name.clone(),
                reason,
                left,
            )),
        }
    }

    /// Admission off the untimed CLOSED path, out of line so that callers inline only that.
    /// OPEN first, in a function of its own, small enough to inline what it calls.
    #[inline(never)]
    fn acquire_other(&self, word: u64) -> Ticket {
        if word & STATE_MASK == OPEN {
            return self.reject_open(word);
        }
        self.acquire_rest(word)
    }

    /// Admission in states other than OPEN and the untimed CLOSED.
    #[inline(never)]
    fn acquire_rest(&self, word: u64) -> Ticket {
        match State::from_code(word & STATE_MASK) {
            // Timed: the untimed CLOSED was admitted in `try_acquire`.
            State::Closed => Ticket::Admit {
                generation: word >> GENERATION_SHIFT,
                admission: Admission::Counted,
                started: Some(self.clock.now()),
            },
            State::Disabled => Ticket::Admit {
                generation: word >> GENERATION_SHIFT,
                admission: Admission::Passthrough,
                started: None,
            },
            _ => self.acquire_locked(),
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
    #[inline(always)]
    fn reject_open(&self, word: u64) -> Ticket {
        let until = self.hot.coarse_until.load(Ordering::Acquire);
        let from = || self.hot.coarse_from.load(Ordering::Acquire);
        if let Some(left) = ClockSource::coarse_left(from, until) {
            if self.hot.word.load(Ordering::Acquire) == word {
                return self.rejected_open(left);
            }
        }
        self.reject_open_precise(word)
    }

    /// OPEN without a coarse period, or near its end: on the breaker's own clock.
    #[inline(never)]
    fn reject_open_precise(&self, word: u64) -> Ticket {
        // The clock first: fewer values live across its call.
        let Some(now) = self.clock.ticks() else {
            return self.acquire_locked();
        };
        let from = self.hot.open_from.load(Ordering::Acquire);
        let until = self.hot.open_until.load(Ordering::Acquire);
        if !(from <= now && now < until && self.hot.word.load(Ordering::Acquire) == word) {
            return self.acquire_locked();
        }
        self.rejected_open(until - now)
    }

    /// Counts a rejection in OPEN with `left` nanoseconds to go, and tells it.
    #[inline(always)]
    fn rejected_open(&self, left: u64) -> Ticket {
        self.counts.totals.add(&self.totals_row, Ending::Rejected);
        Ticket::Reject {
            reason: RejectReason::Open,
            left,
        }
    }

    #[cold]
    fn acquire_locked(&self) -> Ticket {
        let mut now = LazyNow::new(&self.clock);
        let mut transition = None;
        let (admitted, generation, timed, news) = {
            let mut m = self.lock();
            let admitted = m.acquire(&mut now, &self.counts.window, &mut transition);
            self.publish(&m);
            (
                admitted,
                m.generation(),
                m.times_calls(),
                m.take_ramp_news(),
            )
        };
        self.emit(transition);
        self.emit_ramp(news);
        match admitted {
            Ok(admission) => Ticket::Admit {
                generation,
                admission,
                // When calls are timed (slow calls, latency guard), the time a call starts.
                started: timed.then(|| now.get()),
            },
            Err((reason, retry_after)) => {
                self.counts.totals.add(&self.totals_row, Ending::Rejected);
                Ticket::Reject {
                    reason,
                    left: retry_nanos(retry_after),
                }
            }
        }
    }

    /// Reports how a permit ended; called by `Permit`. Judged first: a verdict of a CLOSED
    /// permit with a packed window is one compare-and-swap (none for a success into a full
    /// window of successes); then counted in the totals. Everything else takes the lock.
    ///
    /// Inline is only the common case: a success into a full window of successes, or one
    /// swap that neither trips the window nor loses a race, counted by the totals' owner. It
    /// calls no function and holds few values; anything else goes to `complete_rest`, which
    /// decides again from the start.
    #[inline(always)]
    pub(crate) fn complete(
        &self,
        stamp: u64,
        admission: Admission,
        ending: Ending,
        started: Option<Instant>,
    ) {
        // No check of the admission: only CLOSED admits `Counted`, and only a CLOSED window
        // is open, in its own generation, so a permit of another admission finds the window
        // sealed or another generation's, or (a stale success into a full window of
        // successes) changes nothing, as `complete_rest` would have found.
        if self.record_at_once(stamp, ending) {
            return self.counts.totals.add(&self.totals_row, ending);
        }
        self.complete_rest(generation_of(stamp), admission, ending, started);
    }

    /// Records a CLOSED permit's verdict into the packed window in one go, if it can: the
    /// breaker is still in the untimed CLOSED of the permit's generation (its admission word
    /// is the permit's [`stamp`]), the window is that generation's, the result cannot trip
    /// it and the swap succeeds at the first try. Says whether it did; if not, nothing was
    /// written.
    #[inline(always)]
    fn record_at_once(&self, stamp: u64, ending: Ending) -> bool {
        let window = &self.counts.window;
        let current = window.word();
        let failure = match ending {
            // A success into a full window of successes changes nothing, whatever its
            // generation: no write, and no check of the generation needed.
            Ending::Success => {
                if current == self.hot.full_window.load(Ordering::Relaxed) {
                    return true;
                }
                false
            }
            Ending::Failure => true,
            _ => return false,
        };
        self.hot.word.load(Ordering::Acquire) == stamp
            && window.record_once(
                current,
                generation_of(stamp),
                failure,
                || self.hot.packed.load(Ordering::Relaxed),
                || self.hot.when_full.load(Ordering::Relaxed),
            )
    }

    /// Records a CLOSED permit's verdict into the packed window, if it has one and the
    /// permit's generation is still the breaker's; a result of another generation is
    /// discarded. Takes no lock.
    fn record_lock_free(&self, generation: u64, ending: Ending) -> Recorded {
        let failure = match ending {
            Ending::Success => false,
            Ending::Failure => true,
            _ => return Recorded::Locked,
        };
        let capacity = self.hot.packed.load(Ordering::Relaxed);
        if capacity == 0 || self.hot.word.load(Ordering::Acquire) >> GENERATION_SHIFT != generation
        {
            return Recorded::Locked;
        }
        let threshold = || Threshold {
            min_calls: self.hot.min_calls.load(Ordering::Relaxed),
            failure_rate: f64::from_bits(self.hot.failure_rate.load(Ordering::Relaxed)),
            when_full: self.hot.when_full.load(Ordering::Relaxed),
        };
        match self
            .counts
            .window
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
    fn complete_rest(
        &self,
        generation: u64,
        admission: Admission,
        ending: Ending,
        started: Option<Instant>,
    ) {
        let recorded = match admission {
            Admission::Counted => self.record_lock_free(generation, ending),
            _ => Recorded::Locked,
        };
        self.counts.totals.add(&self.totals_row, ending);
        match recorded {
            Recorded::Done => {}
            Recorded::Tripped => self.trip(generation),
            Recorded::Locked => {
                self.complete_other(generation, admission, ending.outcome(), started)
            }
        }
    }

    /// Every verdict off the packed window's path: under the lock, if it still counts.
    fn complete_other(
        &self,
        generation: u64,
        admission: Admission,
        outcome: Outcome,
        started: Option<Instant>,
    ) {
        if admission == Admission::Passthrough
            || (outcome == Outcome::Ignored && admission != Admission::Probe)
            || self.hot.word.load(Ordering::Acquire) >> GENERATION_SHIFT != generation
        {
            return;
        }
        if outcome == Outcome::Ignored {
            self.lock().release_probe(generation);
            return;
        }
        let mut now = LazyNow::new(&self.clock);
        let latency = started.map(|started| now.get().saturating_duration_since(started));
        let failure = outcome == Outcome::Failure;
        let (transition, news) = {
            let mut m = self.lock();
            let transition = m.record(
                generation,
                admission,
                failure,
                latency,
                &mut now,
                &self.counts.window,
            );
            self.publish(&m);
            (transition, m.take_ramp_news())
        };
        self.emit(transition);
        self.emit_ramp(news);
    }

    /// This result tripped the packed window of `generation`: open the breaker.
    #[cold]
    fn trip(&self, generation: u64) {
        let mut now = LazyNow::new(&self.clock);
        let transition = {
            let mut m = self.lock();
            let transition = m.trip(generation, &mut now, &self.counts.window);
            self.publish(&m);
            transition
        };
        self.emit(transition);
    }

    /// Runs `future` if the breaker admits it, and records its output as
    /// [`Classify`] judges it.
    ///
    /// If the future is dropped before it completes, nothing is recorded and a half-open
    /// probe slot is freed; if it panics, a failure is recorded.
    ///
    /// ```
    /// use std::io;
    /// use breaker::{Breaker, Config};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let b = Breaker::new("libraryd", Config::default());
    /// let out = b.call(async { Err::<u32, _>(io::Error::from(io::ErrorKind::TimedOut)) }).await;
    /// assert!(matches!(out, Ok(Err(_))));
    /// assert_eq!(b.snapshot().failures, 1);
    /// # });
    /// ```
    pub async fn call<F>(&self, future: F) -> Result<F::Output, Rejected>
    where
        F: IntoFuture,
        F::Output: Classify,
    {
        self.call_with(future, Classify::classify).await
    }

    /// Like [`call`](Breaker::call), judging the output with `classify` instead of its
    /// [`Classify`] impl.
    ///
    /// ```
    /// use breaker::{Breaker, Config, Outcome};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let b = Breaker::new("statusd", Config::default());
    /// let status = b
    ///     .call_with(async { 503_u16 }, |s| if *s >= 500 { Outcome::Failure } else { Outcome::Success })
    ///     .await;
    /// assert_eq!(status.unwrap(), 503);
    /// assert_eq!(b.snapshot().failures, 1);
    /// # });
    /// ```
    pub async fn call_with<F, C>(&self, future: F, classify: C) -> Result<F::Output, Rejected>
    where
        F: IntoFuture,
        C: FnOnce(&F::Output) -> Outcome,
    {
        let permit = self.try_acquire()?;
        let output = future.await;
        permit.record(classify(&output));
        Ok(output)
    }

    /// Rejects every call, never half-opening, until [`reset`](Breaker::reset).
    pub fn force_open(&self) {
        self.set(State::ForcedOpen);
    }

    /// Admits every call and records nothing until [`reset`](Breaker::reset).
    pub fn disable(&self) {
        self.set(State::Disabled);
    }

    /// Back to CLOSED with an empty window; results of calls admitted before are discarded.
    ///
    /// ```
    /// use breaker::{Breaker, Config, State};
    ///
    /// let b = Breaker::new("libraryd", Config::default());
    /// b.disable();
    /// b.try_acquire().unwrap().failure(); // admitted, not counted
    /// assert_eq!((b.state(), b.snapshot().calls), (State::Disabled, 0));
    /// b.force_open();
    /// assert!(b.try_acquire().is_err());
    /// b.reset();
    /// assert_eq!(b.state(), State::Closed);
    /// ```
    pub fn reset(&self) {
        self.set(State::Closed);
    }

    /// Puts a breaker no one has seen yet in `to`: a keyed family's member born forced open
    /// or disabled. No transition is announced; there was no state before to leave.
    pub(crate) fn start_in(&self, to: State) {
        let mut now = LazyNow::new(&self.clock);
        let mut m = self.lock();
        m.set(to, &mut now, &self.counts.window);
        self.publish(&m);
    }

    fn set(&self, to: State) {
        let mut now = LazyNow::new(&self.clock);
        let transition = {
            let mut m = self.lock();
            let transition = m.set(to, &mut now, &self.counts.window);
            self.publish(&m);
            transition
        };
        self.emit(transition);
    }

    /// The state and the window's counts, read together, with the lifetime
    /// [`CallTotals`](crate::CallTotals).
    pub fn snapshot(&self) -> Snapshot {
        let totals_since = self.counts.totals.read(&self.totals_row);
        let mut now = LazyNow::new(&self.clock);
        let mut m = self.lock();
        let totals = m.totals(&mut now, &self.counts.window);
        let (failure_rate, slow_call_rate) = m.rates(totals);
        let (state, admit_percent) = (m.state(), m.admit_percent());
        drop(m);
        Snapshot {
            state,
            calls: totals.calls,
            failures: totals.failures,
            slow_calls: totals.slow,
            failure_rate,
            slow_call_rate,
            rejected: totals_since.rejected,
            admit_percent,
            totals: totals_since,
        }
    }

    /// Half-open probes currently in flight (0 outside HALF_OPEN).
    pub fn probes_in_flight(&self) -> u32 {
        self.lock().probes_in_flight()
    }

    /// Calls `listener` on every [`Event`], after the change is made and with no lock held,
    /// so it may call back into the breaker. A panicking listener is contained.
    pub fn on_event(&self, listener: impl Fn(&Event) + Send + Sync + 'static) {
        self.listeners.add(Arc::new(listener));
    }

    fn lock(&self) -> MutexGuard<'_, Machine> {
        // No user code runs under this lock, so a poisoned lock still holds a sound machine.
        self.machine.lock()
    }

    /// Publishes the machine's state to admission; the open period first, so that a reader
    /// of the word finds its period.
    fn publish(&self, m: &Machine) {
        if let Some((opened, open_for)) = m.open_period() {
            self.publish_open_period(opened, open_for);
        }
        self.hot
            .full_window
            .store(full_window(m), Ordering::Relaxed);
        self.hot.word.store(admission_word(m), Ordering::Release);
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

    fn emit(&self, transition: Option<Transition>) {
        if let Some((from, to)) = transition {
            #[cfg(feature = "tracing")]
            crate::trace::transition(self, from, to);
            self.listeners.emit(&Event::StateTransition { from, to });
        }
    }

    /// Reports what the ramp did: a step entered to listeners and logs, a step held by the
    /// latency guard to logs only.
    fn emit_ramp(&self, news: Option<RampNews>) {
        match news {
            Some(RampNews::Step { step, percent }) => {
                #[cfg(feature = "tracing")]
                crate::trace::ramp_step(self, step, percent);
                self.listeners.emit(&Event::RampStep { step, percent });
            }
            #[cfg(feature = "tracing")]
            Some(RampNews::Held {
                step,
                percent,
                p99,
                baseline,
            }) => crate::trace::ramp_held(self, step, percent, p99, baseline),
            _ => {}
        }
    }
}

/// The packed window's word once full of successes, in the machine's current CLOSED.
fn full_window(m: &Machine) -> u64 {
    match m.packed_capacity() {
        Some(_) if m.state() == State::Closed => PackedWindow::full_of_successes(m.generation()),
        _ => PackedWindow::NEVER,
    }
}

/// The word admission reads for the machine as it stands.
fn admission_word(m: &Machine) -> u64 {
    let timed = if m.times_calls() { TIMED } else { 0 };
    m.generation() << GENERATION_SHIFT | timed | m.state().code()
}

impl Hot {
    /// Takes what lock-free recording needs from the machine's configuration.
    fn configure(&self, m: &Machine) {
        let threshold = m.threshold();
        self.packed
            .store(m.packed_capacity().unwrap_or(0), Ordering::Relaxed);
        self.min_calls.store(threshold.min_calls, Ordering::Relaxed);
        self.when_full.store(threshold.when_full, Ordering::Relaxed);
        self.failure_rate
            .store(threshold.failure_rate.to_bits(), Ordering::Relaxed);
    }
}

impl fmt::Debug for Breaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Breaker")
            .field("name", &self.name)
            .field("state", &self.state())
            .field("listeners", &self.listeners)
            .finish_non_exhaustive()
    }
}
