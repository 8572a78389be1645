async fn get(isbn: &str) -> Result<u32, E> {
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
    match admission {
        ::core::result::Result::Err(rejected) => {
            <Result<
                u32,
                E,
            > as ::breakerbox::__private::FromRejected>::from_rejected(rejected)
        }
        ::core::result::Result::Ok(_) => {
            let out: Result<u32, E> = async move { Ok(1) }.await;
            if let ::core::result::Result::Ok(permit) = admission {
                let judged = &out;
                permit.record_output(judged);
            }
            out
        }
    }
}
