//! Rules across keys, and between the keys and the function, that need no evaluation.
//!
//! Rules on values (`rate` in (0, 1], `min` at most `window`, ...) are not here: the runtime's
//! `ConfigBuilder` owns them, and the expansion has the compiler evaluate them in a `const`.

use syn::{Error, FnArg, ItemFn, Pat};

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
