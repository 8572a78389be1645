//! How the parts of the crate attach to a registry: one hook, a [`Watch`] of the breakers
//! that join it, change and leave. Each part keeps its own state (the metrics' transition
//! counts, the admin journal, what overrides applied), found by its type with
//! [`Hooks::part`]; the registry knows none of them.

use std::any::Any;
use std::sync::Arc;

use crate::events::Event;
use crate::sync::process::RwLock;
use crate::{Breaker, Config};

/// What a part attached to a registry hears of its breakers. Every method does nothing
/// unless the part says otherwise.
pub(crate) trait Watch: Send + Sync + 'static {
    /// `breaker` joined the registry under `name` (a keyed family's member, as it is made).
    fn joined(&self, _name: &str, _breaker: &Arc<Breaker>) {}
    /// A breaker of the registry reports `event` (a transition, a ramp step), as it tells
    /// its listeners.
    fn happened(&self, _breaker: &Breaker, _event: &Event) {}
    /// The breaker at `address` is being dropped.
    fn left(&self, _address: usize) {}
    /// Overrides reconfigured `breaker`, from `before` to `after`.
    fn reconfigured(&self, _breaker: &Arc<Breaker>, _before: &Config, _after: &Config) {}
}

/// A part attached to a registry: its state, found by type, and its watch.
struct Part {
    state: Arc<dyn Any + Send + Sync>,
    watch: Arc<dyn Watch>,
}

/// The hooks of one registry. Shared with the registry's keyed families, whose members join
/// as they are made, and with every breaker that joined, which reports its transitions and
/// its drop.
#[derive(Default)]
pub(crate) struct Hooks {
    /// The parts attached when the registry was made: they hear every breaker from its
    /// joining, and the reports of transitions reach them without a lock.
    born: Box<[Part]>,
    /// The parts attached later, in order.
    late: RwLock<Vec<Part>>,
}

impl Hooks {
    /// Hooks with `born` attached from the start.
    pub(crate) fn with(born: Vec<(Arc<dyn Any + Send + Sync>, Arc<dyn Watch>)>) -> Self {
        let born = born
            .into_iter()
            .map(|(state, watch)| Part { state, watch })
            .collect();
        Self {
            born,
            late: RwLock::default(),
        }
    }

    /// The state of the part of type `T`, attached now (made by `Default`) if it was not.
    pub(crate) fn part<T: Watch + Default>(&self) -> Arc<T> {
        if let Some(found) = self.find::<T>() {
            return found;
        }
        let mut late = self.late.write();
        if let Some(found) = late
            .iter()
            .find_map(|p| Arc::clone(&p.state).downcast().ok())
        {
            return found;
        }
        let made = Arc::new(T::default());
        late.push(Part {
            state: made.clone(),
            watch: made.clone(),
        });
        made
    }

    fn find<T: Watch>(&self) -> Option<Arc<T>> {
        let born = self.born.iter();
        if let Some(found) = born
            .clone()
            .find_map(|p| Arc::clone(&p.state).downcast().ok())
        {
            return Some(found);
        }
        let late = self.late.read();
        late.iter()
            .find_map(|p| Arc::clone(&p.state).downcast().ok())
    }

    /// Attaches `watch`, keeping no state to find.
    pub(crate) fn attach(&self, watch: impl Watch) {
        let watch = Arc::new(watch);
        self.late.write().push(Part {
            state: Arc::new(()),
            watch,
        });
    }

    /// Every watch, born first: read outside the lock, so that a watch may look the
    /// registry up.
    fn watches(&self) -> Vec<Arc<dyn Watch>> {
        let late = self.late.read();
        self.born
            .iter()
            .chain(late.iter())
            .map(|p| Arc::clone(&p.watch))
            .collect()
    }

    /// Tells the watches that `breaker` joined the registry under `name`.
    pub(crate) fn announce(self: &Arc<Self>, name: &str, breaker: &Arc<Breaker>) {
        breaker.report_to(self);
        for watch in self.watches() {
            watch.joined(name, breaker);
        }
    }

    /// What a breaker of the registry reports: each transition (and ramp step) as it is
    /// told to its listeners. Only the born parts hear it, without a lock.
    pub(crate) fn happened(&self, breaker: &Breaker, event: &Event) {
        for part in self.born.iter() {
            part.watch.happened(breaker, event);
        }
    }

    /// Forgets the breaker at `address`, being dropped.
    pub(crate) fn forget(&self, address: usize) {
        for part in self.born.iter() {
            part.watch.left(address);
        }
    }

    /// [`Breaker::reconfigure`]s a breaker of the registry, then tells the watches what
    /// changed (the fleet follows its `fleet` keys so).
    pub(crate) fn reconfigure(&self, breaker: &Arc<Breaker>, config: Config) {
        let watches = self.watches();
        if watches.is_empty() {
            return breaker.reconfigure(config);
        }
        let before = breaker.config();
        breaker.reconfigure(config.clone());
        for watch in watches {
            watch.reconfigured(breaker, &before, &config);
        }
    }
}

/// A watch of the breakers joining: a closure.
pub(crate) struct OnJoin<F>(pub(crate) F);

impl<F: Fn(&str, &Arc<Breaker>) + Send + Sync + 'static> Watch for OnJoin<F> {
    fn joined(&self, name: &str, breaker: &Arc<Breaker>) {
        (self.0)(name, breaker);
    }
}

/// A watch of the breakers overrides reconfigure: a closure.
pub(crate) struct OnReconfigure<F>(pub(crate) F);

impl<F: Fn(&Arc<Breaker>, &Config, &Config) + Send + Sync + 'static> Watch for OnReconfigure<F> {
    fn reconfigured(&self, breaker: &Arc<Breaker>, before: &Config, after: &Config) {
        (self.0)(breaker, before, after);
    }
}
