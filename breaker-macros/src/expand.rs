//! Turns the checked arguments and the function into the wrapped function.

use proc_macro2::{Group, Ident, Literal, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::{AttrStyle, Attribute, FnArg, ItemFn, LitStr, Pat, ReturnType, Signature, Token, Type};

use breakerbox_rules::{Settings, Window};

use crate::args::{self, Args};
use crate::keys::DEFAULT_MAX_KEYS;
use crate::{rules, validate};

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
    let settings = rules::settings(&args);
    rules::check(&args, &settings, &mut errors);
    match errors.into_iter().reduce(|mut all, e| {
        all.combine(e);
        all
    }) {
        // The function as written, so that its callers don't drown in follow-on errors.
        Some(e) => {
            let e = e.to_compile_error();
            quote!(#e #func)
        }
        None => expand(&args, &settings, func),
    }
}

/// The function's inner attributes (`#![...]`, which go first in the new body) and its outer
/// ones.
fn inner_and_outer(attrs: Vec<Attribute>) -> (Vec<Attribute>, Vec<Attribute>) {
    attrs
        .into_iter()
        .partition(|a| matches!(a.style, AttrStyle::Inner(_)))
}

fn expand(args: &Args, settings: &Settings, func: ItemFn) -> TokenStream {
    let p = private_path(args);
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = func;
    let (inner_attrs, outer_attrs) = inner_and_outer(attrs);
    // A plain `fn`: its body runs in a closure, called at once, and nothing is awaited.
    let blocking = sig.asyncness.is_none();

    // Locals of the expansion: invisible to the body and to the user's names.
    let breaker = Ident::new("breaker", Span::mixed_site());
    let permit = Ident::new("permit", Span::mixed_site());
    let rejected = Ident::new("rejected", Span::mixed_site());
    let out = Ident::new("out", Span::mixed_site());
    let admission = Ident::new("admission", Span::mixed_site());
    let key_value = Ident::new("key", Span::mixed_site());

    let builder = builder(settings, &p);
    let (name, name_item) = registry_name(args, &sig, &p);
    let at = quote!(::core::file!(), ::core::line!(), ::core::column!());

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
    let classify = classify_of(&out, true);
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

    // The fallback called with the arguments and `last`: the `Rejected`, or with
    // `fallback_on = "failure"` the function's error.
    let fallback_call = |last: &Ident| {
        args.fallback.as_ref().map(|fallback| {
            let path = &fallback.value;
            let span = path_span(path);
            let passed = sig.inputs.iter().map(|arg| match arg {
                FnArg::Receiver(r) => r.self_token.to_token_stream(),
                FnArg::Typed(t) => match &*t.pat {
                    Pat::Ident(p) => p.ident.to_token_stream(),
                    other => other.to_token_stream(),
                },
            });
            // Through `Fallback`, so that the fallback may take only the leading arguments,
            // up to the runtime's impls; past them it takes them all.
            let passed: Vec<TokenStream> = passed.collect();
            // Located at the fallback, so that a wrong signature is reported there.
            let last = Ident::new(&last.to_string(), Span::mixed_site().located_at(span));
            let call = if passed.len() <= MAX_FALLBACK_ARGUMENTS {
                let fallback = respan(quote!(#p::fallback), span);
                quote_spanned!(span=> #fallback(#path, (#(#passed,)*), #last))
            } else {
                quote_spanned!(span=> #path(#(#passed,)* #last))
            };
            let fallback_out = format_ident!("fallback_out", span = Span::mixed_site());
            let binding = annotated(&fallback_out);
            let awaited = (!blocking).then(|| quote_spanned!(span=> .await));
            quote_spanned! {span=>
                {
                    let #binding = #call #awaited;
                    #fallback_out
                }
            }
        })
    };
    let from_rejected = match &ret_ty {
        Some(ty) => quote_spanned!(ret_span=> <#ty as #p::FromRejected>::from_rejected(#rejected)),
        None => quote_spanned!(ret_span=> #p::FromRejected::from_rejected(#rejected)),
    };
    let on_failure = args.falls_back_on_failure();
    let on_rejected = match fallback_call(&rejected) {
        Some(call) if !on_failure => call,
        _ => from_rejected.clone(),
    };
    // With `fallback_on = "failure"`: `answer` in, the output or the fallback's answer out.
    // `answer` is `Ok(output)` for an output the fallback does not answer, else `Err` of how
    // the call ended, which the fallback takes as a `CallFailure` or as the function's error.
    let answer = Ident::new("answer", Span::mixed_site());
    let error = Ident::new("error", Span::mixed_site());
    let failed = Ident::new("failed", Span::mixed_site());
    let timed = args.timeout.is_some();
    let fall_back = on_failure
        .then(|| fallback_call(&error))
        .flatten()
        .map(|call| {
            let span = args
                .fallback
                .as_ref()
                .map_or(ret_span, |f| path_span(&f.value));
            let convert = if timed {
                quote_spanned!(span=> #p::FromTimedFailure::from_timed_failure)
            } else {
                quote_spanned!(span=> #p::FromUntimedFailure::from_untimed_failure)
            };
            // Located at the fallback, so that a last argument it cannot take is reported there.
            let failed = Ident::new(&failed.to_string(), Span::mixed_site().located_at(span));
            quote! {
                match #answer {
                    ::core::result::Result::Ok(#out) => #out,
                    ::core::result::Result::Err(#failed) => {
                        let #error = #convert(#failed);
                        #call
                    }
                }
            }
        });
    // The output as `answer`: `Ok` unless it is a failure the fallback answers.
    let ending = if timed {
        quote!(#p::CallFailure)
    } else {
        quote!(#p::UntimedFailure)
    };
    let into_error = match &ret_ty {
        Some(ty) => quote_spanned!(ret_span=> <#ty as #p::FailureFallback>::into_error),
        None => quote_spanned!(ret_span=> #p::FailureFallback::into_error),
    };
    let answer_of = |is_failure: TokenStream| {
        quote! {
            if #is_failure {
                match #into_error(#out) {
                    ::core::result::Result::Ok(#error) => {
                        ::core::result::Result::Err(#ending::Error(#error))
                    }
                    ::core::result::Result::Err(#out) => ::core::result::Result::Ok(#out),
                }
            } else {
                ::core::result::Result::Ok(#out)
            }
        }
    };
    let failure = quote!(::core::matches!(#classify, #p::Outcome::Failure));

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

    // The body's output: awaited in its own `async move` block, or for a plain `fn` returned
    // by its own closure (whose return type is pinned, so that `?` and `return` infer as in
    // the function), with the arguments' copies first when `with_copies`.
    let body = |with_copies: bool| {
        let copied = with_copies.then(|| quote!(#(#copies)*));
        if blocking {
            let call_once = match &ret_ty {
                Some(ty) => quote!(#p::call_once::<#ty, _>),
                None => quote!(#p::call_once),
            };
            quote!({ #copied #call_once(move || #block) })
        } else if with_copies {
            quote!({ #copied async move #block }.await)
        } else {
            quote!(async move #block.await)
        }
    };

    // The expansion's items live in a block of their own: the body, a sibling block, sees the
    // names it would see without the attribute, and none of these.
    let acquire = match &args.key {
        None => {
            // `record = N`: the breaker records its last N calls from its first.
            let recording = args.record.as_ref().map(|r| {
                let capacity = r.value;
                quote!(.recording(#capacity))
            });
            quote! {
                let #breaker = {
                    #name_item
                    static BREAKER: #p::StaticBreaker =
                        #p::StaticBreaker::new(#name, #p::config(#builder))#recording;
                    #p::submit! { #p::Declared::single(&BREAKER, #at) }
                    BREAKER.get()
                };
            }
        }
        Some(key) => {
            let expr = &key.value;
            let max_keys = args.max_keys.as_ref().map_or(DEFAULT_MAX_KEYS, |m| m.value);
            let lookup = quote_spanned! {key.span=>
                BREAKER.breaker((&#p::KeyArg(#key_value)).__breaker_key())
            };
            // The key is evaluated outside the block, where the arguments are all it sees.
            quote! {
                let #breaker = match &(#expr) {
                    #key_value => {
                        #name_item
                        static BREAKER: #p::StaticKeyed =
                            #p::StaticKeyed::new(#name, #p::config(#builder), #max_keys);
                        #p::submit! { #p::Declared::keyed(&BREAKER, #at) }
                        #[allow(unused_imports)]
                        use #p::{BorrowedKey as _, OwnedKey as _};
                        #lookup
                    }
                };
            }
        }
    };

    if let (None, None, Some(fall_back)) = (&args.timeout, &args.retries, &fall_back) {
        let sig = outer_signature(args, sig);
        let outcome = Ident::new("outcome", Span::mixed_site());
        // Recorded as without a fallback: by the `classify` function given, or by the
        // output's `Classify` impl with the pushback a failure carries.
        let record_outcome = match &args.classify {
            Some(_) => quote! {
                let #outcome = #classify;
                #permit.record(#outcome);
            },
            None => {
                let record_output = respan(quote!(#p::record_output), ret_span);
                quote!(let #outcome = #record_output(#permit, &#out);)
            }
        };
        let answer_failed = answer_of(quote!(::core::matches!(#outcome, #p::Outcome::Failure)));
        let body_copied = body(true);
        return quote! {
            #(#outer_attrs)*
            #vis #sig {
                #(#inner_attrs)*
                #acquire
                let #admission = #breaker.try_acquire();
                let #answer = match #admission {
                    ::core::result::Result::Ok(#permit) => {
                        let #out_binding = #body_copied;
                        #record_outcome
                        #answer_failed
                    }
                    ::core::result::Result::Err(#rejected) => {
                        ::core::result::Result::Err(#ending::Rejected(#rejected))
                    }
                };
                #fall_back
            }
        };
    }
    if args.timeout.is_none() && args.retries.is_none() {
        let body = body(false);
        return quote! {
            #(#outer_attrs)*
            #vis #sig {
                #(#inner_attrs)*
                #acquire
                let #admission = #breaker.try_acquire();
                match #admission {
                    ::core::result::Result::Ok(#permit) => {
                        let #out_binding = #body;
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
    if let (Some(_), None) = (&args.retries, &args.timeout) {
        // Retried but never timed: no timer, so the error type needs no `From<TimedOut>`.
        let answer = match &fall_back {
            Some(fall_back) => {
                let answer_failed = answer_of(failure.clone());
                quote! {
                    let #answer = match #result {
                        ::core::result::Result::Ok(#out) => #answer_failed,
                        ::core::result::Result::Err(#rejected) => {
                            ::core::result::Result::Err(#ending::Rejected(#rejected))
                        }
                    };
                    #fall_back
                }
            }
            None => quote! {
                match #result {
                    ::core::result::Result::Ok(#out) => #out,
                    ::core::result::Result::Err(#rejected) => #on_rejected,
                }
            },
        };
        let sig = outer_signature(args, sig);
        // A plain `fn` is retried on this thread, its backoff a sleep.
        let run = if blocking {
            let attempt = body(true);
            quote!(#p::run_blocking(&*#breaker, || #attempt, #judge))
        } else {
            quote! {
                #p::run_untimed(
                    &*#breaker,
                    || {
                        #(#copies)*
                        #attempt
                    },
                    #judge,
                )
                .await
            }
        };
        return quote! {
            #(#outer_attrs)*
            #vis #sig {
                #(#inner_attrs)*
                #acquire
                let #result = #run;
                #answer
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
    let answer = match &fall_back {
        Some(fall_back) => {
            let answer_failed = answer_of(failure.clone());
            // Here the call is timed: the runner's error is a rejection or a timeout.
            quote! {
                let #answer = match #result {
                    ::core::result::Result::Ok(#out) => #answer_failed,
                    ::core::result::Result::Err(#error) => {
                        ::core::result::Result::Err(#p::CallFailure::from(#error))
                    }
                };
                #fall_back
            }
        }
        None => quote! {
            match #result {
                ::core::result::Result::Ok(#out) => #out,
                ::core::result::Result::Err(#p::CallError::Rejected(#rejected)) => #on_rejected,
                ::core::result::Result::Err(#p::CallError::TimedOut(#timed_out)) => #on_timed_out,
            }
        },
    };
    let sig = outer_signature(args, sig);
    quote! {
        #(#outer_attrs)*
        #vis #sig {
            #(#inner_attrs)*
            #acquire
            let #result = #run.await;
            #answer
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

/// The most arguments a function may have for its fallback to take only the leading ones: the
/// runtime's `__private::Fallback` has impls up to this many.
const MAX_FALLBACK_ARGUMENTS: usize = 12;

/// The runtime's `__private` module: under the `crate = "..."` path when one is given, else
/// under the name the user's manifest gives the `breakerbox` dependency (`breakerbox`,
/// `breaker = { package = "breakerbox" }`, ...), else `::breakerbox`.
fn private_path(args: &Args) -> TokenStream {
    match &args.krate {
        Some(krate) => {
            let krate = &krate.value;
            quote!(#krate::__private)
        }
        None => {
            let krate = Ident::new(&runtime_name(), Span::call_site());
            quote!(::#krate::__private)
        }
    }
}

/// The name the manifest of the crate being compiled gives the runtime. The runtime itself
/// (its unit and doc tests) is `breakerbox` too: its root has `extern crate self as breakerbox`.
/// Outside Cargo, or where the runtime is reached through a crate that re-exports it, the
/// manifest names no such dependency: `::breakerbox`, or the `crate` key says where it is.
fn runtime_name() -> String {
    match proc_macro_crate::crate_name("breakerbox") {
        Ok(proc_macro_crate::FoundCrate::Name(name)) => name,
        Ok(proc_macro_crate::FoundCrate::Itself) | Err(_) => "breakerbox".to_owned(),
    }
}

/// The `ConfigBuilder` expression of the settings the rules checked: every value the
/// runtime gets is one the rules judged.
fn builder(s: &Settings, p: &TokenStream) -> TokenStream {
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
    let pushback_max = duration(s.pushback_max);
    quote!(#b.pushback_max(#pushback_max))
}

/// The registry name: `name`, else what only the compiler knows, whether a trait impl holds
/// the function and, for a method, its type: an item nested in the function's body, whose
/// path names them, and the module.
fn registry_name(args: &Args, sig: &Signature, p: &TokenStream) -> (TokenStream, TokenStream) {
    let ident = LitStr::new(&sig.ident.unraw().to_string(), sig.ident.span());
    if let Some(name) = &args.name {
        let name = &name.value;
        return (quote!(#p::Name::Fixed(#name)), TokenStream::new());
    }
    let path_of = Ident::new("breaker_path_of", Span::mixed_site());
    let item = quote! {
        fn #path_of() -> &'static ::core::primitive::str {
            ::core::any::type_name_of_val(&#path_of)
        }
    };
    let module = quote!(::core::module_path!());
    let name = if sig.receiver().is_some() {
        quote!(#p::Name::Method { path_of: #path_of, module: #module, method: #ident })
    } else {
        quote!(#p::Name::Function { path_of: #path_of, module: #module, function: #ident })
    };
    (name, item)
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
