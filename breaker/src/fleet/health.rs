//! The fleet's health, as a state and as events: whether the store failed and why, and how
//! much of what reached this instance it refused. A listener that subscribes late hears the
//! current state first, so that no one waits for an event sent before they listened.

use std::fmt;
use std::sync::Arc;

use crate::sync::process::Mutex;

/// What the fleet reports about its store.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FleetEvent {
    /// The store failed (down, paused, slow, unreachable): breakers judge alone, and the
    /// peers' opinions already known expire by their time-to-live.
    Degraded {
        /// What failed, as the client said it.
        reason: String,
    },
    /// The store answers again: the view was read anew and this instance's opinions written.
    Recovered,
}

impl fmt::Display for FleetEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Degraded { reason } => write!(f, "fleet view degraded: {reason}"),
            Self::Recovered => f.write_str("fleet view recovered"),
        }
    }
}

/// The fleet's health now ([`Fleet::health`](super::Fleet::health)): the store's state, and
/// the counts, since the start, of what this instance refused to believe.
///
/// ```
/// use breakerbox::fleet::{Fleet, FleetHealth};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let fleet = Fleet::builder("redis://127.0.0.1:1").start()?;
/// let health: FleetHealth = fleet.health();
/// assert_eq!((health.messages_malformed, health.rows_skipped), (0, 0));
/// # Ok::<(), breakerbox::fleet::FleetError>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FleetHealth {
    /// Why the store failed, while it has not answered since; `None` while it answers.
    pub degraded: Option<String>,
    /// Messages on the channel ignored because they could not be read.
    pub messages_malformed: u64,
    /// Messages ignored because their signature was missing or wrong
    /// ([`FleetBuilder::secret`](super::FleetBuilder::secret)).
    pub messages_forged: u64,
    /// Messages dropped unread because more than the backlog's bound
    /// ([`FleetBuilder::backlog`](super::FleetBuilder::backlog)) waited: the view was read
    /// anew from the store instead.
    pub messages_dropped: u64,
    /// Rows of the store that a snapshot skipped: malformed, or under a key of the wrong type.
    pub rows_skipped: u64,
    /// Rows of the store ignored because their signature was missing or wrong, or because they
    /// claimed more time than they were signed with.
    pub rows_forged: u64,
}

/// A listener of [`FleetEvent`]s.
type Listener = Arc<dyn Fn(&FleetEvent) + Send + Sync>;

/// The health and its listeners. A change of state and its event are one step under the
/// listeners' lock, and so is a subscription with the current state told first: a listener
/// hears every change once, whenever it subscribed.
#[derive(Default)]
pub(crate) struct Health {
    state: Mutex<FleetHealth>,
    listeners: Mutex<Vec<Listener>>,
}

impl Health {
    pub(crate) fn now(&self) -> FleetHealth {
        self.state.lock().clone()
    }

    pub(crate) fn is_degraded(&self) -> bool {
        self.state.lock().degraded.is_some()
    }

    /// Adds `listener`, telling it first that the store is failing, if it is.
    pub(crate) fn subscribe(&self, listener: Listener) {
        let mut listeners = self.listeners.lock();
        let degraded = self.state.lock().degraded.clone();
        if let Some(reason) = degraded {
            call(&listener, &FleetEvent::Degraded { reason });
        }
        listeners.push(listener);
    }

    /// The store failed: told once, until it recovers. Whether it was news. The state
    /// changes once every listener heard, so that whoever sees it knows they were told.
    pub(crate) fn degraded(&self, reason: &str) -> bool {
        let listeners = self.listeners.lock();
        let first = self.state.lock().degraded.is_none();
        if first {
            let event = FleetEvent::Degraded {
                reason: reason.to_string(),
            };
            listeners.iter().for_each(|listener| call(listener, &event));
        }
        self.state.lock().degraded = Some(reason.to_string());
        first
    }

    /// The store answers; told if it had failed. Whether it was news.
    pub(crate) fn recovered(&self) -> bool {
        let listeners = self.listeners.lock();
        let was = self.state.lock().degraded.is_some();
        if was {
            listeners
                .iter()
                .for_each(|listener| call(listener, &FleetEvent::Recovered));
            self.state.lock().degraded = None;
        }
        was
    }

    /// Counts what this instance refused.
    pub(crate) fn count(&self, what: impl FnOnce(&mut FleetHealth) -> &mut u64, by: u64) {
        let mut state = self.state.lock();
        let counter = what(&mut state);
        *counter = counter.saturating_add(by);
    }
}

/// A listener that panics is not this instance's failure.
fn call(listener: &Listener, event: &FleetEvent) {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| listener(event)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder(health: &Health) -> Arc<Mutex<Vec<FleetEvent>>> {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        health.subscribe(Arc::new(move |e: &FleetEvent| log.lock().push(e.clone())));
        seen
    }

    #[test]
    fn a_late_listener_hears_the_current_state_first_and_every_change_once() {
        let health = Health::default();
        let early = recorder(&health);
        assert!(health.degraded("refused"));
        assert!(!health.degraded("still refused"), "told once");
        let late = recorder(&health);
        assert!(health.recovered());
        assert!(!health.recovered());
        let degraded = FleetEvent::Degraded {
            reason: "refused".into(),
        };
        assert_eq!(*early.lock(), [degraded.clone(), FleetEvent::Recovered]);
        let still = FleetEvent::Degraded {
            reason: "still refused".into(),
        };
        assert_eq!(*late.lock(), [still, FleetEvent::Recovered]);
        let after = recorder(&health);
        assert!(after.lock().is_empty(), "healthy: nothing to tell");
    }

    #[test]
    fn counts_add_up_and_saturate() {
        let health = Health::default();
        health.count(|h| &mut h.rows_skipped, 2);
        health.count(|h| &mut h.rows_skipped, u64::MAX);
        health.count(|h| &mut h.messages_malformed, 1);
        let now = health.now();
        assert_eq!((now.rows_skipped, now.messages_malformed), (u64::MAX, 1));
    }
}
