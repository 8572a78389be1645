pub(crate) async fn titles(&self, shelf: u32) -> Result<Vec<String>, E> {
    #![allow(unused)]
    let breaker = match &(shelf) {
        key => {
            fn breaker_path_of() -> &'static ::core::primitive::str {
                ::core::any::type_name_of_val(&breaker_path_of)
            }
            static BREAKER: ::breakerbox::__private::StaticKeyed = ::breakerbox::__private::StaticKeyed::new(
                ::breakerbox::__private::Name::Method {
                    path_of: breaker_path_of,
                    module: ::core::module_path!(),
                    method: "titles",
                },
                ::breakerbox::__private::config(
                    ::breakerbox::__private::ConfigBuilder::new()
                        .count_window(20u32)
                        .min_calls(10u32)
                        .failure_rate(0.5f64)
                        .open_for(::core::time::Duration::new(5u64, 0u32))
                        .probes(3u32)
                        .retries(0u32)
                        .retry_backoff(::core::time::Duration::new(0u64, 20000000u32))
                        .retry_budget(0.2f64)
                        .retry_floor(10u32)
                        .shadow(false)
                        .pushback_max(::core::time::Duration::new(300u64, 0u32)),
                ),
                16usize,
            );
            ::breakerbox::__private::submit! {
                ::breakerbox::__private::Declared::keyed(& BREAKER, ::core::file!(),
                ::core::line!(), ::core::column!())
            }
            #[allow(unused_imports)]
            use ::breakerbox::__private::{BorrowedKey as _, OwnedKey as _};
            BREAKER.breaker((&::breakerbox::__private::KeyArg(key)).__breaker_key())
        }
    };
    let admission = breaker.try_acquire();
    match admission {
        ::core::result::Result::Err(rejected) => {
            let fallback_out: Result<Vec<String>, E> = ::breakerbox::__private::fallback(
                    from_cache,
                    (self, shelf),
                    rejected,
                )
                .await;
            fallback_out
        }
        ::core::result::Result::Ok(_) => {
            let out: Result<Vec<String>, E> = async move { Ok(vec![]) }.await;
            if let ::core::result::Result::Ok(permit) = admission {
                let judged = &out;
                permit.record_output(judged);
            }
            out
        }
    }
}
