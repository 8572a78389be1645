//! A bounded family of breakers, one per key, for `#[circuit_breaker(key = ...)]`.
//!
//! The attribute's static cannot name the key type, so the family is type-erased: entries
//! are bucketed by a hash of the borrowed key and hold the owned key as `dyn Any`, compared
//! by downcast and `Borrow`. Finding an existing key therefore never allocates, even when the
//! key is a `&str` and the stored one a `String` (`Borrow` makes their hashes agree).

use crate::action::Action;
use crate::cap::OpenCount;
use std::any::Any;
use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt::{self, Display};
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;

use crate::registry::Hooks;
use crate::sync::{AtomicU64, Mutex, Ordering, RwLock};
use crate::{Breaker, Config, State};

/// Breakers told apart by key, at most `max_keys` of them. A new key past `max_keys` evicts
/// the least recently used member, closed ones first and among them idle ones (no call in
/// flight); see `Slots::least_needed`.
///
/// A member is born in its family's state: created under the write lock that also guards
/// the family's configuration and sticky action, and configured, forced open or disabled
/// before the lock is released, so no one sees it otherwise. [`Keyed::apply`] changes them
/// under the same lock, with the members of that moment; a member created after it reads
/// the new state at its birth.
///
/// Every member holds a seat on the family's count of members out of the pool, against
/// `max_open_percent` (`cap.rs`): taken at its birth, given back as it leaves the family
/// (removed or evicted, whatever its state) or is dropped.
pub struct Keyed {
    name: Arc<str>,
    /// The configuration the family was declared with (`#[circuit_breaker]`'s keys).
    declared: Config,
    max_keys: usize,
    /// Keys may come from anyone: a hasher with per-process random keys, built to resist
    /// collision floods, and several times faster than SipHash on short keys.
    hasher: ahash::RandomState,
    /// A logical clock for least-recently-used eviction: every insertion, and every lookup
    /// of a member that is not the newest already, takes the next value, so no two uses
    /// tie. Looking up the newest member again (the common run of one key) writes nothing.
    tick: AtomicU64,
    slots: RwLock<Slots>,
    /// Held through a whole [`Keyed::apply`], so that the members end with the last one
    /// applied, as the family's state does.
    applying: Mutex<()>,
    /// Members evicted with no call in flight, and with calls in flight.
    evicted_idle: AtomicU64,
    evicted_busy: AtomicU64,
    /// Members out of the pool (OPEN, HALF_OPEN, FORCED_OPEN), against `max_open_percent`:
    /// every member holds a seat on it while it is in the family (`cap.rs`).
    open: Arc<OpenCount>,
    /// The hooks of the registry the family joined, told of each new member. std's
    /// `OnceLock` under loom too: set once, before the family serves calls.
    registry: std::sync::OnceLock<Arc<Hooks>>,
}

struct Slots {
    buckets: HashMap<u64, Vec<Member>, BuildHasherDefault<Prehashed>>,
    len: usize,
    /// Whether the family has been full: its table then has room for twice its keys.
    full: bool,
    /// What a new member is born with. Shared by every member born since it was set.
    config: Arc<Config>,
    sticky: Option<Sticky>,
}

/// The state a forced-open or disabled family's members are born in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sticky {
    ForceOpen,
    Disable,
}

impl Sticky {
    fn state(self) -> State {
        match self {
            Sticky::ForceOpen => State::ForcedOpen,
            Sticky::Disable => State::Disabled,
        }
    }
}

struct Member {
    key: Box<dyn Any + Send + Sync>,
    /// Also tells the key's text (`Breaker::key`).
    breaker: Arc<Breaker>,
    used: AtomicU64,
}

impl Member {
    /// Whether anyone but the family holds the breaker: a call in flight does, for its
    /// whole length (the attribute's call and the keyed layer's response future hold the
    /// `Arc`, and so does every permit's owner). Costs nothing on the call's path: taking
    /// the `Arc` is the count. A handle kept from [`Registry::get_keyed`] counts too.
    ///
    /// [`Registry::get_keyed`]: crate::registry::Registry::get_keyed
    fn busy(&self) -> bool {
        Arc::strong_count(&self.breaker) > 1
    }

    fn holds<Q>(&self, key: &Q) -> bool
    where
        Q: ?Sized + Eq + ToOwned,
        Q::Owned: 'static,
    {
        self.key
            .downcast_ref::<Q::Owned>()
            .is_some_and(|owned| owned.borrow() == key)
    }
}

impl Keyed {
    /// A family named `name` whose members start with `config`, at most `max_keys` of them.
    pub fn new(name: Arc<str>, config: Config, max_keys: usize) -> Self {
        let slots = Slots {
            buckets: HashMap::default(),
            len: 0,
            full: false,
            config: Arc::new(config.clone()),
            sticky: None,
        };
        Self {
            name,
            declared: config,
            max_keys: max_keys.max(1),
            hasher: ahash::RandomState::new(),
            tick: AtomicU64::new(0),
            slots: RwLock::new(slots),
            applying: Mutex::new(()),
            evicted_idle: AtomicU64::new(0),
            evicted_busy: AtomicU64::new(0),
            open: Arc::default(),
            registry: std::sync::OnceLock::new(),
        }
    }

    /// Tells `hooks` of every member created from now on; a family tells the registry it
    /// joined first, and only that one.
    pub(crate) fn join(&self, hooks: &Arc<Hooks>) {
        let _ = self.registry.set(Arc::clone(hooks));
    }

    pub(crate) fn name(&self) -> &Arc<str> {
        &self.name
    }

    /// The configuration the family was declared with, whatever was applied since.
    pub(crate) fn declared(&self) -> &Config {
        &self.declared
    }

    /// The configuration members are born with now: the declared one, or the last applied.
    pub fn config(&self) -> Config {
        Config::clone(&self.read().config)
    }

    /// Applies `config` and `action` to every member and to every member created later (a
    /// reset reaches the present members, and later ones are born closed). Once it returns,
    /// every member has them, however many were being created meanwhile.
    pub fn apply(&self, config: Option<Config>, action: Option<Action>) {
        let _applying = self.applying.lock();
        let members: Vec<Arc<Breaker>> = {
            let mut slots = self.write();
            if let Some(config) = &config {
                slots.config = Arc::new(config.clone());
            }
            match action {
                Some(Action::ForceOpen) => slots.sticky = Some(Sticky::ForceOpen),
                Some(Action::Disable) => slots.sticky = Some(Sticky::Disable),
                Some(Action::Reset | Action::OpenFor(_)) => slots.sticky = None,
                None => {}
            }
            slots.members().map(|m| m.breaker.clone()).collect()
        };
        // Outside the lock: a member's listeners run as it changes, and may look the family
        // up. A member born since was born with the new state.
        for member in members {
            match (&config, self.registry.get()) {
                (Some(config), Some(hooks)) => hooks.reconfigure(&member, config.clone()),
                (Some(config), None) => member.reconfigure(config.clone()),
                (None, _) => {}
            }
            if let Some(action) = action {
                action.run(&member);
            }
        }
    }

    fn read(&self) -> crate::sync::RwLockReadGuard<'_, Slots> {
        self.slots.read()
    }

    fn write(&self) -> crate::sync::RwLockWriteGuard<'_, Slots> {
        self.slots.write()
    }

    /// The breaker of `key`, created (and the least recently used one evicted, closed ones
    /// first, past `max_keys`) if the key is new.
    pub fn breaker<Q>(&self, key: &Q) -> Arc<Breaker>
    where
        Q: ?Sized + Hash + Eq + Display + ToOwned,
        Q::Owned: Send + Sync + 'static,
    {
        let hash = self.hasher.hash_one(key);
        {
            let slots = self.read();
            if let Some(member) = slots.find(hash, key) {
                self.touch(member);
                return member.breaker.clone();
            }
        }
        self.insert(hash, key)
    }

    /// Stamps `member` as the most recently used. A member holding the newest stamp is
    /// already that, and is left alone: its line stays shared between the cores that look
    /// it up. `fetch_max`, so that of two racing stamps the newer stays.
    #[inline]
    fn touch(&self, member: &Member) {
        if member.used.load(Ordering::Relaxed) != self.tick.load(Ordering::Relaxed) {
            let now = self.tick.fetch_add(1, Ordering::Relaxed) + 1;
            member.used.fetch_max(now, Ordering::Relaxed);
        }
    }

    #[cold]
    fn insert<Q>(&self, hash: u64, key: &Q) -> Arc<Breaker>
    where
        Q: ?Sized + Hash + Eq + Display + ToOwned,
        Q::Owned: Send + Sync + 'static,
    {
        let mut slots = self.write();
        let now = self.tick.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(member) = slots.find(hash, key) {
            member.used.store(now, Ordering::Relaxed);
            return member.breaker.clone();
        }
        if slots.len >= self.max_keys {
            // Full: from now on each new key replaces an old one. A table with room for twice
            // the keys reclaims the slots of evicted keys in place instead of growing at some
            // point of the churn, so memory stays flat whatever the keys.
            // (Once: `capacity()` shrinks as deleted slots pile up, and reserving again would
            // grow the table.)
            if !slots.full {
                slots.full = true;
                let len = slots.buckets.len();
                slots
                    .buckets
                    .reserve((2 * self.max_keys).saturating_sub(len));
            }
            if let Some((hash, i, busy)) = slots.least_needed() {
                self.take(&mut slots, hash, i);
                let evicted = match busy {
                    true => &self.evicted_busy,
                    false => &self.evicted_idle,
                };
                evicted.fetch_add(1, Ordering::Relaxed);
            }
        }
        let breaker = Breaker::keyed(&self.name, &key.to_string(), slots.config.clone());
        // Seated before a sticky state: a member born forced open is out of the pool.
        breaker.seat_on(Some(self.open.clone()));
        if let Some(sticky) = slots.sticky {
            breaker.start_in(sticky.state());
        }
        let breaker = Arc::new(breaker);
        // Most hashes hold one key: room for one, not the four of a default `Vec`'s growth.
        let bucket = slots.buckets.entry(hash);
        bucket
            .or_insert_with(|| Vec::with_capacity(1))
            .push(Member {
                key: Box::new(key.to_owned()),
                breaker: breaker.clone(),
                used: AtomicU64::new(now),
            });
        slots.len += 1;
        self.open.set_members(slots.len);
        drop(slots);
        if let Some(hooks) = self.registry.get() {
            hooks.announce(&self.name, &breaker);
        }
        breaker
    }

    /// Takes `key`'s breaker out of the family (an instance gone offline): the next call
    /// with `key` gets a new breaker, born in the family's state. Permits of the removed
    /// breaker still record into it, which no one reads any more.
    pub fn remove<Q>(&self, key: &Q) -> Option<Arc<Breaker>>
    where
        Q: ?Sized + Hash + Eq + ToOwned,
        Q::Owned: 'static,
    {
        let hash = self.hasher.hash_one(key);
        let mut slots = self.write();
        let i = slots
            .buckets
            .get(&hash)?
            .iter()
            .position(|m| m.holds(key))?;
        Some(self.take(&mut slots, hash, i))
    }

    /// Takes the `i`th member of bucket `hash` out of the family, and its seat on the
    /// family's count away: a member that leaves while OPEN gives its place back, and
    /// nothing it does later counts.
    fn take(&self, slots: &mut Slots, hash: u64, i: usize) -> Arc<Breaker> {
        let breaker = slots.take(hash, i);
        breaker.seat_on(None);
        self.open.set_members(slots.len);
        breaker
    }

    /// Takes the breaker whose key displays as `text` out of the family, as
    /// [`remove`](Keyed::remove) does.
    pub(crate) fn remove_by_text(&self, text: &str) -> Option<Arc<Breaker>> {
        let mut slots = self.write();
        let (hash, i) = slots
            .positions()
            .find(|(_, _, m)| m.breaker.key() == Some(text))
            .map(|(hash, i, _)| (hash, i))?;
        Some(self.take(&mut slots, hash, i))
    }

    /// The family's count of members out of the pool, against `max_open_percent`.
    #[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
    pub(crate) fn open_count(&self) -> &OpenCount {
        &self.open
    }

    /// Members evicted so far: `(idle, busy)`, busy ones with calls in flight.
    #[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
    pub(crate) fn evictions(&self) -> (u64, u64) {
        (
            self.evicted_idle.load(Ordering::Relaxed),
            self.evicted_busy.load(Ordering::Relaxed),
        )
    }

    /// The breaker whose key displays as `text`.
    pub(crate) fn find_by_text(&self, text: &str) -> Option<Arc<Breaker>> {
        let slots = self.read();
        let found = slots.members().find(|m| m.breaker.key() == Some(text));
        found.map(|m| m.breaker.clone())
    }

    /// Every key's breaker.
    pub fn members(&self) -> Vec<Arc<Breaker>> {
        let slots = self.read();
        slots.members().map(|m| m.breaker.clone()).collect()
    }
}

impl Slots {
    fn find<Q>(&self, hash: u64, key: &Q) -> Option<&Member>
    where
        Q: ?Sized + Eq + ToOwned,
        Q::Owned: 'static,
    {
        self.buckets.get(&hash)?.iter().find(|m| m.holds(key))
    }

    fn members(&self) -> impl Iterator<Item = &Member> {
        self.buckets.values().flatten()
    }

    /// Every member with its bucket and its place in it.
    fn positions(&self) -> impl Iterator<Item = (u64, usize, &Member)> {
        self.buckets
            .iter()
            .flat_map(|(hash, members)| members.iter().enumerate().map(move |(i, m)| (*hash, i, m)))
    }

    /// Takes the `i`th member of bucket `hash` out; returns its breaker.
    fn take(&mut self, hash: u64, i: usize) -> Arc<Breaker> {
        let members = self
            .buckets
            .get_mut(&hash)
            .expect("a bucket of a member found");
        let member = members.swap_remove(i);
        if members.is_empty() {
            self.buckets.remove(&hash);
        }
        self.len -= 1;
        member.breaker
    }

    /// The member to evict: the least recently used, preferring closed breakers, and among
    /// those idle ones; with whether it is busy.
    ///
    /// An open breaker still protects its downstream, and forgetting it would let a burst of
    /// calls through. A busy one has calls in flight whose results would land in a breaker
    /// no one sees any more, while the key's next call starts on a new one with none of
    /// them. When every closed member is busy, the least recently used goes all the same
    /// (memory stays bounded), and is counted as busy.
    fn least_needed(&self) -> Option<(u64, usize, bool)> {
        self.positions()
            .map(|(hash, i, m)| {
                let open = m.breaker.state() != State::Closed;
                (open, m.busy(), m.used.load(Ordering::Relaxed), hash, i)
            })
            .min_by_key(|&(open, busy, used, _, _)| (open, busy, used))
            .map(|(_, busy, _, hash, i)| (hash, i, busy))
    }
}

impl fmt::Debug for Keyed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let len = self.slots.read().len;
        f.debug_struct("Keyed")
            .field("name", &self.name)
            .field("keys", &len)
            .field("max_keys", &self.max_keys)
            .finish_non_exhaustive()
    }
}

/// The buckets' keys are hashes already; hashing them again would only cost time.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn family(max_keys: usize) -> Keyed {
        Keyed::new(Arc::from("replicas"), Config::default(), max_keys)
    }

    #[test]
    fn borrowed_and_owned_keys_find_one_breaker() {
        let f = family(8);
        let by_str = f.breaker("10.0.0.1");
        let by_string = f.breaker(&String::from("10.0.0.1"));
        assert!(Arc::ptr_eq(&by_str, &by_string));
        assert_eq!(by_str.name(), "replicas[10.0.0.1]");
        assert_eq!(f.members().len(), 1);
    }

    #[test]
    fn a_key_is_told_whole_whatever_its_text() {
        let f = family(8);
        for text in ["", "a[b]", "]", "10.0.0.1:7000", "ключ"] {
            let b = f.breaker(text);
            assert_eq!(b.key(), Some(text));
            assert_eq!(b.name(), format!("replicas[{text}]"));
            assert!(Arc::ptr_eq(&f.find_by_text(text).unwrap(), &b));
        }
    }

    #[test]
    fn full_family_evicts_least_recently_used_closed_member() {
        let f = family(2);
        let a = f.breaker("a");
        f.breaker("b");
        a.force_open();
        f.breaker("b"); // "a" is now the least recently used, but it is not closed
        f.breaker("c");
        let members = f.members();
        let mut keys: Vec<_> = members.iter().map(|b| b.key().unwrap()).collect();
        keys.sort();
        assert_eq!(keys, ["a", "c"]);
    }
}
