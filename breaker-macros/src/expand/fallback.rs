//! What a call the breaker rejects answers, and with `fallback_on = "failure"` a failed one
//! too: the fallback's answer, or the output made from the `Rejected`.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::{FnArg, Pat};

use super::{path_span, respan, Expansion};

/// The most arguments a function may have for its fallback to take only the leading ones: the
/// runtime's `__private::Fallback` has impls up to this many.
const MAX_FALLBACK_ARGUMENTS: usize = 12;

impl Expansion<'_> {
    /// The fallback called with the arguments and `last`: the `Rejected`, or with
    /// `fallback_on = "failure"` the function's error.
    fn fallback_call(&self, last: &Ident) -> Option<TokenStream> {
        let p = &self.p;
        let fallback = self.args.fallback.as_ref()?;
        let path = &fallback.value;
        let span = path_span(path);
        // Through `Fallback`, so that the fallback may take only the leading arguments, up to
        // the runtime's impls; past them it takes them all.
        let passed: Vec<TokenStream> = (self.sig.inputs.iter())
            .map(|arg| match arg {
                FnArg::Receiver(r) => r.self_token.to_token_stream(),
                FnArg::Typed(t) => match &*t.pat {
                    Pat::Ident(p) => p.ident.to_token_stream(),
                    other => other.to_token_stream(),
                },
            })
            .collect();
        // Located at the fallback, so that a wrong signature is reported there.
        let last = Ident::new(&last.to_string(), Span::mixed_site().located_at(span));
        let call = if passed.len() <= MAX_FALLBACK_ARGUMENTS {
            let fallback = respan(quote!(#p::fallback), span);
            quote_spanned!(span=> #fallback(#path, (#(#passed,)*), #last))
        } else {
            quote_spanned!(span=> #path(#(#passed,)* #last))
        };
        let fallback_out = format_ident!("fallback_out", span = Span::mixed_site());
        let binding = self.annotated(&fallback_out);
        let awaited = (!self.blocking).then(|| quote_spanned!(span=> .await));
        Some(quote_spanned! {span=>
            {
                let #binding = #call #awaited;
                #fallback_out
            }
        })
    }

    /// What a rejected call answers: the fallback, unless it answers failures (it then gets
    /// the rejection through [`fall_back`](Self::fall_back)), else the output made from the
    /// `Rejected`.
    pub(super) fn on_rejected(&self) -> TokenStream {
        match self.fallback_call(&self.rejected) {
            Some(call) if !self.args.falls_back_on_failure() => call,
            _ => {
                let (from_rejected, rejected) = (
                    self.output_fn("FromRejected", "from_rejected"),
                    &self.rejected,
                );
                quote_spanned!(self.ret_span=> #from_rejected(#rejected))
            }
        }
    }

    /// With `fallback_on = "failure"`: `answer` in, the output or the fallback's answer out.
    /// `answer` is `Ok(output)` for an output the fallback does not answer, else `Err` of how
    /// the call ended, which the fallback takes as a `CallFailure` or as the function's error.
    pub(super) fn fall_back(&self) -> Option<TokenStream> {
        if !self.args.falls_back_on_failure() {
            return None;
        }
        let call = self.fallback_call(&self.error)?;
        let (p, answer, out, error) = (&self.p, &self.answer, &self.out, &self.error);
        let span = (self.args.fallback.as_ref()).map_or(self.ret_span, |f| path_span(&f.value));
        let convert = if self.args.timeout.is_some() {
            quote_spanned!(span=> #p::FromTimedFailure::from_timed_failure)
        } else {
            quote_spanned!(span=> #p::FromUntimedFailure::from_untimed_failure)
        };
        // Located at the fallback, so that a last argument it cannot take is reported there.
        let failed = Ident::new("failed", Span::mixed_site().located_at(span));
        Some(quote! {
            match #answer {
                ::core::result::Result::Ok(#out) => #out,
                ::core::result::Result::Err(#failed) => {
                    let #error = #convert(#failed);
                    #call
                }
            }
        })
    }

    /// How the call ended, as the fallback of failures takes it.
    pub(super) fn ending(&self) -> TokenStream {
        let p = &self.p;
        if self.args.timeout.is_some() {
            quote!(#p::CallFailure)
        } else {
            quote!(#p::UntimedFailure)
        }
    }

    /// The output as `answer`: `Ok` unless it is a failure the fallback answers.
    pub(super) fn answer_of(&self, is_failure: TokenStream) -> TokenStream {
        let (out, error, ending) = (&self.out, &self.error, self.ending());
        let into_error = self.output_fn("FailureFallback", "into_error");
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
    }
}
