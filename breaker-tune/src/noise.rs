//! Background failures: how often the downstream fails while healthy, bounded from above.
//!
//! A trace too clean to show a false open cannot vouch for a configuration that two
//! failures in ten would trip: zero failures in `n` healthy calls still allows a failure
//! rate of about `3 / n` at 95% confidence. The perturbed copies of the trace
//! ([`robust`](crate::robust)) add background failures up to that bound, so a candidate that
//! would open on them scores the false opens it would have.

use breakerbox::Outcome;

use super::health::Health;
use super::replay::Answer;
use super::search::{Spec, WindowSpec};

/// The confidence of the bound on the healthy failure rate.
pub const CONFIDENCE: f64 = 0.95;

/// The healthy failure rate of a trace and its upper confidence bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Noise {
    /// Calls outside every outage that succeeded or failed.
    pub healthy_calls: u64,
    /// Of them, the failures.
    pub healthy_failures: u64,
    /// The failure rate the healthy calls allow at [`CONFIDENCE`]: the one-sided
    /// Clopper-Pearson bound.
    pub bound: f64,
    /// The trace's calls a second, which fill a time window.
    pub calls_per_sec: f64,
    /// How often a breaker starts with an empty window over the trace: once, and after each
    /// outage.
    pub restarts: usize,
}

impl Noise {
    /// The background failures of `answers` (in the order of their start) under `health`.
    pub fn estimate(health: &Health, answers: &[Answer]) -> Noise {
        let (mut calls, mut failures) = (0, 0);
        for a in answers
            .iter()
            .filter(|a| health.outage_at(a.start).is_none())
        {
            match a.outcome {
                Outcome::Success => calls += 1,
                Outcome::Failure => (calls, failures) = (calls + 1, failures + 1),
                Outcome::Ignored => {}
            }
        }
        Noise {
            healthy_calls: calls,
            healthy_failures: failures,
            bound: upper_bound(failures, calls, CONFIDENCE),
            calls_per_sec: answers.len() as f64 / health.end.as_secs_f64().max(1.0),
            restarts: 1 + health.outages.len(),
        }
    }

    /// How many times `spec` would open on healthy calls failing at the bound, over as many
    /// healthy calls as the trace has, starting afresh [`restarts`](Self::restarts) times:
    /// each completed call ends a window of the calls before it, which opens the breaker
    /// when its failures reach the rate; after a start, the first `min` calls alone do.
    pub fn expected_opens(&self, spec: &Spec) -> f64 {
        let window = match spec.window {
            WindowSpec::Count(n) => u64::from(n),
            WindowSpec::Time(secs) => (self.calls_per_sec * secs as f64).round() as u64,
        };
        let window = window.max(u64::from(spec.min));
        let to_trip = |calls: u64| ((spec.rate * calls as f64) - 1e-9).ceil().max(1.0) as u64;
        let min = u64::from(spec.min).max(1);
        self.healthy_calls as f64 * tail(to_trip(window), window, self.bound)
            + self.restarts as f64 * tail(to_trip(min), min, self.bound)
    }

    /// Whether `spec` would open on the bound's background failures less than once in 20
    /// traces like this one (see [`expected_opens`](Self::expected_opens)).
    pub fn quiet(&self, spec: &Spec) -> bool {
        self.expected_opens(spec) < 1.0 - CONFIDENCE
    }

    /// The failure rate the healthy calls showed.
    pub fn rate(&self) -> f64 {
        if self.healthy_calls == 0 {
            0.0
        } else {
            self.healthy_failures as f64 / self.healthy_calls as f64
        }
    }

    /// The chance that a perturbed copy turns a healthy success into a failure, so that its
    /// healthy calls fail at the bound: `(bound - rate) / (1 - rate)`.
    pub fn added(&self) -> f64 {
        let rate = self.rate();
        if rate >= 1.0 {
            0.0
        } else {
            ((self.bound - rate) / (1.0 - rate)).clamp(0.0, 1.0)
        }
    }
}

/// The largest failure rate `p` at which `failures` or fewer in `calls` has a chance of at
/// least `1 - confidence`: the one-sided Clopper-Pearson upper bound, to 1e-12. Zero
/// failures give `1 - (1 - confidence)^(1 / calls)`, about `3 / calls` at 95%; no call gives 1.
///
/// ```
/// use breakerbox_tune::noise::upper_bound;
///
/// assert!((upper_bound(0, 1000, 0.95) - 0.002_991).abs() < 1e-6);
/// assert!((upper_bound(1, 10, 0.95) - 0.394_2).abs() < 1e-4);
/// assert_eq!(upper_bound(0, 0, 0.95), 1.0);
/// ```
pub fn upper_bound(failures: u64, calls: u64, confidence: f64) -> f64 {
    if failures >= calls {
        return 1.0;
    }
    let alpha = 1.0 - confidence;
    // P(X <= failures) falls as p rises: the bound is where it reaches alpha.
    let (mut low, mut high) = (failures as f64 / calls as f64, 1.0);
    while high - low > 1e-12 {
        let mid = (low + high) / 2.0;
        if binomial_cdf(failures, calls, mid) > alpha {
            low = mid;
        } else {
            high = mid;
        }
    }
    high
}

/// P(X <= k) for X ~ Binomial(n, p), summed in logarithms so that no term underflows.
fn binomial_cdf(k: u64, n: u64, p: f64) -> f64 {
    if p <= 0.0 {
        return 1.0;
    }
    let (ln_p, ln_q) = (p.ln(), (-p).ln_1p());
    let mut ln_term = n as f64 * ln_q;
    let (mut max, mut terms) = (ln_term, vec![ln_term]);
    for i in 0..k {
        ln_term += ((n - i) as f64).ln() - ((i + 1) as f64).ln() + ln_p - ln_q;
        max = max.max(ln_term);
        terms.push(ln_term);
    }
    let sum: f64 = terms.iter().map(|t| (t - max).exp()).sum();
    (max + sum.ln()).exp().min(1.0)
}

/// P(X >= k) for X ~ Binomial(n, p), summed from `k` up while the terms count.
fn tail(k: u64, n: u64, p: f64) -> f64 {
    if k > n {
        return 0.0;
    }
    if p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 || k == 0 {
        return 1.0;
    }
    // At or below the mean the tail is a half or more, and the sum below is the short one.
    if (k as f64) <= n as f64 * p {
        return 1.0 - binomial_cdf(k - 1, n, p);
    }
    let (ln_p, ln_q) = (p.ln(), (-p).ln_1p());
    let ln_choose = ln_factorial(n) - ln_factorial(k) - ln_factorial(n - k);
    let mut ln_term = ln_choose + k as f64 * ln_p + (n - k) as f64 * ln_q;
    let first = ln_term;
    let mut sum = 1.0;
    for i in k..n {
        ln_term += ((n - i) as f64).ln() - ((i + 1) as f64).ln() + ln_p - ln_q;
        let share = (ln_term - first).exp();
        sum += share;
        if share < 1e-16 * sum {
            break;
        }
    }
    (first.exp() * sum).min(1.0)
}

/// ln(n!), by Stirling's series past 20.
fn ln_factorial(n: u64) -> f64 {
    if n <= 20 {
        return (2..=n).map(|i| (i as f64).ln()).sum();
    }
    let n = n as f64;
    n * n.ln() - n + 0.5 * (2.0 * std::f64::consts::PI * n).ln() + 1.0 / (12.0 * n)
        - 1.0 / (360.0 * n.powi(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_failures_in_n_calls_still_allow_about_three_in_n() {
        for n in [100u64, 1_000, 100_000] {
            let bound = upper_bound(0, n, CONFIDENCE);
            let exact = 1.0 - 0.05f64.powf(1.0 / n as f64);
            assert!((bound - exact).abs() < 1e-9, "{n}: {bound} against {exact}");
            assert!((bound * n as f64 - 3.0).abs() < 0.06, "{n}: {bound}");
        }
    }

    #[test]
    fn the_bound_is_the_clopper_pearson_one_and_rises_with_the_failures() {
        // 95% one-sided upper bounds of the exact binomial interval.
        assert!((upper_bound(1, 10, 0.95) - 0.394_163).abs() < 1e-5);
        assert!((upper_bound(5, 100, 0.95) - 0.102_253).abs() < 1e-5);
        let bounds: Vec<f64> = (0..5).map(|f| upper_bound(f, 1000, 0.95)).collect();
        assert!(bounds.windows(2).all(|w| w[0] < w[1]), "{bounds:?}");
        // Ten thousand failures in a million calls: no term of the sum underflows.
        let big = upper_bound(10_000, 1_000_000, 0.95);
        assert!(big > 0.01 && big < 0.0102, "{big}");
    }

    #[test]
    fn the_binomial_tail_matches_its_sum() {
        // P(X >= 2) for X ~ Binomial(10, 0.002): 1 - 0.998^10 - 10 * 0.002 * 0.998^9.
        let exact = 1.0 - 0.998f64.powi(10) - 10.0 * 0.002 * 0.998f64.powi(9);
        assert!((tail(2, 10, 0.002) - exact).abs() < 1e-12);
        assert!((tail(1, 5, 0.002) - (1.0 - 0.998f64.powi(5))).abs() < 1e-12);
        assert_eq!(tail(11, 10, 0.5), 0.0);
        assert!((tail(5, 10, 0.5) - 0.623_046_875).abs() < 1e-12);
    }

    #[test]
    fn two_failures_in_ten_are_loud_on_a_clean_trace_and_four_in_twenty_quiet() {
        // Zero failures in 1500 healthy calls allow 0.2%.
        let noise = Noise {
            healthy_calls: 1500,
            healthy_failures: 0,
            bound: upper_bound(0, 1500, CONFIDENCE),
            calls_per_sec: 50.0,
            restarts: 2,
        };
        let spec = |window, min, rate| Spec {
            window: WindowSpec::Count(window),
            min,
            rate,
            ..Spec::DEFAULT
        };
        // Two failures in any ten of 1500 calls: about 0.27 times; and one in the first five
        // after a start, 1% each.
        let loud = noise.expected_opens(&spec(10, 5, 0.2));
        assert!((loud - 0.289).abs() < 0.005, "{loud}");
        assert!(!noise.quiet(&spec(10, 5, 0.2)));
        let quiet = noise.expected_opens(&spec(20, 10, 0.2));
        assert!(quiet < 0.001, "{quiet}");
        assert!(noise.quiet(&spec(20, 10, 0.2)));
        // A time window of 10 s at 50 calls a second holds 500: 100 failures trip it.
        assert!(noise.quiet(&Spec {
            window: WindowSpec::Time(10),
            min: 10,
            rate: 0.2,
            ..Spec::DEFAULT
        }));
    }

    #[test]
    fn a_perturbed_copy_adds_failures_up_to_the_bound() {
        let noise = Noise {
            healthy_calls: 1000,
            healthy_failures: 0,
            bound: upper_bound(0, 1000, CONFIDENCE),
            calls_per_sec: 50.0,
            restarts: 1,
        };
        assert_eq!(noise.added(), noise.bound);
        let noisy = Noise {
            healthy_failures: 10,
            bound: 0.02,
            ..noise
        };
        assert!((noisy.added() - 0.01 / 0.99).abs() < 1e-12);
    }
}
