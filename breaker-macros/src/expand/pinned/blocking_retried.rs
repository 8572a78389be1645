/// Reads it.
fn read(path: &str) -> Result<String, E> {
    let breaker = {
        fn breaker_path_of() -> &'static ::core::primitive::str {
            ::core::any::type_name_of_val(&breaker_path_of)
        }
        static BREAKER: ::breakerbox::__private::StaticBreaker = ::breakerbox::__private::StaticBreaker::new(
            ::breakerbox::__private::Name::Function {
                path_of: breaker_path_of,
                module: ::core::module_path!(),
                function: "read",
            },
            ::breakerbox::__private::config(
                ::breakerbox::__private::ConfigBuilder::new()
                    .count_window(20u32)
                    .failure_rate(0.5f64)
                    .open_for(::core::time::Duration::new(5u64, 0u32))
                    .probes(3u32)
                    .retries(2u32)
                    .retry_backoff(::core::time::Duration::new(0u64, 20000000u32))
                    .retry_budget(0.2f64)
                    .retry_floor(10u32)
                    .shadow(false)
                    .pushback_max(::core::time::Duration::new(30u64, 0u32)),
            ),
        );
        ::breakerbox::__private::submit! {
            ::breakerbox::__private::Declared::single(& BREAKER, ::core::file!(),
            ::core::line!(), ::core::column!())
        }
        BREAKER.get()
    };
    let result = ::breakerbox::__private::run_blocking(
        &*breaker,
        || {
            #[allow(unused_variables, unused_mut)]
            let path = ::breakerbox::__private::Reuse::reuse(&path);
            ::breakerbox::__private::call_once::<
                Result<String, E>,
                _,
            >(move || { Ok(String::new()) })
        },
        ::breakerbox::__private::classified::<Result<String, E>>(),
    );
    match result {
        ::core::result::Result::Ok(out) => out,
        ::core::result::Result::Err(rejected) => {
            let fallback_out: Result<String, E> = ::breakerbox::__private::fallback(
                cached,
                (path,),
                rejected,
            );
            fallback_out
        }
    }
}
