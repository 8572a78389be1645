//! The integration tests of breakerbox: one binary, a module per subject, so that the crate
//! and the test dependencies link once.
//!
//! Every test runs beside the others in this process, on threads of its own. What is
//! process-wide is shared with care: the allocator keeps each thread's books apart
//! (`support/heap.rs`), a test that reads logs runs in a process of its own
//! (`support/logs.rs`), and a test that reads the registry looks only at its own breakers'
//! names. The one test that needs
//! the process to itself, the registry's first access, is `tests/shared_name_warning.rs`.
//!
//! `cargo test -p breaker-tests --test it fleet_` runs one subject's tests; `modules`
//! fails on a file of this directory that is not a module here.

mod admin_logs;
mod admin_page;
mod alloc_free;
mod attribute_hedge;
mod attribute_open_cap;
mod attribute_policy;
mod attribute_throttle;
mod axum_handler;
mod call_events;
mod call_events_fleet;
mod caught_panics;
mod classify_http;
mod classify_reqwest;
mod classify_tokio;
mod classify_tonic;
mod cycle_memory;
mod dashboards;
mod doc_names;
mod fallback_on_failure;
mod fleet_adoption;
mod fleet_adoption_log;
mod fleet_attribute;
mod fleet_bad_data;
mod fleet_cluster;
mod fleet_connect;
mod fleet_health;
mod fleet_lease;
mod fleet_limits;
mod fleet_logs;
mod fleet_names;
mod fleet_overrides;
mod fleet_probes;
mod fleet_processes;
mod fleet_production;
mod fleet_restart;
mod fleet_sentinel;
mod fleet_store;
mod fleet_trust;
mod half_open_trial;
mod http_gateway;
mod key_flood;
mod keyed_families;
mod keyed_memory;
mod macro_calls;
mod macro_recovery;
mod macro_registry;
mod metrics_durations;
mod metrics_exposition;
mod metrics_fleet;
mod modules;
mod nested_breakers;
mod overrides_apply;
mod plain_functions;
mod policy;
mod policy_answers;
mod policy_budget;
mod policy_tower;
mod pushback_attribute;
mod pushback_upstream;
mod ramp_logs;
mod readme_tables;
mod recorded_trace;
mod recorder;
mod recovery_simulation;
mod security;
mod shadow_logs;
mod static_registration;
mod stress;
mod support;
mod tokio_clock;
mod tonic_service;
mod tower_layer;
mod tracing_events;
mod tuner_docs;
