//! The registry name of an annotated function: `name = "..."`, or what the compiler knows of
//! where the function is written, read from the `type_name` of an item nested in its body.

/// The registry name of an annotated function.
#[derive(Clone, Copy, Debug)]
pub enum Name {
    /// `name = "..."`, as written.
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
    pub(super) fn resolve(self) -> String {
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
fn function_name(nested: &str, module: &str, function: &str) -> String {
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
fn method_name(nested: &str, module: &str, method: &str) -> String {
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
            "breakerbox::declared::name::tests::a_method_of_this_crate_is_named_as_the_attribute_names_it::Probe::nested_path"
        );
        assert_eq!(
            method_name(Sound::nested_path(&vec![1u8]), here, "nested_path"),
            "breakerbox::declared::name::tests::<Vec<_> as Sound>::nested_path"
        );
    }
}
