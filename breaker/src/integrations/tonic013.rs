//! tonic 0.13 (feature `tonic013`): the same as the `tonic` feature gives tonic 0.14, for
//! services not yet on 0.14.

super::grpc::status_impls!(
    tonic013,
    classify {
        /// As for tonic 0.14: `UNAVAILABLE`, `DEADLINE_EXCEEDED` and `INTERNAL` are failures,
        /// `CANCELLED` is ignored, every other code is an answer; a status made from a
        /// [`Rejected`](crate::Rejected) in this process is ignored.
        ///
        /// ```
        /// use breakerbox::{Classify, Outcome};
        /// use tonic013::Status;
        ///
        /// assert_eq!(Status::unavailable("restarting").classify(), Outcome::Failure);
        /// assert_eq!(Status::not_found("no such book").classify(), Outcome::Success);
        /// ```
    }
    from {
        /// As for tonic 0.14: `UNAVAILABLE` with the rejection's text, `grpc-retry-pushback-ms`
        /// when known, and the [`Rejected`](crate::Rejected) as the source.
        ///
        /// ```
        /// use std::time::Duration;
        /// use breakerbox::clock::ManualClock;
        /// use breakerbox::{Breaker, Config};
        /// use tonic013::{Code, Status};
        ///
        /// let clock = ManualClock::new();
        /// let b = Breaker::with_clock("libraryd", Config::builder().count_window(1).build()?, clock.clone());
        /// b.try_acquire().unwrap().failure();
        /// clock.advance(Duration::from_millis(1500));
        ///
        /// let status = Status::from(b.try_acquire().unwrap_err());
        /// assert_eq!(status.code(), Code::Unavailable);
        /// assert_eq!(status.metadata().get("grpc-retry-pushback-ms").unwrap(), "3500");
        /// # Ok::<(), breakerbox::config::ConfigError>(())
        /// ```
    }
    timed_out {
        /// As for tonic 0.14: `DEADLINE_EXCEEDED` with the timeout's text, and the
        /// [`TimedOut`](crate::policy::TimedOut) as the source.
        ///
        /// ```
        /// use std::time::Duration;
        /// use breakerbox::policy::TimedOut;
        /// use tonic013::{Code, Status};
        ///
        /// let status = Status::from(TimedOut::new("libraryd", Duration::from_millis(800)));
        /// assert_eq!(status.code(), Code::DeadlineExceeded);
        /// assert_eq!(status.message(), "call to 'libraryd' timed out after 800ms");
        /// ```
    }
);
