//! The call policy of a plain (blocking) function: its attempts asked of the breaker, judged,
//! and retried on the caller's thread, the backoff a sleep of that thread.

use super::backoff;
use super::run::{Attempted, Judge};
use crate::breaker::note::{as_attempt, Attempt};
use crate::engine::CallSlot;
use crate::{Breaker, Permit, Rejected};

/// Runs one admitted attempt and records how it ended. A blocking attempt cannot be
/// cancelled, so it has no timeout; a panic in it unwinds through the permit, which records
/// a failure.
fn attempt<T>(
    permit: Permit<'_>,
    number: u32,
    attempt: impl FnOnce() -> T,
    judge: &mut impl Judge<T>,
) -> Attempted<T> {
    // Noted as attempt `number` however it ends, a panic of the body included.
    let permit = Attempt::new(permit, number);
    let output = attempt();
    let (outcome, pushback) = judge.judge(&output);
    permit.report(|permit| match pushback {
        Some(pushback) => permit.failure_with_pushback(pushback),
        None => permit.record(outcome),
    });
    Attempted::Output(output, outcome, pushback)
}

impl Breaker {
    /// [`run_untimed`](Breaker::run_untimed) for a plain function: the attribute's expansion
    /// of a `fn` (not `async`) with `retries`. The same order (a bulkhead slot for the call,
    /// the breaker asked before every attempt, only failures retried within the retries and
    /// the budget, the backoff's draw and the pushback's floor), with no timeout, and the
    /// backoff a sleep that blocks the calling thread.
    pub(crate) fn run_blocking<T, J>(
        &self,
        mut run: impl FnMut() -> T,
        mut judge: J,
    ) -> Result<T, Rejected>
    where
        J: Judge<T>,
    {
        let plan = self.policy_plan();
        let (mut slot, mut permit, state) = self.start_call(&plan)?;
        let mut retry = 0;
        loop {
            let shadowed = permit.is_shadowed();
            if shadowed {
                slot = CallSlot::Unlimited;
            }
            let ended = attempt(permit, retry + 1, &mut run, &mut judge);
            let Some((withdrawal, pushback)) = self.retry_of(&ended, state, &plan, shadowed, retry)
            else {
                return match ended {
                    Attempted::Output(output, _, _) => Ok(output),
                    // No timer runs here, and only a timer makes a `TimedOut`.
                    Attempted::TimedOut(_) => unreachable!("a blocking attempt timed out"),
                };
            };
            drop(ended);
            retry += 1;
            backoff::sleep_at_least(
                plan.backoff(),
                plan.backoff_max(),
                retry,
                pushback,
                std::thread::sleep,
            );
            permit = as_attempt(retry + 1, || slot.admit(self))?;
            if !permit.is_shadowed() {
                withdrawal.spend();
            }
        }
    }
}
