//! What the tuner found, in words: the trace, the front, the current configuration, the pick
//! and how stable it is, what it changes key by key, warnings, and the lines to paste.

use std::fmt::Write as _;
use std::time::Duration;

use breakerbox::recording::{config_key_values, config_keys};

use super::robust::Spread;
use super::score::Scores;
use super::Tuning;

/// `1 flap`, `2 flaps`: a count with its noun, singular or plural.
pub fn plural(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

fn millis(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms < 1.0 {
        format!("{:.0} us", ms * 1e3)
    } else {
        format!("{ms:.1} ms")
    }
}

/// The report on `t`, a tuning of the trace `trace` for the breaker `name`.
pub fn report(t: &Tuning, trace: &str, name: &str) -> String {
    let mut out = String::new();
    let h = &t.health;
    let a = &t.attempts;
    let calls = if a.retries == 0 {
        plural(a.calls, "call", "calls")
    } else {
        format!(
            "{} ({} with {}; {} failed after every retry)",
            plural(a.calls, "call", "calls"),
            plural(a.attempts, "attempt", "attempts"),
            plural(a.retries, "retry", "retries"),
            plural(a.failed_calls, "call", "calls"),
        )
    };
    let _ = writeln!(
        out,
        "{trace}: {calls} over {}; usual median {}, healthy p99 {}; {}",
        secs(h.end),
        millis(h.baseline_median),
        millis(h.healthy_p99),
        super::outages::summary(h)
    );
    if !t.offset.is_zero() {
        let _ = writeln!(
            out,
            "times are from the first call, at t_ms = {:.3} in the trace",
            t.offset.as_secs_f64() * 1e3
        );
    }
    for s in &h.slow {
        let _ = writeln!(
            out,
            "slow without errors from {} to {}: the median call took over {} times the \
             healthy p99 ({})",
            secs(s.start),
            secs(s.end),
            super::health::SICK_SLOWDOWN,
            millis(h.healthy_p99)
        );
    }
    let noise = &t.noise;
    if noise.healthy_failures == 0 {
        let _ = writeln!(
            out,
            "no failure outside the outages, in {}: a trace this clean cannot show a false \
             open, so the perturbed copies fail healthy calls at {:.3}%, the {:.0}% upper bound \
             of zero in {}",
            plural(noise.healthy_calls, "healthy call", "healthy calls"),
            noise.bound * 100.0,
            super::noise::CONFIDENCE * 100.0,
            noise.healthy_calls
        );
    } else {
        let _ = writeln!(
            out,
            "background failures: {} in {} ({:.3}%); the perturbed copies fail healthy calls \
             at up to {:.3}%, its {:.0}% upper bound",
            noise.healthy_failures,
            plural(noise.healthy_calls, "healthy call", "healthy calls"),
            noise.rate() * 100.0,
            noise.bound * 100.0,
            super::noise::CONFIDENCE * 100.0
        );
    }
    if t.rejected > 0 {
        let _ = writeln!(
            out,
            "\nwarning: the recorded breaker rejected {} ({:.1}%): it was enforcing, so the \
             trace does not show how the downstream answered them, and the outages marked \
             censored may have ended sooner than estimated (the tuner assumes the downstream \
             stayed as it last answered). Record in shadow mode (`shadow = true`) to see the \
             recovery, then tune that trace.",
            plural(t.rejected as u64, "call", "calls"),
            100.0 * t.rejected as f64 / t.answers.len().max(1) as f64
        );
    }
    let _ = writeln!(
        out,
        "\nreplayed {} in {:.2} s on {} ({:.2} ms a replay)\n",
        plural(t.specs.len() as u64, "configuration", "configurations"),
        t.elapsed.as_secs_f64(),
        plural(t.threads as u64, "thread", "threads"),
        t.elapsed.as_secs_f64() * 1e3 * t.threads as f64 / t.specs.len().max(1) as f64
    );
    let _ = writeln!(
        out,
        "cost = calls let into an outage + calls rejected while healthy + {} a flap (a close \
         followed by a re-open within one window, no new outage between); Pareto front, {}, \
         the 12 of least cost:",
        plural(t.flap_cost, "call", "calls"),
        plural(t.front.len() as u64, "configuration", "configurations"),
    );
    let _ = writeln!(
        out,
        "{:>6} {:>8} {:>6} {:>9} {:>9} {:>6} {:>6} {:>6}  configuration",
        "cost", "detect", "into", "rejected", "recovery", "flaps", "false", "shed"
    );
    let row = |out: &mut String, s: &Scores, what: String| {
        let _ = writeln!(
            out,
            "{:>6} {:>8} {:>6} {:>9} {:>9} {:>6} {:>6} {:>6}  {what}",
            s.cost(),
            secs(s.detection),
            s.sent_into_outage,
            s.healthy_rejected,
            secs(s.recovery),
            s.flaps,
            s.false_opens,
            s.shed
        );
    };
    for &i in t.front.iter().take(12) {
        row(&mut out, &t.scores[i], t.specs[i].to_string());
    }
    let _ = writeln!(out, "\ncurrent:");
    row(&mut out, &t.current_scores, config_keys(&t.current));
    match (t.recommended, t.recommended_row(), t.recommendation()) {
        (Some(i), Some(_), Err(broken)) => {
            let _ = writeln!(
                out,
                "\nthe pick, {}, breaks a rule with the keys it keeps from the current \
                 configuration: {broken}; keep the current configuration or change that key",
                t.specs[i]
            );
        }
        (Some(i), Some(k), Ok(pick)) => {
            let r = &t.robustness;
            let _ = writeln!(
                out,
                "\nrecommended (least mean cost over the trace and {}, no false open, no \
                 outage missed):",
                plural(r.perturbations as u64, "perturbed copy", "perturbed copies")
            );
            row(&mut out, &t.scores[i], config_keys(&pick));
            let (spread, current) = (Spread::of(&r.scores[k]), Spread::of(&r.current));
            let _ = writeln!(
                out,
                "\nstability: on the front in {} of {} (outages moved and stretched by up to \
                 30%, latencies jittered by 20%); cost {:.0} on average, {} to {} (the \
                 current configuration: {:.0}, {} to {})",
                r.on_front[k],
                plural(r.perturbations as u64, "perturbed copy", "perturbed copies"),
                spread.mean,
                spread.min,
                spread.max,
                current.mean,
                current.min,
                current.max
            );
            if spread.swing() > current.swing() {
                let _ = writeln!(
                    out,
                    "note: its cost swings more than the current configuration's ({:.0}% of its \
                     mean against {:.0}%): it fits this trace's outages more closely; read the \
                     front before adopting it",
                    spread.swing() * 100.0,
                    current.swing() * 100.0
                );
            }
            if !r.quiet(k) {
                let _ = writeln!(
                    out,
                    "note: it opened on the background failures of a perturbed copy, and so did \
                     every candidate that beats the current configuration"
                );
            }
            let changes = super::current::changes(&t.current, &pick);
            let _ = writeln!(out, "\nchanges against the current configuration:");
            for change in &changes {
                let _ = writeln!(out, "  {change}");
            }
            let _ = writeln!(out, "\n#[circuit_breaker({})]", config_keys(&pick));
            let removed: Vec<&str> = changes
                .iter()
                .filter(|c| c.to.is_none())
                .map(|c| c.key)
                .collect();
            let mut block = format!("[{name:?}]\n");
            for (key, value) in config_key_values(&pick) {
                if changes.iter().any(|c| c.key == key) {
                    let _ = writeln!(block, "{key} = {value}");
                }
            }
            let _ = writeln!(
                out,
                "\nas an override of the keys that change (feature `overrides`):\n\n{block}"
            );
            if !removed.is_empty() {
                let _ = writeln!(
                    out,
                    "an override cannot remove a key: remove {} from the attribute",
                    removed
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        _ if h.outages.is_empty() => {
            let _ = writeln!(
                out,
                "\nno outage in the trace: nothing to tune against; keep the current configuration"
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "\nno configuration of the grid beats the current one on this trace and its \
                 perturbed copies without a false open or a missed outage: keep it"
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::plural;

    #[test]
    fn counts_read_in_the_singular_for_one() {
        assert_eq!(plural(1u32, "flap", "flaps"), "1 flap");
        assert_eq!(plural(0u32, "flap", "flaps"), "0 flaps");
        assert_eq!(
            plural(2u64, "configuration", "configurations"),
            "2 configurations"
        );
    }
}
