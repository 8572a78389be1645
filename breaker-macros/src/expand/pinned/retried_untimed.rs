async fn get(r#type: &str) -> Result<u32, E> {
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
                    .count_window(20u32)
                    .failure_rate(0.5f64)
                    .open_for(::core::time::Duration::new(5u64, 0u32))
                    .probes(3u32)
                    .retries(3u32)
                    .retry_backoff(::core::time::Duration::new(0u64, 20000000u32))
                    .retry_budget(0.2f64)
                    .retry_floor(1u32)
                    .max_concurrent(8u32)
                    .probe_timeout(::core::time::Duration::new(3u64, 0u32))
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
    let result = ::breakerbox::__private::run_untimed(
            &*breaker,
            || {
                #[allow(unused_variables, unused_mut)]
                let r#type = ::breakerbox::__private::Reuse::reuse(&r#type);
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
                        degraded,
                        (r#type,),
                        error,
                    )
                    .await;
                fallback_out
            }
        }
    }
}
