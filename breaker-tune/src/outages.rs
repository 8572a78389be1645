//! The outages in words: a short list whole, a long one summarized (how many, how long, how
//! often, the first and last few), and the whole list where asked.

use std::fmt::Write as _;
use std::time::Duration;

use super::health::Health;
use super::report::plural;

/// Outages listed whole on the report's first line; more are summarized.
pub const LISTED: usize = 10;
/// Outages shown at each end of a summarized list.
pub const ENDS: usize = 3;

fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

/// Outage `i` of `h`: `20.0s..35.0s`, marked `(slow)` and `(censored)` where it is.
pub fn describe(h: &Health, i: usize) -> String {
    let o = &h.outages[i];
    let slow = h.slow.iter().any(|s| o.start <= s.start && s.end <= o.end);
    format!(
        "{}..{}{}{}",
        secs(o.start),
        secs(o.end),
        if slow { " (slow)" } else { "" },
        if h.censored[i] { " (censored)" } else { "" }
    )
}

/// The outages of `h` for the report's first line: `outage: none`, `outages: a, b` up to
/// [`LISTED`], or a summary of a longer list.
///
/// ```
/// use std::time::Duration;
/// use breakerbox_tune::health::Health;
/// use breakerbox_tune::outages::summary;
///
/// let secs = Duration::from_secs;
/// // Sick 5 s in every 10, for 1,000 s.
/// let outages: Vec<_> = (0..99).map(|i| secs(10 * i + 5)..secs(10 * i + 10)).collect();
/// let health = Health {
///     bucket: secs(1),
///     buckets: Vec::new(),
///     baseline_median: Duration::from_millis(5),
///     healthy_p99: Duration::from_millis(9),
///     censored: vec![false; outages.len()],
///     outages,
///     slow: Vec::new(),
///     end: secs(1000),
/// };
/// assert_eq!(
///     summary(&health),
///     "99 outages, 5.0s to 5.0s long (median 5.0s), starting every 10.0s (median); \
///      the first 3: 5.0s..10.0s, 15.0s..20.0s, 25.0s..30.0s; the last 3: \
///      965.0s..970.0s, 975.0s..980.0s, 985.0s..990.0s (every one with --outages, and \
///      drawn in the SVG)"
/// );
/// ```
pub fn summary(h: &Health) -> String {
    let n = h.outages.len();
    if n == 0 {
        return "outage: none".into();
    }
    if n <= LISTED {
        let all: Vec<String> = (0..n).map(|i| describe(h, i)).collect();
        let noun = if n == 1 { "outage" } else { "outages" };
        return format!("{noun}: {}", all.join(", "));
    }
    let mut lengths: Vec<Duration> = h.outages.iter().map(|o| o.end - o.start).collect();
    lengths.sort_unstable();
    let mut gaps: Vec<Duration> = h
        .outages
        .windows(2)
        .map(|w| w[1].start - w[0].start)
        .collect();
    gaps.sort_unstable();
    let censored = h.censored.iter().filter(|&&c| c).count();
    let slow = (0..n)
        .filter(|&i| {
            let o = &h.outages[i];
            h.slow.iter().any(|s| o.start <= s.start && s.end <= o.end)
        })
        .count();
    let mut out = format!(
        "{n} outages, {} to {} long (median {}), starting every {} (median)",
        secs(lengths[0]),
        secs(lengths[n - 1]),
        secs(lengths[n / 2]),
        secs(gaps[gaps.len() / 2]),
    );
    if slow > 0 {
        let _ = write!(out, ", {slow} slow");
    }
    if censored > 0 {
        let _ = write!(out, ", {censored} censored");
    }
    let ends = |range: std::ops::Range<usize>| {
        range.map(|i| describe(h, i)).collect::<Vec<_>>().join(", ")
    };
    let _ = write!(
        out,
        "; the first {ENDS}: {}; the last {ENDS}: {} (every one with --outages, and drawn in \
         the SVG)",
        ends(0..ENDS),
        ends(n - ENDS..n)
    );
    out
}

/// Every outage of `h`, one a line, numbered from 1.
pub fn list(h: &Health) -> String {
    let mut out = format!("{}:\n", plural(h.outages.len() as u64, "outage", "outages"));
    for i in 0..h.outages.len() {
        let _ = writeln!(out, "{:>6}  {}", i + 1, describe(h, i));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn health(outages: Vec<std::ops::Range<Duration>>) -> Health {
        Health {
            bucket: Duration::from_secs(1),
            buckets: Vec::new(),
            baseline_median: Duration::from_millis(5),
            healthy_p99: Duration::from_millis(9),
            censored: (0..outages.len()).map(|i| i == 1).collect(),
            outages,
            slow: Vec::new(),
            end: Duration::from_secs(1_000_000),
        }
    }

    #[test]
    fn a_short_list_is_written_whole() {
        let secs = Duration::from_secs;
        let h = health(vec![secs(5)..secs(10), secs(20)..secs(30)]);
        assert_eq!(summary(&h), "outages: 5.0s..10.0s, 20.0s..30.0s (censored)");
        assert_eq!(
            summary(&health(vec![secs(1)..secs(2)])),
            "outage: 1.0s..2.0s"
        );
        assert_eq!(summary(&health(Vec::new())), "outage: none");
    }

    #[test]
    fn a_million_calls_sick_five_seconds_in_ten_summarize_in_one_short_line() {
        // 999 outages of 4 to 6 s, one starting every 10 s.
        let outages: Vec<_> = (0..999u64)
            .map(|i| {
                let start = Duration::from_secs(10 * i + 5);
                start..start + Duration::from_secs(4 + i % 3)
            })
            .collect();
        let h = health(outages);
        let line = summary(&h);
        assert_eq!(
            line,
            "999 outages, 4.0s to 6.0s long (median 5.0s), starting every 10.0s (median), \
             1 censored; the first 3: 5.0s..9.0s, 15.0s..20.0s (censored), 25.0s..31.0s; the \
             last 3: 9965.0s..9969.0s, 9975.0s..9980.0s, 9985.0s..9991.0s (every one with \
             --outages, and drawn in the SVG)"
        );
        assert!(line.len() < 300);
        let all = list(&h);
        assert_eq!(all.lines().count(), 1000);
        assert_eq!(all.lines().nth(1), Some("     1  5.0s..9.0s"));
        assert_eq!(all.lines().last(), Some("   999  9985.0s..9991.0s"));
    }
}
