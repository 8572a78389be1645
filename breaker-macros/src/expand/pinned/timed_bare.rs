async fn ping() {
    let breaker = {
        fn breaker_path_of() -> &'static ::core::primitive::str {
            ::core::any::type_name_of_val(&breaker_path_of)
        }
        static BREAKER: ::breakerbox::__private::StaticBreaker = ::breakerbox::__private::StaticBreaker::new(
            ::breakerbox::__private::Name::Function {
                path_of: breaker_path_of,
                module: ::core::module_path!(),
                function: "ping",
            },
            ::breakerbox::__private::config(
                ::breakerbox::__private::ConfigBuilder::new()
                    .count_window(20u32)
                    .failure_rate(0.5f64)
                    .open_for(::core::time::Duration::new(5u64, 0u32))
                    .probes(3u32)
                    .timeout(::core::time::Duration::new(1u64, 0u32))
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
    let result = ::breakerbox::__private::run_once(
            &*breaker,
            async move {
                let out: () = async move { ping_it().await }.await;
                out
            },
            ::breakerbox::__private::classified::<()>(),
        )
        .await;
    match result {
        ::core::result::Result::Ok(out) => out,
        ::core::result::Result::Err(
            ::breakerbox::__private::CallError::Rejected(rejected),
        ) => <() as ::breakerbox::__private::FromRejected>::from_rejected(rejected),
        ::core::result::Result::Err(
            ::breakerbox::__private::CallError::TimedOut(timed_out),
        ) => <() as ::breakerbox::__private::FromTimedOut>::from_timed_out(timed_out),
    }
}
