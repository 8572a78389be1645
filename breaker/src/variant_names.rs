//! The names of an enum's variants, written once: the list that makes both its `ALL` and its
//! `as_str`, so that a variant without a name fails to compile (the match is exhaustive) and
//! `ALL` cannot leave one out.

/// `variant_names!(Enum { Variant => "name", ... })` writes `Enum::ALL`, every variant in
/// the order given, and `Enum::as_str`, with the doc comments written before each.
macro_rules! variant_names {
    (
        $(#[$all_doc:meta])*
        all;
        $(#[$as_str_doc:meta])*
        as_str;
        $enum:ident { $($variant:ident => $name:literal,)+ }
    ) => {
        impl $enum {
            $(#[$all_doc])*
            pub const ALL: &'static [$enum] = &[$($enum::$variant),+];

            $(#[$as_str_doc])*
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)+
                }
            }
        }
    };
}

pub(crate) use variant_names;
