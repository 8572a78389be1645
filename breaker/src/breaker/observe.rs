//! Telling each call's end to those who observe a breaker's calls: its call listeners
//! ([`Breaker::on_call`]) and its recording (feature `recording`).
//!
//! Nothing here runs while no one observes: observing sets a flag that also sets the
//! admission word's timed bit, so calls note their start and leave the fast paths at their
//! end, where the flag is read only for calls that noted a start; a rejection in OPEN reads
//! it with the shadow flag, in one load. A breaker that no one observes pays nothing.

use std::sync::Arc;
use std::time::Instant;

use crate::tally::Ending;
use crate::{events::CallEnding, events::CallEvent, Breaker, RejectReason};

use super::shared::generation_of;

impl Breaker {
    /// Calls `listener` at the end of every call from now on: a success, failure, ignored
    /// or cancelled result with the call's duration, or a rejection with its reason. Opt-in:
    /// a breaker with no call listener pays nothing for it; with one, every call reads the
    /// clock at its start and end and leaves the lock-free fast paths (see
    /// `benches/README.md` for the cost).
    ///
    /// A call's event comes as its result reaches the breaker, before the breaker acts on it
    /// (a failure that opens it, then the [`Event::StateTransition`](crate::events::Event)); the
    /// listener runs on the caller's thread with no lock held, so it may call back into the
    /// breaker, and a panicking listener is contained. Each attempt of a retried call
    /// (`Breaker::run`, `#[circuit_breaker]`) is a call of its own. A result the breaker
    /// discards (the call was admitted before the breaker last changed state) is still told,
    /// marked [`stale`](CallEvent::stale). A call admitted before the first listener was
    /// added may end untold.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use breakerbox::{Breaker, events::CallEnding, Config};
    ///
    /// let b = Breaker::new("libraryd", Config::default());
    /// let endings = Arc::new(Mutex::new(Vec::new()));
    /// let log = endings.clone();
    /// b.on_call(move |e| log.lock().unwrap().push(e.ending));
    ///
    /// b.try_acquire().unwrap().success();
    /// b.try_acquire().unwrap().ignore();
    /// drop(b.try_acquire().unwrap()); // a cancelled call
    /// assert_eq!(
    ///     *endings.lock().unwrap(),
    ///     [CallEnding::Success, CallEnding::Ignored, CallEnding::Cancelled]
    /// );
    /// ```
    pub fn on_call(&self, listener: impl Fn(&CallEvent) + Send + Sync + 'static) {
        self.rare_made().call_listeners.add(Arc::new(listener));
        self.shared.publish_observed();
    }

    /// Tells the end of a call admitted in `generation` that started at `started`.
    #[cold]
    #[inline(never)]
    pub(super) fn observe_end(&self, started: Instant, ending: Ending, generation: u64) {
        let now = self.clock().now();
        #[cfg(feature = "recording")]
        self.record_end(started, now, ending);
        let Some(rare) = self.rare() else { return };
        if rare.call_listeners.is_empty() {
            return;
        }
        let ending = match ending {
            Ending::Success => CallEnding::Success,
            Ending::Failure => CallEnding::Failure,
            Ending::Ignored => CallEnding::Ignored,
            Ending::Cancelled => CallEnding::Cancelled,
            // Rejections are told where they are decided, with their reason.
            Ending::RejectedOpen => return,
        };
        rare.call_listeners.emit(&CallEvent {
            ending,
            duration: Some(now.saturating_duration_since(started)),
            stale: generation_of(self.shared.word()) != generation,
        });
    }

    /// Tells a rejection for `reason`, if calls are observed.
    #[cold]
    #[inline(never)]
    pub(super) fn observe_rejection(&self, reason: RejectReason) {
        if !self.shared.observed() {
            return;
        }
        #[cfg(feature = "recording")]
        self.record_rejection(reason);
        if let Some(rare) = self.rare() {
            rare.call_listeners.emit(&CallEvent {
                ending: CallEnding::Rejected(reason),
                duration: None,
                stale: false,
            });
        }
    }
}
