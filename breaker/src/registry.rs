//! Registries of named breakers, for metrics and operators: the process-wide one that
//! `#[circuit_breaker]` functions join, and any other an application makes.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::sync::process::RwLock;

use crate::call_site::CallSite;
use crate::keyed::Keyed;
use crate::{Breaker, Config};

mod born;
mod hooks;

pub(crate) use hooks::{Hooks, Watch};

/// Named breakers, and the keyed families of `#[circuit_breaker(key = ...)]` functions.
///
/// A name maps to one breaker, or to one family of breakers told apart by their key's
/// `Display` text. Registration never replaces: the first breaker registered under a name
/// stays.
///
/// Every registry is independent: its breakers, its families, the hooks that metrics and
/// overrides set on it. [`registry()`](crate::registry()) is the one `#[circuit_breaker]` functions and the
/// keyed tower layer join; a registry of your own holds the breakers you register in it.
///
/// ```
/// use std::sync::Arc;
/// use breakerbox::{registry, Breaker, Config, registry::Registry};
///
/// let own = Registry::default();
/// own.register(Arc::new(Breaker::new("docs::own", Config::default())));
/// assert!(own.get("docs::own").is_some());
/// assert!(registry().get("docs::own").is_none());
/// ```
pub struct Registry {
    single: RwLock<BTreeMap<Arc<str>, Arc<Breaker>>>,
    keyed: RwLock<BTreeMap<Arc<str>, Arc<Keyed>>>,
    hooks: Arc<Hooks>,
    /// What the `#[circuit_breaker]` function behind a name (a breaker's or a family's) can
    /// do with the call policy; names registered otherwise have none.
    sites: RwLock<BTreeMap<Arc<str>, CallSite>>,
}

impl Default for Registry {
    fn default() -> Self {
        Self {
            single: RwLock::default(),
            keyed: RwLock::default(),
            hooks: Arc::new(Hooks::with(born::parts())),
            sites: RwLock::default(),
        }
    }
}

impl Registry {
    /// Registers `breaker` under its name unless a breaker is registered under that name
    /// already; returns the one registered under the name. In [`registry()`](crate::registry()), the name of a
    /// `#[circuit_breaker]` function is taken from its first access: registering under it
    /// returns the function's breaker.
    pub fn register(&self, breaker: Arc<Breaker>) -> Arc<Breaker> {
        let registered = {
            let mut single = self.single.write();
            single
                .entry(Arc::from(breaker.name()))
                .or_insert(breaker.clone())
                .clone()
        };
        if Arc::ptr_eq(&registered, &breaker) {
            self.hooks.announce(registered.name(), &registered);
        }
        registered
    }

    /// The breaker registered under `name`.
    pub fn get(&self, name: &str) -> Option<Arc<Breaker>> {
        let single = self.single.read();
        single.get(name).cloned()
    }

    /// The breaker of the keyed family `name` whose key displays as `key`.
    ///
    /// ```
    /// use breakerbox::{circuit_breaker, registry, Classify, Outcome, Rejected};
    ///
    /// #[derive(Debug)]
    /// struct Down;
    /// impl Classify for Down {
    ///     fn classify(&self) -> Outcome {
    ///         Outcome::Failure
    ///     }
    /// }
    /// impl From<Rejected> for Down {
    ///     fn from(_: Rejected) -> Self {
    ///         Down
    ///     }
    /// }
    ///
    /// #[circuit_breaker(name = "docs::replica", key = host)]
    /// async fn ping(host: &str) -> Result<(), Down> {
    ///     Ok(())
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// ping("10.0.0.1:7000").await.unwrap();
    /// let b = registry().get_keyed("docs::replica", "10.0.0.1:7000").unwrap();
    /// assert_eq!(b.snapshot().calls, 1);
    /// assert!(registry().get_keyed("docs::replica", "10.0.0.2:7000").is_none());
    /// # });
    /// ```
    pub fn get_keyed(&self, name: &str, key: &str) -> Option<Arc<Breaker>> {
        let family = {
            let keyed = self.keyed.read();
            keyed.get(name).cloned()
        };
        family?.find_by_text(key)
    }

    /// Every breaker with its name and, for a keyed family, its key: single breakers first,
    /// each group sorted by name. A keyed family shows here by its members, each with its
    /// key, as calls create them; [`names`](Registry::names) has the family from the start.
    pub fn list(&self) -> Vec<Entry> {
        let mut out: Vec<Entry> = {
            let single = self.single.read();
            single
                .iter()
                .map(|(name, breaker)| Entry {
                    name: name.clone(),
                    breaker: breaker.clone(),
                })
                .collect()
        };
        for (name, family) in self.families() {
            let mut members = family.members();
            members.sort_by(|a, b| a.key().cmp(&b.key()));
            out.extend(members.into_iter().map(|breaker| Entry {
                name: name.clone(),
                breaker,
            }));
        }
        out
    }

    /// Every name the registry answers to, sorted: each single breaker's and each keyed
    /// family's. These are the names an overrides file may use; a `#[circuit_breaker(key =
    /// ...)]` function's family is here from the registry's first access, before its first
    /// key.
    ///
    /// ```
    /// use breakerbox::{circuit_breaker, registry, Classify, Outcome, Rejected};
    ///
    /// #[derive(Debug)]
    /// struct Down;
    /// impl Classify for Down {
    ///     fn classify(&self) -> Outcome {
    ///         Outcome::Failure
    ///     }
    /// }
    /// impl From<Rejected> for Down {
    ///     fn from(_: Rejected) -> Self {
    ///         Down
    ///     }
    /// }
    ///
    /// #[circuit_breaker(name = "docs::shard", key = shard, window = 20)]
    /// async fn read(shard: u32) -> Result<(), Down> {
    ///     Ok(())
    /// }
    ///
    /// // Never called: the family is registered, with no member yet.
    /// assert!(registry().names().iter().any(|n| n == "docs::shard"));
    /// assert!(registry().list().iter().all(|e| e.name() != "docs::shard"));
    /// assert_eq!(registry().family_config("docs::shard").unwrap().window(), breakerbox::config::Window::Count(20));
    /// ```
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = {
            let single = self.single.read();
            single.keys().map(|name| name.to_string()).collect()
        };
        {
            let keyed = self.keyed.read();
            names.extend(keyed.keys().map(|name| name.to_string()));
        }
        names.sort();
        names.dedup();
        names
    }

    /// The configuration the next member of the keyed family `name` is born with: its
    /// attribute's, or the last one overrides applied to the family.
    pub fn family_config(&self, name: &str) -> Option<crate::Config> {
        Some(self.family(name)?.config())
    }

    /// Takes the breaker registered under `name` out of the registry, and so out of the
    /// metrics and the reach of overrides; returns it. A later [`register`](Registry::register)
    /// under the name registers anew. Permits of the removed breaker still record into it.
    ///
    /// A `#[circuit_breaker]` function keeps the breaker it registered at boot;
    /// remove breakers you register yourself, and keys of a keyed family with
    /// [`remove_keyed`](Registry::remove_keyed).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breakerbox::{registry, Breaker, Config};
    ///
    /// let old = registry().register(Arc::new(Breaker::new("docs::retired", Config::default())));
    /// let removed = registry().remove("docs::retired").expect("registered above");
    /// assert!(Arc::ptr_eq(&removed, &old));
    /// assert!(registry().get("docs::retired").is_none());
    /// assert!(registry().remove("docs::retired").is_none());
    /// ```
    pub fn remove(&self, name: &str) -> Option<Arc<Breaker>> {
        let mut single = self.single.write();
        single.remove(name)
    }

    /// Takes the breaker of the keyed family `name` whose key displays as `key` out of the
    /// family (an instance gone offline): out of the registry and the metrics, and the next
    /// call with that key gets a new breaker, born with the family's configuration and
    /// action. Permits of the removed breaker still record into it, which no one reads.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breakerbox::{circuit_breaker, registry, Classify, Outcome, Rejected};
    ///
    /// #[derive(Debug)]
    /// struct Down;
    /// impl Classify for Down {
    ///     fn classify(&self) -> Outcome {
    ///         Outcome::Failure
    ///     }
    /// }
    /// impl From<Rejected> for Down {
    ///     fn from(_: Rejected) -> Self {
    ///         Down
    ///     }
    /// }
    ///
    /// #[circuit_breaker(name = "docs::instance", key = host)]
    /// async fn ping(host: &str) -> Result<(), Down> {
    ///     Ok(())
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// ping("10.0.0.1:7000").await.unwrap();
    /// let gone = registry().remove_keyed("docs::instance", "10.0.0.1:7000").unwrap();
    /// assert!(registry().get_keyed("docs::instance", "10.0.0.1:7000").is_none());
    ///
    /// ping("10.0.0.1:7000").await.unwrap(); // a new breaker for the address
    /// let fresh = registry().get_keyed("docs::instance", "10.0.0.1:7000").unwrap();
    /// assert!(!Arc::ptr_eq(&gone, &fresh));
    /// assert_eq!((gone.snapshot().calls, fresh.snapshot().calls), (1, 1));
    /// # });
    /// ```
    pub fn remove_keyed(&self, name: &str, key: &str) -> Option<Arc<Breaker>> {
        self.family(name)?.remove_by_text(key)
    }

    /// Registers a keyed family unless one has that name; returns the one registered. The
    /// family's members announce themselves to this registry's hooks as they are created.
    pub(crate) fn register_keyed(&self, family: Arc<Keyed>) -> Arc<Keyed> {
        let mut keyed = self.keyed.write();
        let registered = keyed.entry(family.name().clone()).or_insert(family).clone();
        registered.join(&self.hooks);
        registered
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let single = self.single.read().len();
        let keyed = self.keyed.read().len();
        f.debug_struct("Registry")
            .field("single", &single)
            .field("keyed_families", &keyed)
            .finish()
    }
}

/// One breaker of the [`Registry`]: its name, its key if it belongs to a keyed family, and
/// the breaker itself.
#[derive(Clone, Debug)]
pub struct Entry {
    name: Arc<str>,
    breaker: Arc<Breaker>,
}

impl Entry {
    /// The registry name (for a keyed breaker, the family's name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `Display` text of the key, for a keyed breaker.
    pub fn key(&self) -> Option<&str> {
        self.breaker.key()
    }

    /// The breaker.
    pub fn breaker(&self) -> &Arc<Breaker> {
        &self.breaker
    }
}

impl Registry {
    /// Calls `watcher` for every breaker that joins this registry from now on.
    #[cfg_attr(not(any(test, feature = "prometheus")), allow(dead_code))]
    pub(crate) fn watch(&self, watcher: impl Fn(&str, &Arc<Breaker>) + Send + Sync + 'static) {
        self.hooks.attach(hooks::OnJoin(watcher));
    }

    /// Calls `watcher` with every breaker of this registry that overrides (or
    /// [`Keyed::apply`]) reconfigure from now on, with its configuration before and after.
    #[cfg_attr(not(feature = "fleet"), allow(dead_code))]
    pub(crate) fn watch_reconfigured(
        &self,
        watcher: impl Fn(&Arc<Breaker>, &Config, &Config) + Send + Sync + 'static,
    ) {
        self.hooks.attach(hooks::OnReconfigure(watcher));
    }

    /// The hooks of this registry, for the overrides that reconfigure its breakers.
    #[cfg_attr(not(feature = "overrides"), allow(dead_code))]
    pub(crate) fn hooks(&self) -> &Hooks {
        &self.hooks
    }

    /// The state of the part of type `T` attached to this registry (the metrics' transition
    /// counts, the journal, what overrides applied), attached now if it was not.
    #[cfg_attr(
        not(any(feature = "overrides", feature = "admin", feature = "prometheus")),
        allow(dead_code)
    )]
    pub(crate) fn part<T: Watch + Default>(&self) -> Arc<T> {
        self.hooks.part()
    }

    /// Every keyed family with its name, sorted by name.
    pub(crate) fn families(&self) -> Vec<(Arc<str>, Arc<Keyed>)> {
        let keyed = self.keyed.read();
        keyed.iter().map(|(n, k)| (n.clone(), k.clone())).collect()
    }

    /// Notes what the `#[circuit_breaker]` function registered as `name` can do with the call
    /// policy: overrides refuse what it cannot.
    pub(crate) fn declare_site(&self, name: &str, site: CallSite) {
        let mut sites = self.sites.write();
        sites.entry(Arc::from(name)).or_insert(site);
    }

    /// What the `#[circuit_breaker]` function registered as `name` can do with the call policy;
    /// `None` for a name registered otherwise.
    #[cfg_attr(not(feature = "overrides"), allow(dead_code))]
    pub(crate) fn site(&self, name: &str) -> Option<CallSite> {
        let sites = self.sites.read();
        sites.get(name).copied()
    }

    /// The keyed family registered under `name`.
    pub(crate) fn family(&self, name: &str) -> Option<Arc<Keyed>> {
        let keyed = self.keyed.read();
        keyed.get(name).cloned()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::Config;

    /// A registry with a watcher counting the breakers that join it.
    fn watched() -> (Registry, Arc<AtomicUsize>) {
        let registry = Registry::default();
        let joined = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&joined);
        registry.watch(move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        (registry, joined)
    }

    fn family(name: &str) -> Arc<Keyed> {
        Arc::new(Keyed::new(Arc::from(name), Config::default(), 4))
    }

    #[test]
    fn hooks_of_one_registry_never_fire_for_another() {
        let (a, joined_a) = watched();
        let (b, joined_b) = watched();

        b.register(Arc::new(Breaker::new("b::single", Config::default())));
        b.register_keyed(family("b::family")).breaker("k1");
        assert_eq!(joined_a.load(Ordering::SeqCst), 0);
        assert_eq!(joined_b.load(Ordering::SeqCst), 2);

        a.register(Arc::new(Breaker::new("a::single", Config::default())));
        a.register_keyed(family("a::family")).breaker("k1");
        assert_eq!(joined_a.load(Ordering::SeqCst), 2);
        assert_eq!(joined_b.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_breaker_joins_once_whatever_registers_it_again() {
        let (registry, joined) = watched();
        let first = registry.register(Arc::new(Breaker::new("once", Config::default())));
        let again = registry.register(Arc::new(Breaker::new("once", Config::default())));
        assert!(Arc::ptr_eq(&first, &again));
        let members = registry.register_keyed(family("once::family"));
        members.breaker("k1");
        members.breaker("k1");
        registry
            .register_keyed(family("once::family"))
            .breaker("k2");
        assert_eq!(joined.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_second_registry_holds_none_of_the_global_ones_breakers() {
        crate::registry().register(Arc::new(Breaker::new("global::only", Config::default())));
        let own = Registry::default();
        assert!(own.get("global::only").is_none());
        assert!(own.list().is_empty());
    }
}
