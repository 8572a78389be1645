//! Hedged attempts: when an attempt has run for the `hedge` delay without an answer, another
//! starts beside it, up to `hedges` extra attempts (Polly's hedging, tower's `Hedge`).
//!
//! Each extra attempt asks the breaker first: a rejected one is never started, and never a
//! failure. Each draws from the retry budget (and counts as a retry in the call totals), so
//! a saturated downstream is not sent twice the load: when the budget runs out, no more
//! start. The first success wins: the others are dropped, and their permits report them
//! cancelled, never failed. A failure of one attempt cancels none of the others; when the
//! last running attempt fails, the next hedge starts at once if one is left, and otherwise
//! the round ends with that failure, which the call's retries may retry, hedged again. A
//! hedged call holds one bulkhead slot for all its attempts.

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use crate::breaker::note::{as_attempt, Attempt};
use crate::engine::CallSlot;
use crate::Breaker;

use super::run::{settle, timed, Attempted, Judge};
use super::{Plan, PolicyState};

/// What woke a hedged round.
enum Woke<'a, T> {
    /// The running attempt at this index ended so.
    Ended(usize, Attempt<'a>, Result<T, u64>),
    /// The delay passed with no answer: time for the next attempt.
    Delay,
}

impl Breaker {
    /// One round of a hedged call: `first` (attempt `number` of the call), then an extra
    /// attempt after each `hedge` delay without an answer while hedges, the budget and the
    /// breaker allow. Returns how the round ended, and the number of its last attempt.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn hedged<'a, F, Fut, J>(
        &'a self,
        first: Attempt<'a>,
        mut number: u32,
        attempt: &mut F,
        plan: &Plan,
        judge: &mut J,
        slot: &CallSlot<'a>,
        state: Option<&PolicyState>,
    ) -> (Attempted<Fut::Output>, u32)
    where
        F: FnMut() -> Fut,
        Fut: Future,
        J: Judge<Fut::Output>,
    {
        let timeout = plan.timeout;
        let start = |permit: Attempt<'a>, future: Fut| {
            Box::pin(async move {
                let ended = timed(future, timeout).await;
                (permit, ended)
            })
        };
        let delay = Duration::from_nanos(plan.hedge);
        let mut hedges = plan.hedges;
        let mut running = vec![start(first, attempt())];
        let mut timer = Box::pin(tokio::time::sleep(delay));
        loop {
            let woke = poll_fn(|cx| {
                for (i, run) in running.iter_mut().enumerate() {
                    if let Poll::Ready((permit, ended)) = Pin::new(run).poll(cx) {
                        return Poll::Ready(Woke::Ended(i, permit, ended));
                    }
                }
                if hedges > 0 && timer.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Woke::Delay);
                }
                Poll::Pending
            })
            .await;
            if let Woke::Ended(i, permit, ended) = woke {
                drop(running.swap_remove(i));
                let attempted = settle(permit, ended, judge);
                // A success (or an answer that says nothing) wins: the others are dropped,
                // reported cancelled.
                if !attempted.failed() || (running.is_empty() && hedges == 0) {
                    return (attempted, number);
                }
                if !running.is_empty() {
                    continue;
                }
                // The last running attempt failed: the next starts now, if one may.
                match self.hedge(number + 1, slot, state) {
                    Some(permit) => {
                        number += 1;
                        hedges -= 1;
                        running.push(start(permit, attempt()));
                        timer.as_mut().reset(tokio::time::Instant::now() + delay);
                        continue;
                    }
                    None => return (attempted, number),
                }
            }
            match self.hedge(number + 1, slot, state) {
                Some(permit) => {
                    number += 1;
                    hedges -= 1;
                    running.push(start(permit, attempt()));
                    timer.as_mut().reset(tokio::time::Instant::now() + delay);
                }
                // Rejected, or the budget is spent: no more hedges; the running ones go on.
                None => hedges = 0,
            }
        }
    }

    /// The permit of hedged attempt `number`, if the budget and the breaker allow one: drawn
    /// from the retry budget, spent only if the breaker admits it. A rejection starts
    /// nothing and is no failure; a shadow's admission of a call an enforcing breaker would
    /// have rejected starts nothing either.
    fn hedge<'a>(
        &'a self,
        number: u32,
        slot: &CallSlot<'a>,
        state: Option<&PolicyState>,
    ) -> Option<Attempt<'a>> {
        let state = state?;
        let budget = state.budget();
        let withdrawal = budget.withdraw_held(budget.second(self.clock()), state.limit())?;
        let permit = as_attempt(number, || slot.admit(self)).ok()?;
        if permit.is_shadowed() {
            return None;
        }
        withdrawal.spend();
        Some(Attempt::new(permit, number))
    }
}
