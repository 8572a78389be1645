//! Telling each call's end to those who observe a breaker's calls: its call listeners
//! ([`Breaker::on_call`]) and its recording (feature `recording`).
//!
//! Nothing here runs while no one observes: observing sets a flag that also sets the
//! admission word's timed bit, so calls note their start and leave the fast paths at their
//! end, where the flag is read only for calls that noted a start; a rejection in OPEN reads
//! it with the shadow flag, in one load. A breaker that no one observes pays nothing.

use std::time::Instant;

use crate::engine::Ending;
use crate::{events::CallEnding, events::CallEvent, Breaker, RejectReason};

impl Breaker {
    /// Tells the end of a call admitted in `generation` that started at `started`.
    #[cold]
    #[inline(never)]
    pub(crate) fn observe_end(&self, started: Instant, ending: Ending, generation: u64) {
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
            stale: self.shared.word().generation() != generation,
        });
    }

    /// Tells a rejection for `reason`, if calls are observed.
    #[cold]
    #[inline(never)]
    pub(crate) fn observe_rejection(&self, reason: RejectReason) {
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
