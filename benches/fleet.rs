//! The CLOSED path with the fleet on against off, in one criterion run: admission and a
//! success, the breaker configured alike (count window of 20, judged from 10 on) but for
//! `fleet`. The breaker with the fleet on has joined a running fleet, on a real
//! `redis-server` when one is on the PATH (else on a store that never answers: the path is
//! the same, as it never reads the fleet).
//!
//! Run with `cargo bench -p breaker-benches --bench fleet`; `benches/README.md` has the ratio of one run.

use std::sync::Arc;
use std::time::Duration;

use breaker_workspace::redis_server::RedisServer;
use breakerbox::fleet::Fleet;
use breakerbox::{Breaker, Config};
use criterion::{criterion_group, criterion_main, Criterion};

fn closed_path(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let server = RedisServer::start().ok();
    let url = server
        .as_ref()
        .map_or_else(|| "redis://127.0.0.1:9".to_string(), RedisServer::url);
    let fleet = {
        let _inside = runtime.enter();
        Fleet::builder(url).start().expect("a valid fleet")
    };
    let config = Config::builder().count_window(20).min_calls(10);
    let off = Breaker::new("bench::fleet_off", config.build().unwrap());
    let on = Arc::new(Breaker::new(
        "bench::fleet_on",
        config.fleet(true).build().unwrap(),
    ));
    fleet.join(&on, 2);
    runtime.block_on(fleet.flush());

    let mut group = c.benchmark_group("fleet_closed");
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("off", |b| b.iter(|| off.try_acquire().unwrap().success()));
    group.bench_function("on", |b| b.iter(|| on.try_acquire().unwrap().success()));
    group.finish();
    drop(server);
}

criterion_group!(benches, closed_path);
criterion_main!(benches);
