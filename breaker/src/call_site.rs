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

    /// The policy keys `config` sets that this call site cannot follow, in field order.
    #[cfg_attr(not(feature = "overrides"), allow(dead_code))]
    pub(crate) fn refuses(self, config: &Config) -> impl Iterator<Item = Field> {
        let policy = config.policy();
        let timeout = policy.timeout().is_some() && !self.timeout;
        let retries = policy.retries() > 0 && !self.retries;
        [(timeout, Field::Timeout), (retries, Field::Retries)]
            .into_iter()
            .filter_map(|(refused, field)| refused.then_some(field))
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
        let both = Config::builder()
            .timeout(Duration::from_millis(800))
            .retries(2)
            .build()
            .unwrap();
        let refused = |site: CallSite, config: &Config| site.refuses(config).collect::<Vec<_>>();
        assert_eq!(refused(plain, &Config::default()), []);
        assert_eq!(refused(plain, &timed), [Field::Timeout]);
        assert_eq!(refused(plain, &retried), [Field::Retries]);
        assert_eq!(refused(plain, &both), [Field::Timeout, Field::Retries]);
        assert_eq!(refused(CallSite::of(&timed), &timed), []);
        assert_eq!(refused(CallSite::of(&timed), &retried), [Field::Retries]);
        assert_eq!(refused(CallSite::of(&retried), &retried), []);
    }
}
