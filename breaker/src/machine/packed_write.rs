//! What the machine asks of the packed window: a count window of up to 20 calls kept in one
//! atomic word, which results of CLOSED swap without the lock (`engine/packed.rs`).
//!
//! The machine never touches the word. Its owner (`engine/packed_owner.rs`) seals the word and
//! hands in its calls where a decision needs them, and after each operation writes what
//! the machine asked for, before it publishes the operation's generation to admission.

use crate::clock::LazyNow;
use crate::transition::TransitionReason;
use crate::window::PackedCalls;
use crate::State;

use super::{Machine, Phase, Transition};
use crate::rule::trips;

/// What an operation asks of the packed window's word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PackedWrite {
    /// Seal it: no result counts from here on, until the lock writes it again. Keeps the
    /// calls it holds.
    Seal,
    /// Store `calls` as the window of the current generation: open to its results if
    /// `open` (only in CLOSED), else sealed.
    Store { calls: PackedCalls, open: bool },
}

impl Machine {
    /// What the operations since the last call asked of the packed window's word, for its
    /// owner to write before it publishes them.
    pub(crate) fn take_packed_write(&mut self) -> Option<PackedWrite> {
        self.packed_write.take()
    }

    /// Asks for `write` after what the operation asked before: a seal after a store keeps
    /// the calls stored, sealed.
    pub(super) fn write_packed(&mut self, write: PackedWrite) {
        self.packed_write = Some(match (self.packed_write, write) {
            (Some(PackedWrite::Store { calls, .. }), PackedWrite::Seal) => {
                PackedWrite::Store { calls, open: false }
            }
            (_, write) => write,
        });
    }

    /// Asks for `calls` in the packed window: open to results in CLOSED, sealed in any other
    /// state (readable, never recorded into, until the next CLOSED empties it).
    pub(super) fn store_packed(&mut self, calls: PackedCalls) {
        let open = self.state() == State::Closed;
        self.write_packed(PackedWrite::Store { calls, open });
    }

    /// Starts an empty packed window for the current generation; a window kept under the
    /// lock leaves the word sealed.
    pub(super) fn empty_packed(&mut self) {
        match self.window.packed() {
            Some(capacity) => self.store_packed(PackedCalls::empty(capacity)),
            None => self.write_packed(PackedWrite::Seal),
        }
    }

    /// The packed window's calls once the operation's writes are done: those it stores, or
    /// else `word`, the calls the owner read from the word.
    pub(super) fn packed_calls(&self, word: PackedCalls) -> PackedCalls {
        match self.packed_write {
            Some(PackedWrite::Store { calls, .. }) => calls,
            _ => word,
        }
    }

    /// Whether a result of `generation` is judged in a packed window now: the breaker is in
    /// that generation's CLOSED, and packs its window.
    pub(crate) fn counts_packed(&self, generation: u64) -> bool {
        matches!(self.phase, Phase::Closed)
            && generation == self.generation
            && self.window.packed().is_some()
    }

    /// A result swapped into the packed window under the lock tripped it, judged by this
    /// configuration's [`threshold`](Self::threshold): opens the breaker.
    pub(crate) fn tripped(
        &mut self,
        now: &mut LazyNow<'_>,
        sealed: impl FnOnce() -> PackedCalls,
    ) -> Option<Transition> {
        if !matches!(self.phase, Phase::Closed) {
            return None;
        }
        // A packed window holds no slow marks: its failures tripped it.
        let opened = self.enter(State::Open, TransitionReason::FailureRate, now);
        if opened.is_none() {
            // The family's cap refused the trip: the window stays CLOSED, with its calls.
            self.store_packed(sealed());
        }
        opened
    }

    /// Judges the packed window of this CLOSED, whose word its owner sealed and read as
    /// `calls`, under the configuration in force: opens the breaker if it trips; if not, the
    /// window is open to results again in the same generation, with the same calls.
    ///
    /// The word is sealed by a result that tripped it, judged without the lock under the
    /// threshold it read, which a `reconfigure` may have raised since (the generation
    /// stays: the window is kept), or by a `reconfigure` itself; the seal is a request to
    /// judge, and the breaker opens only under its lock, under the configuration in force.
    /// A trip that takes the lock before the reconfigure opens the breaker, which the
    /// reconfigure then keeps open; one that takes it after is judged here under the new
    /// threshold, and if the window does not trip, it is open to results again with every
    /// call it counted, the tripping one too.
    ///
    /// The word is written back as it was: a recorder that read it before the seal still
    /// swaps it, and loses nothing. (So does one that read the word before a reconfigure
    /// sealed it, if nothing changed it since: only a success into a full window of
    /// successes changes nothing. A failure judged under the old threshold then lands
    /// unjudged, which matters only if the new threshold opens a full window on one failure;
    /// the breaker then opens at its next one.)
    pub(crate) fn judge(
        &mut self,
        now: &mut LazyNow<'_>,
        calls: PackedCalls,
    ) -> Option<Transition> {
        let capacity = self.window.packed()?;
        if !matches!(self.phase, Phase::Closed) {
            return None;
        }
        if let Some(reason) = trips(&self.config, calls.totals(capacity)) {
            if let Some(opened) = self.enter(State::Open, reason, now) {
                return Some(opened);
            }
            // The family's cap refused the trip: the window stays CLOSED, and keeps its calls.
        }
        self.store_packed(calls);
        None
    }
}
