//! The call policy: the runtime asks the breaker before each attempt and, with `timeout`,
//! runs it under the timeout. An attempt is the body in an `async move` block of its own.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::Expansion;

impl Expansion<'_> {
    /// The body of a function with `timeout`, `retries` or `hedge`.
    pub(super) fn policy(&self) -> TokenStream {
        let (acquire, result) = (self.acquire(), &self.result);
        let (run, answer) = if self.args.timeout.is_some() {
            (self.timed_run(), self.timed_answer())
        } else {
            (self.untimed_run(), self.untimed_answer())
        };
        quote! {
            #acquire
            let #result = #run;
            #answer
        }
    }

    /// One attempt: the body in an `async move` block of its own, its output typed.
    fn attempt(&self) -> TokenStream {
        let (out, block) = (&self.out, self.block);
        match &self.ret_ty {
            Some(ty) => quote! {
                async move {
                    let #out: #ty = async move #block.await;
                    #out
                }
            },
            None => quote!(async move #block),
        }
    }

    /// Retried but never timed: no timer, so the error type needs no `From<TimedOut>`. A plain
    /// `fn` is retried on this thread, its backoff a sleep.
    fn untimed_run(&self) -> TokenStream {
        let (p, breaker, judge) = (&self.p, &self.breaker, self.judge());
        if self.blocking {
            let attempt = self.body(true);
            return quote!(#p::run_blocking(&*#breaker, || #attempt, #judge));
        }
        let (copies, attempt) = (self.copies(), self.attempt());
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
    }

    /// The untimed runner's answer: its error is a rejection.
    fn untimed_answer(&self) -> TokenStream {
        let (result, out, rejected) = (&self.result, &self.out, &self.rejected);
        let Some(fall_back) = self.fall_back() else {
            let on_rejected = self.on_rejected();
            return quote! {
                match #result {
                    ::core::result::Result::Ok(#out) => #out,
                    ::core::result::Result::Err(#rejected) => #on_rejected,
                }
            };
        };
        let (answer, ending) = (&self.answer, self.ending());
        let answer_failed = self.answer_of(self.failure());
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

    /// Timed: one attempt, or with `retries` a fresh attempt each time, each with its own
    /// copies of the arguments when the body gets copies.
    fn timed_run(&self) -> TokenStream {
        let (p, breaker, judge, attempt) = (&self.p, &self.breaker, self.judge(), self.attempt());
        let copies = self.copies();
        let run = if self.args.runs_again() {
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
        } else if self.args.copies_arguments() {
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
        quote!(#run.await)
    }

    /// The timed runner's answer: its error is a rejection or a timeout.
    fn timed_answer(&self) -> TokenStream {
        let (p, result, out) = (&self.p, &self.result, &self.out);
        let Some(fall_back) = self.fall_back() else {
            let (rejected, timed_out, on_rejected) =
                (&self.rejected, &self.timed_out, self.on_rejected());
            let from_timed_out = self.output_fn("FromTimedOut", "from_timed_out");
            let on_timed_out = quote_spanned!(self.ret_span=> #from_timed_out(#timed_out));
            return quote! {
                match #result {
                    ::core::result::Result::Ok(#out) => #out,
                    ::core::result::Result::Err(#p::CallError::Rejected(#rejected)) => #on_rejected,
                    ::core::result::Result::Err(#p::CallError::TimedOut(#timed_out)) => #on_timed_out,
                }
            };
        };
        let (answer, error) = (&self.answer, &self.error);
        let answer_failed = self.answer_of(self.failure());
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
}
