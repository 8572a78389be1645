//! An operator's manual action on a breaker, or on every member of a keyed family.

use std::time::Duration;

use crate::Breaker;

/// A manual action on a breaker, as an overrides file's `action` or `open_for` asks it,
/// or the operator's surface: the same four on one breaker and on a keyed family, where it
/// reaches every member (and a forced-open or disabled family's members created later are
/// born so; after `Reset` and `OpenFor`, they are born closed).
///
/// ```
/// use std::sync::Arc;
/// use breakerbox::overrides::{Action, Overrides};
/// use breakerbox::{registry, Breaker, Config, State};
///
/// let b = registry().register(Arc::new(Breaker::new("docs::till", Config::default())));
/// registry().apply(&Overrides::action("ops", "docs::till", Action::ForceOpen))?;
/// assert_eq!(b.state(), State::ForcedOpen);
/// # Ok::<(), breakerbox::overrides::OverridesError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Action {
    /// [`Breaker::force_open`]: reject every call until reset (`action = "force_open"`).
    ForceOpen,
    /// [`Breaker::disable`]: admit every call and count nothing until reset
    /// (`action = "disable"`).
    Disable,
    /// [`Breaker::reset`]: back to CLOSED with an empty window (`action = "reset"`).
    Reset,
    /// [`Breaker::open_for`]: OPEN for this long from now, then a probe (`open_for = "30s"`).
    OpenFor(Duration),
}

impl Action {
    /// Runs the action on one breaker.
    pub(crate) fn run(self, breaker: &Breaker) {
        match self {
            Action::ForceOpen => breaker.force_open(),
            Action::Disable => breaker.disable(),
            Action::Reset => breaker.reset(),
            Action::OpenFor(period) => breaker.open_for(period),
        }
    }
}
