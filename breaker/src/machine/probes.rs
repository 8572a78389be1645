//! The probes a HALF_OPEN trial has out, by the instant each started: how many, and whether
//! one has run past `probe_timeout` (a hung probe, which fails the trial); and the trial as
//! a snapshot shows it.

use std::time::{Duration, Instant};

use super::{Admission, Machine, Phase};
use crate::clock::LazyNow;
use crate::snapshot::Trial;

impl Machine {
    /// The trial under way: in HALF_OPEN until its probes pass or fail, `None` otherwise
    /// (the ramp-up after a passed trial included).
    pub(crate) fn trial(&self) -> Option<Trial> {
        match self.phase {
            Phase::HalfOpen {
                successes,
                admitted,
            } => Some(Trial {
                admitted,
                in_flight: self.probes.count(),
                succeeded: successes,
            }),
            _ => None,
        }
    }

    /// Lets a probe of the trial under way through, started now.
    pub(super) fn admit_probe(&mut self, now: &mut LazyNow<'_>) -> Admission {
        if let Phase::HalfOpen { admitted, .. } = &mut self.phase {
            *admitted = admitted.saturating_add(1);
        }
        self.probes.start(now.get());
        Admission::Probe
    }
}

/// The start of every probe in flight. The machine keeps one across trials, emptied when a
/// trial ends, so that its buffer grows once and later trials allocate nothing.
///
/// Boxed, and only once a first probe is admitted: most breakers (most members of a keyed
/// family) never half-open, and each pays 8 bytes for it rather than a `Vec`'s 24.
#[derive(Debug, Default)]
#[allow(clippy::box_collection)] // a thin pointer, for the memory of every breaker
pub(super) struct Probes {
    started: Option<Box<Vec<Instant>>>,
}

impl Probes {
    fn started(&self) -> &[Instant] {
        self.started.as_deref().map_or(&[], Vec::as_slice)
    }

    /// Probes in flight (at most `probes`, a `u32`).
    pub(super) fn count(&self) -> u32 {
        u32::try_from(self.started().len()).unwrap_or(u32::MAX)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.started().is_empty()
    }

    /// A probe admitted at `at`.
    pub(super) fn start(&mut self, at: Instant) {
        self.started.get_or_insert_with(Box::default).push(at);
    }

    /// The probe admitted at `at` ended. Probes admitted at the same instant hang at the
    /// same instant: any one of them goes.
    pub(super) fn end(&mut self, at: Instant) {
        if let Some(started) = self.started.as_deref_mut() {
            if let Some(i) = started.iter().position(|&started| started == at) {
                started.swap_remove(i);
            }
        }
    }

    /// The trial ended: its probes still out are stale.
    pub(super) fn clear(&mut self) {
        if let Some(started) = self.started.as_deref_mut() {
            started.clear();
        }
    }

    /// Whether a probe out has run for `limit` or longer at `now`.
    pub(super) fn hung(&self, limit: Duration, now: Instant) -> bool {
        self.started()
            .iter()
            .any(|&started| now.saturating_duration_since(started) >= limit)
    }
}
