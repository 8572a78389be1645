//! The breakers that `#[circuit_breaker]` functions declare, registered at boot.
//!
//! Each annotated function keeps its breaker (or keyed family) in a `static` of its own,
//! whose configuration is a constant the compiler computed from the attribute's keys, and
//! submits that static to a list gathered from every crate linked into the program
//! ([`inventory`]). The first access to [`registry()`](crate::registry()) registers every
//! static of the list, in source order (file, line, column), so a function's breaker is in
//! the registry, the metrics and the reach of overrides before anything calls it.
//!
//! `inventory` rather than `linkme`: both gather statics from any crate, including ones
//! nested in generic functions and in methods, and both keep those of a library crate linked
//! into the binary. `inventory` builds on every target with constructor sections (Linux,
//! Android, the BSDs, illumos, macOS, iOS, Windows, WebAssembly), at the cost of one list
//! push per function before `main`; `linkme` costs nothing at run time but refuses to compile
//! on targets it does not know, WebAssembly among them. On a target where nothing is
//! gathered, a static registers at its function's first call instead, as a fallback.

use std::sync::{Arc, OnceLock};

use crate::__private::Key;
use crate::call_site::CallSite;
use crate::keyed::Keyed;
use crate::{registry::Registry, Breaker, Config};

mod name;

pub use self::name::Name;

/// The registry every `#[circuit_breaker]` function registers its breaker in.
///
/// Its first access registers the breaker (or keyed family) of every `#[circuit_breaker]`
/// function linked into the program, called or not, each configured from its attribute's
/// keys: [`get`](Registry::get), [`list`](Registry::list), the metrics and overrides see
/// them before any traffic. Keep a library's functions in the program by using the library
/// (a crate nothing refers to is not linked: `use my_lib as _;` links it). The functions'
/// statics are gathered at link time by the `inventory` crate, on Linux, Android, the BSDs,
/// illumos, macOS, iOS, Windows and WebAssembly; on a target without constructor sections,
/// a function's breaker joins the registry at its first call instead.
///
/// ```
/// use std::sync::Arc;
/// use breakerbox::{registry, Breaker, Config, State};
///
/// let b = registry().register(Arc::new(Breaker::new("docs::inventory", Config::default())));
/// b.force_open();
/// let found = registry().get("docs::inventory").expect("registered above");
/// assert_eq!(found.state(), State::ForcedOpen);
/// assert!(registry().list().iter().any(|e| e.name() == "docs::inventory" && e.key().is_none()));
/// ```
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let registry = Registry::default();
        register_all(&registry);
        registry
    })
}

/// The static breaker of one annotated function.
#[derive(Debug)]
pub struct StaticBreaker {
    name: Name,
    config: Config,
    /// Calls to record from the first (`record = N`); 0 for none.
    record: usize,
    breaker: OnceLock<Arc<Breaker>>,
}

impl StaticBreaker {
    /// The breaker registered as `name`, configured with `config`.
    pub const fn new(name: Name, config: Config) -> Self {
        Self {
            name,
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

    /// The breaker, registered at boot.
    #[inline]
    pub fn get(&'static self) -> &'static Breaker {
        match self.breaker.get() {
            Some(breaker) => breaker,
            None => self.first_use(),
        }
    }

    /// Registers every declared breaker if none is yet, then this one if the list of
    /// declared ones lacked it.
    #[cold]
    fn first_use(&'static self) -> &'static Breaker {
        let registry = crate::registry();
        self.register(registry)
    }

    fn register(&'static self, registry: &Registry) -> &'static Breaker {
        self.breaker.get_or_init(|| {
            let breaker = Arc::new(Breaker::new(self.name.resolve(), self.config.clone()));
            #[cfg(feature = "recording")]
            if self.record != 0 {
                // The attribute bounds the capacity at expansion; a ring the allocator
                // refuses leaves the breaker unrecorded rather than its calls failed.
                if let Err(_e) = breaker.start_recording(self.record) {
                    #[cfg(feature = "tracing")]
                    tracing::warn!(breaker = breaker.name(), "{_e}");
                }
            }
            registry.declare_site(breaker.name(), CallSite::of(&self.config));
            let registered = registry.register(breaker);
            warn_if_differs(registered.name(), &registered.config(), &self.config);
            registered
        })
    }
}

/// The static family of a function annotated with `key = ...`.
#[derive(Debug)]
pub struct StaticKeyed {
    name: Name,
    config: Config,
    max_keys: usize,
    family: OnceLock<Arc<Keyed>>,
}

impl StaticKeyed {
    /// The family registered as `name`, its members configured with `config`, at most
    /// `max_keys` of them.
    pub const fn new(name: Name, config: Config, max_keys: usize) -> Self {
        Self {
            name,
            config,
            max_keys,
            family: OnceLock::new(),
        }
    }

    /// The breaker of `key` in the family, registered at boot.
    #[inline]
    pub fn breaker<Q: ?Sized + Key>(&'static self, key: &Q) -> Arc<Breaker> {
        let family = match self.family.get() {
            Some(family) => family,
            None => self.first_use(),
        };
        family.breaker(key)
    }

    #[cold]
    fn first_use(&'static self) -> &'static Keyed {
        let registry = crate::registry();
        self.register(registry)
    }

    fn register(&'static self, registry: &Registry) -> &'static Keyed {
        self.family.get_or_init(|| {
            let name = self.name.resolve();
            registry.declare_site(&name, CallSite::of(&self.config));
            let family = Arc::new(Keyed::new(
                Arc::from(name),
                self.config.clone(),
                self.max_keys,
            ));
            let registered = registry.register_keyed(family);
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
             the first one in source order (file, line) is used",
        );
    }
}

/// One annotated function's static, where the function is written.
#[derive(Debug)]
pub struct Declared {
    at: (&'static str, u32, u32),
    static_: Static,
}

#[derive(Debug)]
enum Static {
    Single(&'static StaticBreaker),
    Keyed(&'static StaticKeyed),
}

impl Declared {
    /// The breaker of the function written at `file:line:column`.
    pub const fn single(
        breaker: &'static StaticBreaker,
        file: &'static str,
        line: u32,
        column: u32,
    ) -> Self {
        Self {
            at: (file, line, column),
            static_: Static::Single(breaker),
        }
    }

    /// The keyed family of the function written at `file:line:column`.
    pub const fn keyed(
        family: &'static StaticKeyed,
        file: &'static str,
        line: u32,
        column: u32,
    ) -> Self {
        Self {
            at: (file, line, column),
            static_: Static::Keyed(family),
        }
    }

    fn register(&self, registry: &Registry) {
        match self.static_ {
            Static::Single(breaker) => {
                breaker.register(registry);
            }
            Static::Keyed(family) => {
                family.register(registry);
            }
        }
    }
}

inventory::collect!(Declared);

/// Registers in `registry` every static the program's annotated functions declared, in
/// source order, so that which of two functions sharing a name is first does not depend on
/// the linker.
pub(crate) fn register_all(registry: &Registry) {
    let mut declared: Vec<&Declared> = inventory::iter::<Declared>.into_iter().collect();
    declared.sort_by_key(|d| d.at);
    for d in declared {
        d.register(registry);
    }
}
