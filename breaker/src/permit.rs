//! The permission to make one call, and how its result reaches the breaker.

use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::classify::verdict;
use crate::engine::Ending;
use crate::engine::Stamp;
use crate::machine::Admission;
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
    held: Held<&'a Breaker>,
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
    held: Held<Arc<Breaker>>,
    /// Set once the result is reported, so that `Drop` only releases the breaker.
    settled: bool,
}

/// What both permits are: the breaker, borrowed or shared, and what it admitted the call
/// with. Each permit reports through it once: [`Permit`] is forgotten as it reports (so its
/// `Drop` does not run), [`OwnedPermit`] notes that it reported.
struct Held<B: Deref<Target = Breaker>> {
    breaker: B,
    /// The generation admitted in, as the admission word of an untimed CLOSED shows it.
    stamp: Stamp,
    admission: Admission,
    started: Option<Instant>,
}

impl<B: Deref<Target = Breaker>> Held<B> {
    #[inline(always)]
    fn record(&self, outcome: Outcome) {
        self.end(Ending::from(outcome));
    }

    #[inline(always)]
    fn end(&self, ending: Ending) {
        self.breaker
            .complete(self.stamp, self.admission, ending, self.started);
    }

    fn failure_with_pushback(&self, pushback: Duration) {
        if pushback.is_zero() {
            return self.record(Outcome::Failure);
        }
        crate::breaker::note::with_pushback(pushback, || {
            self.breaker
                .complete_pushback(self.stamp, self.admission, self.started, pushback)
        });
    }

    #[inline(always)]
    fn record_output<T: Classify + ?Sized>(&self, output: &T) {
        match verdict(output) {
            (_, Some(pushback)) => self.failure_with_pushback(pushback),
            (outcome, None) => self.record(outcome),
        }
    }

    /// Reports the call abandoned: dropped without a result.
    fn abandon(&self) {
        self.end(abandoned());
    }

    fn debug(&self, f: &mut fmt::Formatter<'_>, name: &str) -> fmt::Result {
        f.debug_struct(name)
            .field("breaker", &self.breaker.name())
            .field("generation", &self.stamp.generation())
            .field("admission", &self.admission)
            .finish()
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
        self.held.abandon();
    }
}

impl Drop for OwnedPermit {
    fn drop(&mut self) {
        if !self.settled {
            self.held.abandon();
        }
    }
}

impl<'a> Permit<'a> {
    pub(crate) fn new(
        breaker: &'a Breaker,
        stamp: Stamp,
        admission: Admission,
        started: Option<Instant>,
    ) -> Self {
        Self {
            held: Held {
                breaker,
                stamp,
                admission,
                started,
            },
        }
    }

    /// Whether a shadow breaker admitted this call where an enforcing one would have
    /// rejected it: its result is counted nowhere but in the totals of how calls ended.
    #[cfg_attr(not(feature = "policy"), allow(dead_code))]
    pub(crate) fn is_shadowed(&self) -> bool {
        crate::engine::shadowed(self.held.stamp, self.held.admission)
    }

    /// The same permit holding a share of its breaker instead of a borrow.
    pub(crate) fn into_owned(self, breaker: Arc<Breaker>) -> OwnedPermit {
        // Moved, not settled: `Drop` must not report it.
        let Held {
            stamp,
            admission,
            started,
            ..
        } = ManuallyDrop::new(self).held;
        OwnedPermit {
            held: Held {
                breaker,
                stamp,
                admission,
                started,
            },
            settled: false,
        }
    }

    /// Reports through the held admission once: `Drop`, which reports a permit dropped
    /// without a result, must not run.
    #[inline(always)]
    fn settle(self, report: impl FnOnce(&Held<&'a Breaker>)) {
        report(&ManuallyDrop::new(self).held);
    }

    /// The call succeeded (or failed for a business reason).
    #[inline]
    pub fn success(self) {
        self.settle(|held| held.record(Outcome::Success))
    }

    /// The downstream failed.
    #[inline]
    pub fn failure(self) {
        self.settle(|held| held.record(Outcome::Failure))
    }

    /// The result says nothing about the downstream: not counted; a probe slot is freed.
    #[inline]
    pub fn ignore(self) {
        self.settle(|held| held.record(Outcome::Ignored))
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
        self.settle(|held| held.failure_with_pushback(pushback))
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
        self.settle(|held| held.record_output(output))
    }

    /// Reports `outcome`.
    #[inline]
    pub fn record(self, outcome: Outcome) {
        self.settle(|held| held.record(outcome))
    }
}

impl OwnedPermit {
    /// Reports through the held admission once; `Drop` then only releases the breaker.
    fn settle(mut self, report: impl FnOnce(&Held<Arc<Breaker>>)) {
        self.settled = true;
        report(&self.held);
    }

    /// The call succeeded (or failed for a business reason).
    pub fn success(self) {
        self.settle(|held| held.record(Outcome::Success))
    }

    /// The downstream failed.
    pub fn failure(self) {
        self.settle(|held| held.record(Outcome::Failure))
    }

    /// The result says nothing about the downstream: not counted; a probe slot is freed.
    pub fn ignore(self) {
        self.settle(|held| held.record(Outcome::Ignored))
    }

    /// As [`Permit::failure_with_pushback`].
    pub fn failure_with_pushback(self, pushback: Duration) {
        self.settle(|held| held.failure_with_pushback(pushback))
    }

    /// As [`Permit::record_output`].
    pub fn record_output<T: Classify + ?Sized>(self, output: &T) {
        self.settle(|held| held.record_output(output))
    }

    /// Reports `outcome`.
    pub fn record(self, outcome: Outcome) {
        self.settle(|held| held.record(outcome))
    }

    /// The breaker this permit belongs to.
    pub fn breaker(&self) -> &Arc<Breaker> {
        &self.held.breaker
    }
}

impl fmt::Debug for OwnedPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.held.debug(f, "OwnedPermit")
    }
}

impl fmt::Debug for Permit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.held.debug(f, "Permit")
    }
}
