//! The `Breaker`: admission, recording and operator actions over the state machine.

use std::fmt;
use std::future::IntoFuture;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use crate::clock::{Clock, ClockSource, LazyNow};
use crate::config::Config;
use crate::events::{Event, Listeners};
use crate::machine::{Admission, Machine, Transition};
use crate::{Classify, Outcome, Permit, Rejected, Snapshot, State};

const STATE_BITS: u32 = 3;
const STATE_MASK: u64 = (1 << STATE_BITS) - 1;

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
pub struct Breaker {
    name: Arc<str>,
    /// The key's text, for a breaker of a keyed family.
    key: Option<Arc<str>>,
    clock: ClockSource,
    /// `generation << 3 | state`, written under the lock, read without it so that CLOSED
    /// admits with one atomic load.
    word: AtomicU64,
    machine: Mutex<Machine>,
    rejected: AtomicU64,
    listeners: Listeners,
    /// Whether permits note their start: slow-call detection or the ramp's latency guard.
    times_calls: AtomicBool,
}

impl Breaker {
    /// A breaker named `name` on the default clock.
    pub fn new(name: impl Into<Arc<str>>, config: Config) -> Self {
        Self::with_source(name.into(), config, ClockSource::Default)
    }

    /// A breaker on a clock of your own, typically a [`ManualClock`](crate::clock::ManualClock).
    pub fn with_clock(name: impl Into<Arc<str>>, config: Config, clock: impl Clock) -> Self {
        Self::with_source(name.into(), config, ClockSource::Custom(Arc::new(clock)))
    }

    fn with_source(name: Arc<str>, config: Config, clock: ClockSource) -> Self {
        let machine = Machine::new(config, clock.now());
        Self {
            times_calls: AtomicBool::new(machine.times_calls()),
            name,
            key: None,
            clock,
            word: AtomicU64::new(State::Closed.code()),
            machine: Mutex::new(machine),
            rejected: AtomicU64::new(0),
            listeners: Listeners::default(),
        }
    }

    /// One breaker of a keyed family, e.g. `app::get[10.0.0.1:7000]` with key `10.0.0.1:7000`.
    pub(crate) fn keyed(name: String, key: Arc<str>, config: Config) -> Self {
        Self {
            key: Some(key),
            ..Self::new(name, config)
        }
    }

    /// The breaker's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key of a breaker created per key by `#[circuit_breaker(key = ...)]`, as its
    /// `Display` text; `None` for other breakers.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The breaker's current configuration.
    pub fn config(&self) -> Config {
        self.lock().config().clone()
    }

    /// Replaces the configuration of a running breaker, keeping its state: an operator's
    /// runtime override. A different window shape starts an empty window, and results of
    /// calls admitted before are then discarded.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker::{Breaker, Config, State};
    ///
    /// let b = Breaker::new("libraryd", Config::default());
    /// b.reconfigure(Config::builder().count_window(2).min_calls(1).build()?);
    /// b.try_acquire().unwrap().failure();
    /// assert_eq!(b.state(), State::Open);
    /// assert_eq!(b.config().min_calls(), 1);
    /// # Ok::<(), breaker::ConfigError>(())
    /// ```
    pub fn reconfigure(&self, config: Config) {
        let now = self.clock.now();
        let mut m = self.lock();
        m.reconfigure(config, now);
        self.times_calls.store(m.times_calls(), Ordering::Relaxed);
        self.publish(&m);
    }

    /// The current state. An expired OPEN still reads `Open` until the next call asks.
    pub fn state(&self) -> State {
        State::from_code(self.word.load(Ordering::Acquire) & STATE_MASK)
    }

    /// Asks to make one call: a [`Permit`] to report its result with, or why not.
    ///
    /// In CLOSED this is one atomic load; the clock is read only when slow calls are judged.
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
    #[inline]
    pub fn try_acquire(&self) -> Result<Permit<'_>, Rejected> {
        let word = self.word.load(Ordering::Acquire);
        let generation = word >> STATE_BITS;
        match State::from_code(word & STATE_MASK) {
            State::Closed => Ok(Permit::new(
                self,
                generation,
                Admission::Counted,
                self.start_time(None),
            )),
            State::Disabled => Ok(Permit::new(self, generation, Admission::Passthrough, None)),
            _ => self.acquire_locked(),
        }
    }

    #[cold]
    fn acquire_locked(&self) -> Result<Permit<'_>, Rejected> {
        let mut now = LazyNow::new(&self.clock);
        let mut transition = None;
        let (admitted, generation) = {
            let mut m = self.lock();
            let admitted = m.acquire(&mut now, &mut transition);
            self.publish(&m);
            (admitted, m.generation())
        };
        self.emit(transition);
        match admitted {
            Ok(admission) => {
                let started = self.start_time(Some(&mut now));
                Ok(Permit::new(self, generation, admission, started))
            }
            Err((reason, retry_after)) => {
                self.rejected.fetch_add(1, Ordering::Relaxed);
                Err(Rejected::new(self.name.clone(), reason, retry_after))
            }
        }
    }

    /// When calls are timed (slow calls, latency guard), the time a call starts.
    #[inline]
    fn start_time(&self, now: Option<&mut LazyNow<'_>>) -> Option<Instant> {
        if !self.times_calls.load(Ordering::Relaxed) {
            return None;
        }
        Some(match now {
            Some(now) => now.get(),
            None => self.clock.now(),
        })
    }

    /// Reports the result of a permit; called by `Permit`.
    pub(crate) fn complete(
        &self,
        generation: u64,
        admission: Admission,
        outcome: Outcome,
        started: Option<Instant>,
    ) {
        if admission == Admission::Passthrough
            || (outcome == Outcome::Ignored && admission != Admission::Probe)
            || self.word.load(Ordering::Acquire) >> STATE_BITS != generation
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
        let transition = {
            let mut m = self.lock();
            let transition = m.record(generation, admission, failure, latency, &mut now);
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

    fn set(&self, to: State) {
        let mut now = LazyNow::new(&self.clock);
        let transition = {
            let mut m = self.lock();
            let transition = m.set(to, &mut now);
            self.publish(&m);
            transition
        };
        self.emit(transition);
    }

    /// The state and the window's counts, read together.
    pub fn snapshot(&self) -> Snapshot {
        let mut now = LazyNow::new(&self.clock);
        let mut m = self.lock();
        let totals = m.totals(&mut now);
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
            rejected: self.rejected.load(Ordering::Relaxed),
            admit_percent,
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
        self.machine.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn publish(&self, m: &Machine) {
        let word = m.generation() << STATE_BITS | m.state().code();
        self.word.store(word, Ordering::Release);
    }

    fn emit(&self, transition: Option<Transition>) {
        if let Some((from, to)) = transition {
            #[cfg(feature = "tracing")]
            crate::trace::transition(self, from, to);
            self.listeners.emit(&Event::StateTransition { from, to });
        }
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
