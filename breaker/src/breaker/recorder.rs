//! The calls a breaker records when asked (`Breaker::start_recording`): a ring of the last calls,
//! allocated once, written under its own lock by the calls' ends and rejections.
//!
//! Nothing here runs while calls are not observed: a recording, as a call listener, sets the
//! admission word's timed bit, so calls note their start and end off the fast paths, and
//! rejections check one published flag before they come here (`observe.rs`).

use std::time::{Duration, Instant};

use crate::recording::{CallOutcome, CapacityError, RecordedCall, Recording, MAX_CAPACITY};
use crate::sync::process::Mutex;
use crate::tally::Ending;
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
        let empty = RecordedCall {
            start: Duration::ZERO,
            latency: Duration::ZERO,
            outcome: CallOutcome::Completed(Outcome::Ignored),
        };
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
        ring.calls[slot] = RecordedCall {
            start,
            latency,
            outcome,
        };
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
    /// Starts recording the breaker's calls (feature `recording`): for each call from now
    /// on, when it started, how long it took and how it ended (a success, failure or ignored
    /// result, or a rejection and its reason), the last `capacity` of them in a ring
    /// allocated now. Recording again starts a new recording.
    ///
    /// # Errors
    ///
    /// A [`CapacityError`] for a `capacity` of 0 or above
    /// [`MAX_CAPACITY`](crate::recording::MAX_CAPACITY) (10 million calls), or a ring the
    /// allocator refuses; the breaker then records nothing (a recording that was on stays
    /// on).
    ///
    /// Recording costs nothing while it is off; while it is on, each call reads the clock
    /// twice and writes its record under a lock of the recording's own, allocating nothing.
    /// A call that started before the recording, and a call of a disabled breaker, is not
    /// recorded. [`Recording::write_csv`] writes what the replay tuner reads.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::clock::ManualClock;
    /// use breakerbox::recording::CallOutcome;
    /// use breakerbox::{Breaker, Config, Outcome, RejectReason};
    ///
    /// let clock = ManualClock::new();
    /// let b = Breaker::with_clock("libraryd", Config::builder().count_window(1).build()?, clock.clone());
    /// b.start_recording(1000)?;
    /// let permit = b.try_acquire().unwrap();
    /// clock.advance(Duration::from_millis(30));
    /// permit.failure(); // opens the breaker
    /// let _ = b.try_acquire();
    ///
    /// let calls = b.recording();
    /// let calls = calls.calls();
    /// assert_eq!(calls.len(), 2);
    /// assert_eq!(calls[0].latency, Duration::from_millis(30));
    /// assert_eq!(calls[0].outcome, CallOutcome::Completed(Outcome::Failure));
    /// assert_eq!(calls[1].start, Duration::from_millis(30));
    /// assert_eq!(calls[1].outcome, CallOutcome::Rejected(RejectReason::Open));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start_recording(&self, capacity: usize) -> Result<(), CapacityError> {
        self.recorder().start(capacity, self.clock().now())?;
        self.shared.set_recording(true);
        Ok(())
    }

    /// The calls recorded so far, oldest first, named for the breaker and with its
    /// configuration (the CSV file gives both in comment lines); empty and unnamed when no recording is on.
    pub fn recording(&self) -> Recording {
        self.rare()
            .and_then(|rare| rare.recorder.recording())
            .map(|r| r.with_name(self.name()).with_config(self.config()))
            .unwrap_or_default()
    }

    /// Ends the recording, returning it, named for the breaker and with its configuration (empty and unnamed when none
    /// was on); calls cost nothing to record again.
    pub fn stop_recording(&self) -> Recording {
        self.shared.set_recording(false);
        self.rare()
            .and_then(|rare| rare.recorder.stop())
            .map(|r| r.with_name(self.name()).with_config(self.config()))
            .unwrap_or_default()
    }

    /// The recorder, made if it was not: for starting a recording.
    fn recorder(&self) -> &Recorder {
        &self.rare_made().recorder
    }

    /// Records the end at `now` of a call that noted its start, if a recording is on.
    pub(super) fn record_end(&self, started: Instant, now: Instant, ending: Ending) {
        if self.shared.recording() {
            if let Some(rare) = self.rare() {
                rare.recorder.ended(started, now, ending);
            }
        }
    }

    /// Records a rejection, if a recording is on.
    pub(super) fn record_rejection(&self, reason: RejectReason) {
        if self.shared.recording() {
            self.recorder().rejected(self.clock().now(), reason);
        }
    }
}
