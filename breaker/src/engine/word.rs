//! The admission word every call reads, and the stamp a permit carries from it.
//!
//! The word is `generation << 5 | LIMITED | TIMED | state`: the untimed, unlimited CLOSED
//! admits with one load, and its word is its generation's stamp, so that completion compares
//! a permit's stamp with the word in one instruction. Only this file knows the bits.

use crate::State;

const STATE_MASK: u64 = 0b111;
/// Set while calls are timed (slow calls, the latency guard, observers): admission must note
/// the start.
const TIMED: u64 = 0b1000;
/// Set while the configuration has a bulkhead (`max_concurrent`): admission must take a slot.
const LIMITED: u64 = 0b1_0000;
const GENERATION_SHIFT: u32 = 5;
/// The state bits of the stamp of a permit that holds a bulkhead slot: no state has this
/// code, so no admission word equals the stamp, and its result always leaves `complete`'s
/// inline path for the one that frees the slot.
const IN_SLOT: u64 = 0b111;
const CLOSED: u64 = State::Closed.code();
const OPEN: u64 = State::Open.code();

const _: () = assert!(
    IN_SLOT > State::Disabled.code(),
    "no state has the code of a slot holder's stamp"
);
const _: () = assert!(
    CLOSED == 0,
    "an untimed CLOSED word is its generation's stamp"
);

/// The admission word, as published for every call to read.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Word(u64);

impl Word {
    pub(super) const fn new(generation: u64, state: State, limited: bool, timed: bool) -> Self {
        let limited = if limited { LIMITED } else { 0 };
        let timed = if timed { TIMED } else { 0 };
        Self(generation << GENERATION_SHIFT | limited | timed | state.code())
    }

    pub(super) const fn from_bits(bits: u64) -> Self {
        Self(bits)
    }

    pub(super) const fn bits(self) -> u64 {
        self.0
    }

    /// The state the word publishes.
    #[inline(always)]
    pub(crate) fn state(self) -> State {
        State::from_code(self.0 & STATE_MASK)
    }

    /// The generation the word publishes.
    #[inline(always)]
    pub(crate) const fn generation(self) -> u64 {
        self.0 >> GENERATION_SHIFT
    }

    /// CLOSED, untimed and without a bulkhead: admitted with this one load.
    #[inline(always)]
    pub(super) const fn is_plain_closed(self) -> bool {
        self.0 & (STATE_MASK | TIMED | LIMITED) == CLOSED
    }

    /// CLOSED and untimed, a bulkhead or not.
    #[inline(always)]
    pub(super) const fn is_untimed_closed(self) -> bool {
        self.0 & (STATE_MASK | TIMED) == CLOSED
    }

    /// OPEN without a bulkhead: rejected on the clock.
    #[inline(always)]
    pub(super) const fn is_unlimited_open(self) -> bool {
        self.0 & (STATE_MASK | LIMITED) == OPEN
    }

    #[inline(always)]
    pub(super) const fn is_open(self) -> bool {
        self.0 & STATE_MASK == OPEN
    }

    #[inline(always)]
    pub(super) const fn is_limited(self) -> bool {
        self.0 & LIMITED != 0
    }

    #[inline(always)]
    pub(super) const fn is_timed(self) -> bool {
        self.0 & TIMED != 0
    }
}

/// What a permit carries of the word it was admitted under: its generation, and how its
/// result must be taken. A plain CLOSED permit's stamp is the word itself; a permit that
/// holds a bulkhead slot, a timed probe and a shadow's passthrough say so in bits no word
/// of their generation has, so their results never take the one swap that compares the two.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Stamp(u64);

impl Stamp {
    /// The stamp of `generation`'s plain permits.
    #[inline(always)]
    pub(super) const fn of(generation: u64) -> Self {
        Self(generation << GENERATION_SHIFT)
    }

    /// The stamp of a permit admitted under `word`, as it is: the plain CLOSED's.
    #[inline(always)]
    pub(super) const fn of_word(word: Word) -> Self {
        Self(word.0)
    }

    /// The stamp of a permit admitted under a CLOSED `word`, timed or not: a timed call's
    /// result is recorded with its latency, never by the one swap that compares the two.
    #[inline(always)]
    pub(super) const fn untimed(word: Word) -> Self {
        Self(word.0 & !TIMED)
    }

    /// Whether `word` is the one this permit was admitted under, plain CLOSED and unchanged.
    #[inline(always)]
    pub(super) const fn is(self, word: Word) -> bool {
        self.0 == word.0
    }

    /// The generation the permit was admitted in.
    #[inline(always)]
    pub(crate) const fn generation(self) -> u64 {
        self.0 >> GENERATION_SHIFT
    }

    /// The same stamp, holding a bulkhead slot.
    pub(super) const fn in_slot(self) -> Self {
        Self(self.0 | IN_SLOT)
    }

    /// Whether the permit holds a bulkhead slot, to free when it ends.
    #[inline(always)]
    pub(super) const fn holds_slot(self) -> bool {
        self.0 & STATE_MASK == IN_SLOT
    }

    /// The same stamp, for a probe whose call is timed.
    pub(super) const fn timed_probe(self) -> Self {
        Self(self.0 | TIMED)
    }

    /// Whether a probe's call is timed (a probe notes its start either way).
    pub(super) const fn is_timed_probe(self) -> bool {
        self.0 & TIMED != 0
    }

    /// The same stamp, for a call a shadow admitted where an enforcing breaker would have
    /// rejected it: OPEN's code, whose word has its window sealed.
    pub(super) const fn shadowed(self) -> Self {
        Self(self.0 | OPEN)
    }

    /// Whether a passthrough of this stamp was a shadow's admission of a rejected call.
    pub(super) const fn is_shadowed(self) -> bool {
        self.0 & STATE_MASK == OPEN
    }
}
