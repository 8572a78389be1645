//! The engine: the bit-level paths of a breaker, in one room.
//!
//! What the engine owns: the admission word and the stamps permits carry (`word.rs`),
//! the words published from the machine for the paths that take no lock (`shared.rs`),
//! admission (`admit.rs`), the bulkhead (`bulkhead.rs`), how a result settles (`complete.rs`),
//! the packed window (`packed.rs`) and its owner under the lock (`packed_owner.rs`), the time
//! window's lane of successes counted without the lock (`lane.rs`), and the
//! lifetime totals with their owner's seat (`tally.rs`), and the named flags (`flags.rs`).
//!
//! The rest of the crate reaches it through four doors:
//!
//! - **admit**: [`Breaker::admit`](crate::Breaker) makes a permit or a rejection;
//! - **settle**: [`Breaker::complete`](crate::Breaker) and `complete_pushback` take a
//!   permit's result;
//! - **transition**: [`Shared::transition`] changes the machine under its lock, publishes
//!   and hands back the events to emit;
//! - **read**: [`Shared::inspect`] reads the machine, and [`Shared::state`], the
//!   [`Flag`]s and the totals read what is published.
//!
//! Optional parts (shadow mode, the fleet's OPEN, the per-call listeners, the recording and
//! adaptive throttling) ask for a named [`Flag`]; none adds bits of its own.
//!
//! # Admission
//!
//! `Breaker::try_acquire` loads the admission word. If it is an untimed, unlimited CLOSED word
//! (state 0, no `TIMED` bit, no `LIMITED` bit) the word *is* the stamp of its generation, and the
//! permit is made from it inline: one load and one compare, nothing written (`admit_closed`).
//! Every other word goes out of line (`admit_by_state`), so that callers inline only that:
//!
//! - The unlimited OPEN first (`reject_open`): the rejection compares a clock reading with the
//!   open period published next to the word, then reads the word again to prove the period
//!   belongs to it. The production clock reads the kernel's coarse clock while the period is far
//!   from its end (`clock::CoarsePeriod`), the precise clock near it (`reject_open_precise`).
//! - A limited word goes to the bulkhead (`admit_limited`, below).
//! - A timed CLOSED notes the start and admits, unless adaptive throttling refuses it (a
//!   throttled CLOSED is timed, so that only it reads `Flag::Throttle`: `admit_throttled`);
//!   DISABLED admits (`admit_timed_or_locked`).
//! - Everything else (HALF_OPEN, FORCED_OPEN, an OPEN that has ended) is decided by the machine
//!   under the lock (`admit_locked`).
//!
//! Paths out of line hand back a `Ticket` rather than the `Result`: a `Result` returned by a
//! function out of line lives in memory, and the inlined caller would then copy its permit
//! through the stack.
//!
//! ## The bulkhead
//!
//! A configuration with `max_concurrent` publishes its limit next to the word and sets the
//! word's `LIMITED` bit, so a breaker without a bulkhead pays nothing for it: its CLOSED still
//! admits on one load and one compare, and its OPEN rejects as before. Every call of a limited
//! breaker goes out of line to `engine/bulkhead.rs`, which asks the bulkhead before the state:
//!
//! - a slot is taken by a compare-and-swap from below the limit (`take_slot`), so the count of
//!   calls in flight never passes the limit it was taken under; a full bulkhead rejects with
//!   `RejectReason::Bulkhead` at once, counted in the totals, never in the window;
//! - the state then decides, as for an unlimited word; a rejection frees the slot, an admission
//!   hands it to the permit, which frees it however it ends: a result, a drop, a panic;
//! - in OPEN, a look at the count is enough (a full bulkhead rejects; otherwise OPEN does, and
//!   takes no slot); a call let through when the period has ended takes its slot then
//!   (`past_open`).
//!
//! A permit that holds a slot says so in its stamp: the state bits `0b111` (`IN_SLOT`), a code
//! no state has, so no admission word equals the stamp and its result never settles on
//! `complete`'s inline path; the path out of line frees the slot, then records the result
//! (`complete_packed_or_locked`). The unlimited paths so test nothing about slots. The inline
//! path's other case, a success into a full window of successes, does not look at the stamp,
//! so `publish` never publishes a full window while a slot may be held: never while limited,
//! nor after a limit is removed until the calls holding slots have ended (the last of them
//! publishes again). A limit removed while a call takes a slot is the one race, closed by a
//! handshake on the count: `publish` stores the limit, then swaps the count with itself; a call
//! swaps the count, then reads the limit. The swaps are in one order, so either `publish` sees
//! the slot, or the call sees the limit gone and gives the slot back. A loom model checks it.
//!
//! The count is a count, not a set: a reconfiguration that lowers or removes the limit leaves
//! the calls already in flight counted until they end, and a limit set while calls are in
//! flight does not count them. A caller that holds one slot across attempts (the call policy's
//! retries) takes it with `bulkhead_slot` and asks the state with `try_acquire_in_slot`, whose
//! permits hold no slot (and take the one swap). `Breaker::in_flight` reads the count. The
//! count sits beside the packed window, which every result of a limited breaker writes too.

mod admit;
mod bulkhead;
mod complete;
mod flags;
mod lane;
mod packed;
mod packed_owner;
mod shared;
mod tally;
mod word;

pub(crate) use admit::shadowed;
#[cfg(feature = "policy")]
pub(crate) use bulkhead::CallSlot;
pub(crate) use flags::Flag;
pub(crate) use lane::{LaneBucket, LaneCounts, OwnedSuccesses, TimeLane, MAX_CREDIT};
pub(crate) use packed::{Packed, PackedCalls, Threshold, MAX_PACKED};
pub(crate) use shared::Shared;
pub(crate) use tally::Ending;
pub use tally::{CallTotals, RejectedBy};
pub(crate) use word::Stamp;
