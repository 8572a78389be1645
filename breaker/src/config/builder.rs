//! The builder: a `const` setter per field, and `build`, which checks every rule
//! (`rules.rs`) and fills the defaults.

use std::time::Duration;

use breakerbox_rules::{Settings, LEAST_MIN_CALLS};

use super::{Backoff, Config, ConfigError, Policy, RampUp, SlowCalls, Throttling, Window};

/// Builds a [`Config`]; every setter is `const` and [`build`](ConfigBuilder::build) validates.
///
/// `min_calls` defaults to half the count window but at least 2 (a count window of 1 can only
/// have 1), or 10 for a time window. It must be at least 2 unless the count window is 1.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::Config;
///
/// let config = Config::builder().time_window(Duration::from_secs(10), 10).build()?;
/// assert_eq!(config.min_calls(), 10);
///
/// let err = Config::builder().failure_rate(1.5).build().unwrap_err();
/// assert_eq!(err.to_string(), "failure_rate must be in (0, 1], got 1.5");
/// # Ok::<(), breakerbox::config::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ConfigBuilder {
    pub(super) window: Window,
    pub(super) min_calls: Option<u32>,
    pub(super) failure_rate: f64,
    pub(super) slow_calls: Option<SlowCalls>,
    pub(super) throttle: Option<f64>,
    pub(super) throttle_max: f64,
    pub(super) throttle_window: Duration,
    pub(super) open_for: Duration,
    pub(super) probes: u32,
    pub(super) successes: Option<u32>,
    pub(super) backoff: Option<Backoff>,
    pub(super) ramp_up: Option<RampUp>,
    pub(super) ramp_guard: Option<f64>,
    pub(super) policy: Policy,
    pub(super) max_concurrent: Option<u32>,
    pub(super) probe_timeout: Option<Duration>,
    pub(super) shadow: bool,
    pub(super) fleet: bool,
    pub(super) fleet_quorum: Option<u32>,
    pub(super) pushback_max: Duration,
    pub(super) max_open_percent: Option<u32>,
}

impl Default for ConfigBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ConfigBuilder {
    /// The defaults: count window 20, min calls 10, failure rate 0.5, open 5s, 3 probes.
    pub const fn new() -> Self {
        let d = Settings::DEFAULT;
        Self {
            window: d.window,
            min_calls: d.min_calls,
            failure_rate: d.failure_rate,
            slow_calls: d.slow_calls,
            throttle: d.throttle,
            throttle_max: d.throttle_max,
            throttle_window: d.throttle_window,
            open_for: d.open_for,
            probes: d.probes,
            successes: d.successes,
            backoff: d.backoff,
            ramp_up: d.ramp_up,
            ramp_guard: d.ramp_guard,
            policy: Policy::NONE,
            max_concurrent: d.max_concurrent,
            probe_timeout: d.probe_timeout,
            shadow: d.shadow,
            fleet: d.fleet,
            fleet_quorum: d.fleet_quorum,
            pushback_max: d.pushback_max,
            max_open_percent: d.max_open_percent,
        }
    }

    /// Judge the last `calls` completed calls.
    pub const fn count_window(mut self, calls: u32) -> Self {
        self.window = Window::Count(calls);
        self
    }

    /// Judge the calls completed during the last `span`, expired in `buckets` steps.
    pub const fn time_window(mut self, span: Duration, buckets: u32) -> Self {
        self.window = Window::Time { span, buckets };
        self
    }

    /// Calls that must be in the window before the failure rate is judged: at least 2, so that
    /// one call never decides, unless the count window holds only 1.
    ///
    /// ```
    /// use breakerbox::Config;
    ///
    /// let err = Config::builder().min_calls(1).build().unwrap_err();
    /// assert_eq!(err.to_string(), "min_calls must be at least 2, got 1");
    /// assert_eq!(Config::builder().count_window(1).min_calls(1).build()?.min_calls(), 1);
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    pub const fn min_calls(mut self, calls: u32) -> Self {
        self.min_calls = Some(calls);
        self
    }

    /// Open when `failures / calls >= rate`; `rate` must be in (0, 1].
    pub const fn failure_rate(mut self, rate: f64) -> Self {
        self.failure_rate = rate;
        self
    }

    /// Count calls slower than `threshold` as slow, and open when `slow / calls >= rate`.
    pub const fn slow_calls(mut self, threshold: Duration, rate: f64) -> Self {
        self.slow_calls = Some(SlowCalls { threshold, rate });
        self
    }

    /// Client-side adaptive throttling in CLOSED (the SRE book's "Handling Overload"): a
    /// call is refused with probability `max(0, (requests - k * accepts) / (requests + 1))`,
    /// at most [`throttle_max`](Self::throttle_max) (default 0.9), where `requests` are the
    /// calls that reached the downstream in the last [`throttle_window`](Self::throttle_window)
    /// (default 2 minutes) and `accepts` those that succeeded. `k` must be finite and at
    /// least 1; the failure window still opens the breaker at its rate. A refused call is
    /// rejected with [`RejectReason::Shed`](crate::RejectReason::Shed), and never enters the
    /// window.
    ///
    /// ```
    /// use breakerbox::Config;
    ///
    /// let err = Config::builder().throttle(0.5).build().unwrap_err();
    /// assert_eq!(err.to_string(), "throttle must be finite and at least 1, got 0.5");
    /// let err = Config::builder().throttle(2.0).throttle_max(1.5).build().unwrap_err();
    /// assert_eq!(err.to_string(), "throttle_max must be in (0, 1], got 1.5");
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    pub const fn throttle(mut self, k: f64) -> Self {
        self.throttle = Some(k);
        self
    }

    /// The largest share of calls throttling refuses, in (0, 1] (default 0.9).
    pub const fn throttle_max(mut self, max: f64) -> Self {
        self.throttle_max = max;
        self
    }

    /// The history throttling counts, in 10 buckets (default 2 minutes).
    pub const fn throttle_window(mut self, span: Duration) -> Self {
        self.throttle_window = span;
        self
    }

    /// How long the breaker stays open before it lets probes through.
    pub const fn open_for(mut self, duration: Duration) -> Self {
        self.open_for = duration;
        self
    }

    /// How many half-open probes may be in flight at once; unless [`successes`](Self::successes)
    /// says otherwise, that many must succeed to close.
    pub const fn probes(mut self, probes: u32) -> Self {
        self.probes = probes;
        self
    }

    /// How many probe successes close a half-open breaker; at least 1 and at most `probes`.
    /// Unset, it is `probes`, also in a configuration made from this one with other `probes`
    /// ([`Config::to_builder`]). Any probe failure still reopens at once.
    ///
    /// ```
    /// use breakerbox::Config;
    ///
    /// let config = Config::builder().probes(5).successes(2).build()?;
    /// assert_eq!((config.probes(), config.successes()), (5, 2));
    /// assert_eq!(Config::builder().probes(4).build()?.successes(), 4);
    /// assert_eq!(Config::default().to_builder().probes(1).build()?.successes(), 1);
    ///
    /// let err = Config::builder().probes(2).successes(3).build().unwrap_err();
    /// assert_eq!(err.to_string(), "successes must be at most probes, got 3 with 2 probes");
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    pub const fn successes(mut self, successes: u32) -> Self {
        self.successes = Some(successes);
        self
    }

    /// After each failed half-open trial, make the next OPEN last `factor` times the previous
    /// one, up to `max`. Example: open 5s, factor 2, max 60s probes after 5s, 10s, 20s, 40s,
    /// 60s, 60s. Closing resets it.
    pub const fn open_backoff(mut self, factor: f64, max: Duration) -> Self {
        self.backoff = Some(Backoff { factor, max });
        self
    }

    /// When the half-open probes have all succeeded, admit only `percents[0]`% of calls for
    /// `step`, then the next percentage, and close after the last step. The percentages must
    /// rise strictly, lie in 1..=100 and end at 100; any failure during the ramp reopens.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::Config;
    ///
    /// let config = Config::builder().ramp_up(&[10, 30, 60, 100], Duration::from_secs(5)).build()?;
    /// assert_eq!(config.ramp_up().unwrap().percents(), [10, 30, 60, 100]);
    ///
    /// let err = Config::builder().ramp_up(&[10, 50], Duration::from_secs(5)).build().unwrap_err();
    /// assert_eq!(err.to_string(), "ramp_up must end at 100, got [10, 50]");
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    pub const fn ramp_up(mut self, percents: &[u32], step: Duration) -> Self {
        self.ramp_up = Some(RampUp::new(percents, step));
        self
    }

    /// During the ramp-up, hold the current step instead of climbing while the step's p99
    /// latency exceeds `factor` times the baseline: the p99 of successful calls while CLOSED
    /// (failures never enter it, so the slow timeouts that opened the breaker cannot lift it).
    /// The baseline lives in memory across the breaker's CLOSED periods, halved as it grows so
    /// that it follows recent traffic. A new breaker (after a restart) has none, nor has one
    /// whose recovery settings were reconfigured: until CLOSED calls have built one, the guard
    /// holds no step and the ramp climbs on time alone. A held step sends no event; with the
    /// `tracing` feature it logs a warning with both p99s.
    pub const fn ramp_latency_guard(mut self, factor: f64) -> Self {
        self.ramp_guard = Some(factor);
        self
    }

    /// Cancel each attempt that runs longer than `limit`, and count it as a failure (and as
    /// slow, if slow calls are judged). Applies to calls run by
    /// [`Breaker::run`](crate::Breaker::run) and `#[circuit_breaker]`.
    pub const fn timeout(mut self, limit: Duration) -> Self {
        self.policy.timeout = Some(limit);
        self
    }

    /// Retry a call whose attempt failed (as [`Classify`](crate::Classify) judges it) up to
    /// `retries` more times, at most 10, asking the breaker again before each retry. Applies
    /// to calls run by [`Breaker::run`](crate::Breaker::run) and `#[circuit_breaker]`.
    pub const fn retries(mut self, retries: u32) -> Self {
        self.policy.retries = retries;
        self
    }

    /// The base delay before a retry, at most 60 s: retry `n` waits a random time in
    /// `[0, min(max, base * 2^(n-1))]` (full jitter), `max` being
    /// [`retry_backoff_max`](Self::retry_backoff_max). Default 20 ms; zero retries at once.
    pub const fn retry_backoff(mut self, base: Duration) -> Self {
        self.policy.backoff = base;
        self
    }

    /// The longest wait before a retry, at least [`retry_backoff`](Self::retry_backoff): the
    /// doubling stops here, so that a call never holds its bulkhead slot for hours in a
    /// backoff. Default 10 s, or the base if that is longer.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::Config;
    ///
    /// let policy = Config::builder().retries(10).retry_backoff(Duration::from_secs(1)).build()?;
    /// assert_eq!(policy.policy().retry_backoff_max(), Duration::from_secs(10));
    ///
    /// let err = Config::builder()
    ///     .retry_backoff(Duration::from_secs(2))
    ///     .retry_backoff_max(Duration::from_secs(1))
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(err.field(), "retry_backoff_max");
    /// assert_eq!(
    ///     err.to_string(),
    ///     "retry_backoff_max must be at least retry_backoff, got 1s with retry_backoff 2s"
    /// );
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    pub const fn retry_backoff_max(mut self, max: Duration) -> Self {
        self.policy.backoff_max = Some(max);
        self
    }

    /// Retries may add at most `ratio` (in `[0, 1]`) times the first attempts of the last
    /// 10 seconds, beside the [`retry_floor`](Self::retry_floor). Default 0.2.
    pub const fn retry_budget(mut self, ratio: f64) -> Self {
        self.policy.budget = ratio;
        self
    }

    /// Retries per second allowed whatever the budget, so that a breaker with few calls can
    /// still retry (over 10 seconds, ten times this many). Default 10; 0 leaves the budget
    /// alone.
    pub const fn retry_floor(mut self, per_second: u32) -> Self {
        self.policy.floor = per_second;
        self
    }

    /// Hedged attempts: when an attempt has run for `delay` without an answer, another one
    /// starts beside it (Polly's, tower's `Hedge`), up to [`hedges`](Self::hedges) extra
    /// attempts. Each asks the breaker first (a rejected one is never started, and never a
    /// failure) and draws from the retry budget; the first success wins, and the others
    /// are cancelled, counted as cancelled, never as failures. At most 60 seconds, and
    /// below the [`timeout`](Self::timeout) if one is set. Used by
    /// [`Breaker::run`](crate::Breaker::run) and `#[circuit_breaker(hedge = ...)]`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::Config;
    ///
    /// let config = Config::builder().hedge(Duration::from_millis(50)).hedges(2).build()?;
    /// assert_eq!(config.policy().hedge(), Some(Duration::from_millis(50)));
    /// assert_eq!(config.policy().hedges(), 2);
    /// let err = Config::builder()
    ///     .timeout(Duration::from_millis(40))
    ///     .hedge(Duration::from_millis(50))
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(err.to_string(), "hedge must be below the timeout, or no attempt could be hedged, got 50ms");
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    pub const fn hedge(mut self, delay: Duration) -> Self {
        self.policy.hedge = Some(delay);
        self
    }

    /// At most this many extra attempts of a hedged call (1 to 5; default 1).
    pub const fn hedges(mut self, extra: u32) -> Self {
        self.policy.hedges = extra;
        self
    }

    /// The bulkhead: at most `calls` calls in flight at once (at least 1); the next is
    /// rejected at once with [`RejectReason::Bulkhead`](crate::RejectReason::Bulkhead).
    pub const fn max_concurrent(mut self, calls: u32) -> Self {
        self.max_concurrent = Some(calls);
        self
    }

    /// A half-open probe still in flight after `limit` counts as failed: the next call or
    /// result after that reopens the breaker, and the probe's late result is discarded.
    /// Unset, it is the [`timeout`](Self::timeout) if one is set, else 60 seconds.
    pub const fn probe_timeout(mut self, limit: Duration) -> Self {
        self.probe_timeout = Some(limit);
        self
    }

    /// Watch only: run the state machine on every outcome but admit every call, counting
    /// the calls an enforcing breaker would have rejected.
    pub const fn shadow(mut self, shadow: bool) -> Self {
        self.shadow = shadow;
        self
    }

    /// Share judgement with the other instances of the service through the fleet (module
    /// `breakerbox::fleet`, feature `fleet`): this breaker publishes its own OPENs, and opens
    /// when a quorum of its peers hold its name OPEN. Takes effect once the process
    /// connects a fleet (the `fleet` feature); without one the breaker judges alone. An
    /// override (`Registry::apply`) that turns it on or off joins a running breaker to the
    /// fleet or takes it out; a breaker reconfigured in code joins or leaves with
    /// `Fleet::join` and `Fleet::leave`.
    pub const fn fleet(mut self, fleet: bool) -> Self {
        self.fleet = fleet;
        self
    }

    /// How many live peers must hold this breaker's name OPEN before it opens for them: at
    /// least 2 (the default), so that one sick or lying instance never opens the fleet.
    ///
    /// ```
    /// use breakerbox::Config;
    ///
    /// let err = Config::builder().fleet(true).fleet_quorum(1).build().unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "fleet_quorum must be at least 2, so that one instance never opens the fleet, got 1"
    /// );
    /// assert_eq!(Config::builder().fleet(true).build()?.fleet_quorum(), 2);
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    pub const fn fleet_quorum(mut self, peers: u32) -> Self {
        self.fleet_quorum = Some(peers);
        self
    }

    /// A failure that carries the downstream's pushback ([`Classify::pushback`]: a 429 or
    /// 503 with `Retry-After`, a gRPC status with `grpc-retry-pushback-ms`) opens the breaker
    /// at once for as long as it asks, at most `max` (default 5 minutes); zero turns
    /// pushback off, and such a failure counts as any other.
    ///
    /// [`Classify::pushback`]: crate::Classify::pushback
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::Config;
    ///
    /// let config = Config::builder().pushback_max(Duration::from_secs(60)).build()?;
    /// assert_eq!(config.pushback_max(), Duration::from_secs(60));
    /// assert_eq!(Config::default().pushback_max(), Duration::from_secs(300));
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    pub const fn pushback_max(mut self, max: Duration) -> Self {
        self.pushback_max = max;
        self
    }

    /// For the members of a keyed family (`#[circuit_breaker(key = ...)]`, the keyed tower
    /// layer): at most
    /// ⌊members × `percent` / 100⌋ of them, but never fewer than one, are OPEN at once
    /// (Envoy's `max_ejection_percent`). `percent` is in 1..=100. A member whose own
    /// judgement would trip it past the cap stays CLOSED, keeps its window, and reports the
    /// refused trip ([`Event::TripRefused`](crate::events::Event::TripRefused)). Which OPENs
    /// count and which are never refused: `docs/states.md`, "A cap on a family's OPEN
    /// members". A breaker of its own is no family's member, and is never capped.
    ///
    /// ```
    /// use breakerbox::Config;
    ///
    /// let config = Config::builder().max_open_percent(50).build()?;
    /// assert_eq!(config.max_open_percent(), Some(50));
    /// assert_eq!(Config::default().max_open_percent(), None);
    /// let err = Config::builder().max_open_percent(0).build().unwrap_err();
    /// assert_eq!(err.to_string(), "max_open_percent must be in 1..=100, got 0");
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    pub const fn max_open_percent(mut self, percent: u32) -> Self {
        self.max_open_percent = Some(percent);
        self
    }

    /// Validates every field and returns the configuration, or the first rule broken.
    pub const fn build(self) -> Result<Config, ConfigError> {
        match self.settings().check_all() {
            Ok(()) => Ok(self.build_checked()),
            Err(violation) => Err(ConfigError::from_violation(violation)),
        }
    }

    /// Every rule broken, in [`Field::ALL`](breakerbox_rules::Field::ALL)'s order, one per
    /// field. A field measured against a broken one (`min_calls` against a zero window) is
    /// left out: its rule would only repeat the other's.
    #[cfg(feature = "overrides")]
    pub(crate) fn errors(&self) -> Vec<ConfigError> {
        let settings = self.settings();
        breakerbox_rules::Field::ALL
            .iter()
            .filter(|field| {
                field
                    .measured_against()
                    .is_none_or(|measure| settings.check(measure).is_ok())
            })
            .filter_map(|&field| settings.check(field).err())
            .map(ConfigError::from_violation)
            .collect()
    }

    /// The values the rules judge.
    const fn settings(&self) -> Settings {
        Settings {
            window: self.window,
            min_calls: self.min_calls,
            failure_rate: self.failure_rate,
            slow_calls: self.slow_calls,
            throttle: self.throttle,
            throttle_max: self.throttle_max,
            throttle_window: self.throttle_window,
            open_for: self.open_for,
            probes: self.probes,
            successes: self.successes,
            backoff: self.backoff,
            ramp_up: self.ramp_up,
            ramp_guard: self.ramp_guard,
            timeout: self.policy.timeout,
            retries: self.policy.retries,
            retry_backoff: self.policy.backoff,
            retry_backoff_max: self.policy.backoff_max,
            retry_budget: self.policy.budget,
            retry_floor: self.policy.floor,
            hedge: self.policy.hedge,
            hedges: self.policy.hedges,
            max_concurrent: self.max_concurrent,
            probe_timeout: self.probe_timeout,
            shadow: self.shadow,
            fleet: self.fleet,
            fleet_quorum: self.fleet_quorum,
            pushback_max: self.pushback_max,
            max_open_percent: self.max_open_percent,
        }
    }

    /// The configuration, whose rules were checked: by [`build`](Self::build), or by the
    /// `#[circuit_breaker]` attribute at expansion, with the same rules (`breakerbox-rules`).
    pub(crate) const fn build_checked(self) -> Config {
        Config {
            window: self.window,
            min_calls: self.effective_min_calls(),
            failure_rate: self.failure_rate,
            slow_calls: self.slow_calls,
            throttle: match self.throttle {
                Some(factor) => Some(Throttling {
                    factor,
                    max: self.throttle_max,
                    window: self.throttle_window,
                }),
                None => None,
            },
            open_for: self.open_for,
            probes: self.probes,
            successes: self.successes,
            backoff: self.backoff,
            ramp_up: self.ramp_up,
            ramp_guard: self.ramp_guard,
            policy: self.policy,
            max_concurrent: self.max_concurrent,
            probe_timeout: self.probe_timeout,
            shadow: self.shadow,
            fleet: self.fleet,
            fleet_quorum: match self.fleet_quorum {
                Some(quorum) => quorum,
                None => breakerbox_rules::DEFAULT_FLEET_QUORUM,
            },
            pushback_max: self.pushback_max,
            max_open_percent: self.max_open_percent,
        }
    }

    const fn effective_min_calls(&self) -> u32 {
        match (self.min_calls, self.window) {
            (Some(min), _) => min,
            (None, Window::Count(n)) if n / 2 >= LEAST_MIN_CALLS => n / 2,
            (None, Window::Count(n)) if n >= LEAST_MIN_CALLS => LEAST_MIN_CALLS,
            (None, Window::Count(_)) => 1,
            (None, Window::Time { .. }) => 10,
        }
    }
}
