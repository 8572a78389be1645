//! Parses the attribute's `key = value` list into [`Args`], keeping each value's span.

use std::time::Duration;

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{Error, Expr, ExprLit, ExprUnary, Lit, LitStr, Path, UnOp};

use crate::keys;

/// A value and where the user wrote it.
pub(crate) struct Spanned<T> {
    pub(crate) value: T,
    /// The value's span: rules broken by the value point here.
    pub(crate) span: Span,
    /// The key's span: rules about the key's presence point here.
    pub(crate) key_span: Span,
    /// The value as written, for errors: `1.5`, `"5s"`, `[10, 50]`.
    pub(crate) written: String,
}

struct Place {
    span: Span,
    key_span: Span,
    written: String,
}

impl Place {
    fn of<T>(&self, value: T) -> Spanned<T> {
        Spanned {
            value,
            span: self.span,
            key_span: self.key_span,
            written: self.written.clone(),
        }
    }
}

/// What the fallback answers: `fallback_on = "rejection" | "failure"`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum FallbackOn {
    /// Rejected calls, with the `Rejected` (the default).
    Rejection,
    /// Every call that ends in a rejection, a timeout or a failure, with the error.
    Failure,
}

pub(crate) enum Window {
    Count(u32),
    Time(Duration),
}

/// The attribute's arguments, each `None` when not written.
#[derive(Default)]
pub(crate) struct Args {
    pub(crate) window: Option<Spanned<Window>>,
    pub(crate) buckets: Option<Spanned<u32>>,
    pub(crate) min: Option<Spanned<u32>>,
    pub(crate) rate: Option<Spanned<f64>>,
    pub(crate) slow: Option<Spanned<Duration>>,
    pub(crate) slow_rate: Option<Spanned<f64>>,
    pub(crate) throttle: Option<Spanned<f64>>,
    pub(crate) throttle_max: Option<Spanned<f64>>,
    pub(crate) throttle_window: Option<Spanned<Duration>>,
    pub(crate) open: Option<Spanned<Duration>>,
    pub(crate) probes: Option<Spanned<u32>>,
    pub(crate) successes: Option<Spanned<u32>>,
    pub(crate) backoff: Option<Spanned<f64>>,
    pub(crate) open_max: Option<Spanned<Duration>>,
    pub(crate) ramp: Option<Spanned<Vec<u32>>>,
    pub(crate) ramp_step: Option<Spanned<Duration>>,
    pub(crate) ramp_guard: Option<Spanned<f64>>,
    pub(crate) timeout: Option<Spanned<Duration>>,
    pub(crate) retries: Option<Spanned<u32>>,
    pub(crate) retry_backoff: Option<Spanned<Duration>>,
    pub(crate) retry_backoff_max: Option<Spanned<Duration>>,
    pub(crate) retry_budget: Option<Spanned<f64>>,
    pub(crate) retry_floor: Option<Spanned<u32>>,
    pub(crate) hedge: Option<Spanned<Duration>>,
    pub(crate) hedges: Option<Spanned<u32>>,
    pub(crate) max_concurrent: Option<Spanned<u32>>,
    pub(crate) probe_timeout: Option<Spanned<Duration>>,
    pub(crate) shadow: Option<Spanned<bool>>,
    pub(crate) fleet: Option<Spanned<bool>>,
    pub(crate) fleet_quorum: Option<Spanned<u32>>,
    pub(crate) pushback_max: Option<Spanned<Duration>>,
    pub(crate) max_open_percent: Option<Spanned<u32>>,
    pub(crate) fallback: Option<Spanned<Path>>,
    pub(crate) fallback_on: Option<Spanned<FallbackOn>>,
    pub(crate) classify: Option<Spanned<Path>>,
    pub(crate) key: Option<Spanned<Expr>>,
    pub(crate) max_keys: Option<Spanned<usize>>,
    pub(crate) record: Option<Spanned<usize>>,
    pub(crate) name: Option<Spanned<LitStr>>,
    pub(crate) krate: Option<Spanned<Path>>,
    /// `crate` was written but is not a path: nothing may name the runtime then.
    pub(crate) krate_invalid: bool,
}

impl Args {
    /// Whether the body gets copies of the arguments: with `retries` each attempt needs its
    /// own, and with `timeout` and `fallback` the body's future is made before the breaker is
    /// asked, while a rejected call still passes the arguments to the fallback.
    pub(crate) fn copies_arguments(&self) -> bool {
        self.runs_again()
            || (self.fallback.is_some() && (self.timeout.is_some() || self.falls_back_on_failure()))
    }

    /// Whether the body may run more than once for one call: retried (`retries`) or hedged
    /// (`hedge`).
    pub(crate) fn runs_again(&self) -> bool {
        self.retries.is_some() || self.hedge.is_some()
    }

    /// Whether the fallback answers failures too (`fallback_on = "failure"`).
    pub(crate) fn falls_back_on_failure(&self) -> bool {
        self.fallback.is_some()
            && matches!(&self.fallback_on, Some(on) if on.value == FallbackOn::Failure)
    }

    /// Where and how the configuration key `name` was written, if it was.
    pub(crate) fn written(&self, name: &str) -> Option<Written<'_>> {
        fn at<T>(s: &Option<Spanned<T>>) -> Option<Written<'_>> {
            s.as_ref().map(|s| Written {
                span: s.span,
                key_span: s.key_span,
                text: &s.written,
            })
        }
        match name {
            "window" => at(&self.window),
            "buckets" => at(&self.buckets),
            "min" => at(&self.min),
            "rate" => at(&self.rate),
            "slow" => at(&self.slow),
            "slow_rate" => at(&self.slow_rate),
            "throttle" => at(&self.throttle),
            "throttle_max" => at(&self.throttle_max),
            "throttle_window" => at(&self.throttle_window),
            "open" => at(&self.open),
            "probes" => at(&self.probes),
            "successes" => at(&self.successes),
            "backoff" => at(&self.backoff),
            "open_max" => at(&self.open_max),
            "ramp" => at(&self.ramp),
            "ramp_step" => at(&self.ramp_step),
            "ramp_guard" => at(&self.ramp_guard),
            "timeout" => at(&self.timeout),
            "retries" => at(&self.retries),
            "retry_backoff" => at(&self.retry_backoff),
            "retry_backoff_max" => at(&self.retry_backoff_max),
            "retry_budget" => at(&self.retry_budget),
            "retry_floor" => at(&self.retry_floor),
            "hedge" => at(&self.hedge),
            "hedges" => at(&self.hedges),
            "max_concurrent" => at(&self.max_concurrent),
            "probe_timeout" => at(&self.probe_timeout),
            "shadow" => at(&self.shadow),
            "fleet" => at(&self.fleet),
            "fleet_quorum" => at(&self.fleet_quorum),
            "pushback_max" => at(&self.pushback_max),
            "max_open_percent" => at(&self.max_open_percent),
            _ => unreachable!("`{name}` is a configuration key of the table"),
        }
    }
}

/// A configuration key as written.
pub(crate) struct Written<'a> {
    pub(crate) span: Span,
    pub(crate) key_span: Span,
    pub(crate) text: &'a str,
}

/// Parses `tokens`; a value error is collected and parsing goes on, so that every error of
/// the attribute is reported at once.
pub(crate) fn parse(tokens: TokenStream, errors: &mut Vec<Error>) -> Args {
    let mut args = Args::default();
    let parser =
        syn::meta::parser(|meta| {
            let key = meta.path.get_ident().map(ToString::to_string).or_else(|| {
                (meta.path.segments.len() == 1 && meta.path.leading_colon.is_none())
                    .then(|| meta.path.segments[0].ident.to_string())
            });
            let key_span = meta.path.segments[0].ident.span();
            let Some(key) = key.filter(|k| keys::all().any(|known| known == k)) else {
                errors.push(unknown_key(&meta));
                if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<Expr>()?;
                }
                return Ok(());
            };
            let expr: Expr = meta.value()?.parse()?;
            let span = expr_span(&expr);
            let at = Place {
                span,
                key_span,
                written: written(&expr),
            };
            let result =
                match key.as_str() {
                    "window" => {
                        window(&expr).map(|v| set_once(&mut args.window, at.of(v), &key, errors))
                    }
                    "buckets" => integer(&expr, &key)
                        .map(|v| set_once(&mut args.buckets, at.of(v), &key, errors)),
                    "min" => integer(&expr, &key)
                        .map(|v| set_once(&mut args.min, at.of(v), &key, errors)),
                    "rate" => number(&expr, &key, "0.5")
                        .map(|v| set_once(&mut args.rate, at.of(v), &key, errors)),
                    "slow" => duration(&expr, &key)
                        .map(|v| set_once(&mut args.slow, at.of(v), &key, errors)),
                    "slow_rate" => number(&expr, &key, "0.8")
                        .map(|v| set_once(&mut args.slow_rate, at.of(v), &key, errors)),
                    "throttle" => number(&expr, &key, "2.0")
                        .map(|v| set_once(&mut args.throttle, at.of(v), &key, errors)),
                    "throttle_max" => number(&expr, &key, "0.9")
                        .map(|v| set_once(&mut args.throttle_max, at.of(v), &key, errors)),
                    "throttle_window" => duration(&expr, &key)
                        .map(|v| set_once(&mut args.throttle_window, at.of(v), &key, errors)),
                    "open" => duration(&expr, &key)
                        .map(|v| set_once(&mut args.open, at.of(v), &key, errors)),
                    "probes" => integer(&expr, &key)
                        .map(|v| set_once(&mut args.probes, at.of(v), &key, errors)),
                    "successes" => integer(&expr, &key)
                        .map(|v| set_once(&mut args.successes, at.of(v), &key, errors)),
                    "backoff" => number(&expr, &key, "2.0")
                        .map(|v| set_once(&mut args.backoff, at.of(v), &key, errors)),
                    "open_max" => duration(&expr, &key)
                        .map(|v| set_once(&mut args.open_max, at.of(v), &key, errors)),
                    "ramp" => {
                        percents(&expr).map(|v| set_once(&mut args.ramp, at.of(v), &key, errors))
                    }
                    "ramp_step" => duration(&expr, &key)
                        .map(|v| set_once(&mut args.ramp_step, at.of(v), &key, errors)),
                    "ramp_guard" => number(&expr, &key, "3.0")
                        .map(|v| set_once(&mut args.ramp_guard, at.of(v), &key, errors)),
                    "timeout" => duration(&expr, &key)
                        .map(|v| set_once(&mut args.timeout, at.of(v), &key, errors)),
                    "retries" => integer(&expr, &key)
                        .map(|v| set_once(&mut args.retries, at.of(v), &key, errors)),
                    "retry_backoff" => duration(&expr, &key)
                        .map(|v| set_once(&mut args.retry_backoff, at.of(v), &key, errors)),
                    "retry_backoff_max" => duration(&expr, &key)
                        .map(|v| set_once(&mut args.retry_backoff_max, at.of(v), &key, errors)),
                    "retry_budget" => number(&expr, &key, "0.2")
                        .map(|v| set_once(&mut args.retry_budget, at.of(v), &key, errors)),
                    "retry_floor" => unsigned(&expr, &key)
                        .map(|v| set_once(&mut args.retry_floor, at.of(v), &key, errors)),
                    "hedge" => duration(&expr, &key)
                        .map(|v| set_once(&mut args.hedge, at.of(v), &key, errors)),
                    "hedges" => integer(&expr, &key)
                        .map(|v| set_once(&mut args.hedges, at.of(v), &key, errors)),
                    "max_concurrent" => integer(&expr, &key)
                        .map(|v| set_once(&mut args.max_concurrent, at.of(v), &key, errors)),
                    "probe_timeout" => duration(&expr, &key)
                        .map(|v| set_once(&mut args.probe_timeout, at.of(v), &key, errors)),
                    "shadow" => boolean(&expr, &key)
                        .map(|v| set_once(&mut args.shadow, at.of(v), &key, errors)),
                    "fleet" => boolean(&expr, &key)
                        .map(|v| set_once(&mut args.fleet, at.of(v), &key, errors)),
                    "fleet_quorum" => integer(&expr, &key)
                        .map(|v| set_once(&mut args.fleet_quorum, at.of(v), &key, errors)),
                    "pushback_max" => duration(&expr, &key)
                        .map(|v| set_once(&mut args.pushback_max, at.of(v), &key, errors)),
                    "max_open_percent" => integer(&expr, &key)
                        .map(|v| set_once(&mut args.max_open_percent, at.of(v), &key, errors)),
                    "fallback" => path(&expr, &key)
                        .map(|v| set_once(&mut args.fallback, at.of(v), &key, errors)),
                    "fallback_on" => fallback_on(&expr)
                        .map(|v| set_once(&mut args.fallback_on, at.of(v), &key, errors)),
                    "classify" => path(&expr, &key)
                        .map(|v| set_once(&mut args.classify, at.of(v), &key, errors)),
                    "key" => {
                        set_once(&mut args.key, at.of(expr.clone()), &key, errors);
                        Ok(())
                    }
                    "max_keys" => integer(&expr, &key)
                        .map(|v| set_once(&mut args.max_keys, at.of(v), &key, errors)),
                    "record" => integer(&expr, &key)
                        .map(|v| set_once(&mut args.record, at.of(v), &key, errors)),
                    "name" => string(&expr, &key)
                        .map(|v| set_once(&mut args.name, at.of(v), &key, errors)),
                    "crate" => string(&expr, &key)
                        .and_then(|s| s.parse::<Path>())
                        .map(|v| set_once(&mut args.krate, at.of(v), &key, errors)),
                    _ => unreachable!("every key of the table has an arm"),
                };
            if let Err(e) = result {
                args.krate_invalid |= key == "crate";
                errors.push(e);
            }
            Ok(())
        });
    if let Err(e) = parser.parse2(tokens) {
        errors.push(e);
    }
    args
}

/// The one place a key written twice is reported.
fn set_once<T>(
    slot: &mut Option<Spanned<T>>,
    value: Spanned<T>,
    key: &str,
    errors: &mut Vec<Error>,
) {
    if slot.is_some() {
        errors.push(Error::new(value.key_span, format!("duplicate key `{key}`")));
    } else {
        *slot = Some(value);
    }
}

fn unknown_key(meta: &ParseNestedMeta<'_>) -> Error {
    let written = quote::ToTokens::to_token_stream(&meta.path)
        .to_string()
        .replace(' ', "");
    let valid = keys::all()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let suggestion = keys::all()
        .map(|k| (strsim::damerau_levenshtein(&written, k), k))
        .filter(|(distance, k)| *distance <= 2 && *distance < k.len())
        .min()
        .map(|(_, k)| format!("; did you mean `{k}`?"))
        .unwrap_or_default();
    meta.error(format!(
        "unknown key `{written}`{suggestion}\nvalid keys: {valid}"
    ))
}

/// The value as the user wrote it, spaced as rustfmt would: `-1`, `[10, 50]`.
fn written(expr: &Expr) -> String {
    match expr {
        Expr::Array(array) => {
            let elems: Vec<String> = array.elems.iter().map(written).collect();
            format!("[{}]", elems.join(", "))
        }
        Expr::Unary(ExprUnary { op, expr, .. }) => {
            format!("{}{}", quote::ToTokens::to_token_stream(op), written(expr))
        }
        _ => quote::ToTokens::to_token_stream(expr).to_string(),
    }
}

/// The span of the value's first token: on stable compilers a span cannot be joined, so the
/// literal (after any `-`) is the most precise place to point at.
fn expr_span(expr: &Expr) -> Span {
    match expr {
        Expr::Unary(ExprUnary { expr, .. }) => expr_span(expr),
        _ => syn::spanned::Spanned::span(expr),
    }
}

fn window(expr: &Expr) -> syn::Result<Window> {
    match expr {
        _ if is_integer_literal(expr) => integer(expr, "window").map(Window::Count),
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => parse_duration(s).map(Window::Time),
        _ => Err(Error::new_spanned(
            expr,
            "`window` expects an integer (a count window of N calls, like `window = 20`) \
             or a duration string (a time window, like `window = \"10s\"`)",
        )),
    }
}

/// An integer literal. A negative one reads as 0, which the rule of every integer key refuses
/// with its own message; one too large for the key's type is refused here.
fn integer<N>(expr: &Expr, key: &str) -> syn::Result<N>
where
    N: TryFrom<u128> + Default,
{
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(n), ..
        }) => n
            .base10_parse::<u128>()
            .ok()
            .and_then(|v| N::try_from(v).ok())
            .ok_or_else(|| {
                Error::new(
                    n.span(),
                    format!(
                        "`{key}` is out of range: {} does not fit in a {}",
                        n.base10_digits(),
                        std::any::type_name::<N>()
                    ),
                )
            }),
        _ if is_integer_literal(expr) => Ok(N::default()),
        _ => Err(Error::new_spanned(
            expr,
            format!("`{key}` expects an integer literal, like `{key} = 10`"),
        )),
    }
}

/// An integer literal of a key for which 0 is a valid value: a negative one is refused here,
/// as no rule of the runtime's could.
fn unsigned(expr: &Expr, key: &str) -> syn::Result<u32> {
    match expr {
        Expr::Unary(_) if is_integer_literal(expr) => Err(Error::new_spanned(
            expr,
            format!("`{key}` must be at least 0, like `{key} = 10`"),
        )),
        _ => integer(expr, key),
    }
}

/// `7` or `-7`.
fn is_integer_literal(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(_), ..
        }) => true,
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => matches!(
            &**expr,
            Expr::Lit(ExprLit {
                lit: Lit::Int(_),
                ..
            })
        ),
        _ => false,
    }
}

/// A number literal; `example` is a sensible value of the key, for the error message.
fn number(expr: &Expr, key: &str, example: &str) -> syn::Result<f64> {
    let wrong = || {
        Error::new_spanned(
            expr,
            format!("`{key}` expects a number literal, like `{key} = {example}`"),
        )
    };
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Float(f), ..
        }) => f.base10_parse(),
        Expr::Lit(ExprLit {
            lit: Lit::Int(n), ..
        }) => n.base10_parse(),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr: inner,
            ..
        }) if matches!(**inner, Expr::Lit(_)) => {
            number(inner, key, example).map(|r| -r).map_err(|_| wrong())
        }
        _ => Err(wrong()),
    }
}

/// `ramp = [10, 30, 60, 100]`: integer literals in brackets; their rules are the runtime's.
fn percents(expr: &Expr) -> syn::Result<Vec<u32>> {
    let wrong = || {
        Error::new_spanned(
            expr,
            "`ramp` expects a list of percentages, like `ramp = [10, 30, 60, 100]`",
        )
    };
    match expr {
        Expr::Array(array) => array
            .elems
            .iter()
            .map(|e| {
                if is_integer_literal(e) {
                    integer(e, "ramp")
                } else {
                    Err(wrong())
                }
            })
            .collect(),
        _ => Err(wrong()),
    }
}

fn duration(expr: &Expr, key: &str) -> syn::Result<Duration> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => parse_duration(s),
        _ => Err(Error::new_spanned(
            expr,
            format!("`{key}` expects a duration string, like `{key} = \"5s\"`"),
        )),
    }
}

fn parse_duration(s: &LitStr) -> syn::Result<Duration> {
    humantime::parse_duration(&s.value()).map_err(|e| {
        Error::new(
            s.span(),
            format!(
                "invalid duration {:?}: {e}; write it like \"250ms\", \"5s\" or \"1m 30s\"",
                s.value()
            ),
        )
    })
}

fn boolean(expr: &Expr, key: &str) -> syn::Result<bool> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        }) => Ok(b.value),
        _ => Err(Error::new_spanned(
            expr,
            format!("`{key}` expects `true` or `false`, like `{key} = true`"),
        )),
    }
}

fn path(expr: &Expr, key: &str) -> syn::Result<Path> {
    match expr {
        Expr::Path(p) if p.qself.is_none() => Ok(p.path.clone()),
        _ => Err(Error::new_spanned(
            expr,
            format!("`{key}` expects a path to a function, like `{key} = my_fn` or `{key} = Self::my_fn`"),
        )),
    }
}

fn fallback_on(expr: &Expr) -> syn::Result<FallbackOn> {
    let wrong = || {
        Error::new_spanned(
            expr,
            "`fallback_on` expects \"rejection\" (the default: the fallback answers rejected \
             calls, with the `Rejected`) or \"failure\" (it answers every call that ends in a \
             rejection, a timeout or a failure, with the function's error)",
        )
    };
    match string(expr, "fallback_on")
        .map_err(|_| wrong())?
        .value()
        .as_str()
    {
        "rejection" => Ok(FallbackOn::Rejection),
        "failure" => Ok(FallbackOn::Failure),
        _ => Err(wrong()),
    }
}

fn string(expr: &Expr, key: &str) -> syn::Result<LitStr> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s.clone()),
        _ => Err(Error::new_spanned(
            expr,
            format!("`{key}` expects a string literal, like `{key} = \"...\"`"),
        )),
    }
}
