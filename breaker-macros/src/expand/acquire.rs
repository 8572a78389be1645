//! The breaker the call asks, a static of the function's (one per key with `key`), and a call
//! asked once, without the call policy.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::{LitStr, Signature};

use super::{config, Expansion};
use crate::args::Args;
use crate::keys::DEFAULT_MAX_KEYS;

impl Expansion<'_> {
    /// `let breaker = ...;`: the function's static breaker, registered at boot. Its items live
    /// in a block of their own: the body, a sibling block, sees the names it would see without
    /// the attribute, and none of these.
    pub(super) fn acquire(&self) -> TokenStream {
        let (args, p, breaker) = (self.args, &self.p, &self.breaker);
        let builder = config::builder(self.settings, p);
        let (name, name_item) = registry_name(args, self.sig, p);
        let at = quote!(::core::file!(), ::core::line!(), ::core::column!());
        match &args.key {
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
                let (expr, key_value) = (&key.value, &self.key_value);
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
        }
    }

    /// The body of a function without `timeout` or `retries`: the breaker asked once, the
    /// output recorded, a rejection (or with `fallback_on = "failure"` a failure too) answered.
    pub(super) fn asked_once(&self) -> TokenStream {
        let (acquire, breaker, admission) = (self.acquire(), &self.breaker, &self.admission);
        let (permit, rejected, out) = (&self.permit, &self.rejected, &self.out);
        let out_binding = self.annotated(out);
        let Some(fall_back) = self.fall_back() else {
            let (body, record, on_rejected) = (self.body(false), self.record(), self.on_rejected());
            // The admission stays whole across the body and the permit leaves it only after:
            // a permit moved out before the body's `.await` is written twice, once as the
            // admission and once as the future's own field, and read back, on every call.
            return quote! {
                #acquire
                let #admission = #breaker.try_acquire();
                match #admission {
                    ::core::result::Result::Err(#rejected) => #on_rejected,
                    ::core::result::Result::Ok(_) => {
                        let #out_binding = #body;
                        if let ::core::result::Result::Ok(#permit) = #admission {
                            #record;
                        }
                        #out
                    }
                }
            };
        };
        let (outcome, record_outcome) = self.record_outcome();
        let p = &self.p;
        let answer_failed =
            self.answer_of(quote!(::core::matches!(#outcome, #p::Outcome::Failure)));
        let (body_copied, answer, ending) = (self.body(true), &self.answer, self.ending());
        quote! {
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
    }
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
