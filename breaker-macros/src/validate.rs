//! Rules across keys, and between the keys and the function, that need no evaluation.
//!
//! Rules on values (`rate` in (0, 1], `min` at most `window`, ...) are not here: the runtime's
//! `ConfigBuilder` owns them, and the expansion has the compiler evaluate them in a `const`.

use syn::{Error, FnArg, ItemFn, Pat, PatType, Type};

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
    if let (Some(record), Some(_)) = (&args.record, &args.key) {
        errors.push(Error::new(
            record.key_span,
            "`record` records one breaker, and `key` makes one per key: record a key's \
             breaker with `breaker::registry().get_keyed(name, key)` and `Breaker::record`",
        ));
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
    if let Some(copies) = Copies::of(args) {
        copied_arguments(func, &copies, args.fallback.is_none(), errors);
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
        if args.retries.is_some() {
            Some(Copies {
                keys: "`retries`",
                receiver: "each attempt runs the body anew",
                arguments: "each attempt runs the body anew",
                first: "the first attempt",
                lent: "more than one attempt",
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
