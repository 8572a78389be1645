async fn get<T: Clone>(isbn: &str, shelf: T) -> Result<u32, E>
where
    T: Send,
{
    let breaker = {
        fn breaker_path_of() -> &'static ::core::primitive::str {
            ::core::any::type_name_of_val(&breaker_path_of)
        }
        static BREAKER: ::breakerbox::__private::StaticBreaker = ::breakerbox::__private::StaticBreaker::new(
            ::breakerbox::__private::Name::Function {
                path_of: breaker_path_of,
                module: ::core::module_path!(),
                function: "get",
            },
            ::breakerbox::__private::config(
                ::breakerbox::__private::ConfigBuilder::new()
                    .time_window(::core::time::Duration::new(30u64, 0u32), 10u32)
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
        );
        ::breakerbox::__private::submit! {
            ::breakerbox::__private::Declared::single(& BREAKER, ::core::file!(),
            ::core::line!(), ::core::column!())
        }
        BREAKER.get()
    };
    let admission = breaker.try_acquire();
    let answer = match admission {
        ::core::result::Result::Ok(permit) => {
            let out: Result<u32, E> = {
                #[allow(unused_variables, unused_mut)]
                let isbn = ::breakerbox::__private::Reuse::reuse(&isbn);
                #[allow(unused_variables, unused_mut)]
                let mut shelf = ::breakerbox::__private::Reuse::reuse(&shelf);
                async move { Ok(1) }
            }
                .await;
            let outcome = judge(&out);
            permit.record(outcome);
            if ::core::matches!(outcome, ::breakerbox::__private::Outcome::Failure) {
                match <Result<
                    u32,
                    E,
                > as ::breakerbox::__private::FailureFallback>::into_error(out) {
                    ::core::result::Result::Ok(error) => {
                        ::core::result::Result::Err(
                            ::breakerbox::__private::UntimedFailure::Error(error),
                        )
                    }
                    ::core::result::Result::Err(out) => ::core::result::Result::Ok(out),
                }
            } else {
                ::core::result::Result::Ok(out)
            }
        }
        ::core::result::Result::Err(rejected) => {
            ::core::result::Result::Err(
                ::breakerbox::__private::UntimedFailure::Rejected(rejected),
            )
        }
    };
    match answer {
        ::core::result::Result::Ok(out) => out,
        ::core::result::Result::Err(failed) => {
            let error = ::breakerbox::__private::FromUntimedFailure::from_untimed_failure(
                failed,
            );
            {
                let fallback_out: Result<u32, E> = ::breakerbox::__private::fallback(
                        from_cache,
                        (isbn, shelf),
                        error,
                    )
                    .await;
                fallback_out
            }
        }
    }
}
