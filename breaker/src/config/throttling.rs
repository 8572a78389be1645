//! Adaptive throttling's settings (see `breaker/src/throttle.rs` for how it refuses).

use std::time::Duration;

/// Client-side adaptive throttling, as [`Config::throttling`](crate::Config::throttling)
/// reads it: in CLOSED, a call is refused with probability
/// `max(0, (requests - factor * accepts) / (requests + 1))`, at most `max`, where `requests`
/// and `accepts` are the calls that reached the downstream in the last `window` and those it
/// answered well.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::Config;
///
/// let config = Config::builder().throttle(2.0).build()?;
/// let throttling = config.throttling().unwrap();
/// assert_eq!((throttling.factor(), throttling.max()), (2.0, 0.9));
/// assert_eq!(throttling.window(), Duration::from_secs(120));
/// assert_eq!(Config::default().throttling(), None);
/// # Ok::<(), breakerbox::config::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Throttling {
    pub(super) factor: f64,
    pub(super) max: f64,
    pub(super) window: Duration,
}

impl Throttling {
    /// K: how many calls each accepted one vouches for (at least 1).
    pub const fn factor(&self) -> f64 {
        self.factor
    }

    /// The largest share of calls refused, in (0, 1].
    pub const fn max(&self) -> f64 {
        self.max
    }

    /// The history counted, expired a tenth at a time.
    pub const fn window(&self) -> Duration {
        self.window
    }
}
