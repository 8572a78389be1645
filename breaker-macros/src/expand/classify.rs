//! How the output is judged and recorded: by the `classify` function given, or by the return
//! type's `Classify` impl, with the pushback a failure carries.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};

use super::{path_span, respan, Expansion};

impl Expansion<'_> {
    /// `subject` judged; with `borrow`, a reference to it.
    pub(super) fn classify_of(&self, subject: &Ident, borrow: bool) -> TokenStream {
        let p = &self.p;
        match &self.args.classify {
            Some(path) => {
                let path = &path.value;
                let span = path_span(path);
                let borrow = borrow.then(|| quote_spanned!(span=> &));
                quote_spanned!(span=> #path(#borrow #subject))
            }
            None => {
                let classify = match &self.ret_ty {
                    Some(ty) => quote!(<#ty as #p::Classify>::classify),
                    None => quote!(#p::Classify::classify),
                };
                let classify = respan(classify, self.ret_span);
                let borrow = borrow.then(|| quote!(&));
                quote!(#classify(#borrow #subject))
            }
        }
    }

    /// Whether the output is a failure.
    pub(super) fn failure(&self) -> TokenStream {
        let (p, classify) = (&self.p, self.classify_of(&self.out, true));
        quote!(::core::matches!(#classify, #p::Outcome::Failure))
    }

    /// The output recorded on the permit.
    pub(super) fn record(&self) -> TokenStream {
        let (permit, out) = (&self.permit, &self.out);
        match &self.args.classify {
            Some(_) => {
                let classify = self.classify_of(out, true);
                quote!(#permit.record(#classify))
            }
            None => {
                // Spanned at the return type, as the error of an output that is not `Classify`.
                let judged = Ident::new("judged", self.ret_span);
                let record_output = respan(quote!(record_output), self.ret_span);
                quote! {
                    let #judged = &#out;
                    #permit.#record_output(#judged)
                }
            }
        }
    }

    /// The output recorded as [`record`](Self::record) does, its `Outcome` kept in the local
    /// returned, for a fallback of failures to read.
    pub(super) fn record_outcome(&self) -> (Ident, TokenStream) {
        let (p, permit, out) = (&self.p, &self.permit, &self.out);
        let outcome = Ident::new("outcome", Span::mixed_site());
        let record = match &self.args.classify {
            Some(_) => {
                let classify = self.classify_of(out, true);
                quote! {
                    let #outcome = #classify;
                    #permit.record(#outcome);
                }
            }
            None => {
                let record_output = respan(quote!(#p::record_output), self.ret_span);
                quote!(let #outcome = #record_output(#permit, &#out);)
            }
        };
        (outcome, record)
    }

    /// The judge the call policy's runner takes.
    pub(super) fn judge(&self) -> TokenStream {
        let (p, out) = (&self.p, &self.out);
        let subject = match &self.ret_ty {
            Some(ty) => quote!(#out: &#ty),
            None => quote!(#out),
        };
        match &self.args.classify {
            Some(_) => {
                let classify = self.classify_of(out, false);
                quote!(#p::plain(|#subject| #classify))
            }
            None => {
                let classified = match &self.ret_ty {
                    Some(ty) => quote!(#p::classified::<#ty>()),
                    None => quote!(#p::classified()),
                };
                respan(classified, self.ret_span)
            }
        }
    }
}
