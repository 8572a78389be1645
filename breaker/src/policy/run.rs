//! [`Breaker::run`]: one call under the breaker's current policy, attempt by attempt.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use crate::breaker::note::{as_attempt, Attempt};
use crate::engine::CallSlot;
use crate::{policy::TimedOut, Breaker, CallError, Classify, Outcome, Permit};

use super::backoff;
use super::budget::Unspent;
use super::{Plan, PolicyState};

/// How the call policy judges an attempt's output: its outcome, and for a failure the
/// pushback it carries.
pub trait Judge<O: ?Sized> {
    /// The outcome of `output`, with the pushback of a failure (`None` for none).
    fn judge(&mut self, output: &O) -> (Outcome, Option<Duration>);
}

/// A classifier of the caller's, which tells no pushback.
#[derive(Debug)]
pub struct Plain<C>(C);

/// Wraps a caller's classifier (its closure's signature is inferred from the bound).
pub fn plain<O, C: FnMut(&O) -> Outcome>(classify: C) -> Plain<C> {
    Plain(classify)
}

impl<O, C: FnMut(&O) -> Outcome> Judge<O> for Plain<C> {
    #[inline]
    fn judge(&mut self, output: &O) -> (Outcome, Option<Duration>) {
        ((self.0)(output), None)
    }
}

/// The output's own [`Classify`] impl, pushback included.
pub struct Classified<O: ?Sized>(std::marker::PhantomData<fn(&O)>);

/// Judges outputs of type `O` by their [`Classify`] impl.
pub fn classified<O: Classify + ?Sized>() -> Classified<O> {
    Classified(std::marker::PhantomData)
}

impl<O: Classify + ?Sized> Judge<O> for Classified<O> {
    #[inline]
    fn judge(&mut self, output: &O) -> (Outcome, Option<Duration>) {
        crate::classify::verdict(output)
    }
}

impl<O: ?Sized> std::fmt::Debug for Classified<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Classified")
    }
}

/// How one attempt ended.
pub(super) enum Attempted<T> {
    /// It completed with this output, judged so, with the pushback of a failure.
    Output(T, Outcome, Option<Duration>),
    /// It ran past this limit (in nanoseconds) and was cancelled.
    TimedOut(u64),
}

impl<T> Attempted<T> {
    pub(super) fn failed(&self) -> bool {
        match self {
            Attempted::Output(_, outcome, _) => *outcome == Outcome::Failure,
            Attempted::TimedOut(_) => true,
        }
    }

    /// How long the downstream asked to be left alone, if it did.
    fn pushback(&self) -> Option<Duration> {
        match self {
            Attempted::Output(_, _, pushback) => *pushback,
            Attempted::TimedOut(_) => None,
        }
    }

    /// What the caller gets when this attempt is the last.
    pub(super) fn into_result(self, breaker: &Breaker) -> Result<T, CallError> {
        match self {
            Attempted::Output(output, _, _) => Ok(output),
            Attempted::TimedOut(limit) => Err(CallError::TimedOut(TimedOut::new(
                breaker.name(),
                Duration::from_nanos(limit),
            ))),
        }
    }
}

/// Runs one admitted attempt under `timeout` and records how it ended: an attempt past the
/// limit is dropped and recorded as a failure (its latency, the limit, counts as slow when
/// slow calls are judged), never as a cancelled call.
///
/// `timeout` is in nanoseconds, 0 for none. The timer starts when the attempt first waits:
/// an attempt ready at its first poll (a cached answer, a value already in a channel) reads
/// no clock and makes no timer.
async fn attempt<Fut: Future>(
    permit: Permit<'_>,
    number: u32,
    future: Fut,
    timeout: u64,
    judge: &mut impl Judge<Fut::Output>,
) -> Attempted<Fut::Output> {
    let permit = Attempt::new(permit, number);
    let ended = timed(future, timeout).await;
    settle(permit, ended, judge)
}

/// Runs `future` under `timeout` (nanoseconds, 0 for none): its output, or the limit it ran
/// past, dropped. The timer starts when the future first waits.
pub(super) async fn timed<Fut: Future>(future: Fut, timeout: u64) -> Result<Fut::Output, u64> {
    match timeout {
        0 => Ok(future.await),
        limit => {
            let mut future = pin!(future);
            match poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await {
                Poll::Ready(output) => Ok(output),
                Poll::Pending => tokio::time::timeout(Duration::from_nanos(limit), future)
                    .await
                    .map_err(|_| limit),
            }
        }
    }
}

/// Records how an attempt ended through its permit, judged by `judge`: past its timeout, a
/// failure.
#[inline(always)]
pub(super) fn settle<T>(
    permit: Attempt<'_>,
    ended: Result<T, u64>,
    judge: &mut impl Judge<T>,
) -> Attempted<T> {
    let output = match ended {
        Ok(output) => output,
        Err(limit) => {
            permit.report(Permit::failure);
            return Attempted::TimedOut(limit);
        }
    };
    let (outcome, pushback) = judge.judge(&output);
    permit.report(|permit| match pushback {
        Some(pushback) => permit.failure_with_pushback(pushback),
        None => permit.record(outcome),
    });
    Attempted::Output(output, outcome, pushback)
}

impl Breaker {
    /// The runner with any [`Judge`]: the attribute's expansion for a function with
    /// `retries` and a `timeout`.
    pub(crate) async fn run_judged<F, Fut, J>(
        &self,
        attempt: F,
        judge: J,
    ) -> Result<Fut::Output, CallError>
    where
        F: FnMut() -> Fut,
        Fut: Future,
        J: Judge<Fut::Output>,
    {
        self.run_planned(attempt, judge, true).await
    }

    /// [`run_with`](Breaker::run_with) with no timeout, whatever the policy says: the
    /// attribute's expansion for a function with `retries` and no `timeout`, whose error
    /// type need not be made from a [`TimedOut`].
    pub(crate) async fn run_untimed<F, Fut, J>(
        &self,
        attempt: F,
        classify: J,
    ) -> Result<Fut::Output, crate::Rejected>
    where
        F: FnMut() -> Fut,
        Fut: Future,
        J: Judge<Fut::Output>,
    {
        match self.run_planned(attempt, classify, false).await {
            Ok(output) => Ok(output),
            Err(CallError::Rejected(rejected)) => Err(rejected),
            // `run_planned` runs no timer when it is not `timed`, and only a timer makes a
            // `TimedOut`.
            Err(CallError::TimedOut(_)) => unreachable!("an untimed call timed out"),
        }
    }

    /// The runner: under the published policy, without its timeout unless `timed`.
    pub(crate) async fn run_planned<F, Fut, J>(
        &self,
        mut attempt: F,
        mut judge: J,
        timed: bool,
    ) -> Result<Fut::Output, CallError>
    where
        F: FnMut() -> Fut,
        Fut: Future,
        J: Judge<Fut::Output>,
    {
        let mut plan = self.policy_plan();
        if !timed {
            plan.timeout = 0;
        }
        let (mut slot, mut permit, state) = self.start_call(&plan)?;
        let mut retry = 0;
        // The number of the call's last attempt started, hedges included.
        let mut number = 1;
        loop {
            // Admitted only as a shadow: an enforcing breaker would have ended the call here,
            // freeing its slot, and retried nothing.
            let shadowed = permit.is_shadowed();
            if shadowed {
                slot = CallSlot::Unlimited;
            }
            let ended = if plan.hedge != 0 && !shadowed {
                let first = Attempt::new(permit, number);
                let (ended, last) = self
                    .hedged(first, number, &mut attempt, &plan, &mut judge, &slot, state)
                    .await;
                number = last;
                ended
            } else {
                // `attempt`'s steps written out: one future the fewer to keep the permit in.
                let permit = Attempt::new(permit, number);
                let ended = self::timed(attempt(), plan.timeout).await;
                settle(permit, ended, &mut judge)
            };
            // A success ends the call here, without asking the budget.
            let retried = if ended.failed() {
                self.retry_of(&ended, state, &plan, shadowed, retry)
            } else {
                None
            };
            let Some((withdrawal, pushback)) = retried else {
                return ended.into_result(self);
            };
            drop(ended);
            retry += 1;
            backoff::wait_at_least(plan.backoff(), plan.backoff_max(), retry, pushback).await;
            number += 1;
            permit = as_attempt(number, || slot.admit(self))?;
            // A retry an enforcing breaker would have rejected is no retry: its withdrawal
            // goes back.
            if !permit.is_shadowed() {
                withdrawal.spend();
            }
        }
    }

    /// A call's start under `plan`: its bulkhead slot, its first attempt's permit, and the
    /// retry budget's state, which has the first attempt deposited. A call without retries
    /// never touches the budget, nor does one an enforcing breaker would have rejected.
    pub(super) fn start_call(
        &self,
        plan: &Plan,
    ) -> Result<(CallSlot<'_>, Permit<'_>, Option<&PolicyState>), crate::Rejected> {
        let slot = self.bulkhead_slot()?;
        let permit = slot.admit(self)?;
        let state = ((plan.retries > 0 || plan.hedge != 0) && !permit.is_shadowed())
            .then(|| self.policy_state());
        if let Some(state) = state {
            let budget = state.budget();
            budget.deposit(budget.second(self.clock()));
        }
        Ok((slot, permit, state))
    }

    /// Whether the call is retried after `ended`, its attempt `retry` (0 for the first): the
    /// budget's withdrawal for the next attempt, and the pushback to wait at least, or `None`
    /// when the call ends with `ended`.
    pub(super) fn retry_of<'s, T>(
        &self,
        ended: &Attempted<T>,
        state: Option<&'s PolicyState>,
        plan: &Plan,
        shadowed: bool,
        retry: u32,
    ) -> Option<(Unspent<'s>, Duration)> {
        let state = match state {
            Some(state) if !shadowed && ended.failed() && retry < plan.retries => state,
            _ => return None,
        };
        // The downstream asked for more than the backoff would wait: no retry.
        let pushback = ended.pushback().unwrap_or(Duration::ZERO);
        if pushback > backoff::ceiling(plan.backoff(), plan.backoff_max(), retry + 1) {
            return None;
        }
        // Spent only by an attempt that starts: dropped in the backoff (the caller gave up)
        // or with the retry rejected, it is given back.
        let budget = state.budget();
        let withdrawal = budget.withdraw_held(budget.second(self.clock()), state.limit())?;
        Some((withdrawal, pushback))
    }

    /// One attempt of `future` under the current policy's timeout, never retried: the
    /// attribute's expansion for a function with `timeout` and no `retries`.
    pub(crate) async fn run_once<Fut, J>(
        &self,
        future: Fut,
        mut classify: J,
    ) -> Result<Fut::Output, CallError>
    where
        Fut: Future,
        J: Judge<Fut::Output>,
    {
        let timeout = self.policy_plan().timeout;
        let mut slot = self.bulkhead_slot()?;
        let permit = slot.admit(self)?;
        if permit.is_shadowed() {
            // An enforcing breaker's call would have ended, freeing its slot.
            slot = CallSlot::Unlimited;
        }
        let _slot = slot;
        attempt(permit, 1, future, timeout, &mut classify)
            .await
            .into_result(self)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Breaker, Config};
    use std::time::Duration;

    #[tokio::test]
    async fn a_call_without_retries_never_makes_the_budget() {
        let config = Config::builder().timeout(Duration::from_secs(1)).build();
        let b = Breaker::new("run::no_budget", config.unwrap());
        let down = || async { Err::<(), _>(std::io::Error::other("down")) };
        assert!(matches!(b.run(down).await, Ok(Err(_))));
        assert!(!b.policy_state().budget_made());
        let retried = Config::builder().retries(1).retry_backoff(Duration::ZERO);
        b.reconfigure(retried.build().unwrap());
        assert!(matches!(b.run(down).await, Ok(Err(_))));
        assert!(b.policy_state().budget_made());
    }

    #[tokio::test(start_paused = true)]
    async fn an_untimed_call_runs_past_the_policys_timeout() {
        let config = Config::builder()
            .timeout(Duration::from_millis(10))
            .retries(1)
            .build();
        let b = Breaker::new("run::untimed", config.unwrap());
        let slow = || async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok::<_, std::io::Error>("late")
        };
        let out = b.run_untimed(slow, super::classified()).await;
        assert_eq!(out.unwrap().unwrap(), "late");
        let timed = b.run(slow).await;
        assert_eq!(
            timed.unwrap_err().to_string(),
            "call to 'run::untimed' timed out after 10ms"
        );
    }
}
