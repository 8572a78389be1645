//! Events a breaker reports to its listeners.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, RwLock};

use crate::State;

/// Something that happened to a breaker.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use breaker::{Breaker, Config, Event, State};
///
/// let b = Breaker::new("libraryd", Config::default());
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let log = seen.clone();
/// b.on_event(move |e: &Event| {
///     if let Event::StateTransition { from, to } = e {
///         log.lock().unwrap().push((*from, *to));
///     }
/// });
/// b.force_open();
/// assert_eq!(*seen.lock().unwrap(), [(State::Closed, State::ForcedOpen)]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// The breaker moved from one state to another.
    StateTransition {
        /// State before.
        from: State,
        /// State after.
        to: State,
    },
}

type Listener = Arc<dyn Fn(&Event) + Send + Sync>;

/// The listeners of one breaker. Delivery clones an `Arc` of the list, so listeners run with
/// no lock held and may call back into the breaker or add listeners.
#[derive(Default)]
pub(crate) struct Listeners {
    list: RwLock<Arc<[Listener]>>,
}

impl Listeners {
    pub(crate) fn add(&self, listener: Listener) {
        let mut list = self.list.write().unwrap_or_else(|e| e.into_inner());
        let mut grown: Vec<Listener> = list.iter().cloned().collect();
        grown.push(listener);
        *list = grown.into();
    }

    /// Calls every listener; a panicking listener is contained and the others still run.
    pub(crate) fn emit(&self, event: &Event) {
        let list = self.list.read().unwrap_or_else(|e| e.into_inner()).clone();
        for listener in list.iter() {
            let _ = catch_unwind(AssertUnwindSafe(|| listener(event)));
        }
    }
}

impl fmt::Debug for Listeners {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.list.read().map(|l| l.len()).unwrap_or(0);
        f.debug_struct("Listeners").field("count", &n).finish()
    }
}
