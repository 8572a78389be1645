//! `Classify` for `tonic::Status`: only codes that say the server is sick are failures.

use tonic::{Code, Status};

use crate::{Classify, Outcome};

/// `UNAVAILABLE`, `DEADLINE_EXCEEDED` and `INTERNAL` are failures. Every other code is an
/// answer: `NOT_FOUND`, `INVALID_ARGUMENT`, `PERMISSION_DENIED` and the other business codes
/// say the server works, and if they counted, anyone could open the breaker by asking for
/// books that don't exist. `CANCELLED` (the caller gave up) is ignored.
///
/// ```
/// use breaker::{Classify, Outcome};
/// use tonic::Status;
///
/// assert_eq!(Status::unavailable("restarting").classify(), Outcome::Failure);
/// assert_eq!(Status::not_found("no such book").classify(), Outcome::Success);
/// ```
impl Classify for Status {
    fn classify(&self) -> Outcome {
        match self.code() {
            Code::Unavailable | Code::DeadlineExceeded | Code::Internal => Outcome::Failure,
            Code::Cancelled => Outcome::Ignored,
            _ => Outcome::Success,
        }
    }
}
