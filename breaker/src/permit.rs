//! The permission to make one call, and how its result reaches the breaker.

use std::fmt;
use std::mem::ManuallyDrop;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::breaker::generation_of;
use crate::classify::verdict;
use crate::machine::Admission;
use crate::tally::Ending;
use crate::{Breaker, Classify, Outcome};

/// Permission to make one call. Report its result with [`success`](Permit::success),
/// [`failure`](Permit::failure), [`ignore`](Permit::ignore) or [`record`](Permit::record).
///
/// Dropped without a result (a cancelled future), a permit records nothing and frees its
/// half-open probe slot; dropped while its thread panics, it records a failure. A permit of
/// a breaker with a bulkhead frees its slot however it ends.
///
/// A panic is a failure of the call, whoever catches it. [`Breaker::call`],
/// [`Breaker::run`], `#[circuit_breaker]` and the tower layer record it as the panic leaves
/// the call's future, also when a `catch_unwind` around that future catches it and the
/// future is dropped later. A permit held by hand records the failure only if it is dropped
/// while the panic unwinds: one kept past a caught panic (in a field of a future of your own,
/// say) is yours to settle with [`failure`](Permit::failure), or it counts as cancelled.
///
/// ```
/// use breakerbox::{Breaker, Config};
///
/// let b = Breaker::new("libraryd", Config::default());
/// match b.try_acquire() {
///     Ok(permit) => permit.success(),
///     Err(rejected) => panic!("a new breaker is closed: {rejected}"),
/// }
/// assert_eq!(b.snapshot().calls, 1);
/// ```
#[must_use = "a permit reports nothing unless its result is recorded"]
pub struct Permit<'a> {
    breaker: &'a Breaker,
    /// The generation admitted in, as the admission word of an untimed CLOSED shows it (see
    /// `breakerbox::stamp`).
    stamp: u64,
    admission: Admission,
    started: Option<Instant>,
}

impl<'a> Permit<'a> {
    pub(crate) fn new(
        breaker: &'a Breaker,
        stamp: u64,
        admission: Admission,
        started: Option<Instant>,
    ) -> Self {
        Self {
            breaker,
            stamp,
            admission,
            started,
        }
    }

    /// Whether a shadow breaker admitted this call where an enforcing one would have
    /// rejected it: its result is counted nowhere but in the totals of how calls ended.
    #[cfg_attr(not(feature = "policy"), allow(dead_code))]
    pub(crate) fn is_shadowed(&self) -> bool {
        crate::breaker::shadowed(self.stamp, self.admission)
    }

    /// The call succeeded (or failed for a business reason).
    #[inline]
    pub fn success(self) {
        self.record(Outcome::Success)
    }

    /// The downstream failed.
    #[inline]
    pub fn failure(self) {
        self.record(Outcome::Failure)
    }

    /// The result says nothing about the downstream: not counted; a probe slot is freed.
    #[inline]
    pub fn ignore(self) {
        self.record(Outcome::Ignored)
    }

    /// The downstream failed, and asked not to be called for `pushback` (an HTTP
    /// `Retry-After`, a gRPC `grpc-retry-pushback-ms`): the breaker opens at once for that
    /// long, capped by [`pushback_max`](crate::config::ConfigBuilder::pushback_max), unless
    /// pushback is off or the permit no longer counts (then it is a plain failure). A zero
    /// pushback is none.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::{Breaker, Config, RejectReason, State};
    ///
    /// let b = Breaker::new("libraryd", Config::default());
    /// b.try_acquire().unwrap().failure_with_pushback(Duration::from_secs(30));
    /// assert_eq!(b.state(), State::Open);
    /// let rejected = b.try_acquire().unwrap_err();
    /// assert_eq!(rejected.reason(), RejectReason::Open);
    /// assert!(rejected.retry_after().unwrap() > Duration::from_secs(29));
    /// ```
    pub fn failure_with_pushback(self, pushback: Duration) {
        if pushback.is_zero() {
            return self.failure();
        }
        let permit = ManuallyDrop::new(self);
        permit
            .breaker
            .complete_pushback(permit.stamp, permit.admission, permit.started, pushback);
    }

    /// Reports the output of the call as its [`Classify`] impl judges it, with the pushback
    /// a failure carries ([`Classify::pushback`]): what [`Breaker::call`] does.
    ///
    /// ```
    /// use std::io;
    /// use breakerbox::{Breaker, Config};
    ///
    /// let b = Breaker::new("libraryd", Config::default());
    /// let output: Result<u32, io::Error> = Err(io::ErrorKind::TimedOut.into());
    /// b.try_acquire().unwrap().record_output(&output);
    /// assert_eq!(b.snapshot().failures, 1);
    /// ```
    #[inline]
    pub fn record_output<T: Classify + ?Sized>(self, output: &T) {
        match verdict(output) {
            (_, Some(pushback)) => self.failure_with_pushback(pushback),
            (outcome, None) => self.record(outcome),
        }
    }

    /// Reports `outcome`.
    #[inline]
    pub fn record(self, outcome: Outcome) {
        // Settled here: `Drop`, which reports a permit dropped without a result, must not run.
        let permit = ManuallyDrop::new(self);
        permit.breaker.complete(
            permit.stamp,
            permit.admission,
            Ending::from(outcome),
            permit.started,
        );
    }
}

/// How a permit dropped without a result ended: a failure while its thread panics, a
/// cancelled call (judged as nothing) otherwise.
fn abandoned() -> Ending {
    if std::thread::panicking() {
        Ending::Failure
    } else {
        Ending::Cancelled
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.breaker
            .complete(self.stamp, self.admission, abandoned(), self.started);
    }
}

impl Permit<'_> {
    /// The same permit holding a share of its breaker instead of a borrow.
    pub(crate) fn into_owned(self, breaker: Arc<Breaker>) -> OwnedPermit {
        // Moved, not settled: `Drop` must not report it.
        let permit = ManuallyDrop::new(self);
        OwnedPermit {
            breaker,
            stamp: permit.stamp,
            admission: permit.admission,
            started: permit.started,
            settled: false,
        }
    }
}

/// A [`Permit`] that holds a share of its breaker rather than a borrow, for futures that must
/// be `'static` (a tower service's response future, a spawned task). It reports and drops
/// exactly as a `Permit` does.
///
/// ```
/// use std::sync::Arc;
/// use breakerbox::{Breaker, Config};
///
/// let b = Arc::new(Breaker::new("libraryd", Config::default()));
/// let permit = b.try_acquire_owned().expect("closed");
/// std::thread::spawn(move || permit.failure()).join().unwrap();
/// assert_eq!(b.snapshot().failures, 1);
/// ```
#[must_use = "a permit reports nothing unless its result is recorded"]
pub struct OwnedPermit {
    breaker: Arc<Breaker>,
    /// As [`Permit`]'s.
    stamp: u64,
    admission: Admission,
    started: Option<Instant>,
    /// Set once the result is reported, so that `Drop` only releases the breaker.
    settled: bool,
}

impl OwnedPermit {
    /// The call succeeded (or failed for a business reason).
    pub fn success(self) {
        self.record(Outcome::Success)
    }

    /// The downstream failed.
    pub fn failure(self) {
        self.record(Outcome::Failure)
    }

    /// The result says nothing about the downstream: not counted; a probe slot is freed.
    pub fn ignore(self) {
        self.record(Outcome::Ignored)
    }

    /// As [`Permit::failure_with_pushback`].
    pub fn failure_with_pushback(mut self, pushback: Duration) {
        if pushback.is_zero() {
            return self.failure();
        }
        self.settled = true;
        self.breaker
            .complete_pushback(self.stamp, self.admission, self.started, pushback);
    }

    /// As [`Permit::record_output`].
    pub fn record_output<T: Classify + ?Sized>(self, output: &T) {
        match verdict(output) {
            (_, Some(pushback)) => self.failure_with_pushback(pushback),
            (outcome, None) => self.record(outcome),
        }
    }

    /// Reports `outcome`.
    pub fn record(mut self, outcome: Outcome) {
        self.settled = true;
        self.breaker.complete(
            self.stamp,
            self.admission,
            Ending::from(outcome),
            self.started,
        );
    }

    /// The breaker this permit belongs to.
    pub fn breaker(&self) -> &Arc<Breaker> {
        &self.breaker
    }
}

impl Drop for OwnedPermit {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        self.breaker
            .complete(self.stamp, self.admission, abandoned(), self.started);
    }
}

impl fmt::Debug for OwnedPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedPermit")
            .field("breaker", &self.breaker.name())
            .field("generation", &generation_of(self.stamp))
            .field("admission", &self.admission)
            .finish()
    }
}

impl fmt::Debug for Permit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit")
            .field("breaker", &self.breaker.name())
            .field("generation", &generation_of(self.stamp))
            .field("admission", &self.admission)
            .finish()
    }
}
