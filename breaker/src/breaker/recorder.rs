//! The calls a breaker records when asked (`Breaker::start_recording`): a ring of the last calls,
//! allocated once, written under its own lock by the calls' ends and rejections.
//!
//! Nothing here runs while calls are not observed: a recording, as a call listener, sets the
//! admission word's timed bit, so calls note their start and end off the fast paths, and
//! rejections check one published flag before they come here (`observe.rs`).

use std::time::{Duration, Instant};

use crate::engine::Ending;
use crate::recording::{CallOutcome, CapacityError, RecordedCall, Recording, MAX_CAPACITY};
use crate::sync::process::Mutex;
use crate::Breaker;
use crate::{Outcome, RejectReason};

/// The last `capacity` calls, oldest overwritten first.
pub(crate) struct Ring {
    /// Where the recording's time starts.
    origin: Instant,
    calls: Box<[RecordedCall]>,
    /// Calls written so far; the next goes to `written % capacity`.
    written: usize,
}

/// The breaker's recording, if one is on. Boxed: every breaker has a recorder, few record.
#[derive(Default)]
pub(crate) struct Recorder(Mutex<Option<Box<Ring>>>);

impl Recorder {
    /// Starts a new recording of the last `capacity` calls, from `origin`.
    pub(crate) fn start(&self, capacity: usize, origin: Instant) -> Result<(), CapacityError> {
        if !(1..=MAX_CAPACITY).contains(&capacity) {
            return Err(CapacityError::out_of_range(capacity));
        }
        let empty = RecordedCall::new(
            Duration::ZERO,
            Duration::ZERO,
            CallOutcome::Completed(Outcome::Ignored),
        );
        let mut calls = Vec::new();
        calls
            .try_reserve_exact(capacity)
            .map_err(|_| CapacityError::allocation_failed(capacity))?;
        calls.resize(capacity, empty);
        let ring = Ring {
            origin,
            calls: calls.into_boxed_slice(),
            written: 0,
        };
        *self.0.lock() = Some(Box::new(ring));
        Ok(())
    }

    /// Ends the recording; returns what it held, if one was on.
    pub(crate) fn stop(&self) -> Option<Recording> {
        let ring = self.0.lock().take();
        ring.map(|ring| ring.recording())
    }

    /// The calls recorded so far, in the order of their start, if a recording is on.
    pub(crate) fn recording(&self) -> Option<Recording> {
        let ring = self.0.lock();
        ring.as_deref().map(Ring::recording)
    }

    /// A call that started at `started` ended as `ending` at `now`.
    pub(crate) fn ended(&self, started: Instant, now: Instant, ending: Ending) {
        let outcome = match ending {
            Ending::Success => Outcome::Success,
            Ending::Failure => Outcome::Failure,
            // A call dropped without a result tells nothing of the downstream.
            Ending::Ignored | Ending::Cancelled => Outcome::Ignored,
            // Rejections are recorded where they are decided, with their reason.
            Ending::RejectedOpen => return,
        };
        let latency = now.saturating_duration_since(started);
        self.write(started, latency, CallOutcome::Completed(outcome));
    }

    /// A call was rejected at `now` for `reason`.
    pub(crate) fn rejected(&self, now: Instant, reason: RejectReason) {
        self.write(now, Duration::ZERO, CallOutcome::Rejected(reason));
    }

    fn write(&self, at: Instant, latency: Duration, outcome: CallOutcome) {
        let mut ring = self.0.lock();
        let Some(ring) = ring.as_mut() else { return };
        // A call that started before the recording did is not part of it.
        let Some(start) = at.checked_duration_since(ring.origin) else {
            return;
        };
        let slot = ring.written % ring.calls.len();
        // Which attempt of its call, and the pushback it carried, as the runner and the
        // permit noted them around this step.
        let note = super::note::current();
        let pushback = match outcome {
            CallOutcome::Completed(Outcome::Failure) => note.pushback,
            _ => None,
        };
        ring.calls[slot] = RecordedCall::new(start, latency, outcome)
            .attempt(note.attempt)
            .pushback(pushback);
        ring.written += 1;
    }
}

impl Ring {
    fn recording(&self) -> Recording {
        let kept = self.written.min(self.calls.len());
        self.calls[..kept].iter().copied().collect()
    }
}

impl Breaker {
    /// The recorder, made if it was not: for starting a recording.
    pub(super) fn recorder(&self) -> &Recorder {
        &self.rare_made().recorder
    }

    /// Records the end at `now` of a call that noted its start, if a recording is on.
    pub(super) fn record_end(&self, started: Instant, now: Instant, ending: Ending) {
        if self.shared.flag(crate::engine::Flag::Recording) {
            if let Some(rare) = self.rare() {
                rare.recorder.ended(started, now, ending);
            }
        }
    }

    /// Records a rejection, if a recording is on.
    pub(super) fn record_rejection(&self, reason: RejectReason) {
        if self.shared.flag(crate::engine::Flag::Recording) {
            self.recorder().rejected(self.clock().now(), reason);
        }
    }
}

#[cfg(all(test, feature = "policy"))]
mod tests {
    use std::io;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;

    use crate::recording::CallOutcome;
    use crate::{Breaker, Config, Outcome};

    #[tokio::test(start_paused = true)]
    async fn a_recording_numbers_each_attempt_of_a_retried_call_and_keeps_its_pushback() {
        let config = Config::builder().retries(2).build().unwrap();
        let b = Breaker::new("retried", config);
        b.start_recording(100).unwrap();
        let attempts = &AtomicU32::new(0);
        let out = b
            .run(|| async move {
                match attempts.fetch_add(1, Ordering::Relaxed) {
                    0 | 1 => Err(io::Error::from(io::ErrorKind::ConnectionRefused)),
                    _ => Ok("Dune"),
                }
            })
            .await;
        assert_eq!(out.unwrap().unwrap(), "Dune");
        b.try_acquire()
            .unwrap()
            .failure_with_pushback(Duration::from_secs(4));
        let calls = b.stop_recording();
        let seen: Vec<_> = calls
            .calls()
            .iter()
            .map(|c| (c.outcome, c.attempt, c.pushback))
            .collect();
        let (ok, fail) = (
            CallOutcome::Completed(Outcome::Success),
            CallOutcome::Completed(Outcome::Failure),
        );
        assert_eq!(
            seen,
            [
                (fail, 1, None),
                (fail, 2, None),
                (ok, 3, None),
                (fail, 1, Some(Duration::from_secs(4)))
            ]
        );
    }
}
