async fn get(&self, isbn: &str, shelf: String) -> Result<u32, E> {
    let breaker = {
        static BREAKER: ::breakerbox::__private::StaticBreaker = ::breakerbox::__private::StaticBreaker::new(
            ::breakerbox::__private::Name::Fixed("libraryd"),
            ::breakerbox::__private::config(
                ::breakerbox::__private::ConfigBuilder::new()
                    .count_window(20u32)
                    .failure_rate(0.5f64)
                    .slow_calls(::core::time::Duration::new(2u64, 0u32), 0.5f64)
                    .open_for(::core::time::Duration::new(5u64, 0u32))
                    .probes(3u32)
                    .open_backoff(2f64, ::core::time::Duration::new(60u64, 0u32))
                    .ramp_up(
                        &[25u32, 50u32, 100u32],
                        ::core::time::Duration::new(5u64, 0u32),
                    )
                    .timeout(::core::time::Duration::new(0u64, 800000000u32))
                    .retries(2u32)
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
    let result = ::breakerbox::__private::run(
            &*breaker,
            || {
                #[allow(unused_variables, unused_mut)]
                let isbn = ::breakerbox::__private::Reuse::reuse(&isbn);
                #[allow(unused_variables, unused_mut)]
                let mut shelf = ::breakerbox::__private::Reuse::reuse(&shelf);
                async move {
                    let out: Result<u32, E> = async move { Ok(1) }.await;
                    out
                }
            },
            ::breakerbox::__private::classified::<Result<u32, E>>(),
        )
        .await;
    let answer = match result {
        ::core::result::Result::Ok(out) => {
            if ::core::matches!(
                < Result < u32, E > as ::breakerbox::__private::Classify > ::classify(&
                out), ::breakerbox::__private::Outcome::Failure
            ) {
                match <Result<
                    u32,
                    E,
                > as ::breakerbox::__private::FailureFallback>::into_error(out) {
                    ::core::result::Result::Ok(error) => {
                        ::core::result::Result::Err(
                            ::breakerbox::__private::CallFailure::Error(error),
                        )
                    }
                    ::core::result::Result::Err(out) => ::core::result::Result::Ok(out),
                }
            } else {
                ::core::result::Result::Ok(out)
            }
        }
        ::core::result::Result::Err(error) => {
            ::core::result::Result::Err(
                ::breakerbox::__private::CallFailure::from(error),
            )
        }
    };
    match answer {
        ::core::result::Result::Ok(out) => out,
        ::core::result::Result::Err(failed) => {
            let error = ::breakerbox::__private::FromTimedFailure::from_timed_failure(
                failed,
            );
            {
                let fallback_out: Result<u32, E> = ::breakerbox::__private::fallback(
                        from_cache,
                        (self, isbn, shelf),
                        error,
                    )
                    .await;
                fallback_out
            }
        }
    }
}
