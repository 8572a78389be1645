//! What a recording notes of a call beyond its outcome: which attempt of its call it is, and
//! the pushback its failure carried. Told around the synchronous step that ends or rejects
//! the call (a permit's report, an admission), on the thread that takes it, by the call
//! policy's runner and the permit; the plain paths never set it.

// The call policy's runner notes attempts; without it, only the permit's pushback.
#![cfg_attr(not(feature = "policy"), allow(dead_code))]

use std::time::Duration;

/// Which attempt of its call a call is (1 for the first), and the pushback it carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Note {
    pub(crate) attempt: u32,
    pub(crate) pushback: Option<Duration>,
}

impl Note {
    /// A first attempt that carried no pushback: what a call is unless told otherwise.
    #[cfg_attr(not(feature = "recording"), allow(dead_code))]
    pub(crate) const PLAIN: Note = Note {
        attempt: 1,
        pushback: None,
    };
}

#[cfg(feature = "recording")]
mod noted {
    use std::cell::Cell;

    use super::Note;

    thread_local! {
        static NOTE: Cell<Note> = const { Cell::new(Note::PLAIN) };
    }

    /// Puts the note back as it was, however `noting`'s step ends.
    struct Restore(Note);

    impl Drop for Restore {
        fn drop(&mut self) {
            NOTE.with(|n| n.set(self.0));
        }
    }

    pub(crate) fn noting<R>(note: Note, step: impl FnOnce() -> R) -> R {
        let _restore = Restore(NOTE.with(|n| n.replace(note)));
        step()
    }

    pub(crate) fn current() -> Note {
        NOTE.with(Cell::get)
    }
}

#[cfg(feature = "recording")]
pub(crate) use noted::{current, noting};

/// Without recordings, nothing is noted.
#[cfg(not(feature = "recording"))]
#[inline(always)]
pub(crate) fn noting<R>(_: Note, step: impl FnOnce() -> R) -> R {
    step()
}

/// The attempt `step` ends or rejects is attempt `attempt` of its call.
#[inline]
pub(crate) fn as_attempt<R>(attempt: u32, step: impl FnOnce() -> R) -> R {
    if attempt == 1 {
        return step();
    }
    noting(
        Note {
            attempt,
            pushback: None,
        },
        step,
    )
}

/// The failure `step` reports carried `pushback`; the attempt stays as it was noted.
pub(crate) fn with_pushback<R>(pushback: Duration, step: impl FnOnce() -> R) -> R {
    #[cfg(feature = "recording")]
    let attempt = current().attempt;
    #[cfg(not(feature = "recording"))]
    let attempt = 1;
    noting(
        Note {
            attempt,
            pushback: Some(pushback),
        },
        step,
    )
}

/// The permit of attempt `number` of its call: its report, and its drop if the attempt is
/// cancelled, are noted so.
pub(crate) struct Attempt<'a> {
    permit: Option<crate::Permit<'a>>,
    number: u32,
}

impl<'a> Attempt<'a> {
    pub(crate) fn new(permit: crate::Permit<'a>, number: u32) -> Self {
        Self {
            permit: Some(permit),
            number,
        }
    }

    /// Reports the attempt's result through its permit. The permit leaves the attempt
    /// first, so the attempt's `Drop` has nothing left to do and is not run.
    #[inline]
    pub(crate) fn report(self, report: impl FnOnce(crate::Permit<'a>)) {
        let mut this = std::mem::ManuallyDrop::new(self);
        if let Some(permit) = this.permit.take() {
            as_attempt(this.number, || report(permit));
        }
    }
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        if let Some(permit) = self.permit.take() {
            as_attempt(self.number, || drop(permit));
        }
    }
}
