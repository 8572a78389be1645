//! The attribute's keys: the configuration keys of `breakerbox-rules`' table, then the keys only
//! the attribute has.

pub(crate) use breakerbox_rules::{KEYS as CONFIG_KEYS, TIME_WINDOW};

/// Bound on keyed breakers when `max_keys` is not given.
pub(crate) const DEFAULT_MAX_KEYS: usize = 1024;

/// The keys only the attribute has, after the configuration keys in the docs.
pub(crate) const ATTRIBUTE_KEYS: &[&str] = &[
    "fallback",
    "fallback_on",
    "classify",
    "key",
    "max_keys",
    "record",
    "name",
    "crate",
];

/// Every key the attribute accepts, in the order the docs list them.
pub(crate) fn all() -> impl Iterator<Item = &'static str> {
    CONFIG_KEYS
        .iter()
        .map(|k| k.name)
        .chain(ATTRIBUTE_KEYS.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;
    use breakerbox_rules::ConfigKey;

    #[test]
    fn attribute_only_keys_are_no_configuration_keys() {
        for key in ATTRIBUTE_KEYS {
            assert!(ConfigKey::named(key).is_none(), "{key}");
        }
        assert_eq!(all().count(), CONFIG_KEYS.len() + ATTRIBUTE_KEYS.len());
    }
}
