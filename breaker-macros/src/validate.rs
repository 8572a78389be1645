//! The rules of the attribute: the keys each key needs, the attribute's own keys, and the
//! function's signature.
//!
//! Rules on configuration values (`rate` in (0, 1], `min` at most `window`, ...) are not
//! written here: `rules.rs` checks them with the runtime's own rules, from `breakerbox-rules`.

use syn::{Error, FnArg, ItemFn, Pat, PatType, Type};

use crate::args::Args;
use crate::keys::{CONFIG_KEYS, TIME_WINDOW};
use crate::rules;

pub(crate) fn validate(args: &Args, func: &ItemFn, errors: &mut Vec<Error>) {
    if let (None, Some(timeout)) = (func.sig.asyncness, &args.timeout) {
        errors.push(Error::new(
            timeout.key_span,
            "`timeout` needs an `async fn`: a blocking call cannot be cancelled when its time \
             is up, so the breaker could only learn late that it ran over. Give the blocking \
             call a deadline of its own (a client's timeout, `set_read_timeout`) and classify \
             its timeout error as a failure, or make the function `async`",
        ));
    }
    if let (None, Some(hedge)) = (func.sig.asyncness, &args.hedge) {
        errors.push(Error::new(
            hedge.key_span,
            "`hedge` needs an `async fn`: hedged attempts run beside each other, and the losers \
             are cancelled, which a blocking call can be neither. Retry it instead \
             (`retries`), or make the function `async`",
        ));
    }
    for key in &CONFIG_KEYS {
        let (Some(needs), Some(written)) = (&key.needs, args.written(key.name)) else {
            continue;
        };
        if !rules::needs_met(args, key) {
            let what = match needs.what {
                TIME_WINDOW => TIME_WINDOW.to_owned(),
                other => format!("`{other}`"),
            };
            errors.push(Error::new(
                written.key_span,
                format!("`{}` needs {what}{}", key.name, needs.hint),
            ));
        }
    }
    runtime_features(args, errors);
    if let Some(record) = args.record.as_ref().filter(|r| r.value == 0) {
        errors.push(Error::new(
            record.span,
            "record = 0: must be at least 1 call",
        ));
    }
    if let Some(record) = args
        .record
        .as_ref()
        .filter(|r| r.value > breakerbox_rules::MAX_RECORD)
    {
        errors.push(Error::new(
            record.span,
            format!(
                "record = {}: must be at most {} calls",
                record.value,
                breakerbox_rules::MAX_RECORD
            ),
        ));
    }
    if let Some(max_keys) = args.max_keys.as_ref().filter(|m| m.value == 0) {
        errors.push(Error::new(
            max_keys.span,
            "max_keys = 0: must be at least 1",
        ));
    }
    if let (Some(record), Some(_)) = (&args.record, &args.key) {
        errors.push(Error::new(
            record.key_span,
            "`record` records one breaker, and `key` makes one per key: record a key's \
             breaker with `breakerbox::registry().get_keyed(name, key)` and `Breaker::start_recording`",
        ));
    }
    if let (Some(max_keys), None) = (&args.max_keys, &args.key) {
        errors.push(Error::new(
            max_keys.key_span,
            "`max_keys` needs `key`, the expression that picks a breaker per call",
        ));
    }
    if let (Some(percent), None) = (&args.max_open_percent, &args.key) {
        errors.push(Error::new(
            percent.key_span,
            "`max_open_percent` needs `key`: it caps how many of a keyed family's breakers \
             are OPEN at once, and without `key` there is one breaker",
        ));
    }
    if let (Some(on), None) = (&args.fallback_on, &args.fallback) {
        errors.push(Error::new(
            on.key_span,
            "`fallback_on` needs `fallback`, the function that answers instead, like \
             `fallback = degraded`",
        ));
    }
    if args.fallback.is_some() {
        for typed in typed_arguments(func) {
            if !has_plain_name(typed) {
                errors.push(Error::new_spanned(
                    &typed.pat,
                    "with `fallback`, every argument needs a plain name, \
                     to be passed to the fallback",
                ));
            }
        }
    }
    if let Some(copies) = Copies::of(args) {
        copied_arguments(func, &copies, args.fallback.is_none(), errors);
    }
}

/// Keys that the runtime runs only with one of its features, refused at the key without it.
/// `breakerbox` turns on the same feature of this crate.
fn runtime_features(args: &Args, errors: &mut Vec<Error>) {
    let policy = cfg!(feature = "policy");
    let recording = cfg!(feature = "recording");
    for (key, enabled, feature, note) in [
        ("timeout", policy, "policy", " (it is on by default)"),
        ("retries", policy, "policy", " (it is on by default)"),
        ("hedge", policy, "policy", " (it is on by default)"),
    ] {
        if let (false, Some(written)) = (enabled, args.written(key)) {
            errors.push(Error::new(
                written.key_span,
                format!(
                    "`{key}` needs the `{feature}` feature of breakerbox: enable it{note} or \
                     remove the key"
                ),
            ));
        }
    }
    if let (false, Some(record)) = (recording, &args.record) {
        errors.push(Error::new(
            record.key_span,
            "`record` needs the `recording` feature of breakerbox: enable it or remove the key",
        ));
    }
}

/// Why the body gets copies of the arguments, for the errors.
struct Copies {
    /// The keys that make it so.
    keys: &'static str,
    /// Why `self` must be shared.
    receiver: &'static str,
    /// Why the arguments must be copied.
    arguments: &'static str,
    /// What `self` by value would be moved into.
    first: &'static str,
    /// What a `&mut` cannot be lent to.
    lent: &'static str,
}

impl Copies {
    fn of(args: &Args) -> Option<Copies> {
        if args.hedge.is_some() {
            Some(Copies {
                keys: "`hedge`",
                receiver: "each attempt runs the body anew, beside the others",
                arguments: "each attempt runs the body anew",
                first: "the first attempt",
                lent: "more than one attempt",
            })
        } else if args.retries.is_some() {
            Some(Copies {
                keys: "`retries`",
                receiver: "each attempt runs the body anew",
                arguments: "each attempt runs the body anew",
                first: "the first attempt",
                lent: "more than one attempt",
            })
        } else if args.falls_back_on_failure() {
            // The body runs before the fallback may need the arguments.
            Some(Copies {
                keys: "`fallback_on = \"failure\"`",
                receiver: "the body and the fallback both get `self`",
                arguments: "the body and the fallback both get the arguments",
                first: "the body",
                lent: "both",
            })
        } else if args.timeout.is_some() && args.fallback.is_some() {
            // The body's future is made before the breaker is asked, and a rejected call
            // still needs the arguments for the fallback.
            Some(Copies {
                keys: "`timeout` and `fallback`",
                receiver: "the body and the fallback both get `self`",
                arguments: "the body and the fallback both get the arguments",
                first: "the body",
                lent: "both",
            })
        } else {
            None
        }
    }
}

/// The body borrows `self` and gets its own copy of every other argument, which a `&mut` or
/// a destructured argument cannot give.
fn copied_arguments(func: &ItemFn, copies: &Copies, check_names: bool, errors: &mut Vec<Error>) {
    let Copies {
        keys,
        receiver: shared,
        arguments,
        first,
        lent,
    } = copies;
    if let Some(receiver) = func.sig.receiver() {
        let why = match &*receiver.ty {
            Type::Reference(r) if r.mutability.is_none() => None,
            Type::Reference(_) => Some(format!("`&mut self` cannot be lent to {lent}")),
            _ => Some(format!("`self` taken by value would be moved into {first}")),
        };
        if let Some(why) = why {
            errors.push(Error::new_spanned(
                receiver,
                format!("with {keys}, {shared}, so the receiver must be `&self`: {why}"),
            ));
        }
    }
    for typed in typed_arguments(func) {
        // With a fallback, the fallback's rule has reported it already.
        if check_names && !has_plain_name(typed) {
            errors.push(Error::new_spanned(
                &typed.pat,
                format!(
                    "with {keys}, every argument needs a plain name, to be passed to each attempt"
                ),
            ));
        }
        if matches!(&*typed.ty, Type::Reference(r) if r.mutability.is_some()) {
            errors.push(Error::new_spanned(
                &typed.ty,
                format!(
                    "with {keys}, {arguments}, and a `&mut` argument cannot be \
                     lent to {lent}: pass a `&` reference or an owned `Clone` value"
                ),
            ));
        }
    }
}

fn typed_arguments(func: &ItemFn) -> impl Iterator<Item = &PatType> {
    func.sig.inputs.iter().filter_map(|arg| match arg {
        FnArg::Typed(typed) => Some(typed),
        FnArg::Receiver(_) => None,
    })
}

/// `name` or `mut name`: not a pattern, not `ref name`, not `name @ pattern`.
fn has_plain_name(typed: &PatType) -> bool {
    matches!(&*typed.pat, Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none())
}
