//! `#[circuit_breaker(throttle = ...)]`: an annotated function whose breaker sheds load in
//! CLOSED as its downstream's acceptance falls.

use std::time::Duration;

use breakerbox::{circuit_breaker, registry, Classify, Outcome, RejectReason, Rejected};

#[derive(Debug, PartialEq)]
enum ShelfError {
    Down,
    Rejected(RejectReason),
}

impl Classify for ShelfError {
    fn classify(&self) -> Outcome {
        match self {
            ShelfError::Down => Outcome::Failure,
            ShelfError::Rejected(_) => Outcome::Ignored,
        }
    }
}

impl From<Rejected> for ShelfError {
    fn from(rejected: Rejected) -> Self {
        ShelfError::Rejected(rejected.reason())
    }
}

#[circuit_breaker(
    name = "throttle::shelf",
    min = 20,
    throttle = 3.0,
    throttle_max = 0.5,
    throttle_window = "30s"
)]
fn shelf(up: bool) -> Result<(), ShelfError> {
    if up {
        Ok(())
    } else {
        Err(ShelfError::Down)
    }
}

#[test]
fn the_attribute_throttles_with_its_keys_and_sheds_at_most_throttle_max() {
    // The breaker is registered at its first call, a success.
    assert_eq!(shelf(true), Ok(()));
    let b = registry().get("throttle::shelf").unwrap();
    let throttling = b.config().throttling().unwrap();
    assert_eq!(
        (throttling.factor(), throttling.max(), throttling.window()),
        (3.0, 0.5, Duration::from_secs(30))
    );
    // Then the downstream fails every call that reaches it: with K = 3, nothing is refused
    // until the failures pass 2, and the share refused stops at 0.5 (of 12 calls, 3 are
    // refused and 9 fail: requests 10, accepts 1, p = 7 / 11 capped).
    let results: Vec<_> = (0..12).map(|_| shelf(false)).collect();
    let shed = results
        .iter()
        .filter(|r| **r == Err(ShelfError::Rejected(RejectReason::Shed)))
        .count();
    assert_eq!(b.shed_probability(), 0.5);
    assert_eq!(b.snapshot().totals.rejected_by.shed, shed as u64);
    assert_eq!((b.snapshot().totals.failure, shed), (9, 3));
}
