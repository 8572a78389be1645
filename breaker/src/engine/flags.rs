//! The named flags of a breaker: what an optional part (shadow mode, the fleet, the per-call
//! listeners, the recording, adaptive throttling) tells the paths that take no lock, in one word of the
//! published state. Each part asks for its flag by name; no part adds bits of its own.

use crate::sync::{AtomicU32, Ordering};

/// One flag of [`Flags`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Flag {
    /// The configuration is a shadow's: what the breaker would reject, it admits.
    Shadow = 1,
    /// The current OPEN is the fleet's: its rejections say so, and are counted apart.
    FleetOpen = 2,
    /// Calls are observed, by a call listener (`Breaker::on_call`) or a recording: every
    /// call is timed, and every end and rejection leaves the fast paths to be told.
    Observed = 4,
    /// Calls are recorded (`Breaker::start_recording`): they are then observed too.
    Recording = 8,
    /// The configuration throttles CLOSED (`throttle`, see `throttle.rs`): CLOSED calls are
    /// timed, so that their admission and their results leave the fast paths for it.
    Throttle = 16,
}

impl Flag {
    #[inline(always)]
    const fn bit(self) -> u32 {
        self as u32
    }
}

/// The flags of one breaker: one word for all, which keeps every keyed member within its
/// memory budget. Written under the breaker's lock only; read anywhere.
pub(super) struct Flags(AtomicU32);

/// The flags as one reading found them: several asked of one load.
#[derive(Clone, Copy)]
pub(super) struct Reading(u32);

impl Reading {
    #[inline(always)]
    pub(super) const fn has(self, flag: Flag) -> bool {
        self.0 & flag.bit() != 0
    }

    /// Whether any of `a` and `b` is set, in one test.
    #[inline(always)]
    pub(super) const fn has_either(self, a: Flag, b: Flag) -> bool {
        self.0 & (a.bit() | b.bit()) != 0
    }
}

impl Flags {
    pub(super) fn new() -> Self {
        Self(AtomicU32::new(0))
    }

    #[inline(always)]
    pub(super) fn read(&self) -> Reading {
        Reading(self.0.load(Ordering::Relaxed))
    }

    #[inline(always)]
    pub(super) fn get(&self, flag: Flag) -> bool {
        self.read().has(flag)
    }

    /// Sets or clears `flag`; under the breaker's lock only, so no other write is lost.
    #[inline]
    pub(super) fn set(&self, flag: Flag, on: bool) {
        let flags = self.0.load(Ordering::Relaxed) & !flag.bit();
        let flags = if on { flags | flag.bit() } else { flags };
        self.0.store(flags, Ordering::Relaxed);
    }
}
