//! The local view: what this instance knows of its peers' OPEN opinions, per breaker name,
//! built from the messages and the snapshots, bounded in names and instances.
//!
//! Times here are on the background task's clock (tokio's), made from the times *left* that
//! the server tells: a peer's clock never enters.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::layout::{Kind, Message};
use super::store::later;

/// The peers' opinions of the names this instance tracks.
pub(crate) struct View {
    names: HashMap<Arc<str>, Peers>,
    me: Arc<str>,
    max_names: usize,
    max_instances: usize,
}

#[derive(Default)]
struct Peers {
    by_instance: HashMap<Box<str>, Seen>,
}

/// The last word of one peer on one name.
#[derive(Clone, Copy)]
struct Seen {
    seq: u64,
    open: Option<Opinion>,
    /// When this instance learned it: a snapshot asked for before does not undo it.
    learned: Instant,
}

/// A peer's live OPEN opinion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Opinion {
    /// When its OPEN ends.
    pub(crate) until: Instant,
    /// When it stops counting unless renewed.
    pub(crate) expires: Instant,
}

/// What a message did to the view.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Applied {
    /// The opinions of this name changed.
    Changed,
    /// A lease on this name was given back.
    LeaseFreed,
    /// The holder of this name's lease passed its trial and gave the lease back.
    TrialPassed,
    /// About a name this instance does not track, or from itself: nothing to do.
    NotMine,
    /// Older than what the view holds of that peer: ignored.
    Stale,
    /// A new peer past the bound of instances per name: ignored.
    Full,
}

impl View {
    pub(crate) fn new(me: Arc<str>, max_names: usize, max_instances: usize) -> Self {
        Self {
            names: HashMap::new(),
            me,
            max_names,
            max_instances,
        }
    }

    /// Starts tracking `name`; false if the view already tracks as many names as it may.
    pub(crate) fn track(&mut self, name: &Arc<str>) -> bool {
        if self.names.contains_key(name) {
            return true;
        }
        if self.names.len() >= self.max_names {
            return false;
        }
        self.names.insert(Arc::clone(name), Peers::default());
        true
    }

    /// Stops tracking `name`: what its peers say of it is forgotten, and it takes no room.
    pub(crate) fn forget(&mut self, name: &str) {
        self.names.remove(name);
    }

    /// Whether the view tracks `name`.
    pub(crate) fn tracks(&self, name: &str) -> bool {
        self.names.contains_key(name)
    }

    /// Whether the view tracks as many names as it may.
    pub(crate) fn is_full(&self) -> bool {
        self.names.len() >= self.max_names
    }

    /// The names tracked.
    pub(crate) fn names(&self) -> impl Iterator<Item = &Arc<str>> {
        self.names.keys()
    }

    /// Applies a message received at `now`.
    pub(crate) fn apply(&mut self, message: &Message<'_>, now: Instant) -> Applied {
        if message.instance == &*self.me {
            return Applied::NotMine;
        }
        let max_instances = self.max_instances;
        let Some(peers) = self.names.get_mut(message.name) else {
            return Applied::NotMine;
        };
        match message.kind {
            Kind::Free => return Applied::LeaseFreed,
            Kind::Passed => return Applied::TrialPassed,
            Kind::Open | Kind::Closed => {}
        }
        let open = (message.kind == Kind::Open).then(|| Opinion {
            until: later(now, end_left(message.until_ms)),
            expires: later(now, Duration::from_millis(message.expires_ms)),
        });
        peers.learn(message.instance, message.seq, open, now, max_instances)
    }

    /// Applies the snapshot of `name` asked for at `asked`: `rows` are the live opinions as
    /// `(instance, seq, ms until the OPEN ends, ms until it stops counting)`, received at
    /// `now`. Opinions the snapshot lacks go, unless learned since it was asked for. Returns
    /// how many rows were stale.
    pub(crate) fn apply_snapshot(
        &mut self,
        name: &str,
        rows: &[(String, u64, u64, u64)],
        asked: Instant,
        now: Instant,
    ) -> usize {
        let max_instances = self.max_instances;
        let me = Arc::clone(&self.me);
        let Some(peers) = self.names.get_mut(name) else {
            return 0;
        };
        for seen in peers.by_instance.values_mut() {
            if seen.learned < asked {
                seen.open = None;
            }
        }
        let mut stale = 0;
        for (instance, seq, until_ms, expires_ms) in rows {
            if **instance == *me {
                continue;
            }
            let open = Opinion {
                until: later(now, end_left(*until_ms)),
                expires: later(now, Duration::from_millis(*expires_ms)),
            };
            if peers.learn(instance, *seq, Some(open), asked, max_instances) == Applied::Stale {
                stale += 1;
            }
        }
        stale
    }

    /// The peers' opinions of `name` that count at `now`.
    pub(crate) fn live(&self, name: &str, now: Instant) -> Vec<Opinion> {
        let Some(peers) = self.names.get(name) else {
            return Vec::new();
        };
        peers
            .by_instance
            .values()
            .filter_map(|seen| seen.open)
            .filter(|open| open.expires > now && open.until > now)
            .collect()
    }

    /// The peers whose opinions of `name` count at `now`, each with the sequence number of its
    /// opinion: a renewal keeps it, a new OPEN has another.
    pub(crate) fn voters(&self, name: &str, now: Instant) -> Vec<(&str, u64)> {
        let Some(peers) = self.names.get(name) else {
            return Vec::new();
        };
        peers
            .by_instance
            .iter()
            .filter(|(_, seen)| seen.open.is_some_and(|o| o.expires > now && o.until > now))
            .map(|(id, seen)| (&**id, seen.seq))
            .collect()
    }

    /// Until when at least `quorum` peers hold `name` OPEN, if they do at `now`: the end of
    /// the `quorum`-th latest of their OPENs (with exactly `quorum` of them, the earliest).
    pub(crate) fn quorum_until(&self, name: &str, now: Instant, quorum: usize) -> Option<Instant> {
        let mut ends: Vec<Instant> = self.live(name, now).iter().map(|o| o.until).collect();
        if quorum == 0 || ends.len() < quorum {
            return None;
        }
        ends.sort_unstable_by(|a, b| b.cmp(a));
        Some(ends[quorum - 1])
    }
}

/// The time left until a peer's OPEN ends, told in whole ms: the store's clock reads whole
/// ms, rounded down, once when the OPEN is written and once when it is told, so the end
/// is taken 2 ms later than told, and an adopted OPEN never ends before the peer's.
fn end_left(until_ms: u64) -> Duration {
    Duration::from_millis(until_ms.saturating_add(2))
}

impl Peers {
    fn learn(
        &mut self,
        instance: &str,
        seq: u64,
        open: Option<Opinion>,
        learned: Instant,
        max_instances: usize,
    ) -> Applied {
        if let Some(seen) = self.by_instance.get_mut(instance) {
            if seq < seen.seq {
                return Applied::Stale;
            }
            *seen = Seen {
                seq,
                open,
                learned: learned.max(seen.learned),
            };
            return Applied::Changed;
        }
        if self.by_instance.len() >= max_instances {
            // Room first from the peers that hold no live opinion.
            let now = learned;
            self.by_instance
                .retain(|_, seen| seen.open.is_some_and(|open| open.expires > now));
            if self.by_instance.len() >= max_instances {
                return Applied::Full;
            }
        }
        self.by_instance
            .insert(instance.into(), Seen { seq, open, learned });
        Applied::Changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open<'a>(instance: &'a str, seq: u64, until_ms: u64, expires_ms: u64) -> Message<'a> {
        Message {
            kind: Kind::Open,
            instance,
            seq,
            until_ms,
            expires_ms,
            name: "db",
            tag: None,
        }
    }

    fn view() -> View {
        let mut view = View::new("me".into(), 2, 3);
        assert!(view.track(&Arc::from("db")));
        view
    }

    #[test]
    fn quorum_holds_until_the_quorumth_latest_end() {
        let now = Instant::now();
        let mut v = view();
        assert_eq!(v.apply(&open("a", 1, 5_000, 1_000), now), Applied::Changed);
        assert_eq!(v.quorum_until("db", now, 2), None, "one peer is no quorum");
        v.apply(&open("b", 1, 3_000, 1_000), now);
        v.apply(&open("c", 1, 4_000, 1_000), now);
        assert_eq!(
            v.quorum_until("db", now, 2),
            Some(now + Duration::from_millis(4_002))
        );
        assert_eq!(
            v.quorum_until("db", now, 3),
            Some(now + Duration::from_millis(3_002))
        );
        assert_eq!(v.quorum_until("db", now, 4), None);
        let later = now + Duration::from_millis(1_000);
        assert_eq!(
            v.quorum_until("db", later, 2),
            None,
            "unrenewed opinions expire"
        );
    }

    #[test]
    fn own_messages_and_untracked_names_change_nothing() {
        let now = Instant::now();
        let mut v = view();
        assert_eq!(v.apply(&open("me", 1, 5_000, 1_000), now), Applied::NotMine);
        let other = Message {
            name: "cache",
            ..open("a", 1, 5_000, 1_000)
        };
        assert_eq!(v.apply(&other, now), Applied::NotMine);
        assert!(v.live("db", now).is_empty());
    }

    #[test]
    fn an_older_message_is_stale_and_a_closed_one_withdraws() {
        let now = Instant::now();
        let mut v = view();
        v.apply(&open("a", 5, 5_000, 1_000), now);
        assert_eq!(v.apply(&open("a", 4, 9_000, 9_000), now), Applied::Stale);
        assert_eq!(
            v.live("db", now)[0].until,
            now + Duration::from_millis(5_002)
        );
        let closed = Message {
            kind: Kind::Closed,
            ..open("a", 6, 0, 0)
        };
        assert_eq!(v.apply(&closed, now), Applied::Changed);
        assert!(v.live("db", now).is_empty());
        assert_eq!(v.apply(&open("a", 5, 5_000, 1_000), now), Applied::Stale);
    }

    #[test]
    fn a_snapshot_heals_a_lost_message_but_not_what_came_after_it_was_asked() {
        let t0 = Instant::now();
        let t1 = t0 + Duration::from_millis(10);
        let mut v = view();
        v.apply(&open("a", 1, 5_000, 1_000), t0);
        v.apply(&open("b", 1, 5_000, 1_000), t1);
        // The snapshot, asked between the two, knows "a" closed (its message was lost) and
        // not yet "b"; it brings "c", whose message was lost.
        let rows = vec![("c".to_string(), 3, 2_000, 900)];
        let asked = t0 + Duration::from_millis(5);
        assert_eq!(v.apply_snapshot("db", &rows, asked, t1), 0);
        let mut ends: Vec<_> = v.live("db", t1).iter().map(|o| o.until - t1).collect();
        ends.sort();
        assert_eq!(
            ends,
            [Duration::from_millis(2_002), Duration::from_millis(5_002)]
        );
    }

    #[test]
    fn the_view_is_bounded_in_names_and_instances() {
        let now = Instant::now();
        let mut v = view();
        assert!(v.track(&Arc::from("cache")));
        assert!(!v.track(&Arc::from("queue")), "two names at most");
        for peer in ["a", "b", "c"] {
            assert_eq!(v.apply(&open(peer, 1, 5_000, 1_000), now), Applied::Changed);
        }
        assert_eq!(v.apply(&open("d", 1, 5_000, 1_000), now), Applied::Full);
        // Peers whose opinions expired make room; a renewed one keeps its place.
        let later = now + Duration::from_millis(1_500);
        v.apply(&open("a", 2, 5_000, 2_000), later);
        assert_eq!(
            v.apply(&open("d", 1, 5_000, 1_000), later),
            Applied::Changed
        );
        assert_eq!(v.live("db", later).len(), 2);
    }
}
