//! What the `#[circuit_breaker]` expansion calls. Not a public API: it changes without notice.

use std::borrow::Borrow;
use std::fmt::Display;
use std::hash::Hash;

pub use crate::action::Action;
pub use crate::config::ConfigBuilder;
pub use crate::declared::{Declared, Name, StaticBreaker, StaticKeyed};
pub use crate::keyed::Keyed;
#[cfg(feature = "policy")]
pub use crate::policy::run::{classified, plain, Classified, Judge, Plain};
pub use crate::{
    policy::CallFailure, policy::TimedOut, Breaker, CallError, Classify, Config, Outcome, Permit,
    Rejected,
};
/// Submits an annotated function's [`Declared`] static to the list the registry reads at boot.
pub use inventory::submit;

/// The configuration of the attribute's builder, whose every rule the attribute checked at
/// expansion with this crate's own rules (`breakerbox-rules`, of the same version), reporting a
/// broken one at its key: nothing is left to refuse here.
pub const fn config(builder: ConfigBuilder) -> Config {
    builder.build_checked()
}

/// A key of a keyed breaker: hashable, comparable, printable, owned or borrowed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the key of a breaker",
    label = "used as `key = ...` here",
    note = "a key is `Hash + Eq + Display`, owned or borrowed (`ToOwned`), and its owned form \
            is `Send + Sync + 'static`"
)]
pub trait Key: Hash + Eq + Display + ToOwned<Owned = <Self as Key>::Stored> {
    type Stored: Borrow<Self> + Send + Sync + 'static;
}

impl<Q> Key for Q
where
    Q: ?Sized + Hash + Eq + Display + ToOwned,
    Q::Owned: Send + Sync + 'static,
{
    type Stored = Q::Owned;
}

/// The key expression, borrowed. `(&KeyArg(&expr)).__breaker_key()` sees through one
/// reference (`key = host` with `host: &str` keys by `str`) and takes anything else as is.
#[derive(Debug)]
pub struct KeyArg<'a, T: ?Sized>(pub &'a T);

/// Chosen first by method resolution: the key expression is a reference.
pub trait BorrowedKey {
    type Target: ?Sized;
    fn __breaker_key(&self) -> &Self::Target;
}

impl<Q: ?Sized> BorrowedKey for KeyArg<'_, &Q> {
    type Target = Q;
    #[inline]
    fn __breaker_key(&self) -> &Q {
        self.0
    }
}

/// Chosen otherwise: the key expression is a value.
pub trait OwnedKey {
    type Target: ?Sized;
    fn __breaker_key(&self) -> &Self::Target;
}

impl<T: ?Sized> OwnedKey for &KeyArg<'_, T> {
    type Target = T;
    #[inline]
    fn __breaker_key(&self) -> &T {
        self.0
    }
}

/// A fallback called with the function's arguments `Args` (a tuple) and `Last` (the
/// `Rejected`, or how the call ended): it takes all of the arguments, or only the leading ones,
/// or none, then `Last`. `Taken` (the tuple of the arguments it takes) tells the impls apart,
/// and is inferred from the fallback's own signature.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be this function's fallback",
    label = "not an async fn taking the function's arguments (all, the leading ones, or none), then the last argument",
    note = "a fallback is an async fn (or a fn returning a future) taking the function's arguments, receiver included, \
            or only the leading ones, then the `breakerbox::Rejected` (with `fallback_on = \"failure\"`, a \
            `breakerbox::policy::CallFailure<E>` or the function's error), and returning the function's type"
)]
pub trait Fallback<Args, Last, Taken> {
    type Future;
    fn call_fallback(self, args: Args, last: Last) -> Self::Future;
}

/// The marker of a [`Fallback`] impl: the types of the arguments it takes.
#[derive(Debug)]
pub struct Take<T>(std::marker::PhantomData<T>);

/// Calls `fallback` with the arguments it takes, then `last`.
#[inline]
pub fn fallback<F, Args, Last, Taken>(fallback: F, args: Args, last: Last) -> F::Future
where
    F: Fallback<Args, Last, Taken>,
{
    fallback.call_fallback(args, last)
}

/// One impl of [`Fallback`]: the arguments `$t` taken, `$r` left.
macro_rules! fallback_impl {
    ([$($t:ident)*] [$($r:ident)*]) => {
        #[diagnostic::do_not_recommend]
        impl<F, Fut, Last, $($t,)* $($r,)*> Fallback<($($t,)* $($r,)*), Last, Take<($($t,)*)>> for F
        where
            F: FnOnce($($t,)* Last) -> Fut,
        {
            type Future = Fut;
            #[inline]
            #[allow(non_snake_case, clippy::unused_unit)]
            fn call_fallback(self, ($($t,)* $($r,)*): ($($t,)* $($r,)*), last: Last) -> Fut {
                let _ = ($($r,)*);
                self($($t,)* last)
            }
        }
    };
}

/// The impls of [`Fallback`] for each split of the arguments into taken and left.
macro_rules! fallback_splits {
    ([$($t:ident)*] []) => {
        fallback_impl!([$($t)*] []);
    };
    ([$($t:ident)*] [$h:ident $($r:ident)*]) => {
        fallback_impl!([$($t)*] [$h $($r)*]);
        fallback_splits!([$($t)* $h] [$($r)*]);
    };
}

fallback_splits!([] []);
fallback_splits!([][A1]);
fallback_splits!([] [A1 A2]);
fallback_splits!([] [A1 A2 A3]);
fallback_splits!([] [A1 A2 A3 A4]);
fallback_splits!([] [A1 A2 A3 A4 A5]);
fallback_splits!([] [A1 A2 A3 A4 A5 A6]);
fallback_splits!([] [A1 A2 A3 A4 A5 A6 A7]);
fallback_splits!([] [A1 A2 A3 A4 A5 A6 A7 A8]);
fallback_splits!([] [A1 A2 A3 A4 A5 A6 A7 A8 A9]);
fallback_splits!([] [A1 A2 A3 A4 A5 A6 A7 A8 A9 A10]);
fallback_splits!([] [A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11]);
fallback_splits!([] [A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11 A12]);

/// The value returned for a rejected call when there is no fallback.
#[diagnostic::on_unimplemented(
    message = "a rejected call cannot be returned as `{Self}`",
    label = "this return type cannot carry `breakerbox::Rejected`",
    note = "return `Result<T, E>` and add `impl From<breakerbox::Rejected> for E`, \
            or pass `fallback = path::to::async_fn` to `#[circuit_breaker]`"
)]
pub trait FromRejected {
    fn from_rejected(rejected: Rejected) -> Self;
}

// Not recommended, so that a missing `From<Rejected>` is reported with the message above
// rather than as a bare unsatisfied bound of this impl.
#[diagnostic::do_not_recommend]
impl<T, E: From<Rejected>> FromRejected for Result<T, E> {
    #[inline]
    fn from_rejected(rejected: Rejected) -> Self {
        Err(E::from(rejected))
    }
}

/// With `fallback_on = "failure"`: the error a failed call hands to the fallback.
#[diagnostic::on_unimplemented(
    message = "with `fallback_on = \"failure\"`, the function must return `Result<T, E>`, not `{Self}`",
    label = "the fallback gets the `E` of this return type",
    note = "return `Result<T, E>`, or leave `fallback_on` out: the fallback then gets the `breakerbox::Rejected` of rejected calls"
)]
pub trait FailureFallback: Sized {
    type Error;
    /// The error, or the value itself when it is none.
    fn into_error(self) -> Result<Self::Error, Self>;
}

impl<T, E> FailureFallback for Result<T, E> {
    type Error = E;
    #[inline]
    fn into_error(self) -> Result<E, Self> {
        match self {
            Err(e) => Ok(e),
            ok => Err(ok),
        }
    }
}

/// With `fallback_on = "failure"` and no `timeout`: how a call the fallback answers ended.
#[derive(Debug)]
pub enum UntimedFailure<E> {
    Rejected(Rejected),
    Error(E),
}

/// With `fallback_on = "failure"` and no `timeout`: the fallback's last argument, a
/// [`CallFailure`] or the function's error itself.
#[diagnostic::on_unimplemented(
    message = "with `fallback_on = \"failure\"`, the fallback cannot take `{Self}` as its last argument",
    label = "the fallback gets how the call ended: a rejection, or the function's error `{E}`",
    note = "take `breakerbox::policy::CallFailure<{E}>` (no `From` needed), \
            or take `{E}` itself and add `impl From<breakerbox::Rejected> for {E}`"
)]
pub trait FromUntimedFailure<E>: Sized {
    fn from_untimed_failure(failure: UntimedFailure<E>) -> Self;
}

impl<E> FromUntimedFailure<E> for CallFailure<E> {
    #[inline]
    fn from_untimed_failure(failure: UntimedFailure<E>) -> Self {
        match failure {
            UntimedFailure::Rejected(r) => CallFailure::Rejected(r),
            UntimedFailure::Error(e) => CallFailure::Error(e),
        }
    }
}

#[diagnostic::do_not_recommend]
impl<E: From<Rejected>> FromUntimedFailure<E> for E {
    #[inline]
    fn from_untimed_failure(failure: UntimedFailure<E>) -> Self {
        match failure {
            UntimedFailure::Rejected(r) => E::from(r),
            UntimedFailure::Error(e) => e,
        }
    }
}

/// With `fallback_on = "failure"` and `timeout`: the fallback's last argument, a
/// [`CallFailure`] or the function's error itself.
#[diagnostic::on_unimplemented(
    message = "with `fallback_on = \"failure\"` and `timeout`, the fallback cannot take `{Self}` as its last argument",
    label = "the fallback gets how the call ended: a rejection, a timeout, or the function's error `{E}`",
    note = "take `breakerbox::policy::CallFailure<{E}>` (no `From` needed), \
            or take `{E}` itself and add `impl From<breakerbox::Rejected> for {E}` and `impl From<breakerbox::policy::TimedOut> for {E}`"
)]
pub trait FromTimedFailure<E>: Sized {
    fn from_timed_failure(failure: CallFailure<E>) -> Self;
}

impl<E> FromTimedFailure<E> for CallFailure<E> {
    #[inline]
    fn from_timed_failure(failure: CallFailure<E>) -> Self {
        failure
    }
}

#[diagnostic::do_not_recommend]
impl<E: From<Rejected> + From<TimedOut>> FromTimedFailure<E> for E {
    #[inline]
    fn from_timed_failure(failure: CallFailure<E>) -> Self {
        match failure {
            CallFailure::Rejected(r) => E::from(r),
            CallFailure::TimedOut(t) => E::from(t),
            CallFailure::Error(e) => e,
        }
    }
}

/// With `fallback_on = "failure"` and neither `timeout` nor `retries`: reports `output` as
/// [`Permit::record_output`] does, with the pushback a failure carries, and returns its
/// outcome, which decides whether the fallback answers.
#[inline]
pub fn record_output<T: Classify + ?Sized>(permit: Permit<'_>, output: &T) -> Outcome {
    let (outcome, pushback) = crate::classify::verdict(output);
    match pushback {
        Some(pushback) => permit.failure_with_pushback(pushback),
        None => permit.record(outcome),
    }
    outcome
}

/// A call with `retries`: every attempt asks `breaker`, under its current policy (see
/// [`Breaker::run_with`]).
#[cfg(feature = "policy")]
#[inline]
pub async fn run<F, Fut, J>(
    breaker: &Breaker,
    attempt: F,
    judge: J,
) -> Result<Fut::Output, CallError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future,
    J: Judge<Fut::Output>,
{
    breaker.run_judged(attempt, judge).await
}

/// A plain function's call with `retries`: as [`run_untimed`], on this thread, the backoff
/// a sleep of it.
#[cfg(feature = "policy")]
#[inline]
pub fn run_blocking<T, F, J>(breaker: &Breaker, attempt: F, judge: J) -> Result<T, Rejected>
where
    F: FnMut() -> T,
    J: Judge<T>,
{
    breaker.run_blocking(attempt, judge)
}

/// A plain function's body, run by its own closure: `return` and `?` bind to it, and its
/// return type `R` is pinned by the caller so that they infer as in the function.
#[inline(always)]
pub fn call_once<R, F: FnOnce() -> R>(body: F) -> R {
    body()
}

/// A call with `retries` and no `timeout`: as [`run`], with no timer, whatever the policy
/// (a breaker shared by name with a timed function) says.
#[cfg(feature = "policy")]
#[inline]
pub async fn run_untimed<F, Fut, J>(
    breaker: &Breaker,
    attempt: F,
    judge: J,
) -> Result<Fut::Output, Rejected>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future,
    J: Judge<Fut::Output>,
{
    breaker.run_untimed(attempt, judge).await
}

/// A call with `timeout` and no `retries`: one attempt, the body's future itself.
#[cfg(feature = "policy")]
#[inline]
pub async fn run_once<Fut, J>(
    breaker: &Breaker,
    future: Fut,
    judge: J,
) -> Result<Fut::Output, CallError>
where
    Fut: std::future::Future,
    J: Judge<Fut::Output>,
{
    breaker.run_once(future, judge).await
}

/// The value returned for an attempt that timed out.
#[diagnostic::on_unimplemented(
    message = "a timed-out call cannot be returned as `{Self}`: with `timeout`, its error type needs `From<breakerbox::policy::TimedOut>`",
    label = "this return type cannot carry `breakerbox::policy::TimedOut`",
    note = "return `Result<T, E>` and add `impl From<breakerbox::policy::TimedOut> for E`, \
            or pass `fallback = path::to::async_fn` with `fallback_on = \"failure\"`: that fallback answers timeouts too, \
            and takes `breakerbox::policy::CallFailure<E>`, which needs no `From`"
)]
pub trait FromTimedOut {
    fn from_timed_out(timed_out: TimedOut) -> Self;
}

// Not recommended, as `FromRejected`'s impl: a missing `From<TimedOut>` is reported with the
// message above.
#[diagnostic::do_not_recommend]
impl<T, E: From<TimedOut>> FromTimedOut for Result<T, E> {
    #[inline]
    fn from_timed_out(timed_out: TimedOut) -> Self {
        Err(E::from(timed_out))
    }
}

/// An argument given to each attempt of a retried function anew.
#[diagnostic::on_unimplemented(
    message = "with `retries`, `{Self}` is passed to each attempt anew: it must be `Clone` (or `Copy`, or a reference)",
    label = "this argument is not `Clone`",
    note = "take the argument by reference, or implement `Clone` for it"
)]
pub trait Reuse {
    fn reuse(&self) -> Self;
}

#[diagnostic::do_not_recommend]
impl<T: Clone> Reuse for T {
    #[inline]
    fn reuse(&self) -> Self {
        self.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_becomes_the_error_of_a_result() {
        let t = TimedOut::new("libraryd", std::time::Duration::from_millis(800));
        let out: Result<u32, CallError> = FromTimedOut::from_timed_out(t.clone());
        assert_eq!(out.unwrap_err().timed_out(), Some(&t));
    }

    #[test]
    fn reused_arguments_are_clones() {
        let isbn = String::from("978-1");
        let again = Reuse::reuse(&isbn);
        assert_eq!(again, isbn);
        let by_ref: &str = "978-2";
        let again: &str = Reuse::reuse(&by_ref);
        assert!(std::ptr::eq(again, by_ref));
    }
}
