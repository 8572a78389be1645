//! The permission to make one call, and how its result reaches the breaker.

use std::fmt;
use std::mem::ManuallyDrop;
use std::time::Instant;

use crate::machine::Admission;
use crate::{Breaker, Outcome};

/// Permission to make one call. Report its result with [`success`](Permit::success),
/// [`failure`](Permit::failure), [`ignore`](Permit::ignore) or [`record`](Permit::record).
///
/// Dropped without a result (a cancelled future), a permit records nothing and frees its
/// half-open probe slot; dropped while its thread panics, it records a failure.
///
/// ```
/// use breaker::{Breaker, Config};
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
    generation: u64,
    admission: Admission,
    started: Option<Instant>,
}

impl<'a> Permit<'a> {
    pub(crate) fn new(
        breaker: &'a Breaker,
        generation: u64,
        admission: Admission,
        started: Option<Instant>,
    ) -> Self {
        Self {
            breaker,
            generation,
            admission,
            started,
        }
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

    /// Reports `outcome`.
    #[inline]
    pub fn record(self, outcome: Outcome) {
        // Settled here: `Drop`, which reports a permit dropped without a result, must not run.
        let permit = ManuallyDrop::new(self);
        permit
            .breaker
            .complete(permit.generation, permit.admission, outcome, permit.started);
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let outcome = if std::thread::panicking() {
            Outcome::Failure
        } else {
            Outcome::Ignored
        };
        self.breaker
            .complete(self.generation, self.admission, outcome, self.started);
    }
}

impl fmt::Debug for Permit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit")
            .field("breaker", &self.breaker.name())
            .field("generation", &self.generation)
            .field("admission", &self.admission)
            .finish()
    }
}
