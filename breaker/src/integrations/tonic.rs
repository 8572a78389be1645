//! tonic 0.14: `Classify` for `tonic::Status`, and a rejection as the gRPC answer.

super::grpc::status_impls!(
    tonic,
    classify {
        /// `UNAVAILABLE`, `DEADLINE_EXCEEDED` and `INTERNAL` are failures. Every other code is an
        /// answer: `NOT_FOUND`, `INVALID_ARGUMENT`, `PERMISSION_DENIED` and the other business
        /// codes say the server works, and if they counted, anyone could open the breaker by
        /// asking for books that don't exist. `CANCELLED` (the caller gave up) is ignored.
        ///
        /// A status made from a [`Rejected`](crate::Rejected) in this process (its source is
        /// the rejection) is ignored too, as the rejection is: a guarded service method that
        /// calls another, whose breaker is open, does not open its own. A status that arrives
        /// over the network carries no source and is judged by its code.
        ///
        /// ```
        /// use breakerbox::{Breaker, Classify, Config, Outcome};
        /// use tonic::Status;
        ///
        /// assert_eq!(Status::unavailable("restarting").classify(), Outcome::Failure);
        /// assert_eq!(Status::not_found("no such book").classify(), Outcome::Success);
        ///
        /// let inner = Breaker::new("docs::tonic::inner", Config::default());
        /// inner.force_open();
        /// let rejected = Status::from(inner.try_acquire().unwrap_err());
        /// assert_eq!(rejected.classify(), Outcome::Ignored);
        /// ```
    }
    from {
        /// A rejected call answers `UNAVAILABLE`, the rejection's text as the message and, when
        /// the breaker knows when it lets probes through, gRPC's `grpc-retry-pushback-ms` in whole
        /// milliseconds, rounded up. The [`Rejected`](crate::Rejected) itself is the status's
        /// source, so a caller can tell a rejection from a server's own `UNAVAILABLE`.
        ///
        /// So `#[circuit_breaker]` works on a service method returning `Result<T, tonic::Status>`
        /// as it is.
        ///
        /// ```
        /// use std::error::Error;
        /// use std::time::Duration;
        /// use breakerbox::clock::ManualClock;
        /// use breakerbox::{Breaker, Config, Rejected};
        /// use tonic::{Code, Status};
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
        /// # Ok::<(), breakerbox::config::ConfigError>(())
        /// ```
    }
    timed_out {
        /// An attempt past its `timeout` answers `DEADLINE_EXCEEDED`, with the timeout's text as
        /// the message and the [`TimedOut`](crate::policy::TimedOut) as the status's source, so
        /// `#[circuit_breaker(timeout = ...)]` works on a service method returning
        /// `Result<T, tonic::Status>` as it is. (A client's breaker counts it as a failure, as
        /// the caller's did.)
        ///
        /// ```
        /// use std::error::Error;
        /// use std::time::Duration;
        /// use breakerbox::policy::TimedOut;
        /// use tonic::{Code, Status};
        ///
        /// let status = Status::from(TimedOut::new("libraryd", Duration::from_millis(800)));
        /// assert_eq!(status.code(), Code::DeadlineExceeded);
        /// assert_eq!(status.message(), "call to 'libraryd' timed out after 800ms");
        /// assert!(status.source().unwrap().downcast_ref::<TimedOut>().is_some());
        /// ```
    }
);
