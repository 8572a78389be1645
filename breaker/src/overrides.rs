//! Operator overrides: reconfigure, force open, disable or reset running breakers by name,
//! from a TOML file, without recompiling.
//!
//! Each table is a breaker's registry name; its keys are the `#[circuit_breaker]` keys
//! (`window`, `buckets`, `min`, `rate`, `slow`, `slow_rate`, `open`, `probes`, `backoff`,
//! `open_max`, `ramp`, `ramp_step`, `ramp_guard`, `pushback_max`, ..., durations as humantime
//! strings) and an
//! optional `action` (`"force_open"`, `"disable"` or `"reset"`), or else an `open_for`, a
//! manual open period started when the file is applied ([`Breaker::open_for`]: OPEN for
//! that long, then HALF_OPEN as after any OPEN). Unwritten keys keep the breaker's current
//! value. A keyed family's name reaches every member, and the members created later (but
//! `reset` and `open_for`, which reach the present members only).
//!
//! ```toml
//! ["app::get_book"]
//! rate = 0.25
//! open = "30s"
//!
//! ["app::replica"]   # a keyed family
//! action = "force_open"
//!
//! ["app::stock"]     # the stock service's maintenance window
//! open_for = "10m"
//! ```
//!
//! [`Registry::apply`] checks every override first, against the breakers registered now and
//! with the rules of [`ConfigBuilder::build`](crate::config::ConfigBuilder::build); only if all pass
//! does it change anything, so a bad file leaves the running breakers as they were. Errors
//! name the file, the line and the key, one line for each problem found, every broken rule
//! of a table among them:
//! `overrides.toml:3: breaker "app::get_book": rate must be in (0, 1], got 1.5`.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use breakerbox::overrides::Overrides;
//! use breakerbox::{registry, Breaker, Config, State};
//!
//! let b = registry().register(Arc::new(Breaker::new("docs::get_book", Config::default())));
//! let overrides: Overrides = r#"
//!     ["docs::get_book"]
//!     rate = 0.25
//!     open = "30s"
//! "#.parse()?;
//! registry().apply(&overrides)?;
//! assert_eq!(b.config().failure_rate(), 0.25);
//! assert_eq!(b.config().open_for(), Duration::from_secs(30));
//!
//! let bad: Overrides = "[\"docs::get_book\"]\nrate = 1.5\naction = \"force_open\"\n".parse()?;
//! let err = registry().apply(&bad).unwrap_err();
//! assert_eq!(err.to_string(), "(string):2: breaker \"docs::get_book\": rate must be in (0, 1], got 1.5");
//! assert_eq!((b.config().failure_rate(), b.state()), (0.25, State::Closed)); // untouched
//!
//! let worse: Overrides = "[\"docs::get_book\"]\nrate = 1.5\nmin = 30\n".parse()?;
//! assert_eq!(
//!     registry().apply(&worse).unwrap_err().to_string(),
//!     "(string):2: breaker \"docs::get_book\": rate must be in (0, 1], got 1.5\n\
//!      (string):3: breaker \"docs::get_book\": min must be at most the count window, got 30 with a window of 20"
//! );
//! # Ok::<(), breakerbox::overrides::OverridesError>(())
//! ```

mod parse;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use crate::config::ConfigKey;
use crate::keyed::Keyed;
use crate::sync::process::Mutex;
use crate::{registry::Registry, Breaker, Config};

use self::parse::Override;

/// The configuration keys an override may set: the names of `#[circuit_breaker]`'s keys.
///
/// ```
/// assert!(breakerbox::overrides::CONFIG_KEYS.contains(&"rate"));
/// ```
pub const CONFIG_KEYS: [&str; crate::config::KEYS.len()] = crate::config::key_names();

/// Overrides of breakers by name, loaded from TOML; apply them with [`Registry::apply`].
///
/// ```
/// use breakerbox::overrides::Overrides;
///
/// let overrides: Overrides = "[\"app::get_book\"]\naction = \"disable\"\n".parse()?;
/// assert_eq!(overrides.names().collect::<Vec<_>>(), ["app::get_book"]);
/// # Ok::<(), breakerbox::overrides::OverridesError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Overrides {
    source: Arc<str>,
    entries: Vec<Override>,
}

impl Overrides {
    /// Reads and parses the TOML file at `path`; errors name the file as `path` shows.
    ///
    /// ```
    /// use breakerbox::overrides::Overrides;
    ///
    /// let err = Overrides::from_path("no/such/overrides.toml").unwrap_err();
    /// assert!(err.to_string().starts_with("no/such/overrides.toml: cannot read the file: "));
    /// ```
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, OverridesError> {
        let path = path.as_ref();
        let source: Arc<str> = Arc::from(path.display().to_string());
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(source, &text),
            Err(e) => Err(OverridesError::one(Problem {
                source,
                line: None,
                message: format!("cannot read the file: {e}"),
            })),
        }
    }

    /// Parses `text`; errors name its source as `name` (a file name, say).
    ///
    /// ```
    /// use breakerbox::overrides::Overrides;
    ///
    /// let err = Overrides::from_toml("ops.toml", "[\"app::get_book\"]\nratee = 0.5\n").unwrap_err();
    /// assert!(err.to_string().starts_with("ops.toml:2: unknown field `ratee`"));
    /// ```
    pub fn from_toml(name: &str, text: &str) -> Result<Self, OverridesError> {
        Self::parse(Arc::from(name), text)
    }

    fn parse(source: Arc<str>, text: &str) -> Result<Self, OverridesError> {
        match parse::entries(text) {
            Ok(entries) => Ok(Self { source, entries }),
            Err(found) => Err(OverridesError {
                problems: found
                    .into_iter()
                    .map(|(line, message)| Problem {
                        source: source.clone(),
                        line,
                        message,
                    })
                    .collect(),
            }),
        }
    }

    /// Overrides holding only `action` on the breaker or keyed family `name`, as a file's
    /// table with only `action` or `open_for` would; problems name `source` when applied.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use breakerbox::clock::ManualClock;
    /// use breakerbox::overrides::{Action, Overrides};
    /// use breakerbox::{registry, Breaker, Config};
    ///
    /// let b = Breaker::with_clock("docs::shelf", Config::default(), ManualClock::new());
    /// let b = registry().register(Arc::new(b));
    /// let pause = Overrides::action("pager", "docs::shelf", Action::OpenFor(Duration::from_secs(30)));
    /// registry().apply(&pause)?;
    /// assert_eq!(b.try_acquire().unwrap_err().retry_after(), Some(Duration::from_secs(30)));
    ///
    /// let typo = Overrides::action("pager", "docs::shelv", Action::Reset);
    /// let err = registry().apply(&typo).unwrap_err();
    /// assert_eq!(err.to_string(), "pager:1: no breaker is registered as \"docs::shelv\"; did you mean \"docs::shelf\"?");
    /// # Ok::<(), breakerbox::overrides::OverridesError>(())
    /// ```
    pub fn action(source: &str, name: &str, action: Action) -> Self {
        Self {
            source: Arc::from(source),
            entries: vec![Override::manual(name, action)],
        }
    }

    /// The breaker names the overrides are for, in file order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.name.as_str())
    }
}

/// Parses TOML text whose errors name their source `(string)`.
impl FromStr for Overrides {
    type Err = OverridesError;

    fn from_str(text: &str) -> Result<Self, OverridesError> {
        Self::parse(Arc::from("(string)"), text)
    }
}

pub use crate::action::Action;

/// Overrides that could not be read, parsed or applied: every problem found, each with its
/// file and line.
///
/// ```
/// use breakerbox::overrides::Overrides;
///
/// let err = Overrides::from_toml("ops.toml", "[\"a\"]\nprobes = -1\n").unwrap_err();
/// let problem = &err.problems()[0];
/// assert_eq!((problem.source(), problem.line()), ("ops.toml", Some(2)));
/// ```
#[derive(Clone, Debug)]
pub struct OverridesError {
    problems: Vec<Problem>,
}

impl OverridesError {
    fn one(problem: Problem) -> Self {
        Self {
            problems: vec![problem],
        }
    }

    /// Every problem, in file order.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }
}

impl fmt::Display for OverridesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            problem.fmt(f)?;
        }
        Ok(())
    }
}

impl std::error::Error for OverridesError {}

/// One problem of an overrides file: where, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    source: Arc<str>,
    line: Option<usize>,
    message: String,
}

impl Problem {
    /// The file (or name) the overrides came from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The line, counted from 1, when the problem has one.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// What is wrong, e.g. `breaker "app::get_book": rate must be in (0, 1], got 1.5`.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.source, line, self.message),
            None => write!(f, "{}: {}", self.source, self.message),
        }
    }
}

/// What an override reaches: one breaker, or a keyed family.
enum Target {
    Single(Arc<Breaker>),
    Family(Arc<Keyed>),
}

/// A checked override, ready to apply.
struct Change {
    name: Arc<str>,
    /// The configuration keys the override writes.
    keys: Vec<crate::config::Field>,
    target: Target,
    config: Option<Config>,
    action: Option<Action>,
}

impl Registry {
    /// Applies `overrides` to the registered breakers: every override is checked first, and
    /// if any is wrong (an unknown breaker, a value that breaks a rule) nothing changes.
    ///
    /// Configuration changes use [`Breaker::reconfigure`], which keeps the breaker's state
    /// (a CLOSED breaker whose window the new thresholds trip opens at once); then the
    /// action, if any, runs. For a keyed family, both reach every member and every
    /// member created later (a `reset` reaches the present members only; later ones start
    /// closed): once `apply` returns, every member has them, even one created meanwhile, and
    /// a new member of a forced-open family rejects from its very first call.
    ///
    /// Applies to a registry run one at a time, each checked against what the one before left. Listeners
    /// of the breakers run during an apply, so a listener must not apply overrides itself
    /// (it would wait for its own apply); hand the work to another task or thread.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breakerbox::overrides::Overrides;
    /// use breakerbox::{registry, Breaker, Config, State};
    ///
    /// let b = registry().register(Arc::new(Breaker::new("docs::stock", Config::default())));
    /// registry().apply(&"[\"docs::stock\"]\naction = \"force_open\"\n".parse()?)?;
    /// assert_eq!(b.state(), State::ForcedOpen);
    ///
    /// let err = registry().apply(&"[\"docs::nope\"]\naction = \"reset\"\n".parse()?).unwrap_err();
    /// assert_eq!(err.to_string(), "(string):1: no breaker is registered as \"docs::nope\"");
    ///
    /// // A typo: the nearest registered names, and still nothing applied.
    /// let typo = "[\"docs::stock\"]\naction = \"reset\"\n[\"docs::stok\"]\naction = \"reset\"\n";
    /// let err = registry().apply(&typo.parse()?).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "(string):3: no breaker is registered as \"docs::stok\"; did you mean \"docs::stock\"?"
    /// );
    /// assert_eq!(b.state(), State::ForcedOpen);
    ///
    /// // The function's name under another crate: the name of that function.
    /// let err = registry().apply(&"[\"shop::stock\"]\naction = \"reset\"\n".parse()?).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "(string):1: no breaker is registered as \"shop::stock\"; did you mean \"docs::stock\"?"
    /// );
    /// # Ok::<(), breakerbox::overrides::OverridesError>(())
    /// ```
    pub fn apply(&self, overrides: &Overrides) -> Result<(), OverridesError> {
        // One at a time: an override changes the keys it writes from the values it checked
        // against, and another file applied between would be undone.
        let applied = self.part::<Applied>();
        let _applying = applied.applying.lock();
        let mut changes = Vec::new();
        let mut problems = Vec::new();
        for entry in &overrides.entries {
            match self.check(entry) {
                Ok(change) => changes.push(change),
                Err(found) => problems.extend(found.into_iter().map(|(line, message)| Problem {
                    source: overrides.source.clone(),
                    line: Some(line),
                    message,
                })),
            }
        }
        if !problems.is_empty() {
            return Err(OverridesError { problems });
        }
        for change in changes {
            change.apply(self);
        }
        Ok(())
    }

    /// The change `entry` makes, or every problem of it, each with its line.
    fn check(&self, entry: &Override) -> Result<Change, Vec<(usize, String)>> {
        let target = match (self.get(&entry.name), self.family(&entry.name)) {
            (Some(breaker), _) => Target::Single(breaker),
            (None, Some(family)) => Target::Family(family),
            (None, None) => {
                let message = format!(
                    "no breaker is registered as {:?}{}",
                    entry.name,
                    self.did_you_mean(&entry.name)
                );
                return Err(vec![(entry.line, message)]);
            }
        };
        let current = match &target {
            Target::Single(breaker) => breaker.config(),
            Target::Family(family) => family.config(),
        };
        let of_breaker = |(line, message)| (line, format!("breaker {:?}: {message}", entry.name));
        let config = entry
            .config(&current)
            .map_err(|found| found.into_iter().map(of_breaker).collect::<Vec<_>>())?;
        if let (Some(site), Some(config)) = (self.site(&entry.name), &config) {
            let refused: Vec<_> = site
                .refuses(config)
                .map(|field| {
                    let line = entry.line_of_key(field).unwrap_or(entry.line);
                    let key = ConfigKey::of(field).name;
                    let message = format!(
                        "{key} cannot be set by an override: its #[circuit_breaker] function \
                         was compiled without `{key}`; write `{key} = ...` in its attribute to \
                         let overrides change it"
                    );
                    of_breaker((line, message))
                })
                .collect();
            if !refused.is_empty() {
                return Err(refused);
            }
        }
        Ok(Change {
            name: Arc::from(entry.name.as_str()),
            keys: if config.is_some() {
                entry.keys_set()
            } else {
                Vec::new()
            },
            target,
            config,
            action: entry.action,
        })
    }
}

impl Registry {
    /// `; did you mean "a", "b" or "c"?`: the registered names nearest to `name` by
    /// Damerau-Levenshtein distance (the attribute's own for its keys), none further than a
    /// third of `name`'s length; then those whose last segment is that near `name`'s, so
    /// that a function's name under another crate or module (`newcomer::fetch_recs` for
    /// `frontend::fetch_recs`) finds it. At most three; empty when none is that near.
    fn did_you_mean(&self, name: &str) -> String {
        let near: Vec<String> = self
            .nearest_names(name)
            .into_iter()
            .map(|known| format!("{known:?}"))
            .collect();
        match near.as_slice() {
            [] => String::new(),
            [one] => format!("; did you mean {one}?"),
            [init @ .., last] => format!("; did you mean {} or {last}?", init.join(", ")),
        }
    }

    /// The registered names nearest to `name`, nearest first (see `did_you_mean`).
    pub(crate) fn nearest_names(&self, name: &str) -> Vec<String> {
        let limit = (name.chars().count() / 3).max(2);
        let last = last_segment(name);
        let last_limit = last.chars().count() / 3;
        let mut near: Vec<(bool, usize, String)> = self
            .names()
            .into_iter()
            .filter_map(|known| {
                let whole = strsim::damerau_levenshtein(name, &known);
                if whole <= limit {
                    return Some((false, whole, known));
                }
                let by_last = strsim::damerau_levenshtein(last, last_segment(&known));
                (by_last <= last_limit).then_some((true, by_last, known))
            })
            .collect();
        near.sort();
        near.into_iter()
            .take(3)
            .map(|(_, _, known)| known)
            .collect()
    }

    /// The configuration keys overrides set on `name` (a breaker's or a family's).
    #[cfg_attr(not(feature = "admin"), allow(dead_code))]
    pub(crate) fn overridden_keys(&self, name: &str) -> Vec<crate::config::Field> {
        self.part::<Applied>()
            .overridden
            .lock()
            .get(name)
            .cloned()
            .unwrap_or_default()
    }
}

/// What overrides keep of a registry, a part attached to it at the first apply.
#[derive(Default)]
struct Applied {
    /// Held through a whole [`Registry::apply`]: applies to one registry run one at a time.
    applying: Mutex<()>,
    /// The configuration keys overrides set, by the name they were applied to.
    overridden: Mutex<BTreeMap<Arc<str>, Vec<crate::config::Field>>>,
}

impl crate::registry::Watch for Applied {}

/// What follows a name's last `::`: the function, for a name the attribute gave.
fn last_segment(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name)
}

impl Change {
    fn apply(self, registry: &Registry) {
        if !self.keys.is_empty() {
            let applied = registry.part::<Applied>();
            let mut overridden = applied.overridden.lock();
            let keys = overridden.entry(self.name.clone()).or_default();
            for key in &self.keys {
                if !keys.contains(key) {
                    keys.push(*key);
                }
            }
        }
        match &self.target {
            Target::Single(breaker) => {
                if let Some(config) = self.config {
                    registry.hooks().reconfigure(breaker, config);
                }
                if let Some(action) = self.action {
                    action.run(breaker);
                }
            }
            Target::Family(family) => family.apply(self.config, self.action),
        }
    }
}
