//! What a `#[circuit_breaker]` function can do with its breaker's call policy.
//!
//! The expansion's shape is fixed when the function compiles: a function whose attribute
//! writes no `timeout` has no `From<TimedOut>` to answer with, and one without `retries`
//! cannot run its body twice. Overrides may change those values where the attribute wrote
//! them, and are refused where it did not.

use crate::config::Field;
use crate::Config;

/// The policy keys the attribute of a function wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CallSite {
    pub(crate) timeout: bool,
    pub(crate) retries: bool,
}

impl CallSite {
    /// The call site of a function whose attribute declared `config`: a key left out keeps
    /// its default, no timeout and no retries.
    pub(crate) fn of(declared: &Config) -> Self {
        let policy = declared.policy();
        Self {
            timeout: policy.timeout().is_some(),
            retries: policy.retries() > 0,
        }
    }

    /// The first policy key `config` sets that this call site cannot follow, if any.
    #[cfg_attr(not(feature = "overrides"), allow(dead_code))]
    pub(crate) fn refuses(self, config: &Config) -> Option<Field> {
        let policy = config.policy();
        if policy.timeout().is_some() && !self.timeout {
            return Some(Field::Timeout);
        }
        if policy.retries() > 0 && !self.retries {
            return Some(Field::Retries);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_call_site_follows_only_the_policy_keys_its_attribute_wrote() {
        let plain = CallSite::of(&Config::default());
        let timed = Config::builder()
            .timeout(Duration::from_millis(800))
            .build()
            .unwrap();
        let retried = Config::builder().retries(2).build().unwrap();
        assert_eq!(plain.refuses(&Config::default()), None);
        assert_eq!(plain.refuses(&timed), Some(Field::Timeout));
        assert_eq!(plain.refuses(&retried), Some(Field::Retries));
        assert_eq!(CallSite::of(&timed).refuses(&timed), None);
        assert_eq!(CallSite::of(&timed).refuses(&retried), Some(Field::Retries));
        assert_eq!(CallSite::of(&retried).refuses(&retried), None);
    }
}
