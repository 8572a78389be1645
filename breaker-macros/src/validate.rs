//! Rules across keys, and between the keys and the function, that need no evaluation.
//!
//! Rules on values (`rate` in (0, 1], `min` at most `window`, ...) are not here: the runtime's
//! `ConfigBuilder` owns them, and the expansion has the compiler evaluate them in a `const`.

use syn::{Error, FnArg, ItemFn, Pat, PatType, Receiver, Type};

use crate::args::{Args, Window};
use crate::keys::{CONFIG_KEYS, TIME_WINDOW};

pub(crate) fn validate(args: &Args, func: &ItemFn, errors: &mut Vec<Error>) {
    if func.sig.asyncness.is_none() {
        errors.push(Error::new_spanned(
            func.sig.fn_token,
            "`#[circuit_breaker]` goes on an `async fn`: the breaker judges the call when its \
             future completes",
        ));
    }
    for key in CONFIG_KEYS {
        let (Some(needs), Some((_, key_span))) = (&key.needs, args.spans_of(key.name)) else {
            continue;
        };
        let (met, what) = match needs.what {
            TIME_WINDOW => (
                matches!(&args.window, Some(w) if matches!(w.value, Window::Time(_))),
                TIME_WINDOW.to_owned(),
            ),
            other => (args.spans_of(other).is_some(), format!("`{other}`")),
        };
        if !met {
            errors.push(Error::new(
                key_span,
                format!("`{}` needs {what}{}", key.name, needs.hint),
            ));
        }
    }
    if let (Some(max_keys), None) = (&args.max_keys, &args.key) {
        errors.push(Error::new(
            max_keys.key_span,
            "`max_keys` needs `key`, the expression that picks a breaker per call",
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
    if args.retries.is_some() {
        retried_arguments(func, args.fallback.is_none(), errors);
    }
}

/// Each attempt runs the body anew: it borrows `self` and gets its own copy of every other
/// argument, which a `&mut` or a destructured argument cannot give.
fn retried_arguments(func: &ItemFn, check_names: bool, errors: &mut Vec<Error>) {
    if let Some(receiver) = func.sig.receiver() {
        if let Some(why) = receiver_refused(receiver) {
            errors.push(Error::new_spanned(
                receiver,
                format!(
                    "with `retries`, each attempt runs the body anew and borrows `self`, \
                     so the receiver must be `&self`: {why}"
                ),
            ));
        }
    }
    for typed in typed_arguments(func) {
        // With a fallback, the fallback's rule has reported it already.
        if check_names && !has_plain_name(typed) {
            errors.push(Error::new_spanned(
                &typed.pat,
                "with `retries`, every argument needs a plain name, to be passed to each attempt",
            ));
        }
        if let Type::Reference(r) = &*typed.ty {
            if r.mutability.is_some() {
                errors.push(Error::new_spanned(
                    &typed.ty,
                    "with `retries`, each attempt runs the body anew, and a `&mut` argument \
                     cannot be lent to more than one of them: pass a `&` reference or an \
                     owned `Clone` value",
                ));
            }
        }
    }
}

fn receiver_refused(receiver: &Receiver) -> Option<&'static str> {
    match &*receiver.ty {
        Type::Reference(r) if r.mutability.is_none() => None,
        Type::Reference(_) => Some("`&mut self` cannot be lent to more than one attempt"),
        _ => Some("`self` taken by value would be moved into the first attempt"),
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
