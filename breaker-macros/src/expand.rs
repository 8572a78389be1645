//! Turns the checked arguments and the function into the wrapped function. The parts live
//! in `expand/`, one concern each: the breaker's static and a call asked once (`acquire`),
//! the configuration it is built with (`config`), how an output is judged (`classify`), what
//! a rejected or failed call answers (`fallback`), and the call policy's runner (`policy`).

mod acquire;
mod classify;
mod config;
mod fallback;
mod policy;

use proc_macro2::{Group, Ident, Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned, ToTokens};
use syn::{AttrStyle, Attribute, Block, FnArg, ItemFn, Pat, ReturnType, Signature, Token, Type};

use breakerbox_rules::Settings;

use crate::args::{self, Args};
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
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = func;
    let (inner_attrs, outer_attrs) = inner_and_outer(attrs);
    let x = Expansion::new(args, settings, &sig, &block);
    let body = if args.timeout.is_some() || args.runs_again() {
        x.policy()
    } else {
        x.asked_once()
    };
    let sig = outer_signature(args, sig);
    quote! {
        #(#outer_attrs)*
        #vis #sig {
            #(#inner_attrs)*
            #body
        }
    }
}

/// What the parts of the expansion share: the arguments, the function, and the expansion's
/// locals, invisible to the body and to the user's names.
struct Expansion<'a> {
    args: &'a Args,
    settings: &'a Settings,
    /// The runtime's `__private` module.
    p: TokenStream,
    sig: &'a Signature,
    block: &'a Block,
    /// A plain `fn`: its body runs in a closure, called at once, and nothing is awaited.
    blocking: bool,
    /// Where an error about the output points: its type, or the function's name.
    ret_span: Span,
    /// The output's type; `None` for an `impl Trait`, which a `let` cannot name.
    ret_ty: Option<TokenStream>,
    breaker: Ident,
    permit: Ident,
    rejected: Ident,
    out: Ident,
    admission: Ident,
    key_value: Ident,
    answer: Ident,
    error: Ident,
    result: Ident,
    timed_out: Ident,
}

impl<'a> Expansion<'a> {
    fn new(args: &'a Args, settings: &'a Settings, sig: &'a Signature, block: &'a Block) -> Self {
        let (ret_span, ret_ty) = match &sig.output {
            ReturnType::Default => (sig.ident.span(), Some(quote!(()))),
            ReturnType::Type(_, ty) => (
                ty_span(ty),
                (!contains_impl(ty)).then(|| ty.to_token_stream()),
            ),
        };
        let local = |name: &str| Ident::new(name, Span::mixed_site());
        Self {
            args,
            settings,
            p: private_path(args),
            sig,
            block,
            blocking: sig.asyncness.is_none(),
            ret_span,
            ret_ty,
            breaker: local("breaker"),
            permit: local("permit"),
            rejected: local("rejected"),
            out: local("out"),
            admission: local("admission"),
            key_value: local("key"),
            answer: local("answer"),
            error: local("error"),
            result: local("result"),
            timed_out: local("timed_out"),
        }
    }

    /// `local`, typed with the output's type when it can be named.
    fn annotated(&self, local: &Ident) -> TokenStream {
        match &self.ret_ty {
            Some(ty) => quote!(#local: #ty),
            None => quote!(#local),
        }
    }

    /// `<output as #p::#trait_>::#method`, spanned at the output, as the error of an output
    /// that does not implement it.
    fn output_fn(&self, trait_: &str, method: &str) -> TokenStream {
        let (p, ret_span) = (&self.p, self.ret_span);
        let (trait_, method) = (Ident::new(trait_, ret_span), Ident::new(method, ret_span));
        match &self.ret_ty {
            Some(ty) => quote_spanned!(ret_span=> <#ty as #p::#trait_>::#method),
            None => quote_spanned!(ret_span=> #p::#trait_::#method),
        }
    }

    /// The body borrows `self` and gets its own copy of the other arguments.
    fn copies(&self) -> Vec<TokenStream> {
        let p = &self.p;
        typed_arguments(self.sig)
            .map(|(ident, mutability)| {
                let reuse = quote_spanned!(ident.span()=> #p::Reuse::reuse(&#ident));
                quote! {
                    #[allow(unused_variables, unused_mut)]
                    let #mutability #ident = #reuse;
                }
            })
            .collect()
    }

    /// The body's output: awaited in its own `async move` block, or for a plain `fn` returned
    /// by its own closure (whose return type is pinned, so that `?` and `return` infer as in
    /// the function), with the arguments' copies first when `with_copies`.
    fn body(&self, with_copies: bool) -> TokenStream {
        let (p, block) = (&self.p, self.block);
        let copies = self.copies();
        let copied = with_copies.then(|| quote!(#(#copies)*));
        if self.blocking {
            let call_once = match &self.ret_ty {
                Some(ty) => quote!(#p::call_once::<#ty, _>),
                None => quote!(#p::call_once),
            };
            quote!({ #copied #call_once(move || #block) })
        } else if with_copies {
            quote!({ #copied async move #block }.await)
        } else {
            quote!(async move #block.await)
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
