//! What gRPC makes of a breaker, whichever tonic release speaks it: which status codes say
//! the server is sick, and how long a rejected client should hold off.

use std::time::Duration;

use crate::{Outcome, Rejected};

/// The trailer in which a gRPC server tells a client how many milliseconds to wait before
/// retrying (gRPC's retry design, A6).
pub(crate) const RETRY_PUSHBACK: &str = "grpc-retry-pushback-ms";

// The status codes of the gRPC specification, as every release of tonic numbers them.
const CANCELLED: i32 = 1;
const DEADLINE_EXCEEDED: i32 = 4;
const INTERNAL: i32 = 13;
const UNAVAILABLE: i32 = 14;

/// The outcome of a call that ended with status `code`.
pub(crate) fn classify_code(code: i32) -> Outcome {
    match code {
        UNAVAILABLE | DEADLINE_EXCEEDED | INTERNAL => Outcome::Failure,
        CANCELLED => Outcome::Ignored,
        _ => Outcome::Success,
    }
}

/// Whether a status was made from a [`Rejected`] in this process: its source is the
/// rejection. A status that crossed the network has no source, and is judged by its code.
pub(crate) fn made_from_rejection(status: &dyn std::error::Error) -> bool {
    status
        .source()
        .is_some_and(|source| source.is::<Rejected>())
}

/// The pushback a status's metadata carries: `grpc-retry-pushback-ms`, whatever the code; a
/// negative or unreadable value (gRPC's "do not retry") is none.
pub(crate) fn pushback_of(value: Option<&str>) -> Option<Duration> {
    let ms: u64 = value?.trim().parse().ok()?;
    Some(Duration::from_millis(ms))
}

/// The pushback of a rejection in whole milliseconds, rounded up so that a client that
/// waits exactly that long finds the open period over.
pub(crate) fn pushback_ms(rejected: &Rejected) -> Option<u64> {
    let after = rejected.retry_after()?;
    Some(u64::try_from(after.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX))
}

/// `Classify` for a tonic release's `Status`, and `From<Rejected>`, `From<TimedOut>` and
/// `From<CallError>` for it, with the docs given at the call: the two releases speak the same
/// gRPC.
macro_rules! status_impls {
    (
        $tonic:ident,
        classify { $(#[$classify_doc:meta])* }
        from { $(#[$from_doc:meta])* }
        timed_out { $(#[$timed_out_doc:meta])* }
    ) => {
        $(#[$classify_doc])*
        impl $crate::Classify for $tonic::Status {
            #[inline]
            fn classify(&self) -> $crate::Outcome {
                if $crate::integrations::grpc::made_from_rejection(self) {
                    return $crate::Outcome::Ignored;
                }
                $crate::integrations::grpc::classify_code(self.code().into())
            }

            fn pushback(&self) -> Option<::std::time::Duration> {
                let value = self.metadata().get($crate::integrations::grpc::RETRY_PUSHBACK);
                $crate::integrations::grpc::pushback_of(value.and_then(|v| v.to_str().ok()))
            }
        }

        $(#[$from_doc])*
        impl From<$crate::Rejected> for $tonic::Status {
            fn from(rejected: $crate::Rejected) -> $tonic::Status {
                let mut status = $tonic::Status::unavailable(rejected.to_string());
                if let Some(ms) = $crate::integrations::grpc::pushback_ms(&rejected) {
                    let pushback = $tonic::metadata::MetadataValue::from(ms);
                    status
                        .metadata_mut()
                        .insert($crate::integrations::grpc::RETRY_PUSHBACK, pushback);
                }
                status.set_source(::std::sync::Arc::new(rejected));
                status
            }
        }

        $(#[$timed_out_doc])*
        impl From<$crate::policy::TimedOut> for $tonic::Status {
            fn from(timed_out: $crate::policy::TimedOut) -> $tonic::Status {
                let mut status = $tonic::Status::deadline_exceeded(timed_out.to_string());
                status.set_source(::std::sync::Arc::new(timed_out));
                status
            }
        }

        /// A call under the policy that returned no output of its own answers as its
        /// rejection or its timeout does, so `?` on [`Breaker::run`](crate::Breaker::run)
        /// works in a service method.
        impl From<$crate::CallError> for $tonic::Status {
            fn from(error: $crate::CallError) -> $tonic::Status {
                match error {
                    $crate::CallError::Rejected(rejected) => rejected.into(),
                    $crate::CallError::TimedOut(timed_out) => timed_out.into(),
                }
            }
        }
    };
}
pub(crate) use status_impls;
