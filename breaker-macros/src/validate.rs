//! Rules across keys, and between the keys and the function, that need no evaluation.
//!
//! Rules on values (`rate` in (0, 1], `min` at most `window`, ...) are not here: the runtime's
//! `ConfigBuilder` owns them, and the expansion has the compiler evaluate them in a `const`.

use syn::{Error, FnArg, ItemFn, Pat};

use crate::args::{Args, Window};

pub(crate) fn validate(args: &Args, func: &ItemFn, errors: &mut Vec<Error>) {
    if func.sig.asyncness.is_none() {
        errors.push(Error::new_spanned(
            func.sig.fn_token,
            "`#[circuit_breaker]` goes on an `async fn`: the breaker judges the call when its \
             future completes",
        ));
    }
    if let Some(buckets) = &args.buckets {
        if !matches!(&args.window, Some(w) if matches!(w.value, Window::Time(_))) {
            errors.push(Error::new(
                buckets.key_span,
                "`buckets` needs a time window, like `window = \"10s\"`; \
                 `window = N` (or no window) counts the last N calls",
            ));
        }
    }
    if let (Some(slow_rate), None) = (&args.slow_rate, &args.slow) {
        errors.push(Error::new(
            slow_rate.key_span,
            "`slow_rate` needs `slow`, the duration above which a call is slow, \
             like `slow = \"800ms\"`",
        ));
    }
    match (&args.backoff, &args.open_max) {
        (Some(backoff), None) => errors.push(Error::new(
            backoff.key_span,
            "`backoff` needs `open_max`, the longest OPEN, like `open_max = \"60s\"`",
        )),
        (None, Some(open_max)) => errors.push(Error::new(
            open_max.key_span,
            "`open_max` needs `backoff`, the growth of OPEN after each failed trial, \
             like `backoff = 2.0`",
        )),
        _ => {}
    }
    if let (Some(ramp_step), None) = (&args.ramp_step, &args.ramp) {
        errors.push(Error::new(
            ramp_step.key_span,
            "`ramp_step` needs `ramp`, the percentages to ramp up through, \
             like `ramp = [10, 30, 60, 100]`",
        ));
    }
    if let (Some(max_keys), None) = (&args.max_keys, &args.key) {
        errors.push(Error::new(
            max_keys.key_span,
            "`max_keys` needs `key`, the expression that picks a breaker per call",
        ));
    }
    if args.fallback.is_some() {
        for arg in &func.sig.inputs {
            if let FnArg::Typed(typed) = arg {
                if !matches!(&*typed.pat, Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none())
                {
                    errors.push(Error::new_spanned(
                        &typed.pat,
                        "with `fallback`, every argument needs a plain name, \
                         to be passed to the fallback",
                    ));
                }
            }
        }
    }
}
