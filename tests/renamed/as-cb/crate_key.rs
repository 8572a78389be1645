//! `crate = "path"` names the runtime where the manifest's name does not reach it: here, a
//! module that re-exports it, as a crate built on breakerbox would.

mod facade {
    pub use ::cb as runtime;
}

use facade::runtime::{Classify, Outcome, Rejected, State};

#[derive(Debug, PartialEq)]
enum Down {
    Unavailable,
    Rejected,
}

impl Classify for Down {
    fn classify(&self) -> Outcome {
        match self {
            Down::Unavailable => Outcome::Failure,
            Down::Rejected => Outcome::Ignored,
        }
    }
}

impl From<Rejected> for Down {
    fn from(_: Rejected) -> Self {
        Down::Rejected
    }
}

#[facade::runtime::circuit_breaker(
    crate = "crate::facade::runtime",
    window = 4,
    min = 2,
    rate = 0.5
)]
async fn fetch(up: bool) -> Result<u32, Down> {
    if up {
        Ok(7)
    } else {
        Err(Down::Unavailable)
    }
}

#[tokio::test]
async fn the_crate_key_names_a_reexported_runtime() {
    assert_eq!(fetch(true).await, Ok(7));
    assert_eq!(fetch(false).await, Err(Down::Unavailable));
    // 1 failure in 2 completed calls reaches the rate of 0.5: the breaker opens.
    let breaker = facade::runtime::registry()
        .get(concat!(module_path!(), "::fetch"))
        .expect("the attribute registered its breaker");
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(fetch(true).await, Err(Down::Rejected));
    assert_eq!(breaker.snapshot().calls, 2);
}
