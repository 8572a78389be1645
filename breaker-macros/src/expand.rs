//! Turns the checked arguments and the function into the wrapped function.

use proc_macro2::{Group, Ident, Literal, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::{AttrStyle, Attribute, FnArg, ItemFn, LitStr, Pat, ReturnType, Signature, Token, Type};

use crate::args::{self, Args, Window};
use crate::keys::{
    CONFIG_KEYS, DEFAULT_BUCKETS, DEFAULT_MAX_KEYS, DEFAULT_RAMP_STEP, DEFAULT_RETRY_BACKOFF,
    DEFAULT_RETRY_BUDGET, DEFAULT_RETRY_FLOOR, DEFAULT_SLOW_RATE, TIME_WINDOW,
};
use crate::validate;

pub(crate) fn circuit_breaker(attr: TokenStream, item: TokenStream) -> TokenStream {
    let func: ItemFn = match syn::parse2(item.clone()) {
        Ok(func) => func,
        Err(e) => {
            let e = e.to_compile_error();
            return quote!(#e #item);
        }
    };
    let mut errors = Vec::new();
    let args = args::parse(attr, &mut errors);
    validate::validate(&args, &func, &mut errors);
    match errors.into_iter().reduce(|mut all, e| {
        all.combine(e);
        all
    }) {
        // The function as written, so that its callers don't drown in follow-on errors.
        Some(e) => {
            let e = e.to_compile_error();
            if args.krate_invalid {
                return quote!(#e #func);
            }
            // The values that did parse are still checked, so every error shows at once: in a
            // block of the body's own, as an impl block takes no `const _`.
            let p = private_path(&args);
            let builder = builder(&args, &p);
            let checks = checks(&args, &p);
            let checks = quote! {
                {
                    const BREAKER_CONFIG: #p::ConfigBuilder = #builder;
                    #checks
                }
            };
            let ItemFn {
                attrs,
                vis,
                sig,
                block,
            } = func;
            let (inner_attrs, outer_attrs) = inner_and_outer(attrs);
            let stmts = &block.stmts;
            quote! {
                #e
                #(#outer_attrs)*
                #vis #sig {
                    #(#inner_attrs)*
                    #checks
                    #(#stmts)*
                }
            }
        }
        None => expand(&args, func),
    }
}

/// The function's inner attributes (`#![...]`, which go first in the new body) and its outer
/// ones.
fn inner_and_outer(attrs: Vec<Attribute>) -> (Vec<Attribute>, Vec<Attribute>) {
    attrs
        .into_iter()
        .partition(|a| matches!(a.style, AttrStyle::Inner(_)))
}

fn expand(args: &Args, func: ItemFn) -> TokenStream {
    let p = private_path(args);
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = func;
    let (inner_attrs, outer_attrs) = inner_and_outer(attrs);

    // Locals of the expansion: invisible to the body and to the user's names.
    let breaker = Ident::new("breaker", Span::mixed_site());
    let permit = Ident::new("permit", Span::mixed_site());
    let rejected = Ident::new("rejected", Span::mixed_site());
    let out = Ident::new("out", Span::mixed_site());
    let admission = Ident::new("admission", Span::mixed_site());
    let key_value = Ident::new("key", Span::mixed_site());

    let builder = builder(args, &p);
    let checks = checks(args, &p);
    let checked = checked_fields(&p);
    let name = registry_name(args, &sig);

    let (ret_span, ret_ty) = match &sig.output {
        ReturnType::Default => (sig.ident.span(), Some(quote!(()))),
        ReturnType::Type(_, ty) => (
            ty_span(ty),
            (!contains_impl(ty)).then(|| ty.to_token_stream()),
        ),
    };
    let annotated = |local: &Ident| match &ret_ty {
        Some(ty) => quote!(#local: #ty),
        None => quote!(#local),
    };
    let out_binding = annotated(&out);

    // `subject` is the result, or with `borrow` a reference to it.
    let classify_of = |subject: &Ident, borrow: bool| match &args.classify {
        Some(path) => {
            let path = &path.value;
            let span = path_span(path);
            let borrow = borrow.then(|| quote_spanned!(span=> &));
            quote_spanned!(span=> #path(#borrow #subject))
        }
        None => {
            let classify = match &ret_ty {
                Some(ty) => quote!(<#ty as #p::Classify>::classify),
                None => quote!(#p::Classify::classify),
            };
            let classify = respan(classify, ret_span);
            let borrow = borrow.then(|| quote!(&));
            quote!(#classify(#borrow #subject))
        }
    };
    // The result as the runtime records it: by the return type's `Classify` impl, with the
    // pushback a failure carries, or by the `classify` function given.
    let record = match &args.classify {
        Some(_) => {
            let classify = classify_of(&out, true);
            quote!(#permit.record(#classify))
        }
        None => {
            // Spanned at the return type, as the error of an output that is not `Classify`.
            let judged = Ident::new("judged", ret_span);
            let record_output = respan(quote!(record_output), ret_span);
            quote! {
                let #judged = &#out;
                #permit.#record_output(#judged)
            }
        }
    };

    let on_rejected = match &args.fallback {
        Some(fallback) => {
            let path = &fallback.value;
            let span = path_span(path);
            let passed = sig.inputs.iter().map(|arg| match arg {
                FnArg::Receiver(r) => r.self_token.to_token_stream(),
                FnArg::Typed(t) => match &*t.pat {
                    Pat::Ident(p) => p.ident.to_token_stream(),
                    other => other.to_token_stream(),
                },
            });
            let fallback_out = format_ident!("fallback_out", span = Span::mixed_site());
            let binding = annotated(&fallback_out);
            quote_spanned! {span=>
                {
                    let #binding = #path(#(#passed,)* #rejected).await;
                    #fallback_out
                }
            }
        }
        None => match &ret_ty {
            Some(ty) => {
                quote_spanned!(ret_span=> <#ty as #p::FromRejected>::from_rejected(#rejected))
            }
            None => quote_spanned!(ret_span=> #p::FromRejected::from_rejected(#rejected)),
        },
    };

    // The expansion's items live in a block of their own: the body, a sibling block, sees the
    // names it would see without the attribute, and none of these.
    let acquire = match &args.key {
        None => {
            // `record = N`: the breaker records its last N calls from its first.
            let recorded = args.record.as_ref().map(|r| {
                let capacity = r.value;
                let check = respan(quote!(const _: () = #p::check_record(#capacity);), r.span);
                (quote!(.recording(#capacity)), check)
            });
            let (recording, record_check) = recorded.unzip();
            quote! {
                let #breaker = {
                    const BREAKER_CONFIG: #p::ConfigBuilder = #builder;
                    #checks
                    #record_check
                    static BREAKER: #p::StaticBreaker =
                        #p::StaticBreaker::new(#p::config(BREAKER_CONFIG, #checked))#recording;
                    BREAKER.get(#name)
                };
            }
        }
        Some(key) => {
            let expr = &key.value;
            let max_keys = args.max_keys.as_ref().map_or(DEFAULT_MAX_KEYS, |m| m.value);
            let max_keys_check = args
                .max_keys
                .as_ref()
                .map(|m| respan(quote!(const _: () = #p::check_max_keys(#max_keys);), m.span));
            let lookup = quote_spanned! {key.span=>
                BREAKER.breaker(#name, (&#p::KeyArg(#key_value)).__breaker_key())
            };
            // The key is evaluated outside the block, where the arguments are all it sees.
            quote! {
                let #breaker = match &(#expr) {
                    #key_value => {
                        const BREAKER_CONFIG: #p::ConfigBuilder = #builder;
                        #checks
                        #max_keys_check
                        static BREAKER: #p::StaticKeyed =
                            #p::StaticKeyed::new(#p::config(BREAKER_CONFIG, #checked), #max_keys);
                        #[allow(unused_imports)]
                        use #p::{BorrowedKey as _, OwnedKey as _};
                        #lookup
                    }
                };
            }
        }
    };

    if args.timeout.is_none() && args.retries.is_none() {
        return quote! {
            #(#outer_attrs)*
            #vis #sig {
                #(#inner_attrs)*
                #acquire
                let #admission = #breaker.try_acquire();
                match #admission {
                    ::core::result::Result::Ok(#permit) => {
                        let #out_binding = async move #block.await;
                        #record;
                        #out
                    }
                    ::core::result::Result::Err(#rejected) => #on_rejected,
                }
            }
        };
    }

    // The call policy: the runtime asks the breaker before each attempt and runs it under the
    // timeout. An attempt is the body in an `async move` block of its own, as above.
    let result = Ident::new("result", Span::mixed_site());
    let timed_out = Ident::new("timed_out", Span::mixed_site());
    let attempt = match &ret_ty {
        Some(ty) => quote! {
            async move {
                let #out: #ty = async move #block.await;
                #out
            }
        },
        None => quote!(async move #block),
    };
    let judge = {
        let subject = match &ret_ty {
            Some(ty) => quote!(#out: &#ty),
            None => quote!(#out),
        };
        match &args.classify {
            Some(_) => {
                let classify = classify_of(&out, false);
                quote!(#p::plain(|#subject| #classify))
            }
            None => {
                let classified = match &ret_ty {
                    Some(ty) => quote!(#p::classified::<#ty>()),
                    None => quote!(#p::classified()),
                };
                respan(classified, ret_span)
            }
        }
    };
    // The body borrows `self` and gets its own copy of the other arguments.
    let copies: Vec<TokenStream> = typed_arguments(&sig)
        .map(|(ident, mutability)| {
            let reuse = quote_spanned!(ident.span()=> #p::Reuse::reuse(&#ident));
            quote! {
                #[allow(unused_variables, unused_mut)]
                let #mutability #ident = #reuse;
            }
        })
        .collect();
    if let (Some(_), None) = (&args.retries, &args.timeout) {
        // Retried but never timed: no timer, so the error type needs no `From<TimedOut>`.
        let sig = outer_signature(args, sig);
        return quote! {
            #(#outer_attrs)*
            #vis #sig {
                #(#inner_attrs)*
                #acquire
                let #result = #p::run_untimed(
                    &*#breaker,
                    || {
                        #(#copies)*
                        #attempt
                    },
                    #judge,
                )
                .await;
                match #result {
                    ::core::result::Result::Ok(#out) => #out,
                    ::core::result::Result::Err(#rejected) => #on_rejected,
                }
            }
        };
    }
    let run = if args.retries.is_some() {
        quote! {
            #p::run(
                &*#breaker,
                || {
                    #(#copies)*
                    #attempt
                },
                #judge,
            )
        }
    } else if args.copies_arguments() {
        quote! {
            #p::run_once(
                &*#breaker,
                {
                    #(#copies)*
                    #attempt
                },
                #judge,
            )
        }
    } else {
        quote!(#p::run_once(&*#breaker, #attempt, #judge))
    };
    let on_timed_out = match &ret_ty {
        Some(ty) => {
            quote_spanned!(ret_span=> <#ty as #p::FromTimedOut>::from_timed_out(#timed_out))
        }
        None => quote_spanned!(ret_span=> #p::FromTimedOut::from_timed_out(#timed_out)),
    };
    let sig = outer_signature(args, sig);
    quote! {
        #(#outer_attrs)*
        #vis #sig {
            #(#inner_attrs)*
            #acquire
            let #result = #run.await;
            match #result {
                ::core::result::Result::Ok(#out) => #out,
                ::core::result::Result::Err(#p::CallError::Rejected(#rejected)) => #on_rejected,
                ::core::result::Result::Err(#p::CallError::TimedOut(#timed_out)) => #on_timed_out,
            }
        }
    }
}

/// The typed arguments' names, with their `mut` if any: [`validate`] made sure they are plain
/// names.
fn typed_arguments(sig: &Signature) -> impl Iterator<Item = (&Ident, Option<Token![mut]>)> {
    sig.inputs.iter().filter_map(|arg| match arg {
        FnArg::Typed(typed) => match &*typed.pat {
            Pat::Ident(p) => Some((&p.ident, p.mutability)),
            _ => None,
        },
        FnArg::Receiver(_) => None,
    })
}

/// The signature as written, except that an argument's `mut` moves to the copy the body
/// gets, when it gets one: the argument itself is only lent.
fn outer_signature(args: &Args, mut sig: Signature) -> Signature {
    if args.copies_arguments() {
        for arg in &mut sig.inputs {
            if let FnArg::Typed(typed) = arg {
                if let Pat::Ident(p) = &mut *typed.pat {
                    p.mutability = None;
                }
            }
        }
    }
    sig
}

/// `::breaker::__private`, or its path under the renamed runtime crate.
fn private_path(args: &Args) -> TokenStream {
    match &args.krate {
        Some(krate) => {
            let krate = &krate.value;
            quote!(#krate::__private)
        }
        None => quote!(::breaker::__private),
    }
}

/// The `ConfigBuilder` expression for the keys written; unwritten keys keep the defaults.
fn builder(args: &Args, p: &TokenStream) -> TokenStream {
    let mut b = quote!(#p::ConfigBuilder::new());
    match args.window.as_ref().map(|w| &w.value) {
        Some(Window::Count(n)) => b = quote!(#b.count_window(#n)),
        Some(Window::Time(span)) => {
            let span = duration(*span);
            let buckets = args.buckets.as_ref().map_or(DEFAULT_BUCKETS, |b| b.value);
            b = quote!(#b.time_window(#span, #buckets));
        }
        None => {}
    }
    if let Some(min) = &args.min {
        let min = min.value;
        b = quote!(#b.min_calls(#min));
    }
    if let Some(rate) = &args.rate {
        let rate = float(rate.value);
        b = quote!(#b.failure_rate(#rate));
    }
    if let Some(slow) = &args.slow {
        let threshold = duration(slow.value);
        let rate = float(
            args.slow_rate
                .as_ref()
                .map_or(DEFAULT_SLOW_RATE, |r| r.value),
        );
        b = quote!(#b.slow_calls(#threshold, #rate));
    }
    if let Some(open) = &args.open {
        let open = duration(open.value);
        b = quote!(#b.open_for(#open));
    }
    if let Some(probes) = &args.probes {
        let probes = probes.value;
        b = quote!(#b.probes(#probes));
    }
    if let Some(successes) = &args.successes {
        let successes = successes.value;
        b = quote!(#b.successes(#successes));
    }
    if let (Some(backoff), Some(max)) = (&args.backoff, &args.open_max) {
        let factor = float(backoff.value);
        let max = duration(max.value);
        b = quote!(#b.open_backoff(#factor, #max));
    }
    if let Some(ramp) = &args.ramp {
        let percents = &ramp.value;
        let step = duration(
            args.ramp_step
                .as_ref()
                .map_or(DEFAULT_RAMP_STEP, |s| s.value),
        );
        b = quote!(#b.ramp_up(&[#(#percents),*], #step));
    }
    if let Some(guard) = &args.ramp_guard {
        let factor = float(guard.value);
        b = quote!(#b.ramp_latency_guard(#factor));
    }
    if let Some(timeout) = &args.timeout {
        let limit = duration(timeout.value);
        b = quote!(#b.timeout(#limit));
    }
    if let Some(retries) = &args.retries {
        let count = retries.value;
        let base = duration(
            args.retry_backoff
                .as_ref()
                .map_or(DEFAULT_RETRY_BACKOFF, |d| d.value),
        );
        let budget = float(
            args.retry_budget
                .as_ref()
                .map_or(DEFAULT_RETRY_BUDGET, |r| r.value),
        );
        let floor = args
            .retry_floor
            .as_ref()
            .map_or(DEFAULT_RETRY_FLOOR, |f| f.value);
        b = quote!(#b.retries(#count).retry_backoff(#base).retry_budget(#budget).retry_floor(#floor));
        // Unwritten, the runtime's default: 10 s, or the base if that is longer.
        if let Some(max) = &args.retry_backoff_max {
            let max = duration(max.value);
            b = quote!(#b.retry_backoff_max(#max));
        }
    }
    if let Some(calls) = &args.max_concurrent {
        let calls = calls.value;
        b = quote!(#b.max_concurrent(#calls));
    }
    if let Some(limit) = &args.probe_timeout {
        let limit = duration(limit.value);
        b = quote!(#b.probe_timeout(#limit));
    }
    if let Some(shadow) = &args.shadow {
        let shadow = shadow.value;
        b = quote!(#b.shadow(#shadow));
    }
    if let Some(max) = &args.pushback_max {
        let max = duration(max.value);
        b = quote!(#b.pushback_max(#max));
    }
    b
}

/// One `const` per field, spanned on the value that decides it, so that the compiler reports
/// each broken rule at its key, all of them at once. A field decided by a default is
/// reported at the key the default completes (`buckets` at the time `window`).
fn checks(args: &Args, p: &TokenStream) -> TokenStream {
    CONFIG_KEYS
        .iter()
        .map(|key| {
            let completed = match &key.needs {
                Some(needs) if key.default.is_some() => match needs.what {
                    TIME_WINDOW => Some("window"),
                    other => Some(other),
                },
                _ => None,
            };
            let span = args
                .spans_of(key.name)
                .or_else(|| completed.and_then(|other| args.spans_of(other)))
                .map(|(span, _)| span);
            let field = Ident::new(key.field, Span::call_site());
            let check = quote!(const _: () = #p::check(BREAKER_CONFIG, #p::Field::#field););
            match span {
                Some(span) => respan(check, span),
                None => check,
            }
        })
        .chain(policy_feature_checks(args, p))
        .collect()
}

/// `timeout` and `retries` are run by the runtime's `policy` feature: without it, each is
/// refused at its key.
fn policy_feature_checks(args: &Args, p: &TokenStream) -> Vec<TokenStream> {
    let keys = [args.spans_of("timeout"), args.spans_of("retries")];
    keys.into_iter()
        .flatten()
        .map(|(_, key_span)| respan(quote!(const _: () = #p::needs_policy_feature();), key_span))
        .collect()
}

/// The fields [`checks`] checks, for the runtime to make sure they are all of them.
fn checked_fields(p: &TokenStream) -> TokenStream {
    let fields = CONFIG_KEYS
        .iter()
        .map(|key| Ident::new(key.field, Span::call_site()));
    quote!(&[#(#p::Field::#fields),*])
}

/// A closure giving the registry name, called once, on the first call.
fn registry_name(args: &Args, sig: &Signature) -> TokenStream {
    let ident = LitStr::new(&sig.ident.unraw().to_string(), sig.ident.span());
    if let Some(name) = &args.name {
        let name = &name.value;
        quote!(|| ::std::string::String::from(#name))
    } else if sig.receiver().is_some() {
        let p = private_path(args);
        quote!(|| #p::method_name(::core::any::type_name::<Self>(), #ident))
    } else {
        quote!(|| ::std::string::String::from(
            ::core::concat!(::core::module_path!(), "::", #ident)
        ))
    }
}

fn duration(d: std::time::Duration) -> TokenStream {
    let secs = d.as_secs();
    let nanos = d.subsec_nanos();
    quote!(::core::time::Duration::new(#secs, #nanos))
}

/// `v` as an expression, infinities included (`1e999` parses as one): the runtime's rule, not
/// the macro, says which values a key refuses.
fn float(v: f64) -> TokenStream {
    let lit = if v.is_finite() {
        Literal::f64_suffixed(v.abs()).into_token_stream()
    } else if v.is_nan() {
        quote!(<::core::primitive::f64>::NAN)
    } else {
        quote!(<::core::primitive::f64>::INFINITY)
    };
    if v.is_sign_negative() {
        quote!(-#lit)
    } else {
        quote!(#lit)
    }
}

/// An `impl Trait` return type cannot be named in a `let`, so its locals go unannotated.
fn contains_impl(ty: &Type) -> bool {
    contains_impl_tokens(ty.to_token_stream())
}

fn contains_impl_tokens(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == "impl",
        TokenTree::Group(g) => contains_impl_tokens(g.stream()),
        _ => false,
    })
}

fn ty_span(ty: &Type) -> Span {
    ty.to_token_stream()
        .into_iter()
        .next()
        .map_or_else(Span::call_site, |t| t.span())
}

fn path_span(path: &syn::Path) -> Span {
    path.segments
        .last()
        .map_or_else(Span::call_site, |s| s.ident.span())
}

/// Gives every token `span`, so that a compile error in the generated item points there.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut t| {
            if let TokenTree::Group(g) = &t {
                let mut group = Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                t = TokenTree::Group(group);
            } else {
                t.set_span(span);
            }
            t
        })
        .collect()
}

#[cfg(test)]
mod tests;
