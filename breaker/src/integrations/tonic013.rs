//! tonic 0.13 (feature `tonic013`): the same as the `tonic` feature gives tonic 0.14, for
//! services not yet on 0.14.

use std::sync::Arc;

use tonic013::metadata::MetadataValue;
use tonic013::Status;

use super::grpc;
use crate::{Classify, Outcome, Rejected};

/// `UNAVAILABLE`, `DEADLINE_EXCEEDED` and `INTERNAL` are failures. Every other code is an
/// answer: `NOT_FOUND`, `INVALID_ARGUMENT`, `PERMISSION_DENIED` and the other business codes
/// say the server works, and if they counted, anyone could open the breaker by asking for
/// books that don't exist. `CANCELLED` (the caller gave up) is ignored.
///
/// ```
/// use breaker::{Classify, Outcome};
/// use tonic013::Status;
///
/// assert_eq!(Status::unavailable("restarting").classify(), Outcome::Failure);
/// assert_eq!(Status::not_found("no such book").classify(), Outcome::Success);
/// ```
impl Classify for Status {
    #[inline]
    fn classify(&self) -> Outcome {
        grpc::classify_code(self.code().into())
    }
}

/// A rejected call answers `UNAVAILABLE`, the rejection's text as the message and, when the
/// breaker knows when it lets probes through, gRPC's `grpc-retry-pushback-ms` in whole
/// milliseconds, rounded up. The [`Rejected`] itself is the status's source, so a caller can
/// tell a rejection from a server's own `UNAVAILABLE`.
///
/// So `#[circuit_breaker]` works on a service method returning `Result<T, tonic::Status>` as
/// it is.
///
/// ```
/// use std::error::Error;
/// use std::time::Duration;
/// use breaker::clock::ManualClock;
/// use breaker::{Breaker, Config, Rejected};
/// use tonic013::{Code, Status};
///
/// let clock = ManualClock::new();
/// let b = Breaker::with_clock("libraryd", Config::builder().count_window(1).build()?, clock.clone());
/// b.try_acquire().unwrap().failure();
/// clock.advance(Duration::from_millis(1500));
///
/// let status = Status::from(b.try_acquire().unwrap_err());
/// assert_eq!(status.code(), Code::Unavailable);
/// assert_eq!(status.message(), "circuit 'libraryd' is open; retry in 3.5s");
/// assert_eq!(status.metadata().get("grpc-retry-pushback-ms").unwrap(), "3500");
/// assert!(status.source().unwrap().downcast_ref::<Rejected>().is_some());
/// # Ok::<(), breaker::ConfigError>(())
/// ```
impl From<Rejected> for Status {
    fn from(rejected: Rejected) -> Status {
        let mut status = Status::unavailable(rejected.to_string());
        if let Some(ms) = grpc::pushback_ms(&rejected) {
            let pushback = MetadataValue::from(ms);
            status.metadata_mut().insert(grpc::RETRY_PUSHBACK, pushback);
        }
        status.set_source(Arc::new(rejected));
        status
    }
}
