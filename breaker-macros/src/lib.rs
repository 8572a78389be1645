//! Procedural macros of the `breakerbox` crate. Use them through `breakerbox`, not directly.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

mod args;
mod expand;
mod keys;
mod rules;
mod validate;

use proc_macro::TokenStream;

/// Guards a function with a circuit breaker: an `async fn`, or a plain `fn` (see "Plain
/// functions" below).
///
/// ```
/// use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};
///
/// #[derive(Debug, PartialEq)]
/// enum LibError {
///     NotFound,
///     Unavailable,
///     Rejected,
/// }
///
/// // Which errors mean the downstream is sick: a NOT_FOUND is an answer, and a rejection
/// // (libraryd was not even asked) says nothing about libraryd.
/// impl Classify for LibError {
///     fn classify(&self) -> Outcome {
///         match self {
///             LibError::NotFound => Outcome::Success,
///             LibError::Unavailable => Outcome::Failure,
///             LibError::Rejected => Outcome::Ignored,
///         }
///     }
/// }
///
/// impl From<Rejected> for LibError {
///     fn from(_: Rejected) -> Self {
///         LibError::Rejected
///     }
/// }
///
/// #[circuit_breaker(window = 20, min = 10, rate = 0.5, open = "5s", probes = 3, fallback = degraded)]
/// async fn get_book(isbn: &str) -> Result<String, LibError> {
///     Err(LibError::Unavailable) // libraryd is down
/// }
///
/// async fn degraded(isbn: &str, rejected: Rejected) -> Result<String, LibError> {
///     Ok(format!("cached copy of {isbn} ({rejected})"))
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// for _ in 0..10 {
///     assert_eq!(get_book("978-1").await, Err(LibError::Unavailable));
/// }
/// // 10 of 10 calls failed: the breaker is open, and the fallback answers at once.
/// assert!(get_book("978-1").await.unwrap().starts_with("cached copy of 978-1"));
/// # });
/// ```
///
/// # Keys
///
/// Every key is optional; an unwritten key keeps its value in `Config::default()`. Values are
/// checked while the attribute expands, by the rules `ConfigBuilder::build` and the overrides
/// use (one definition, the `breakerbox-rules` crate), and a broken rule is one compile error at
/// the value that breaks it, in the attribute's words: `rate = 1.5: must be in (0, 1]`.
///
/// | key | value | meaning |
/// |---|---|---|
/// | `window` | integer, or duration string | count window of N calls (default 20), or time window of that span |
/// | `buckets` | integer | buckets of a time window (default 10); an error with a count window |
/// | `min` | integer | calls in the window before the failure rate is judged, at least 2 so that one call never decides, unless `window = 1` (default: half a count window but at least 2, 10 for a time window) |
/// | `rate` | number | failure rate in (0, 1] at or above which the breaker opens (default 0.5) |
/// | `slow` | duration string | calls slower than this count as slow |
/// | `slow_rate` | number | share of slow calls, in (0, 1], that opens the breaker (default 0.5); needs `slow` |
/// | `throttle` | number | K of client-side adaptive throttling in CLOSED, finite and at least 1: a call is refused (`RejectReason::Shed`) with probability `(requests - K * accepts) / (requests + 1)` of the calls of the last `throttle_window` (default off) |
/// | `throttle_max` | number | the largest share of calls throttling refuses, in (0, 1] (default 0.9); needs `throttle` |
/// | `throttle_window` | duration string | the history throttling counts, in 10 buckets (default 2m); needs `throttle` |
/// | `open` | duration string | how long the breaker stays open (default 5s) |
/// | `probes` | integer | half-open probes in flight at once (default 3) |
/// | `successes` | integer | probe successes that close the breaker, at least 1 and at most `probes` (default `probes`) |
/// | `backoff`, `open_max` | number, duration string | each failed half-open trial multiplies the next OPEN by `backoff` (at least 1), up to `open_max`; both or neither |
/// | `ramp` | list of integers | after the probes succeed, admit these percentages of calls step by step, e.g. `[10, 30, 60, 100]`; strictly rising, ending at 100 |
/// | `ramp_step` | duration string | how long each ramp step lasts (default 5s); needs `ramp` |
/// | `ramp_guard` | number | hold the ramp while the step's p99 latency exceeds this factor (above 1) of the closed-state p99; needs `ramp` |
/// | `timeout` | duration string | each attempt running longer is cancelled and counts as a failure; the caller gets `E::from(breakerbox::policy::TimedOut)` (greater than zero) |
/// | `retries` | integer | attempts after a failed first one, at most 10, each admitted by the breaker again (default 0) |
/// | `retry_backoff` | duration string | base delay before a retry, at most 60s: retry `n` waits a random time in `[0, min(retry_backoff_max, base * 2^(n-1))]` (default 20ms); needs `retries` |
/// | `retry_backoff_max` | duration string | longest wait before a retry, at least `retry_backoff` (default 10s, or `retry_backoff` if longer); needs `retries` |
/// | `retry_budget` | number | retries may add at most this share, in [0, 1], of the breaker's first attempts of the last 10s, beside `retry_floor` retries a second (default 0.2); needs `retries` |
/// | `retry_floor` | integer | retries a second allowed whatever the budget, so that a quiet breaker can retry too; 0 for none (default 10); needs `retries` |
/// | `hedge` | duration | the delay before an extra (hedged) attempt starts while the first still runs, at most 60s and below `timeout`: each asks the breaker first (a rejected one never starts, and is no failure) and draws from the retry budget; the first success wins and the others are cancelled, counted cancelled; an `async fn` only, with `&self` (default off) |
/// | `hedges` | integer | extra attempts a hedged call may start, 1 to 5 (default 1); needs `hedge` |
/// | `max_concurrent` | integer | bulkhead: at most this many calls in flight (at least 1); the next is rejected at once |
/// | `probe_timeout` | duration string | a half-open probe still running after this counts as failed (default: `timeout` if written, else 60s) |
/// | `shadow` | `true` or `false` | watch only: the breaker judges every call but admits them all (default `false`) |
/// | `fleet` | `true` or `false` | share judgement with the service's other instances through the fleet (`breakerbox::fleet`, feature `fleet`): publish this breaker's own OPENs, and open when a quorum of peers hold it OPEN (default `false`); the store is set at start-up with `Fleet::builder(url).join(registry()).start()`, never here |
/// | `fleet_quorum` | integer | how many live peers must hold the breaker OPEN before it opens for them, at least 2 (default 2); needs `fleet` |
/// | `pushback_max` | duration string | a failure carrying the downstream's pushback (`Retry-After`, `grpc-retry-pushback-ms`) opens the breaker for that long, at most this (default 5m; `"0s"` turns pushback off) |
/// | `max_open_percent` | integer | at most ⌊keys × this / 100⌋ of the breakers of `key`, but never fewer than one, are OPEN at once, 1 to 100 (default off); a trip past it is refused; needs `key` |
/// | `fallback` | path | async fn called, instead of returning an error, when the breaker rejects the call |
/// | `fallback_on` | `"rejection"` or `"failure"` | what the fallback answers: rejected calls, with the `Rejected` (default), or every call that ends in a rejection, a timeout or an error classified `Failure` (after the retries), with a `CallFailure<E>` or the function's error `E`; needs `fallback` |
/// | `classify` | path | `fn(&R) -> Outcome` used instead of the `Classify` impl of the return type `R` |
/// | `key` | expression | one breaker per distinct key value |
/// | `max_keys` | integer | bound on the breakers of `key` (default 1024) |
/// | `record` | integer | the breaker records its last N calls from its first, for the replay tuner (`Breaker::recording`; feature `recording` of `breakerbox`); not with `key` |
/// | `name` | string | registry name (default: module path and function name) |
/// | `crate` | string | path of the runtime crate, for a crate that re-exports it or a build without Cargo (default: the name your `Cargo.toml` gives the `breakerbox` dependency) |
///
/// Durations are [humantime](https://docs.rs/humantime) strings: `"250ms"`, `"5s"`,
/// `"1m 30s"`.
///
/// ## `window`, `buckets`, `min`, `rate`
///
/// An integer window judges the last N completed calls; a duration judges the calls completed
/// in that span, forgotten one bucket (`span / buckets`) at a time.
///
/// ```
/// # use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};
/// # #[derive(Debug)] pub struct LibError;
/// # impl Classify for LibError { fn classify(&self) -> Outcome { Outcome::Failure } }
/// # impl From<Rejected> for LibError { fn from(_: Rejected) -> Self { LibError } }
/// #[circuit_breaker(window = 50, min = 20, rate = 0.25)]
/// async fn by_count() -> Result<(), LibError> {
///     Ok(())
/// }
///
/// #[circuit_breaker(window = "30s", buckets = 6, min = 5)]
/// async fn by_time() -> Result<(), LibError> {
///     Ok(())
/// }
/// ```
///
/// ## `slow`, `slow_rate`
///
/// A call that takes longer than `slow` is slow; the breaker opens when the share of slow
/// calls in the window reaches `slow_rate`, even if they all succeed.
///
/// ```
/// # use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};
/// # #[derive(Debug)] pub struct LibError;
/// # impl Classify for LibError { fn classify(&self) -> Outcome { Outcome::Failure } }
/// # impl From<Rejected> for LibError { fn from(_: Rejected) -> Self { LibError } }
/// #[circuit_breaker(slow = "800ms", slow_rate = 0.8)]
/// async fn search(query: &str) -> Result<Vec<String>, LibError> {
///     Ok(vec![query.to_owned()])
/// }
/// ```
///
/// ## `open`, `probes`, `successes`
///
/// After `open`, the next call finds the breaker half-open: up to `probes` calls go through
/// at once; any failure reopens it, and `successes` probe successes (`probes` unless written)
/// close it.
///
/// ```
/// # use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};
/// # #[derive(Debug)] pub struct LibError;
/// # impl Classify for LibError { fn classify(&self) -> Outcome { Outcome::Failure } }
/// # impl From<Rejected> for LibError { fn from(_: Rejected) -> Self { LibError } }
/// #[circuit_breaker(open = "1m 30s", probes = 1)]
/// async fn reindex() -> Result<(), LibError> {
///     Ok(())
/// }
///
/// #[circuit_breaker(probes = 5, successes = 3)]
/// async fn lookup() -> Result<(), LibError> {
///     Ok(())
/// }
/// ```
///
/// ## `backoff`, `open_max`, `ramp`, `ramp_step`, `ramp_guard`
///
/// Progressive recovery for downstreams that restart cold. A failed half-open trial makes the
/// next OPEN last `backoff` times longer, up to `open_max` (5s, 10s, 20s, 40s, 60s, 60s for
/// `open = "5s", backoff = 2.0, open_max = "60s"`). When the probes succeed, the breaker stays
/// half-open and admits only `ramp[0]`% of calls for `ramp_step`, then the next percentage,
/// evenly spread (of any 100 calls at 10%, 10 are admitted), and closes after the last step.
/// Calls not admitted get a [`Rejected`](../breaker/struct.Rejected.html) that says they were
/// throttled by recovery; any failure during the ramp reopens at once, with the backoff.
///
/// ```
/// # use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};
/// # #[derive(Debug)] pub struct LibError;
/// # impl Classify for LibError { fn classify(&self) -> Outcome { Outcome::Failure } }
/// # impl From<Rejected> for LibError { fn from(_: Rejected) -> Self { LibError } }
/// #[circuit_breaker(
///     open = "5s", backoff = 2.0, open_max = "60s",
///     ramp = [10, 30, 60, 100], ramp_step = "5s", ramp_guard = 3.0,
/// )]
/// async fn get_stock(sku: u64) -> Result<u32, LibError> {
///     Ok(sku as u32)
/// }
/// ```
///
/// ## `timeout`, `retries`, `retry_backoff`, `retry_backoff_max`, `retry_budget`, `retry_floor`
///
/// The call policy, in the order of one call: for each attempt, the breaker is asked for a
/// permit, the body runs under `timeout`, its result is classified and recorded; an attempt
/// classified as a failure is retried, after a backoff, while retries and the breaker's retry
/// budget remain. A rejected attempt ends the call as a rejection (the fallback, or
/// `E::from(rejected)`) and counts nowhere but in the rejections; a business error (classified
/// as a success) is never retried. After the last attempt fails, its result is returned.
/// The wait before retry `n` is drawn from `[0, min(retry_backoff_max, retry_backoff *
/// 2^(n-1))]`. The budget allows, over the last 10 seconds, `retry_budget` times the first
/// attempts plus `retry_floor` a second; a retry is taken from it only by an attempt that
/// starts (a call dropped in its backoff, or whose retry is rejected, gives it back).
///
/// A timed-out attempt is dropped, counts as a failure (as slow too, if `slow` is written),
/// and its caller gets `E::from(breakerbox::policy::TimedOut)`, so with `timeout` the error type needs
/// `From<breakerbox::policy::TimedOut>`. A function with `retries` and no `timeout` never times out, not
/// even when its breaker's configuration has a timeout (shared by name with a timed
/// function), and needs no `From<breakerbox::policy::TimedOut>`.
///
/// ## `hedge`, `hedges`
///
/// With `hedge = "50ms"`, an attempt that has run that long without an answer gets another
/// beside it, up to `hedges` extra attempts (default 1): each asks the breaker first (a
/// rejected one never starts, and is no failure) and draws from the retry budget; the first
/// success wins, and the others are cancelled, counted cancelled, never failed. A failure of
/// one cancels none of the others. `hedge` must be below `timeout`, and goes on an `async fn`
/// only: a blocking call can neither run beside itself nor be cancelled.
///
/// With `retries` or `hedge`, each attempt runs the body anew: the receiver must be `&self`, and every
/// other argument is passed to each attempt as a copy (`Clone`; references are copied as
/// references), so an argument that is not `Clone` is a compile error, and so is a `&mut`
/// argument. These keys need the `policy` feature of `breakerbox` (on by default).
///
/// ```
/// # use breakerbox::{circuit_breaker, Classify, Outcome, Rejected, policy::TimedOut};
/// # #[derive(Debug)] pub struct LibError;
/// # impl Classify for LibError { fn classify(&self) -> Outcome { Outcome::Failure } }
/// # impl From<Rejected> for LibError { fn from(_: Rejected) -> Self { LibError } }
/// impl From<TimedOut> for LibError {
///     fn from(_: TimedOut) -> Self {
///         LibError
///     }
/// }
///
/// struct Library {
///     base: String,
/// }
///
/// impl Library {
///     // At most 3 attempts of 800ms each, 0 to 20ms apart, then 0 to 40ms.
///     #[circuit_breaker(timeout = "800ms", retries = 2, retry_backoff = "20ms", retry_budget = 0.2)]
///     async fn get_book(&self, isbn: &str) -> Result<String, LibError> {
///         Ok(format!("{}/books/{isbn}", self.base))
///     }
/// }
/// ```
///
/// ## `max_concurrent`, `probe_timeout`, `shadow`
///
/// `max_concurrent` is a bulkhead: once that many calls of the breaker are in flight (of its
/// key, with `key`), the next one is rejected at once, without waiting, like a call the open
/// breaker rejects, but without counting in the window. A retried call holds one slot for all
/// its attempts. `probe_timeout` bounds a half-open probe: one still in flight after it counts
/// as failed, so a probe that never returns cannot keep the breaker half-open. `shadow = true`
/// runs the breaker without enforcing it: every call is admitted, and the calls it would
/// have rejected are counted.
///
/// ```
/// # use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};
/// # #[derive(Debug)] pub struct LibError;
/// # impl Classify for LibError { fn classify(&self) -> Outcome { Outcome::Failure } }
/// # impl From<Rejected> for LibError { fn from(_: Rejected) -> Self { LibError } }
/// #[circuit_breaker(max_concurrent = 64, probe_timeout = "30s")]
/// async fn search(query: &str) -> Result<Vec<String>, LibError> {
///     Ok(vec![query.to_owned()])
/// }
///
/// #[circuit_breaker(shadow = true)]
/// async fn reindex() -> Result<(), LibError> {
///     Ok(())
/// }
/// ```
///
/// ## `fallback`
///
/// A path to an async fn taking the same arguments, receiver included, or only the leading
/// ones (none at all included: `async fn degraded(rejected: Rejected)`), then the
/// [`Rejected`](../breakerbox/struct.Rejected.html), and returning the same type. (A function
/// of more than 12 arguments has a fallback that takes them all.) Without a
/// fallback, a rejected call returns `Err(E::from(rejected))`, so the return type must be
/// `Result<T, E>` with `E: From<breakerbox::Rejected>`.
///
/// ```
/// # use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};
/// # #[derive(Debug)] pub struct LibError;
/// # impl Classify for LibError { fn classify(&self) -> Outcome { Outcome::Failure } }
/// struct Library {
///     cache: Vec<String>,
/// }
///
/// impl Library {
///     #[circuit_breaker(fallback = Self::from_cache)]
///     async fn titles(&self, shelf: u32) -> Result<Vec<String>, LibError> {
///         Err(LibError) // libraryd is down
///     }
///
///     async fn from_cache(&self, shelf: u32, rejected: Rejected) -> Result<Vec<String>, LibError> {
///         Ok(self.cache.clone())
///     }
/// }
/// ```
///
/// With `fallback_on = "failure"` (as Polly, Resilience4j and Spring fall back), the fallback
/// answers every call that ends in an error that is a rejection, a timeout or classified
/// `Outcome::Failure`, after any retries. Its last argument says how the call ended: a
/// [`CallFailure<E>`](../breakerbox/enum.CallFailure.html) (`Rejected`, `TimedOut` or the
/// function's `Error`), which needs no conversion, so that `E` may be a type you cannot add
/// impls to (`reqwest::Error`); or the function's own error `E`, a rejection made
/// `E::from(rejected)` and a timeout `E::from(timed_out)`. A business error
/// (classified `Success`) or an `Ignored` one is returned to the caller as it is, and so is an
/// `Ok` value classified `Failure`: there is no error to hand over. The breaker counts the
/// call before the fallback runs, as without it. The body gets its own copy of each argument
/// (as with `retries`), so that the fallback still has them.
///
/// ```
/// # use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};
/// #[derive(Debug, PartialEq)]
/// enum LibError { NotFound, Unavailable, Rejected }
/// # impl Classify for LibError {
/// #     fn classify(&self) -> Outcome {
/// #         if *self == LibError::NotFound { Outcome::Success } else { Outcome::Failure }
/// #     }
/// # }
/// # impl From<Rejected> for LibError { fn from(_: Rejected) -> Self { LibError::Rejected } }
/// #[circuit_breaker(fallback = from_cache, fallback_on = "failure")]
/// async fn get_book(isbn: &str, found: bool) -> Result<String, LibError> {
///     Err(if found { LibError::Unavailable } else { LibError::NotFound })
/// }
///
/// async fn from_cache(isbn: &str, found: bool, error: LibError) -> Result<String, LibError> {
///     Ok(format!("cached {isbn} after {error:?}"))
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert_eq!(get_book("978-1", true).await.unwrap(), "cached 978-1 after Unavailable");
/// assert_eq!(get_book("978-1", false).await, Err(LibError::NotFound));
/// # });
/// ```
///
/// ## `classify`
///
/// Judges the result with a function instead of the return type's `Classify` impl, for a
/// type you don't own or a call site that sees it differently.
///
/// ```
/// # use breakerbox::{circuit_breaker, Outcome, Rejected};
/// fn server_errors(status: &u16) -> Outcome {
///     if *status >= 500 { Outcome::Failure } else { Outcome::Success }
/// }
///
/// async fn unavailable(path: &str, rejected: Rejected) -> u16 {
///     503
/// }
///
/// #[circuit_breaker(classify = server_errors, fallback = unavailable)]
/// async fn status_of(path: &str) -> u16 {
///     200
/// }
/// ```
///
/// ## `key`, `max_keys`
///
/// One breaker per distinct value of the key expression, evaluated with the arguments in
/// scope before the body: `key = addr` gives each downstream instance its own breaker. The key
/// is `Hash + Eq + Display`, owned or borrowed (`key = host` with `host: &str` keys by `str`
/// and finds an existing key without allocating). Past `max_keys` keys, the least recently
/// used breaker is forgotten, closed ones first and among them idle ones. A keyed breaker is named
/// `name[key]`, and [`registry().get_keyed(name, key)`](../breaker/struct.Registry.html#method.get_keyed)
/// finds it by the key's `Display` text.
///
/// ```
/// # use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};
/// # #[derive(Debug)] pub struct LibError;
/// # impl Classify for LibError { fn classify(&self) -> Outcome { Outcome::Failure } }
/// # impl From<Rejected> for LibError { fn from(_: Rejected) -> Self { LibError } }
/// use std::net::SocketAddr;
///
/// #[circuit_breaker(key = addr, max_keys = 256)]
/// async fn query(addr: SocketAddr, sql: &str) -> Result<u64, LibError> {
///     Ok(0)
/// }
/// ```
///
/// `max_open_percent = 50` caps how many of the family's breakers are OPEN at once (Envoy's
/// `max_ejection_percent`): at most ⌊keys × 50 / 100⌋, but never fewer than one. When most
/// of a pool's addresses look sick at once, the fault is usually the caller's or a shared
/// dependency's, and opening them all would leave nothing to call: a breaker whose own
/// failures would trip it past the cap stays CLOSED, keeps its window, and reports the
/// refused trip (`Event::TripRefused`, the metric `circuitbreaker_trips_refused_total`).
/// An operator's force-open, an open period, the fleet's OPEN and a pushback are never
/// refused, and count. `docs/states.md` says which OPENs count and why.
///
/// ## `name`
///
/// Each annotated function gets a breaker, registered in
/// [`breakerbox::registry()`](../breaker/fn.registry.html) under a name made from where the
/// function is written:
///
/// | function | name | e.g. |
/// |---|---|---|
/// | a function, or an associated function without a receiver in `impl Type` | `module_path!()::function` | `app::get_book` |
/// | a method with a receiver in `impl Type` | the type's path, its generic arguments and references left out, then the method | `app::client::Client::get` |
/// | a function with or without a receiver in `impl Trait for Type` | the `impl` block's `module_path!()`, then `<Type as Trait>` as the compiler writes them but for each path kept to its last segment (`_` for a type parameter), then the function | `app::db::<Store as Primary>::get`, `app::db::<&Client<_> as Lookup<Row>>::get`, `app::net::<_ as Ping>::ping` for `impl<T> Ping for T` |
///
/// So `impl Primary for Store` and `impl Replica for Store` have a breaker each, and so do
/// blanket impls in two modules. An associated function without a receiver in `impl Type`
/// looks to the attribute like any function, so two of them in one module (`A::new`,
/// `B::new`) share `app::new`: give them a `name` each. An explicit `name` replaces the name,
/// and functions with one name share one breaker: the first in source order (file, then
/// line) gives its configuration, and a different one is logged as a warning (feature
/// `tracing`).
///
/// ```
/// # use breakerbox::{circuit_breaker, registry, Classify, Outcome, Rejected, State};
/// # #[derive(Debug)] pub struct DbError;
/// # impl Classify for DbError { fn classify(&self) -> Outcome { Outcome::Failure } }
/// # impl From<Rejected> for DbError { fn from(_: Rejected) -> Self { DbError } }
/// struct Store;
///
/// trait Primary {
///     async fn get(&self) -> Result<(), DbError>;
/// }
///
/// trait Replica {
///     async fn get(&self) -> Result<(), DbError>;
/// }
///
/// impl Primary for Store {
///     #[circuit_breaker(window = 2, min = 2, rate = 1.0)]
///     async fn get(&self) -> Result<(), DbError> {
///         Err(DbError) // the primary is down
///     }
/// }
///
/// impl Replica for Store {
///     #[circuit_breaker(window = 2, min = 2, rate = 1.0)]
///     async fn get(&self) -> Result<(), DbError> {
///         Ok(())
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let _ = Primary::get(&Store).await;
/// let _ = Primary::get(&Store).await;
/// assert!(Replica::get(&Store).await.is_ok(), "the replica has a breaker of its own");
/// let state = |name: &str| registry().get(name).unwrap().state();
/// assert_eq!(state(concat!(module_path!(), "::<Store as Primary>::get")), State::Open);
/// assert_eq!(state(concat!(module_path!(), "::<Store as Replica>::get")), State::Closed);
/// # });
/// ```
///
/// The breaker is registered before anything calls the function: at the registry's first
/// access, for every annotated function linked into the program, in a library crate or an
/// integration test as well (the `inventory` crate gathers them at link time; see
/// [`breakerbox::registry()`](../breaker/fn.registry.html) for the targets, and the fallback to
/// the first call elsewhere). So listeners, metrics and overrides reach it before traffic.
/// Its configuration is a constant the compiler computed from the keys, whose rules were
/// checked while compiling: registering builds nothing that could fail. A keyed family
/// (`key = ...`) is registered the same way under its name, with no member: its members come
/// with their keys. Registering a breaker by hand under a function's name returns the
/// function's.
///
/// ```
/// # use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};
/// # #[derive(Debug)] pub struct LibError;
/// # impl Classify for LibError { fn classify(&self) -> Outcome { Outcome::Failure } }
/// # impl From<Rejected> for LibError { fn from(_: Rejected) -> Self { LibError } }
/// #[circuit_breaker(name = "libraryd")]
/// async fn get_book(isbn: &str) -> Result<String, LibError> {
///     Ok(isbn.to_owned())
/// }
///
/// #[circuit_breaker(name = "libraryd")]
/// async fn put_book(isbn: &str) -> Result<(), LibError> {
///     Ok(())
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// get_book("978-1").await.unwrap();
/// put_book("978-1").await.unwrap();
/// assert_eq!(breakerbox::registry().get("libraryd").unwrap().snapshot().calls, 2);
/// # });
/// ```
///
/// A generic function has one breaker for all its type parameters: the breaker guards the
/// downstream, and the downstream does not change with them.
///
/// ## `crate`
///
/// The expansion names the runtime under the name your `Cargo.toml` gives it, read from the
/// manifest at expansion: `breakerbox = "0.1"` expands to `::breakerbox::__private::…`,
/// `breaker = { package = "breakerbox", version = "0.1" }` to `::breakerbox::__private::…`. Only a
/// crate that reaches the runtime through another crate's re-export, or a build without Cargo,
/// says where it is:
///
/// ```
/// # extern crate breakerbox as resilience;
/// # use resilience::{Classify, Outcome, Rejected};
/// # #[derive(Debug)] pub struct LibError;
/// # impl Classify for LibError { fn classify(&self) -> Outcome { Outcome::Failure } }
/// # impl From<Rejected> for LibError { fn from(_: Rejected) -> Self { LibError } }
/// #[resilience::circuit_breaker(crate = "::resilience")]
/// async fn get_book() -> Result<(), LibError> {
///     Ok(())
/// }
/// ```
///
/// # What a call does
///
/// It asks the breaker for a permit. If the breaker rejects it, the fallback answers, or
/// `Err(E::from(rejected))` is returned; the body does not run. If admitted, the body runs,
/// its value is classified and recorded, and returned unchanged. A retry loop around the
/// function therefore asks the breaker before every attempt, and so do `retries`. Without
/// `timeout` and `retries`, the call costs nothing more than this.
///
/// `return` and `?` in the body keep their meaning and never skip the recording. A cancelled
/// call (its future dropped) records nothing and frees its half-open probe slot; a panic in the
/// body records a failure and keeps unwinding. The signature is kept as written, and the
/// returned future is `Send` whenever the body is.
///
/// # Equivalent code without the macro
///
/// `get_book` at the top of this page expands to about this (the configuration is checked
/// while the attribute expands, so the expansion's `Config` is never refused, and the static
/// is submitted to the list the registry registers at its first access, which `get_or_init`
/// stands for here). The breaker's items sit in
/// a block of their own, and its locals are hygienic: the body sees exactly the names it would
/// see without the attribute.
///
/// ```
/// # use breakerbox::{Breaker, Classify, Config, Outcome, Rejected};
/// # #[derive(Debug)] pub struct LibError;
/// # impl Classify for LibError { fn classify(&self) -> Outcome { Outcome::Failure } }
/// # async fn degraded(isbn: &str, rejected: Rejected) -> Result<String, LibError> { Ok(String::new()) }
/// use std::sync::{Arc, OnceLock};
/// use std::time::Duration;
///
/// async fn get_book(isbn: &str) -> Result<String, LibError> {
///     let breaker = {
///         static BREAKER: OnceLock<Arc<Breaker>> = OnceLock::new();
///         BREAKER.get_or_init(|| {
///             let config = Config::builder()
///                 .count_window(20)
///                 .min_calls(10)
///                 .failure_rate(0.5)
///                 .open_for(Duration::from_secs(5))
///                 .probes(3)
///                 .build()
///                 .expect("checked at compile time");
///             let name = concat!(module_path!(), "::get_book");
///             breakerbox::registry().register(Arc::new(Breaker::new(name, config)))
///         })
///     };
///     let admission = breaker.try_acquire();
///     match admission {
///         Err(rejected) => degraded(isbn, rejected).await,
///         Ok(_) => {
///             let out: Result<String, LibError> = async move {
///                 Err(LibError) // the body
///             }
///             .await;
///             // The permit leaves the admission only now: moved out before the `.await`,
///             // it would be written twice a call.
///             if let Ok(permit) = admission {
///                 permit.record(Classify::classify(&out));
///             }
///             out
///         }
///     }
/// }
/// ```
///
/// With `timeout` or `retries`, the call goes through the breaker's policy runner instead
/// ([`Breaker::run_with`](../breaker/struct.Breaker.html#method.run_with)); with `retries`,
/// each attempt gets its own copy of the arguments:
///
/// ```
/// # use breakerbox::{Breaker, CallError, Classify, Config, Outcome, Rejected, policy::TimedOut};
/// # #[derive(Debug)] pub struct LibError;
/// # impl Classify for LibError { fn classify(&self) -> Outcome { Outcome::Failure } }
/// # impl From<TimedOut> for LibError { fn from(_: TimedOut) -> Self { LibError } }
/// # async fn degraded(isbn: &str, rejected: Rejected) -> Result<String, LibError> { Ok(String::new()) }
/// # fn breaker() -> &'static Breaker {
/// #     static BREAKER: std::sync::OnceLock<Breaker> = std::sync::OnceLock::new();
/// #     BREAKER.get_or_init(|| Breaker::new("app::get_book", Config::default()))
/// # }
/// // #[circuit_breaker(timeout = "800ms", retries = 2, fallback = degraded)]
/// async fn get_book(isbn: &str) -> Result<String, LibError> {
///     let breaker: &Breaker = breaker(); // registered at boot, as above
///     let result = breaker
///         .run_with(
///             || {
///                 let isbn = Clone::clone(&isbn);
///                 async move {
///                     let out: Result<String, LibError> = async move {
///                         Err(LibError) // the body
///                     }
///                     .await;
///                     out
///                 }
///             },
///             |out: &Result<String, LibError>| Classify::classify(out),
///         )
///         .await;
///     match result {
///         Ok(out) => out,
///         Err(CallError::Rejected(rejected)) => degraded(isbn, rejected).await,
///         Err(CallError::TimedOut(timed_out)) => Err(LibError::from(timed_out)),
///     }
/// }
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert!(get_book("978-1").await.is_err());
/// assert_eq!(breaker().snapshot().failures, 1);
/// # });
/// ```
///
/// With `fallback_on = "failure"`, the call is counted first, and a failed one then goes to
/// the fallback with its error:
///
/// ```
/// # use breakerbox::{Breaker, Classify, Config, Outcome, Rejected};
/// # #[derive(Debug)] pub struct LibError;
/// # impl Classify for LibError { fn classify(&self) -> Outcome { Outcome::Failure } }
/// # impl From<Rejected> for LibError { fn from(_: Rejected) -> Self { LibError } }
/// # async fn from_cache(isbn: &str, error: LibError) -> Result<String, LibError> { Ok(String::new()) }
/// # fn breaker() -> &'static Breaker {
/// #     static BREAKER: std::sync::OnceLock<Breaker> = std::sync::OnceLock::new();
/// #     BREAKER.get_or_init(|| Breaker::new("app::get_book", Config::default()))
/// # }
/// // #[circuit_breaker(fallback = from_cache, fallback_on = "failure")]
/// async fn get_book(isbn: &str) -> Result<String, LibError> {
///     let breaker: &Breaker = breaker(); // registered on the first call, as above
///     let (out, failed) = match breaker.try_acquire() {
///         Ok(permit) => {
///             let out: Result<String, LibError> = {
///                 let isbn = Clone::clone(&isbn);
///                 async move {
///                     Err(LibError) // the body
///                 }
///             }
///             .await;
///             let outcome = Classify::classify(&out);
///             permit.record_output(&out); // with the pushback a failure carries
///             (out, matches!(outcome, Outcome::Failure))
///         }
///         Err(rejected) => (Err(LibError::from(rejected)), true),
///     };
///     match out {
///         Err(error) if failed => from_cache(isbn, error).await,
///         out => out,
///     }
/// }
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert!(get_book("978-1").await.is_ok());
/// # });
/// ```
///
/// # Plain functions
///
/// On a plain `fn` (free, a method, generic, in a trait impl, keyed) the attribute does what it
/// does for an `async fn`: the breaker is asked, the body runs (in a closure of its own, so
/// that `return` and `?` keep their meaning), its result is classified and recorded, and a
/// rejected call goes to the fallback, a plain `fn` too, or returns `Err(E::from(rejected))`.
/// Registration at boot, keyed families, per-call events and metrics, shadow mode and
/// recording work alike, and a panic in the body is a failure of the call.
///
/// `retries` retry failures on the calling thread, within the retry budget; the backoff
/// between attempts is `std::thread::sleep`, which **blocks the thread**: keep plain
/// functions with retries off an async runtime's worker threads (use `spawn_blocking`).
/// `timeout` is refused at compile time: a blocking call cannot be cancelled when its time is
/// up. Give the blocking call a deadline of its own (a client's timeout, `set_read_timeout`)
/// and classify its timeout error as a failure.
///
/// ```
/// # use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};
/// # #[derive(Debug, PartialEq)] pub struct LibError;
/// # impl Classify for LibError { fn classify(&self) -> Outcome { Outcome::Failure } }
/// # impl From<Rejected> for LibError { fn from(_: Rejected) -> Self { LibError } }
/// #[circuit_breaker(window = 4, min = 2, fallback = cached)]
/// fn read_config(path: &str) -> Result<String, LibError> {
///     Err(LibError) // the config service is down
/// }
///
/// fn cached(path: &str, _: Rejected) -> Result<String, LibError> {
///     Ok(format!("{path} from the last good copy"))
/// }
///
/// assert_eq!(read_config("app.toml"), Err(LibError));
/// assert_eq!(read_config("app.toml"), Err(LibError));
/// // Two failures in two calls: open, and the fallback answers without calling.
/// assert_eq!(read_config("app.toml").unwrap(), "app.toml from the last good copy");
/// ```
///
/// # Compile errors
///
/// Every error in the attribute is reported at once, at the key or value that causes it:
/// unknown keys (with the valid ones, and a suggestion for a typo), keys written twice, values
/// of the wrong kind (`rate = "0.5"`), unparsable durations, integers too large for their key,
/// broken rules (`window = 0`, `rate = 1.5`, `min = 1`, `min` over `window`, `probes = 0`,
/// `successes` over `probes`, `open = "0s"`, `slow_rate` without `slow`, `buckets` with a
/// count window, `backoff` below 1 or infinite, `open_max` below `open`, a `ramp` that does
/// not rise strictly to 100, `ramp_step = "0s"`, `ramp_guard` of 1 or less, `timeout` or
/// `probe_timeout` of zero, `retries` over 10, `retry_backoff` over 60s, `retry_backoff_max`
/// below `retry_backoff`, `retry_budget` outside [0, 1], a negative `retry_floor`,
/// `max_concurrent = 0`, `retry_backoff`, `retry_backoff_max`, `retry_budget` or
/// `retry_floor` without `retries`, `hedge` of zero, over 60s or not below `timeout`, `hedges`
/// outside 1 to 5 or without `hedge`, `throttle` below 1, `throttle_max` outside (0, 1],
/// `throttle_max` or `throttle_window` without `throttle`),
/// `timeout` or `hedge` on a plain `fn`, a fallback of the wrong signature (for `fallback_on =
/// "failure"`, one whose last argument is neither a `CallFailure<E>` nor the function's error), `fallback_on` without
/// `fallback` or with another value than `"rejection"` or `"failure"`, an error type without
/// `From<breakerbox::Rejected>` and no fallback (or without `From<breakerbox::policy::TimedOut>` and a
/// `timeout`), a return type without `Classify` and no `classify`, and with `retries` a
/// receiver other than `&self`, a `&mut` argument or one that is not `Clone`, `timeout` or
/// `retries` without the runtime's `policy` feature, and `record` without its `recording`
/// feature. A rule across keys is reported at the key that breaks it, naming the other:
/// `min = 30: must be at most the count window (window = 20)`. On such an error the function
/// is still defined as written, so its callers show no errors of their own.
///
/// ```compile_fail
/// # use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};
/// # #[derive(Debug)] pub struct LibError;
/// # impl Classify for LibError { fn classify(&self) -> Outcome { Outcome::Failure } }
/// # impl From<Rejected> for LibError { fn from(_: Rejected) -> Self { LibError } }
/// #[circuit_breaker(rate = 1.5)] // error: rate = 1.5: must be in (0, 1]
/// async fn get_book() -> Result<(), LibError> {
///     Ok(())
/// }
/// ```
#[proc_macro_attribute]
pub fn circuit_breaker(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::circuit_breaker(attr.into(), item.into()).into()
}
