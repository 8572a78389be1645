//! The reference model through the call policy: calls run by `Breaker::run_with` (a
//! bulkhead slot for the whole call, the breaker asked before every attempt, each attempt
//! under a timeout, failures retried within the retry budget), against the model of
//! `reference.rs` driven by the runner's rules, on tokio's paused clock and a manual clock
//! moved together.
//!
//! Each attempt waits until an operation answers it, or until its timeout. The runner's
//! rules, as the model follows them:
//! - a call takes a bulkhead slot, held until it ends; a full bulkhead rejects it;
//! - every attempt asks the state; a rejection ends the call, freeing its slot;
//! - an attempt past its timeout is a failure; only a failure is retried, while retries
//!   remain and the budget allows (`retry_budget` times the first attempts of the last 10 s,
//!   plus `retry_floor` a second), at once (no backoff here: its jitter is random); a retry
//!   the state rejects gives its withdrawal back;
//! - a shadow breaker runs, where the model rejects, that attempt instead: it holds no slot,
//!   its result reaches nothing but the totals of how calls ended, it is not retried and
//!   takes nothing from the budget, and the call ends with it.
//!
//! After every operation the breaker and the model must agree on everything `reference.rs`
//! compares, on the retries made and refused by the budget, and on which calls ended, how.

use std::cell::Cell;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use breakerbox::clock::ManualClock;
use breakerbox::{Breaker, CallError, Outcome};

use super::reference::{observe_as, Ended, Model, ModelPermit, Refusal, Spec, Verdict};

/// The call policy of a run; retries follow at once.
#[derive(Clone, Copy, Debug)]
pub struct CallPolicy {
    pub timeout_ms: Option<u64>,
    pub retries: u32,
    pub budget: f64,
    pub floor: u32,
}

/// What an attempt answers, as the call's classifier judges it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Success,
    Failure,
    Ignored,
}

#[derive(Clone, Copy, Debug)]
pub enum CallOp {
    /// A new call.
    Start,
    /// The attempt in flight of the `i`-th newest live call (modulo their number) answers.
    Answer(usize, Answer),
    /// The `i`-th newest live call is dropped, its attempt in flight cancelled.
    Drop(usize),
    /// Both clocks move on, stopping at each attempt's timeout on the way.
    Advance(u64),
    ForceOpen,
    Disable,
    Reset,
}

/// How far a run went, so that a test can check the sequences reach every path.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reached {
    pub opened: u32,
    pub retried: u32,
    pub refused_by_budget: u32,
    pub timed_out: u32,
    /// Retries the state rejected (a shadow ran them instead).
    pub rejected_retries: u32,
    /// Calls rejected before their first attempt, by the bulkhead and by the state.
    pub rejected_by_bulkhead: u32,
    pub rejected_by_state: u32,
}

fn classify(answer: &Answer) -> Outcome {
    match answer {
        Answer::Success => Outcome::Success,
        Answer::Failure => Outcome::Failure,
        Answer::Ignored => Outcome::Ignored,
    }
}

/// The retry budget, naively: every first attempt and retry with its second.
#[derive(Debug, Default)]
struct Budget {
    ppb: u64,
    floor: u64,
    first: Vec<u64>,
    retries: Vec<u64>,
    retried: u64,
    exhausted: u64,
}

impl Budget {
    /// Of `seconds`, those of the last 10 seconds at `now`.
    fn recent(seconds: &[u64], now: u64) -> u64 {
        seconds.iter().filter(|&&at| at + 10 > now).count() as u64
    }

    fn withdraw(&mut self, now: u64) -> bool {
        let earned =
            u128::from(self.ppb) * u128::from(Self::recent(&self.first, now)) / 1_000_000_000;
        let allowed = earned + u128::from(self.floor) * 10;
        if u128::from(Self::recent(&self.retries, now)) >= allowed {
            self.exhausted += 1;
            return false;
        }
        self.retries.push(now);
        true
    }

    fn refund(&mut self, now: u64) {
        let at = self.retries.iter().rposition(|&s| s == now);
        self.retries
            .remove(at.expect("a withdrawal of this second"));
    }
}

/// How the model says a call ended.
#[derive(Debug)]
enum Expect {
    Answer(Answer),
    TimedOut,
    Rejected(Refusal),
}

/// A live call, on both sides.
struct Call<'b> {
    future: Pin<Box<dyn Future<Output = Result<Answer, CallError>> + 'b>>,
    /// Where an operation puts the answer of the attempt in flight.
    gate: Rc<Cell<Option<Answer>>>,
    /// The model's permit of the attempt in flight; `None` for a shadow's admission.
    permit: Option<ModelPermit>,
    /// When the attempt in flight started.
    started: Duration,
    /// Holds a bulkhead slot.
    slot: bool,
    retry: u32,
}

struct Run<'b> {
    b: &'b Breaker,
    clock: ManualClock,
    shadow: bool,
    policy: CallPolicy,
    model: Model,
    budget: Budget,
    calls: Vec<Call<'b>>,
    /// How the calls admitted only as a shadow ended.
    shadow_ended: [u64; 4],
    reached: Reached,
}

macro_rules! agree {
    ($real:expr, $model:expr, $($context:tt)*) => {{
        let (real, model) = (&$real, &$model);
        if real != model {
            return Err(format!(
                "{}: breaker {:?}, model {:?}",
                format_args!($($context)*),
                real,
                model
            ));
        }
    }};
}

/// Runs `ops` through `Breaker::run_with` on a breaker made of `spec` and `policy` (a shadow
/// if `shadow`) and through the model, comparing after every step.
pub fn run_calls(
    spec: &Spec,
    policy: CallPolicy,
    ops: &[CallOp],
    shadow: bool,
) -> Result<Reached, String> {
    let mut spec = spec.clone();
    // Unset, the probe timeout is the call timeout: the model is told so.
    if spec.probe_timeout_ms.is_none() {
        spec.probe_timeout_ms = policy.timeout_ms;
    }
    let mut config = spec
        .config()
        .map_err(|e| format!("invalid spec: {e}"))?
        .to_builder()
        .retries(policy.retries)
        .retry_backoff(Duration::ZERO)
        .retry_budget(policy.budget)
        .retry_floor(policy.floor)
        .shadow(shadow);
    if let Some(ms) = policy.timeout_ms {
        config = config.timeout(Duration::from_millis(ms));
    }
    let config = config.build().map_err(|e| format!("invalid policy: {e}"))?;
    let clock = ManualClock::new();
    let b = Breaker::with_clock("runner", config, clock.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .map_err(|e| e.to_string())?;
    let run = Run {
        b: &b,
        clock,
        shadow,
        policy,
        model: Model::new(spec),
        budget: Budget {
            ppb: (policy.budget * 1e9).round() as u64,
            floor: u64::from(policy.floor),
            ..Budget::default()
        },
        calls: Vec::new(),
        shadow_ended: [0; 4],
        reached: Reached::default(),
    };
    runtime.block_on(run.all(ops))
}

impl<'b> Run<'b> {
    async fn all(mut self, ops: &[CallOp]) -> Result<Reached, String> {
        for (step, &op) in ops.iter().enumerate() {
            self.step(op)
                .await
                .map_err(|e| format!("step {step}: {op:?}: {e}"))?;
            self.agree()
                .await
                .map_err(|e| format!("step {step}: {op:?}: {e}"))?;
        }
        while !self.calls.is_empty() {
            self.drop_call(0);
            self.agree()
                .await
                .map_err(|e| format!("final drops: {e}"))?;
        }
        self.reached.opened = self.model.seen.opened_by_window;
        Ok(self.reached)
    }

    async fn step(&mut self, op: CallOp) -> Result<(), String> {
        match op {
            CallOp::Start => self.start().await,
            CallOp::Answer(i, answer) => {
                let Some(at) = self.index(i) else {
                    return Ok(());
                };
                self.calls[at].gate.set(Some(answer));
                self.attempt_ended(at, answer, false).await
            }
            CallOp::Drop(i) => {
                if let Some(at) = self.index(i) {
                    self.drop_call(at);
                }
                Ok(())
            }
            CallOp::Advance(ms) => self.advance(Duration::from_millis(ms)).await,
            CallOp::ForceOpen => {
                self.b.force_open();
                self.model.force_open();
                Ok(())
            }
            CallOp::Disable => {
                self.b.disable();
                self.model.disable();
                Ok(())
            }
            CallOp::Reset => {
                self.b.reset();
                self.model.reset();
                Ok(())
            }
        }
    }

    fn index(&self, i: usize) -> Option<usize> {
        let live = self.calls.len();
        (live > 0).then(|| live - 1 - i % live)
    }

    fn second(&self) -> u64 {
        self.model.now.as_secs()
    }

    async fn start(&mut self) -> Result<(), String> {
        let gate = Rc::new(Cell::new(None));
        let answers = gate.clone();
        let attempt = move || {
            let answer = answers.clone();
            async move { poll_fn(|_| answer.take().map_or(Poll::Pending, Poll::Ready)).await }
        };
        let mut call = Call {
            future: Box::pin(self.b.run_with(attempt, classify)),
            gate,
            permit: None,
            started: self.model.now,
            slot: false,
            retry: 0,
        };
        // The model's call: rejected at once (run by a shadow), or its first attempt.
        let rejected = match self.model.bulkhead() {
            Err(refusal) => {
                self.reached.rejected_by_bulkhead += 1;
                Some(refusal)
            }
            Ok(slot) => match self.model.admit_by_state() {
                Ok(permit) => {
                    self.model.slots += u32::from(slot);
                    call.slot = slot;
                    call.permit = Some(permit);
                    if self.policy.retries > 0 {
                        self.budget.first.push(self.second());
                    }
                    None
                }
                Err(refusal) => {
                    self.reached.rejected_by_state += 1;
                    Some(refusal)
                }
            },
        };
        let polled = poll_once(&mut call.future).await;
        match rejected {
            Some(refusal) if !self.shadow => agree_end(polled, Some(Expect::Rejected(refusal))),
            _ => {
                agree_end(polled, None)?;
                self.calls.push(call);
                Ok(())
            }
        }
    }

    /// The attempt in flight of call `at` answered (or timed out): the breaker's side is
    /// polled, the model's follows the runner's rules, and both must end the call alike.
    async fn attempt_ended(
        &mut self,
        at: usize,
        answer: Answer,
        timed_out: bool,
    ) -> Result<(), String> {
        let polled = poll_once(&mut self.calls[at].future).await;
        let (verdict, ended) = match answer {
            Answer::Success => (Verdict::Success, Ended::Success),
            Answer::Failure => (Verdict::Failure, Ended::Failure),
            Answer::Ignored => (Verdict::Ignored, Ended::Ignored),
        };
        let result = if timed_out {
            Expect::TimedOut
        } else {
            Expect::Answer(answer)
        };
        let call = &mut self.calls[at];
        let Some(permit) = call.permit.take() else {
            // Admitted only as a shadow: counted in the totals, and the call ends.
            self.shadow_ended[ended as usize] += 1;
            self.calls.remove(at);
            return agree_end(polled, Some(result));
        };
        self.model.ended[ended as usize] += 1;
        self.model.complete(permit, verdict);
        let end = if verdict != Verdict::Failure || call.retry == self.policy.retries {
            Some(result)
        } else if !self.budget.withdraw(self.model.now.as_secs()) {
            self.reached.refused_by_budget += 1;
            Some(result)
        } else {
            call.retry += 1;
            call.started = self.model.now;
            match self.model.admit_by_state() {
                Ok(permit) => {
                    self.budget.retried += 1;
                    self.reached.retried += 1;
                    call.permit = Some(permit);
                    None
                }
                Err(refusal) => {
                    self.reached.rejected_retries += 1;
                    self.budget.refund(self.model.now.as_secs());
                    // The enforcing call ends here, freeing its slot; a shadow's runs this
                    // attempt without it.
                    self.model.slots -= u32::from(call.slot);
                    call.slot = false;
                    (!self.shadow).then_some(Expect::Rejected(refusal))
                }
            }
        };
        if end.is_some() {
            let call = self.calls.remove(at);
            self.model.slots -= u32::from(call.slot);
        }
        agree_end(polled, end)
    }

    fn drop_call(&mut self, at: usize) {
        let call = self.calls.remove(at);
        drop(call.future);
        match call.permit {
            Some(permit) => {
                self.model.ended[Ended::Cancelled as usize] += 1;
                self.model.complete(permit, Verdict::Ignored);
                self.model.slots -= u32::from(call.slot);
            }
            None => self.shadow_ended[Ended::Cancelled as usize] += 1,
        }
    }

    /// Moves both clocks to `now + by`, stopping at each timeout on the way, where the
    /// attempts due time out in the order of their calls.
    async fn advance(&mut self, by: Duration) -> Result<(), String> {
        let end = self.model.now + by;
        loop {
            let now = self.model.now;
            let due = self.policy.timeout_ms.and_then(|ms| {
                let limit = Duration::from_millis(ms);
                self.calls
                    .iter()
                    .map(|c| c.started + limit)
                    .filter(|&at| now < at && at <= end)
                    .min()
            });
            let to = due.unwrap_or(end);
            self.clock.advance(to - now);
            tokio::time::advance(to - now).await;
            self.model.now = to;
            let Some(limit) = self.policy.timeout_ms.map(Duration::from_millis) else {
                return Ok(());
            };
            if due.is_none() {
                return Ok(());
            }
            let mut at = 0;
            while at < self.calls.len() {
                if self.calls[at].started + limit == to {
                    self.reached.timed_out += 1;
                    let live = self.calls.len();
                    self.attempt_ended(at, Answer::Failure, true).await?;
                    if self.calls.len() < live {
                        continue;
                    }
                }
                at += 1;
            }
        }
    }

    /// The observable state, the budget's counts, and every live call still waiting.
    async fn agree(&mut self) -> Result<(), String> {
        agree!(
            observe_as(self.b, self.shadow, self.shadow_ended),
            self.model.observe_as(self.shadow),
            "observed"
        );
        let t = self.b.snapshot().totals;
        agree!(
            (t.retries, t.retry_budget_exhausted),
            (self.budget.retried, self.budget.exhausted),
            "retries and budget refusals"
        );
        for (at, call) in self.calls.iter_mut().enumerate() {
            if poll_once(&mut call.future).await.is_ready() {
                return Err(format!("call {at} ended, but the model's goes on"));
            }
        }
        Ok(())
    }
}

async fn poll_once<F: Future + ?Sized>(future: &mut Pin<Box<F>>) -> Poll<F::Output> {
    poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await
}

fn agree_end(
    polled: Poll<Result<Answer, CallError>>,
    expected: Option<Expect>,
) -> Result<(), String> {
    let agreed = match (&polled, &expected) {
        (Poll::Pending, None) => true,
        (Poll::Ready(Ok(answer)), Some(Expect::Answer(expected))) => answer == expected,
        (Poll::Ready(Err(CallError::TimedOut(_))), Some(Expect::TimedOut)) => true,
        (Poll::Ready(Err(CallError::Rejected(r))), Some(Expect::Rejected((reason, after)))) => {
            r.reason() == *reason && r.retry_after() == *after
        }
        _ => false,
    };
    if agreed {
        Ok(())
    } else {
        Err(format!(
            "the call: breaker {polled:?}, model {expected:?} (None: goes on)"
        ))
    }
}
