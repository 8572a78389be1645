//! [`Breaker::run`]: one call under the breaker's current policy, attempt by attempt.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use crate::breaker::CallSlot;
use crate::clock::LazyNow;
use crate::{policy::TimedOut, Breaker, CallError, Classify, Outcome, Permit};

use super::backoff;
use super::budget::{second_of, Unspent};
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
    fn failed(&self) -> bool {
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
    future: Fut,
    timeout: u64,
    judge: &mut impl Judge<Fut::Output>,
) -> Attempted<Fut::Output> {
    let output = match timeout {
        0 => future.await,
        limit => {
            let mut future = pin!(future);
            match poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await {
                Poll::Ready(output) => output,
                Poll::Pending => {
                    match tokio::time::timeout(Duration::from_nanos(limit), future).await {
                        Ok(output) => output,
                        Err(_) => {
                            permit.failure();
                            return Attempted::TimedOut(limit);
                        }
                    }
                }
            }
        }
    };
    let (outcome, pushback) = judge.judge(&output);
    match pushback {
        Some(pushback) => permit.failure_with_pushback(pushback),
        None => permit.record(outcome),
    }
    Attempted::Output(output, outcome, pushback)
}

impl Breaker {
    /// Runs a call under the breaker's current policy ([`Config::policy`](crate::Config::policy)):
    /// each attempt asks the breaker, runs under the `timeout` and is judged by
    /// [`Classify`]; a failed attempt is retried, up to `retries` times, within the retry
    /// budget, after a backoff. `attempt` makes each attempt's future afresh.
    ///
    /// In order:
    ///
    /// 1. a bulkhead slot (with `max_concurrent`), held until the call returns, retries and
    ///    backoff included;
    /// 2. for each attempt: the breaker is asked ([`try_acquire`](Breaker::try_acquire));
    ///    a rejection ends the call with [`CallError::Rejected`], counted in the rejected
    ///    totals only, never as a failure nor a retry;
    /// 3. the attempt runs under the timeout: past it, it is dropped and recorded as a
    ///    failure (and slow, when slow calls are judged). The timer starts when the attempt
    ///    first waits, so an attempt ready at its first poll makes no timer;
    /// 4. its output is judged and recorded;
    /// 5. only a [`Outcome::Failure`] is retried (never a success, a business error the
    ///    classifier calls a success, nor an ignored outcome), while retries remain and the
    ///    budget allows: retries in the last 10 s may be at most `retry_budget` times the
    ///    first attempts the breaker admitted in those seconds, plus `retry_floor` a second;
    /// 6. the wait before retry `n` is drawn from
    ///    `[0, min(retry_backoff_max, retry_backoff * 2^(n-1))]`; then back to 2. A failure
    ///    that carried the downstream's pushback ([`Classify::pushback`]) is retried no
    ///    sooner than the pushback asks, and not at all when the pushback is longer than
    ///    that backoff's ceiling: the output is returned (the breaker, opened by the
    ///    pushback, rejects the calls of that period).
    ///
    /// The last attempt's output is returned as it is, failure or not, or
    /// [`CallError::TimedOut`] if it timed out. Waiting and timeouts use tokio's clock (so
    /// a paused clock drives them exactly), and need a tokio runtime with its time driver
    /// when a `timeout` or a backoff is configured; the budget counts on the breaker's
    /// clock. Dropping the call's future cancels the attempt in flight (recorded as
    /// cancelled) and frees its slot; dropped while it waits before a retry, it gives that
    /// retry back to the budget: a retry is spent only by an attempt that starts.
    ///
    /// A shadow breaker ([`Config::shadow`](crate::Config::shadow)) moves exactly as an
    /// enforcing one would: where that one would reject the call (a full bulkhead, or the
    /// state, before the first attempt or a retry), the shadow runs that attempt instead,
    /// counted as a shadow rejection, and the call ends with it. That attempt holds no
    /// bulkhead slot, its result reaches no window, it is never retried, and it takes
    /// nothing from the retry budget.
    ///
    /// [`CallTotals`](crate::snapshot::CallTotals) counts the retries made and the failures returned
    /// because the budget was exhausted. A breaker without `retries` never touches its
    /// budget.
    ///
    /// The budget is the rule of Finagle's and Envoy's retry budgets and of tower's
    /// `TpsBudget`, with two differences. It is exact: the ratio is kept in parts per billion
    /// and compared in integers, so 0.3 allows 3 retries per 10 first attempts, where
    /// `TpsBudget` withdraws `1 / ratio` tokens rounded down to an integer per retry, which
    /// allows a third. And it counts on the breaker's own clock, the one its window and open
    /// period read, so a [`ManualClock`](crate::clock::ManualClock) drives it as well as
    /// tokio's paused clock does; `TpsBudget` reads only tokio's. seatbelt and
    /// tower-resilience have no budget, and their retry, breaker and timeout layers share no
    /// state: whether a retry asks the breaker, and whether a rejection is retried, depends on
    /// how the layers are stacked and on the user's recovery function. Here the order is the
    /// runner's.
    ///
    /// ```
    /// use std::io;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::time::Duration;
    /// use breakerbox::{Breaker, Config};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true)
    /// #     .build().unwrap().block_on(async {
    /// let config = Config::builder().timeout(Duration::from_millis(800)).retries(2).build()?;
    /// let b = Breaker::new("libraryd", config);
    /// let attempts = &AtomicU32::new(0);
    /// let book = b
    ///     .run(|| async move {
    ///         // A blip: the first attempt is refused, the second answers.
    ///         match attempts.fetch_add(1, Ordering::Relaxed) {
    ///             0 => Err(io::Error::from(io::ErrorKind::ConnectionRefused)),
    ///             _ => Ok("Dune"),
    ///         }
    ///     })
    ///     .await?;
    /// assert_eq!(book?, "Dune");
    /// let totals = b.snapshot().totals;
    /// assert_eq!((totals.failure, totals.success, totals.retries), (1, 1, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn run<F, Fut>(&self, attempt: F) -> Result<Fut::Output, CallError>
    where
        F: FnMut() -> Fut,
        Fut: Future,
        Fut::Output: Classify,
    {
        self.run_planned(attempt, classified(), true).await
    }

    /// Like [`run`](Breaker::run), judging each attempt's output with `classify` instead of
    /// its [`Classify`] impl.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::{Breaker, CallError, Config, Outcome};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true)
    /// #     .build().unwrap().block_on(async {
    /// let config = Config::builder().timeout(Duration::from_millis(800)).build()?;
    /// let b = Breaker::new("statusd", config);
    ///
    /// let status = b.run_with(|| async { 503_u16 }, |s| match *s {
    ///     500.. => Outcome::Failure,
    ///     _ => Outcome::Success,
    /// });
    /// assert_eq!(status.await?, 503);
    ///
    /// let hung = b.run_with(std::future::pending::<u16>, |_| Outcome::Success).await;
    /// let Err(CallError::TimedOut(timed_out)) = hung else { panic!("{hung:?}") };
    /// assert_eq!(timed_out.to_string(), "call to 'statusd' timed out after 800ms");
    /// assert_eq!(b.snapshot().totals.failure, 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn run_with<F, Fut, C>(
        &self,
        attempt: F,
        classify: C,
    ) -> Result<Fut::Output, CallError>
    where
        F: FnMut() -> Fut,
        Fut: Future,
        C: FnMut(&Fut::Output) -> Outcome,
    {
        self.run_planned(attempt, Plain(classify), true).await
    }

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
    async fn run_planned<F, Fut, J>(
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
        loop {
            // Admitted only as a shadow: an enforcing breaker would have ended the call here,
            // freeing its slot, and retried nothing.
            let shadowed = permit.is_shadowed();
            if shadowed {
                slot = CallSlot::Unlimited;
            }
            let ended = self::attempt(permit, attempt(), plan.timeout, &mut judge).await;
            let Some((withdrawal, pushback)) = self.retry_of(&ended, state, &plan, shadowed, retry)
            else {
                return ended.into_result(self);
            };
            drop(ended);
            retry += 1;
            backoff::wait_at_least(plan.backoff(), plan.backoff_max(), retry, pushback).await;
            permit = slot.admit(self)?;
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
        let state = (plan.retries > 0 && !permit.is_shadowed()).then(|| self.policy_state());
        if let Some(state) = state {
            state.budget().deposit(self.budget_second());
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
        let withdrawal = state
            .budget()
            .withdraw_held(self.budget_second(), state.limit())?;
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
        attempt(permit, future, timeout, &mut classify)
            .await
            .into_result(self)
    }

    /// The present second on the breaker's clock, as the retry budget counts it.
    pub(crate) fn budget_second(&self) -> u64 {
        second_of(LazyNow::new(self.clock()).ticks())
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
