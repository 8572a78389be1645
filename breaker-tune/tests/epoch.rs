//! A trace whose start times are milliseconds since 1970 (the likeliest mistake when
//! converting a log) is tuned in memory proportional to its calls: times are taken from the
//! first call, and seconds without a call take no memory.

use breakerbox::recording::Recording;
use breakerbox_tune::{tune_with, Options};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[test]
fn an_epoch_millisecond_trace_is_rebased_to_its_first_call_in_bounded_memory() {
    // Two calls in 2024, and one a year later: the old health estimate asked for a bucket
    // per second since 1970 (40.8 GB) and aborted.
    let text = "t_ms,latency_ms,outcome\n\
                1733000000000,12,success\n\
                1733000000250,1000,failure\n\
                1764536000000,9,success\n";
    let recording = Recording::read_csv_from(text.as_bytes()).unwrap();
    let _profiler = dhat::Profiler::builder().testing().build();
    let options = Options {
        threads: 1,
        ..Options::default()
    };
    let tuning = tune_with(&recording, &breakerbox::Config::default(), options);
    let peak = dhat::HeapStats::get().max_bytes;
    assert!(peak < 4 << 20, "the tuner held {peak} bytes at once");
    assert_eq!(tuning.offset.as_millis(), 1_733_000_000_000);
    assert_eq!(tuning.health.buckets.len(), 2);
    assert_eq!(tuning.health.end.as_millis(), 31_536_000_000);
    let text = breakerbox_tune::report::report(&tuning, "epoch.csv", "a");
    assert!(
        text.contains("times are from the first call, at t_ms = 1733000000000.000"),
        "{text}"
    );
}

#[test]
fn a_start_time_the_reader_refuses_is_named_by_its_line() {
    let text = "t_ms,latency_ms,outcome\n0,1,success\n1e16,1,success\n";
    let err = Recording::read_csv_from(text.as_bytes()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 3: t_ms must be a number of milliseconds from 0 to below 1e15, got \"1e16\""
    );
}
