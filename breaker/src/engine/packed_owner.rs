//! The packed window's word under the breaker's lock: sealed and read for the machine where
//! a decision needs its calls, and written as the machine asks.
//!
//! Results of CLOSED swap the word without the lock (`engine/packed.rs`); the machine never
//! touches it (`machine/packed_write.rs`). Between them, this file keeps one order: a word
//! whose calls the machine judges is sealed first, so that no result lands between their
//! reading and their writing back, and what the machine asks is written before the
//! generation it asks it for is published.

use crate::clock::LazyNow;
use crate::config::Config;
use crate::machine::{Events, Machine, PackedWrite, Transition};
use crate::window::Packed;

use super::shared::Shared;

impl Shared {
    /// Writes what the machine asked of the word: in `publish`, before the admission word,
    /// and before another swap under the lock.
    #[inline(always)]
    pub(super) fn write_window(&self, m: &mut Machine) {
        match m.take_packed_write() {
            None => {}
            Some(PackedWrite::Seal) => {
                self.window().seal();
            }
            Some(PackedWrite::Store { calls, open }) => {
                self.window().store(m.generation(), calls, open);
            }
        }
    }

    /// Takes a new configuration, handing the machine the word's calls, sealed first.
    pub(crate) fn reconfigure(&self, config: Config, now: &mut LazyNow<'_>) -> Events {
        let (_, events) = self.transition(|m| m.reconfigure(config, now, self.window().seal()));
        events
    }

    /// A result recorded without the lock tripped the word of `generation` and sealed it:
    /// the machine judges it under the configuration in force, if that CLOSED is still the
    /// breaker's (see [`Machine::judge`]).
    #[cold]
    pub(crate) fn open_tripped(&self, generation: u64, now: &mut LazyNow<'_>) -> Events {
        let (_, events) = self.transition(|m| {
            if !m.counts_packed(generation) {
                return None;
            }
            m.judge(now, self.window().seal())
        });
        events
    }

    /// Records, under the lock, a result of `generation`'s CLOSED that the machine sent to
    /// the packed window ([`Recorded::ToPacked`](crate::machine::Recorded::ToPacked)): the
    /// word was sealed, or another swap won the race. Judged by the configuration in force.
    pub(crate) fn record_packed(
        &self,
        m: &mut Machine,
        generation: u64,
        failure: bool,
        now: &mut LazyNow<'_>,
    ) -> Option<Transition> {
        let capacity = m.packed_capacity()?;
        let window = self.window();
        loop {
            match window.record(generation, capacity, failure, || m.threshold()) {
                Packed::Counted | Packed::Stale => return None,
                Packed::Tripped => return m.tripped(now, || window.seal()),
                // Sealed in CLOSED: a result tripped it and its recorder has not taken the
                // lock yet, or a reconfigure sealed it. Judged here as that recorder would:
                // if the breaker stays closed, the word is open again and this result goes
                // in. (Each recorder seals it at most once, and a reconfigure holds the
                // lock: this ends.)
                Packed::Sealed => {
                    if let Some(opened) = m.judge(now, window.seal()) {
                        return Some(opened);
                    }
                    self.write_window(m);
                }
            }
        }
    }
}
