//! The error of a call the breaker did not let through.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::variant_names::variant_names;
use crate::{Classify, Outcome};

/// Why a call was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RejectReason {
    /// The breaker is open: the downstream failed too often.
    Open,
    /// The breaker is half-open and every probe slot is in flight.
    HalfOpenFull,
    /// An operator forced the breaker open.
    ForcedOpen,
    /// The breaker is recovering step by step and admits only part of the calls.
    Throttled,
    /// The bulkhead is full: as many calls as `max_concurrent` allows are in flight.
    Bulkhead,
    /// The breaker is open for its fleet: at least `fleet_quorum` peers hold it OPEN
    /// (feature `fleet`).
    FleetOpen,
    /// Adaptive throttling refused the call in CLOSED: the downstream accepted too few of
    /// the recent calls (`throttle`, see [`ConfigBuilder::throttle`](crate::config::ConfigBuilder::throttle)).
    Shed,
}

variant_names! {
    /// Every reason, in declaration order: one series each of
    /// `circuitbreaker_calls_total{result="rejected"}`.
    ///
    /// ```
    /// use breakerbox::RejectReason;
    ///
    /// let names: Vec<_> = RejectReason::ALL.iter().map(|r| r.as_str()).collect();
    /// assert_eq!(names[..2], ["open", "half_open_full"]);
    /// ```
    all;
    /// The name metrics use (the `reason` label of a rejected call) and the field of
    /// [`RejectedBy`](crate::snapshot::RejectedBy) that counts it, e.g. `"half_open_full"`.
    ///
    /// ```
    /// use breakerbox::RejectReason;
    ///
    /// assert_eq!(RejectReason::FleetOpen.as_str(), "fleet_open");
    /// ```
    as_str;
    RejectReason {
        Open => "open",
        HalfOpenFull => "half_open_full",
        ForcedOpen => "forced_open",
        Throttled => "throttled",
        Bulkhead => "bulkhead",
        FleetOpen => "fleet_open",
        Shed => "shed",
    }
}

/// A call the breaker rejected without running it: which breaker, why, and when to retry.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::{Breaker, Config, RejectReason};
/// use breakerbox::clock::ManualClock;
///
/// let clock = ManualClock::new();
/// let b = Breaker::with_clock("libraryd", Config::default(), clock.clone());
/// b.force_open();
/// let rejected = b.try_acquire().unwrap_err();
/// assert_eq!(rejected.reason(), RejectReason::ForcedOpen);
/// assert_eq!(rejected.retry_after(), None);
/// assert_eq!(rejected.to_string(), "circuit 'libraryd' is forced open");
/// ```
#[derive(Clone)]
pub struct Rejected {
    name: Name,
    reason: RejectReason,
    /// For a rejection by the bulkhead, its limit. For any other, nanoseconds until probes
    /// are let through, [`NO_RETRY`] for none: a `Duration` is made only when asked for, so
    /// rejecting divides nothing.
    detail: u64,
}

/// `retry_after` of a rejection without one.
const NO_RETRY: u64 = u64::MAX;

/// Names up to this many bytes travel inline in a rejection.
const INLINE: usize = 31;

/// A breaker's name as its rejections carry it: copied when short, so that rejecting touches
/// no shared reference count (two atomic operations per rejection), shared when long.
///
/// A struct rather than an enum: cloning a short name copies aligned words and tests one
/// pointer, with none of the odd-sized moves an enum's byte array would need.
#[derive(Clone)]
pub(crate) struct Name {
    inline: Inline,
    /// The name when it is too long to travel inline (`inline` is then empty).
    shared: Option<Arc<str>>,
}

/// Up to [`INLINE`] bytes of a name, its length in the last byte.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Inline([u8; INLINE + 1]);

impl Name {
    pub(crate) fn new(name: &Arc<str>) -> Self {
        let mut inline = [0; INLINE + 1];
        match inline
            .get_mut(..name.len())
            .filter(|_| name.len() <= INLINE)
        {
            Some(bytes) => {
                bytes.copy_from_slice(name.as_bytes());
                inline[INLINE] = name.len() as u8;
                Name {
                    inline: Inline(inline),
                    shared: None,
                }
            }
            None => Name {
                inline: Inline(inline),
                shared: Some(name.clone()),
            },
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        match &self.shared {
            Some(name) => name,
            // The bytes are a whole `str`'s, so they are UTF-8.
            None => {
                let Inline(bytes) = &self.inline;
                std::str::from_utf8(&bytes[..usize::from(bytes[INLINE])]).unwrap_or_default()
            }
        }
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// `retry_after` in nanoseconds, as a rejection keeps it: [`NO_RETRY`] for none.
pub(crate) fn retry_nanos(retry_after: Option<Duration>) -> u64 {
    let nanos = |after: Duration| u64::try_from(after.as_nanos()).unwrap_or(NO_RETRY - 1);
    retry_after.map_or(NO_RETRY, nanos)
}

impl Rejected {
    #[cfg(test)]
    pub(crate) fn new(name: Name, reason: RejectReason, retry_after: Option<Duration>) -> Self {
        Self::after_nanos(name, reason, retry_nanos(retry_after))
    }

    /// A rejection with `detail`: the limit for [`RejectReason::Bulkhead`], else
    /// `retry_after` in nanoseconds, [`NO_RETRY`] for none.
    #[inline]
    pub(crate) fn after_nanos(name: Name, reason: RejectReason, detail: u64) -> Self {
        Self {
            name,
            reason,
            detail,
        }
    }

    /// Name of the breaker that rejected the call.
    pub fn name(&self) -> &str {
        self.name.as_str()
    }

    /// Why the call was rejected.
    pub fn reason(&self) -> RejectReason {
        self.reason
    }

    /// Time until the breaker lets probes through: `Some` when rejected by OPEN. At most
    /// `u64::MAX - 1` nanoseconds (some 584 years), however long the open period.
    pub fn retry_after(&self) -> Option<Duration> {
        let told = self.detail != NO_RETRY && self.reason != RejectReason::Bulkhead;
        told.then(|| Duration::from_nanos(self.detail))
    }
}

impl fmt::Debug for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rejected")
            .field("name", &self.name)
            .field("reason", &self.reason)
            .field("retry_after", &self.retry_after())
            .finish()
    }
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "circuit '{}' is ", self.name.as_str())?;
        match self.reason {
            RejectReason::Open => f.write_str("open")?,
            RejectReason::HalfOpenFull => f.write_str("half-open with every probe in flight")?,
            RejectReason::ForcedOpen => f.write_str("forced open")?,
            RejectReason::Throttled => f.write_str("throttled by recovery")?,
            RejectReason::Bulkhead => write!(f, "at its limit of {} calls in flight", self.detail)?,
            RejectReason::FleetOpen => f.write_str("open for its fleet")?,
            RejectReason::Shed => f.write_str("shedding load by adaptive throttling")?,
        }
        if let Some(after) = self.retry_after() {
            write!(f, "; retry in {:.1}s", after.as_secs_f64())?;
        }
        Ok(())
    }
}

impl std::error::Error for Rejected {}

/// A rejection is [`Outcome::Ignored`]: the call never reached the downstream, so it says
/// nothing about the downstream's health. The breaker that rejected never counts its own
/// rejections; this is for a rejection passed on, as the error of a guarded call inside
/// another guarded call, which must never open the outer breaker (the inner one being open,
/// or forced open by an operator, is no failure of the outer one's downstream).
///
/// So an error type of yours classifies its rejection variant by asking it:
///
/// ```
/// use breakerbox::{Breaker, Classify, Config, Outcome, Rejected};
///
/// enum LibError {
///     Unavailable,
///     Rejected(Rejected),
/// }
///
/// impl Classify for LibError {
///     fn classify(&self) -> Outcome {
///         match self {
///             LibError::Unavailable => Outcome::Failure,
///             LibError::Rejected(rejected) => rejected.classify(),
///         }
///     }
/// }
///
/// let b = Breaker::new("docs::rejected", Config::default());
/// b.force_open();
/// let rejected = LibError::Rejected(b.try_acquire().unwrap_err());
/// assert_eq!(rejected.classify(), Outcome::Ignored);
/// ```
impl Classify for Rejected {
    #[inline]
    fn classify(&self) -> Outcome {
        Outcome::Ignored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(text: &str) -> Name {
        Name::new(&Arc::from(text))
    }

    #[test]
    fn short_names_travel_inline_and_long_ones_shared() {
        for len in [0, 1, INLINE - 1, INLINE, INLINE + 1, 200] {
            let text: String = (0..len)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            let n = name(&text);
            assert_eq!(n.as_str(), text, "{len} bytes");
            assert_eq!(n.shared.is_some(), len > INLINE, "{len} bytes");
            assert_eq!(n.clone().as_str(), text, "{len} bytes, cloned");
        }
    }

    #[test]
    fn a_name_of_many_byte_characters_is_kept_whole() {
        // 10 characters of 3 bytes: 30 bytes inline; 11 of them: 33 bytes, shared.
        for text in ["书".repeat(10), "书".repeat(11)] {
            let r = Rejected::new(name(&text), RejectReason::Open, None);
            assert_eq!(r.name(), text);
            assert_eq!(r.to_string(), format!("circuit '{text}' is open"));
        }
    }

    #[test]
    fn a_bulkhead_rejection_tells_its_limit_and_no_retry() {
        let r = Rejected::after_nanos(name("libraryd"), RejectReason::Bulkhead, 64);
        assert_eq!(
            r.to_string(),
            "circuit 'libraryd' is at its limit of 64 calls in flight"
        );
        assert_eq!(
            (r.reason(), r.retry_after()),
            (RejectReason::Bulkhead, None)
        );
    }
}
