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
use crate::{Breaker, Config, Registry};

/// The registry name of an annotated function.
#[derive(Clone, Copy, Debug)]
pub enum Name {
    /// `name = "..."`, or a function's `module_path!()` and name.
    Fixed(&'static str),
    /// A method: its `impl` block and the method. The block's type and trait are only known
    /// to the compiler: `path_of` gives the `type_name` of an item nested in the method's
    /// body, which carries them, e.g. `<app::Store as app::Primary>::get::{{closure}}::f`.
    Method {
        /// The `type_name` of the item nested in the method's body.
        path_of: fn() -> &'static str,
        /// The `module_path!()` of the `impl` block.
        module: &'static str,
        /// The method's name.
        method: &'static str,
    },
    /// A function without a receiver: free, or associated with a type. Only the compiler
    /// knows which: `path_of` gives the `type_name` of an item nested in its body, which
    /// names a trait impl the function is in.
    Function {
        /// The `type_name` of the item nested in the function's body.
        path_of: fn() -> &'static str,
        /// The `module_path!()` of the function.
        module: &'static str,
        /// The function's name.
        function: &'static str,
    },
}

impl Name {
    fn resolve(self) -> String {
        match self {
            Name::Fixed(name) => name.to_owned(),
            Name::Method {
                path_of,
                module,
                method,
            } => method_name(path_of(), module, method),
            Name::Function {
                path_of,
                module,
                function,
            } => function_name(path_of(), module, function),
        }
    }
}

/// The registry name of `function`, written in `module` without a receiver, from the path
/// of an item nested in its body: as a trait's method if a trait impl holds it
/// (`module::<Type as Trait>::function`), else `module::function`. An inherent associated
/// function looks like a function nested in another, so it keeps the function's name.
pub(crate) fn function_name(nested: &str, module: &str, function: &str) -> String {
    let segments = enclosing(nested, function);
    match segments.last().and_then(|last| impl_block(last)) {
        Some(Block::Trait { self_ty, trait_ }) => trait_name(module, self_ty, trait_, function),
        _ => format!("{module}::{function}"),
    }
}

/// The registry name of `method` of an `impl` block written in `module`, from the path of
/// an item nested in its body. A trait's method is `module::<Type as Trait>::method`, both
/// as the compiler writes them but for each path kept to its last segment, so that two
/// impls on one type, and blanket impls in two modules, have a name each. An inherent
/// method is its type's path, without generic arguments or references, then the method.
pub(crate) fn method_name(nested: &str, module: &str, method: &str) -> String {
    let segments = enclosing(nested, method);
    let owner = match segments.last().and_then(|last| impl_block(last)) {
        Some(Block::Trait { self_ty, trait_ }) => {
            return trait_name(module, self_ty, trait_, method);
        }
        Some(Block::Inherent(self_ty)) => self_ty.to_owned(),
        None => segments.join("::"),
    };
    let owner = owner.trim_start_matches(['&', '*']);
    let owner = owner
        .strip_prefix("mut ")
        .or_else(|| owner.strip_prefix("const "))
        .unwrap_or(owner);
    let owner = owner.split('<').next().unwrap_or(owner);
    format!("{owner}::{method}")
}

/// The segments of the path of what holds `function`, from the path of an item nested in
/// its body.
fn enclosing<'a>(nested: &'a str, function: &str) -> Vec<&'a str> {
    let mut segments = segments(nested);
    segments.pop(); // the nested item
    while segments.last().is_some_and(|s| s.starts_with("{{")) {
        segments.pop(); // the body of an `async fn`, a closure
    }
    if segments.last() == Some(&function) {
        segments.pop();
    }
    segments
}

/// `module::<Type as Trait>::function`, each path in the type and the trait kept to its
/// last segment.
fn trait_name(module: &str, self_ty: &str, trait_: &str, function: &str) -> String {
    let (self_ty, trait_) = (last_segments(self_ty), last_segments(trait_));
    format!("{module}::<{self_ty} as {trait_}>::{function}")
}

/// What an `impl` path segment names.
enum Block<'a> {
    Trait { self_ty: &'a str, trait_: &'a str },
    Inherent(&'a str),
}

/// The `impl` block a path segment names, `<impl T for X>`, `<impl X>` or `<X as T>`; `None`
/// for any other segment.
fn impl_block(segment: &str) -> Option<Block<'_>> {
    let segment = segment.strip_prefix('<')?.strip_suffix('>')?;
    let (rest, between) = match segment.strip_prefix("impl ") {
        Some(rest) => (rest, " for "),
        None => (segment, " as "),
    };
    Some(match find_outside_brackets(rest, between) {
        Some(at) if between == " for " => Block::Trait {
            self_ty: &rest[at + between.len()..],
            trait_: &rest[..at],
        },
        Some(at) => Block::Trait {
            self_ty: &rest[..at],
            trait_: &rest[at + between.len()..],
        },
        None => Block::Inherent(rest),
    })
}

/// `ty` with each path in it kept to its last segment: `alloc::vec::Vec<app::Row>` is
/// `Vec<Row>`.
fn last_segments(ty: &str) -> String {
    let mut out = String::with_capacity(ty.len());
    let mut path_start = 0;
    let mut in_ident = false;
    let mut after_colons = false;
    let mut rest = ty;
    while let Some(c) = rest.chars().next() {
        if in_ident && rest.starts_with("::") {
            out.truncate(path_start);
            (in_ident, after_colons) = (false, true);
            rest = &rest[2..];
            continue;
        }
        let ident = c.is_alphanumeric() || c == '_';
        if ident && !in_ident && !after_colons {
            path_start = out.len();
        }
        (in_ident, after_colons) = (ident, false);
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// `path` split at the `::` outside brackets.
fn segments(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while let Some(at) = find_outside_brackets(&path[start..], "::") {
        out.push(&path[start..start + at]);
        start += at + 2;
    }
    out.push(&path[start..]);
    out
}

/// Where `needle` first occurs in `text` outside `<>`, `()` and `[]` (`->` opens nothing).
fn find_outside_brackets(text: &str, needle: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'<' | b'(' | b'[' => depth += 1,
            b'>' if i > 0 && bytes[i - 1] == b'-' => {}
            b'>' | b')' | b']' => depth = depth.saturating_sub(1),
            _ if depth == 0 && text[i..].starts_with(needle) => return Some(i),
            _ => {}
        }
    }
    None
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
                if let Err(_e) = breaker.record(self.record) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inherent_method_is_named_by_the_type_of_its_impl_block() {
        let cases = [
            (
                "app::<impl app::model::Plain>::get::{{closure}}::f",
                "app::model::Plain::get",
            ),
            ("app::<impl app::Client<_>>::get::f", "app::Client::get"),
            ("app::Plain::get::{{closure}}::f", "app::Plain::get"),
            ("app::Client<_>::get::{{closure}}::f", "app::Client::get"),
        ];
        for (nested, name) in cases {
            assert_eq!(method_name(nested, "app", "get"), name, "{nested}");
        }
    }

    #[test]
    fn a_trait_method_is_named_by_the_module_type_and_trait_of_its_impl_block() {
        let cases = [
            (
                "<app::db::Store as app::db::Primary>::get::{{closure}}::f",
                "app::db::<Store as Primary>::get",
            ),
            (
                "<app::db::Store as app::db::Replica>::get::{{closure}}::f",
                "app::db::<Store as Replica>::get",
            ),
            (
                "app::db::<impl app::db::Primary for app::db::Store>::get::f",
                "app::db::<Store as Primary>::get",
            ),
            (
                "app::db::<impl app::Api for &app::Client<_>>::get::{{closure}}::f",
                "app::db::<&Client<_> as Api>::get",
            ),
            (
                "<&mut app::Plain as app::Api>::get::f",
                "app::db::<&mut Plain as Api>::get",
            ),
            (
                "<app::Wrap<fn(app::Row) -> u8> as app::Api>::get::f",
                "app::db::<Wrap<fn(Row) -> u8> as Api>::get",
            ),
            (
                "<app::db::Store as app::Conv<alloc::vec::Vec<u16>>>::get::f",
                "app::db::<Store as Conv<Vec<u16>>>::get",
            ),
            ("<_ as app::net::Ping>::get::f", "app::db::<_ as Ping>::get"),
            ("<[_] as app::Ping>::get::f", "app::db::<[_] as Ping>::get"),
            (
                "<(dyn app::Source + core::marker::Send) as app::Ping>::get::f",
                "app::db::<(dyn Source + Send) as Ping>::get",
            ),
        ];
        for (nested, name) in cases {
            assert_eq!(method_name(nested, "app::db", "get"), name, "{nested}");
        }
    }

    #[test]
    fn a_function_without_a_receiver_is_named_by_its_module_unless_a_trait_impl_holds_it() {
        let cases = [
            ("app::db::connect::{{closure}}::f", "app::db::connect"),
            ("app::db::outer::connect::f", "app::db::connect"),
            (
                "app::db::Store::connect::{{closure}}::f",
                "app::db::connect",
            ),
            (
                "app::db::<impl app::db::Store>::connect::f",
                "app::db::connect",
            ),
            (
                "<app::db::Store as app::db::Dial>::connect::{{closure}}::f",
                "app::db::<Store as Dial>::connect",
            ),
            (
                "app::db::<impl app::db::Dial for app::db::Shelf<_>>::connect::f",
                "app::db::<Shelf<_> as Dial>::connect",
            ),
            (
                "<app::db::Store as app::db::Dial>::get::connect::f",
                "app::db::connect",
            ),
        ];
        for (nested, name) in cases {
            assert_eq!(
                function_name(nested, "app::db", "connect"),
                name,
                "{nested}"
            );
        }
    }

    #[test]
    fn a_method_of_this_crate_is_named_as_the_attribute_names_it() {
        struct Probe;
        impl Probe {
            fn nested_path(&self) -> &'static str {
                fn f() {}
                std::any::type_name_of_val(&f)
            }
        }
        trait Sound {
            fn nested_path(&self) -> &'static str;
        }
        impl<T> Sound for Vec<T> {
            fn nested_path(&self) -> &'static str {
                fn f() {}
                std::any::type_name_of_val(&f)
            }
        }
        let here = module_path!();
        assert_eq!(
            method_name(Probe.nested_path(), here, "nested_path"),
            "breakerbox::declared::tests::a_method_of_this_crate_is_named_as_the_attribute_names_it::Probe::nested_path"
        );
        assert_eq!(
            method_name(Sound::nested_path(&vec![1u8]), here, "nested_path"),
            "breakerbox::declared::tests::<Vec<_> as Sound>::nested_path"
        );
    }
}
