//! The bulkhead as the policy holds it, until admission has one.

// replaced by the admission's bulkhead

use std::marker::PhantomData;

use crate::{Breaker, Permit, Rejected};

/// A call's place in the bulkhead, freed on drop.
pub(crate) struct Slot<'a>(PhantomData<&'a Breaker>);

impl Breaker {
    /// The bulkhead slot a call holds for all its attempts; `None` without a bulkhead.
    pub(crate) fn bulkhead_slot(&self) -> Result<Option<Slot<'_>>, Rejected> {
        Ok(None)
    }

    /// Admission of one attempt of a call that already holds its slot (or needs none).
    #[inline]
    pub(crate) fn try_acquire_in_slot(&self) -> Result<Permit<'_>, Rejected> {
        self.try_acquire()
    }
}
