//! What the `#[circuit_breaker]` expansion calls. Not a public API: it changes without notice.

use std::borrow::Borrow;
use std::fmt::Display;
use std::hash::Hash;
use std::sync::{Arc, OnceLock};

use crate::call_site::CallSite;

pub use crate::config::{ConfigBuilder, ConfigKey, Field, KeyDefault, KEYS};
pub use crate::keyed::{FamilyAction, Keyed};
#[cfg(feature = "policy")]
pub use crate::policy::{classified, plain, Classified, Judge, Plain};
pub use crate::{Breaker, CallError, Classify, Config, Outcome, Permit, Rejected, TimedOut};

/// Fails compilation with the rule `field` breaks, when the attribute's `const` evaluates it.
pub const fn check(builder: ConfigBuilder, field: Field) {
    // A broken window or `probes` is reported at its key; rules measured against it would
    // only repeat it.
    let measured_by = match field {
        Field::Buckets | Field::MinCalls => Some(Field::Window),
        Field::Successes => Some(Field::Probes),
        _ => None,
    };
    if let Some(measure) = measured_by {
        if builder.check(measure).is_err() {
            return;
        }
    }
    if let Err(e) = builder.check(field) {
        panic!("{}", e.rule());
    }
}

/// The rules of `record`, which only the attribute has: at least one call, and the
/// `recording` feature that keeps them.
pub const fn check_record(capacity: usize) {
    if capacity == 0 {
        panic!("record must be at least 1 call");
    }
    if cfg!(not(feature = "recording")) {
        panic!("`record` needs the `recording` feature of breaker: enable it or remove the key");
    }
}

/// The rule of `max_keys`, which only the attribute has.
pub const fn check_max_keys(max_keys: usize) {
    if max_keys == 0 {
        panic!("max_keys must be at least 1");
    }
}

/// The configuration of a builder whose every field was checked by [`check`]; `checked`
/// names the fields the attribute checked.
///
/// They must be every field, in `Field::ALL`'s order: a field the attribute does not check
/// fails compilation here, rather than ship a configuration no rule looked at. Then an
/// invalid builder yields the defaults instead of a second compile error: its broken rule
/// is already reported, at the key that broke it.
pub const fn config(builder: ConfigBuilder, checked: &[Field]) -> Config {
    if !checks_every_field(checked) {
        panic!("#[circuit_breaker] must check every configuration field: breaker-macros and breaker differ");
    }
    match builder.build() {
        Ok(config) => config,
        Err(_) => match ConfigBuilder::new().build() {
            Ok(config) => config,
            Err(_) => panic!("the default configuration is valid"),
        },
    }
}

/// Whether `checked` is `Field::ALL`.
const fn checks_every_field(checked: &[Field]) -> bool {
    if checked.len() != Field::ALL.len() {
        return false;
    }
    let mut i = 0;
    while i < checked.len() {
        if checked[i] as usize != Field::ALL[i] as usize {
            return false;
        }
        i += 1;
    }
    true
}

/// Fails compilation at the `timeout` or `retries` key of an attribute when this crate was
/// built without the `policy` feature, which runs them.
#[cfg(not(feature = "policy"))]
pub const fn needs_policy_feature() {
    panic!(
        "`timeout` and `retries` need the `policy` feature of breaker: \
         enable it (it is on by default) or remove the key"
    );
}

/// With the `policy` feature, `timeout` and `retries` are run: nothing to refuse.
#[cfg(feature = "policy")]
pub const fn needs_policy_feature() {}

/// The registry name of a method: its type's path without generic arguments, then the method.
pub fn method_name(self_type: &str, method: &str) -> String {
    let path = self_type.trim_start_matches(['&', '*']);
    let path = path.split('<').next().unwrap_or(path);
    format!("{path}::{method}")
}

/// The static breaker of one annotated function, registered on first use.
#[derive(Debug)]
pub struct StaticBreaker {
    config: Config,
    /// Calls to record from the first (`record = N`); 0 for none.
    record: usize,
    breaker: OnceLock<Arc<Breaker>>,
}

impl StaticBreaker {
    pub const fn new(config: Config) -> Self {
        Self {
            config,
            record: 0,
            breaker: OnceLock::new(),
        }
    }

    /// The breaker records its last `capacity` calls, from its first.
    pub const fn recording(mut self, capacity: usize) -> Self {
        self.record = capacity;
        self
    }

    /// The breaker, registered under `name()` on the first call.
    #[inline]
    pub fn get(&'static self, name: impl FnOnce() -> String) -> &'static Breaker {
        match self.breaker.get() {
            Some(breaker) => breaker,
            None => self.register(name()),
        }
    }

    #[cold]
    fn register(&'static self, name: String) -> &'static Breaker {
        self.breaker.get_or_init(|| {
            let breaker = Arc::new(Breaker::new(name, self.config.clone()));
            #[cfg(feature = "recording")]
            if self.record != 0 {
                breaker.record(self.record);
            }
            crate::registry().declare_site(breaker.name(), CallSite::of(&self.config));
            let registered = crate::registry().register(breaker);
            warn_if_differs(registered.name(), &registered.config(), &self.config);
            registered
        })
    }
}

/// The static family of a function annotated with `key = ...`, registered on first use.
#[derive(Debug)]
pub struct StaticKeyed {
    config: Config,
    max_keys: usize,
    family: OnceLock<Arc<Keyed>>,
}

impl StaticKeyed {
    pub const fn new(config: Config, max_keys: usize) -> Self {
        Self {
            config,
            max_keys,
            family: OnceLock::new(),
        }
    }

    /// The breaker of `key` in the family registered under `name()`.
    #[inline]
    pub fn breaker<Q: ?Sized + Key>(
        &'static self,
        name: impl FnOnce() -> String,
        key: &Q,
    ) -> Arc<Breaker> {
        let family = match self.family.get() {
            Some(family) => family,
            None => self.register(name()),
        };
        family.breaker(key)
    }

    #[cold]
    fn register(&'static self, name: String) -> &'static Keyed {
        self.family.get_or_init(|| {
            crate::registry().declare_site(&name, CallSite::of(&self.config));
            let family = Arc::new(Keyed::new(
                Arc::from(name),
                self.config.clone(),
                self.max_keys,
            ));
            let registered = crate::registry().register_keyed(family);
            warn_if_differs(registered.name(), registered.declared(), &self.config);
            registered
        })
    }
}

#[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
fn warn_if_differs(name: &str, registered: &Config, ours: &Config) {
    #[cfg(feature = "tracing")]
    if registered != ours {
        tracing::warn!(
            breaker = name,
            ?registered,
            ignored = ?ours,
            "two #[circuit_breaker] functions share a name with different configurations; \
             the first one registered is used",
        );
    }
}

/// A key of a keyed breaker: hashable, comparable, printable, owned or borrowed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the key of a breaker",
    label = "used as `key = ...` here",
    note = "a key is `Hash + Eq + Display`, owned or borrowed (`ToOwned`), and its owned form \
            is `Send + Sync + 'static`"
)]
pub trait Key: Hash + Eq + Display + ToOwned<Owned = <Self as Key>::Stored> {
    type Stored: Borrow<Self> + Send + Sync + 'static;
}

impl<Q> Key for Q
where
    Q: ?Sized + Hash + Eq + Display + ToOwned,
    Q::Owned: Send + Sync + 'static,
{
    type Stored = Q::Owned;
}

/// The key expression, borrowed. `(&KeyArg(&expr)).__breaker_key()` sees through one
/// reference (`key = host` with `host: &str` keys by `str`) and takes anything else as is.
#[derive(Debug)]
pub struct KeyArg<'a, T: ?Sized>(pub &'a T);

/// Chosen first by method resolution: the key expression is a reference.
pub trait BorrowedKey {
    type Target: ?Sized;
    fn __breaker_key(&self) -> &Self::Target;
}

impl<Q: ?Sized> BorrowedKey for KeyArg<'_, &Q> {
    type Target = Q;
    #[inline]
    fn __breaker_key(&self) -> &Q {
        self.0
    }
}

/// Chosen otherwise: the key expression is a value.
pub trait OwnedKey {
    type Target: ?Sized;
    fn __breaker_key(&self) -> &Self::Target;
}

impl<T: ?Sized> OwnedKey for &KeyArg<'_, T> {
    type Target = T;
    #[inline]
    fn __breaker_key(&self) -> &T {
        self.0
    }
}

/// The value returned for a rejected call when there is no fallback.
#[diagnostic::on_unimplemented(
    message = "a rejected call cannot be returned as `{Self}`",
    label = "this return type cannot carry `breaker::Rejected`",
    note = "return `Result<T, E>` and add `impl From<breaker::Rejected> for E`, \
            or pass `fallback = path::to::async_fn` to `#[circuit_breaker]`"
)]
pub trait FromRejected {
    fn from_rejected(rejected: Rejected) -> Self;
}

// Not recommended, so that a missing `From<Rejected>` is reported with the message above
// rather than as a bare unsatisfied bound of this impl.
#[diagnostic::do_not_recommend]
impl<T, E: From<Rejected>> FromRejected for Result<T, E> {
    #[inline]
    fn from_rejected(rejected: Rejected) -> Self {
        Err(E::from(rejected))
    }
}

/// A call with `retries`: every attempt asks `breaker`, under its current policy (see
/// [`Breaker::run_with`]).
#[cfg(feature = "policy")]
#[inline]
pub async fn run<F, Fut, J>(
    breaker: &Breaker,
    attempt: F,
    judge: J,
) -> Result<Fut::Output, CallError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future,
    J: Judge<Fut::Output>,
{
    breaker.run_judged(attempt, judge).await
}

/// A call with `retries` and no `timeout`: as [`run`], with no timer, whatever the policy
/// (a breaker shared by name with a timed function) says.
#[cfg(feature = "policy")]
#[inline]
pub async fn run_untimed<F, Fut, J>(
    breaker: &Breaker,
    attempt: F,
    judge: J,
) -> Result<Fut::Output, Rejected>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future,
    J: Judge<Fut::Output>,
{
    breaker.run_untimed(attempt, judge).await
}

/// A call with `timeout` and no `retries`: one attempt, the body's future itself.
#[cfg(feature = "policy")]
#[inline]
pub async fn run_once<Fut, J>(
    breaker: &Breaker,
    future: Fut,
    judge: J,
) -> Result<Fut::Output, CallError>
where
    Fut: std::future::Future,
    J: Judge<Fut::Output>,
{
    breaker.run_once(future, judge).await
}

/// The value returned for an attempt that timed out.
#[diagnostic::on_unimplemented(
    message = "a timed-out call cannot be returned as `{Self}`: with `timeout`, its error type needs `From<breaker::TimedOut>`",
    label = "this return type cannot carry `breaker::TimedOut`",
    note = "return `Result<T, E>` and add `impl From<breaker::TimedOut> for E`"
)]
pub trait FromTimedOut {
    fn from_timed_out(timed_out: TimedOut) -> Self;
}

// Not recommended, as `FromRejected`'s impl: a missing `From<TimedOut>` is reported with the
// message above.
#[diagnostic::do_not_recommend]
impl<T, E: From<TimedOut>> FromTimedOut for Result<T, E> {
    #[inline]
    fn from_timed_out(timed_out: TimedOut) -> Self {
        Err(E::from(timed_out))
    }
}

/// An argument given to each attempt of a retried function anew.
#[diagnostic::on_unimplemented(
    message = "with `retries`, `{Self}` is passed to each attempt anew: it must be `Clone` (or `Copy`, or a reference)",
    label = "this argument is not `Clone`",
    note = "take the argument by reference, or implement `Clone` for it"
)]
pub trait Reuse {
    fn reuse(&self) -> Self;
}

#[diagnostic::do_not_recommend]
impl<T: Clone> Reuse for T {
    #[inline]
    fn reuse(&self) -> Self {
        self.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configuration_is_only_made_once_every_field_was_checked() {
        assert!(checks_every_field(&Field::ALL));
        assert!(!checks_every_field(&Field::ALL[1..]));
        let mut swapped = Field::ALL;
        swapped.swap(0, 1);
        assert!(!checks_every_field(&swapped));
        let forgot = std::panic::catch_unwind(|| config(ConfigBuilder::new(), &Field::ALL[..13]));
        assert!(forgot.is_err());
        assert_eq!(config(ConfigBuilder::new(), &Field::ALL), Config::default());
    }

    #[test]
    fn method_names_drop_generic_arguments_and_references() {
        assert_eq!(
            method_name("app::Client<alloc::string::String>", "get"),
            "app::Client::get"
        );
        assert_eq!(method_name("&app::Client", "get"), "app::Client::get");
    }

    #[test]
    fn a_timeout_becomes_the_error_of_a_result() {
        let t = TimedOut::new("libraryd", std::time::Duration::from_millis(800));
        let out: Result<u32, CallError> = FromTimedOut::from_timed_out(t.clone());
        assert_eq!(out.unwrap_err().timed_out(), Some(&t));
    }

    #[test]
    fn reused_arguments_are_clones() {
        let isbn = String::from("978-1");
        let again = Reuse::reuse(&isbn);
        assert_eq!(again, isbn);
        let by_ref: &str = "978-2";
        let again: &str = Reuse::reuse(&by_ref);
        assert!(std::ptr::eq(again, by_ref));
    }
}
