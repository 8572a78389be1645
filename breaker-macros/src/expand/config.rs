//! The breaker's configuration as a `ConfigBuilder` expression.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use breakerbox_rules::{Settings, Window};

/// The `ConfigBuilder` expression of the settings the rules checked: every value the
/// runtime gets is one the rules judged.
pub(super) fn builder(s: &Settings, p: &TokenStream) -> TokenStream {
    let mut b = quote!(#p::ConfigBuilder::new());
    match s.window {
        Window::Count(n) => b = quote!(#b.count_window(#n)),
        Window::Time { span, buckets } => {
            let span = duration(span);
            b = quote!(#b.time_window(#span, #buckets));
        }
    }
    if let Some(min) = s.min_calls {
        b = quote!(#b.min_calls(#min));
    }
    let rate = float(s.failure_rate);
    b = quote!(#b.failure_rate(#rate));
    if let Some(slow) = s.slow_calls {
        let threshold = duration(slow.threshold);
        let rate = float(slow.rate);
        b = quote!(#b.slow_calls(#threshold, #rate));
    }
    if let Some(k) = s.throttle {
        let (k, max, window) = (float(k), float(s.throttle_max), duration(s.throttle_window));
        b = quote!(#b.throttle(#k).throttle_max(#max).throttle_window(#window));
    }
    let open = duration(s.open_for);
    let probes = s.probes;
    b = quote!(#b.open_for(#open).probes(#probes));
    if let Some(successes) = s.successes {
        b = quote!(#b.successes(#successes));
    }
    if let Some(backoff) = s.backoff {
        let factor = float(backoff.factor);
        let max = duration(backoff.max);
        b = quote!(#b.open_backoff(#factor, #max));
    }
    if let Some(ramp) = s.ramp_up {
        let percents = ramp.percents();
        let step = duration(ramp.step());
        b = quote!(#b.ramp_up(&[#(#percents),*], #step));
    }
    if let Some(factor) = s.ramp_guard {
        let factor = float(factor);
        b = quote!(#b.ramp_latency_guard(#factor));
    }
    if let Some(limit) = s.timeout {
        let limit = duration(limit);
        b = quote!(#b.timeout(#limit));
    }
    let (retries, base, budget) = (s.retries, duration(s.retry_backoff), float(s.retry_budget));
    let floor = s.retry_floor;
    b = quote!(#b.retries(#retries).retry_backoff(#base).retry_budget(#budget).retry_floor(#floor));
    // Unwritten, the runtime's default: 10 s, or the base if that is longer.
    if let Some(max) = s.retry_backoff_max {
        let max = duration(max);
        b = quote!(#b.retry_backoff_max(#max));
    }
    if let Some(delay) = s.hedge {
        let (delay, hedges) = (duration(delay), s.hedges);
        b = quote!(#b.hedge(#delay).hedges(#hedges));
    }
    if let Some(calls) = s.max_concurrent {
        b = quote!(#b.max_concurrent(#calls));
    }
    if let Some(limit) = s.probe_timeout {
        let limit = duration(limit);
        b = quote!(#b.probe_timeout(#limit));
    }
    let shadow = s.shadow;
    b = quote!(#b.shadow(#shadow));
    if s.fleet {
        b = quote!(#b.fleet(true));
    }
    if let Some(quorum) = s.fleet_quorum {
        b = quote!(#b.fleet_quorum(#quorum));
    }
    if let Some(percent) = s.max_open_percent {
        b = quote!(#b.max_open_percent(#percent));
    }
    let pushback_max = duration(s.pushback_max);
    quote!(#b.pushback_max(#pushback_max))
}

fn duration(d: std::time::Duration) -> TokenStream {
    let secs = d.as_secs();
    let nanos = d.subsec_nanos();
    quote!(::core::time::Duration::new(#secs, #nanos))
}

/// `v` as an expression; the rules refused any value that is not finite.
fn float(v: f64) -> TokenStream {
    let lit = Literal::f64_suffixed(v.abs());
    if v.is_sign_negative() {
        quote!(-#lit)
    } else {
        quote!(#lit)
    }
}
