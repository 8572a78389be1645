//! The breakers of this instance that joined the fleet: what each publishes of itself, when
//! the peers' quorum opens it, and the probe lease that keeps its recovery from a herd.
//!
//! A member hears its breaker through a listener (after the breaker's lock is released, with
//! no I/O: one message to the task), and the task acts on the breaker only through the
//! breaker's own change path (`Breaker::open_until_because`). A member that leaves keeps its
//! listener, switched off, for when it joins again: a breaker's listeners are never removed.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::mpsc::WeakUnboundedSender;
use tokio::time::Instant;

use super::command::Command;
use super::lease::{jitter, lease_time, open_adopted};
use super::store::later;
use super::{Fleet, Inner};
use crate::{events::Event, events::TransitionReason, Breaker, State};

/// One breaker that joined.
pub(super) struct Member {
    pub(super) breaker: Weak<Breaker>,
    quorum: usize,
    /// Whether the member is in the fleet: its listener tells the task nothing while off.
    on: Arc<AtomicBool>,
}

impl Member {
    /// Makes `breaker` a member, and has its listener tell the task of its own OPENs and
    /// of its leaving OPEN and HALF_OPEN.
    fn new(breaker: &Arc<Breaker>, quorum: usize, commands: WeakUnboundedSender<Command>) -> Self {
        let listened: Arc<str> = breaker.name().into();
        let weak = Arc::downgrade(breaker);
        let on = Arc::new(AtomicBool::new(true));
        let listening = Arc::clone(&on);
        // Weak: a breaker outliving its fleet keeps no task alive.
        breaker.on_event(move |event| {
            let Event::StateTransition { from, to, .. } = *event else {
                return;
            };
            if !listening.load(Ordering::Acquire) {
                return;
            }
            let Some(commands) = commands.upgrade() else {
                return;
            };
            let name = Arc::clone(&listened);
            if from == State::HalfOpen {
                let _ = commands.send(Command::Settled {
                    name: Arc::clone(&name),
                    passed: to != State::Open,
                });
            }
            let command = match to {
                State::Open if !adopted(event) => {
                    match weak.upgrade().and_then(|b| b.open_left()) {
                        Some(left) => Command::Opine { name, left },
                        None => return,
                    }
                }
                State::Closed if from != State::Closed => Command::Withdraw { name },
                _ => return,
            };
            let _ = commands.send(command);
        });
        Self {
            breaker: Arc::downgrade(breaker),
            quorum,
            on,
        }
    }

    /// The breaker, while it lives and is in the fleet.
    pub(super) fn live(&self) -> Option<Arc<Breaker>> {
        match self.on.load(Ordering::Acquire) {
            true => self.breaker.upgrade(),
            false => None,
        }
    }
}

/// Whether a transition is the fleet's own adoption, which publishes nothing.
fn adopted(event: &Event) -> bool {
    matches!(
        event,
        Event::StateTransition {
            reason: TransitionReason::FleetOpen,
            ..
        }
    )
}

/// A member and what the fleet did to it.
pub(super) struct Slot {
    pub(super) member: Member,
    /// The opinions (peer, sequence number) of the quorum this member last adopted: the same
    /// opinions, renewed, are not adopted again once the breaker left the OPEN they caused;
    /// a new OPEN of a peer is.
    adopted: HashSet<(Box<str>, u64)>,
    /// When to ask for the probe lease: shortly before the adopted OPEN ends.
    pub(super) lease_at: Option<Instant>,
    /// The end of the quorum's OPEN it adopted, plus its jitter: no lease ends it earlier.
    pub(super) not_before: Option<Instant>,
    /// The probe lease of its name, while this member holds it.
    pub(super) lease: Option<Held>,
}

/// A probe lease held.
pub(super) struct Held {
    /// When it goes back unless a probe of its holder is in flight.
    pub(super) idle_at: Instant,
}

/// The members by name.
#[derive(Default)]
pub(crate) struct Members {
    pub(super) by_name: HashMap<Arc<str>, Vec<Slot>>,
}

/// What [`Members::join`] did.
pub(crate) enum Joined {
    /// The breaker entered the fleet (anew, or again after it left): its name is to be read
    /// now, and its own OPEN, if it holds one, published.
    Entered,
    /// It was in already: its quorum is the one given now.
    Stayed,
    /// The view tracks too many names: the breaker judges alone.
    Refused,
}

/// What [`Members::prune`] did.
#[derive(Default)]
pub(crate) struct Pruned {
    /// The names the view forgot: their own opinions go.
    pub(crate) forgotten: Vec<Arc<str>>,
    /// The names whose probe lease a member that is gone held: it goes back.
    pub(crate) leases: Vec<Arc<str>>,
}

/// What [`Members::leave`] left behind.
pub(crate) struct Left {
    /// Whether this instance's own opinion of the name is to be withdrawn: no other member
    /// of the name holds an OPEN of its own.
    pub(crate) withdraw: bool,
    /// Whether the member held the name's probe lease, which goes back.
    pub(crate) lease: bool,
}

impl Members {
    /// Puts `breaker` in the fleet with `quorum`, or gives it that quorum if it is in.
    pub(crate) fn join(
        &mut self,
        inner: &Inner,
        breaker: &Arc<Breaker>,
        quorum: usize,
        commands: &WeakUnboundedSender<Command>,
    ) -> Joined {
        let name: Arc<str> = breaker.name().into();
        if !inner.view.lock().track(&name) {
            #[cfg(feature = "tracing")]
            tracing::warn!(
                breaker = &*name,
                "fleet: too many names tracked; this breaker judges alone"
            );
            return Joined::Refused;
        }
        let slots = self.by_name.entry(name).or_default();
        slots.retain(|slot| slot.member.breaker.strong_count() > 0);
        let weak = Arc::downgrade(breaker);
        if let Some(slot) = slots.iter_mut().find(|s| s.member.breaker.ptr_eq(&weak)) {
            slot.member.quorum = quorum;
            return match slot.member.on.swap(true, Ordering::AcqRel) {
                true => Joined::Stayed,
                false => Joined::Entered,
            };
        }
        slots.push(Slot {
            member: Member::new(breaker, quorum, commands.clone()),
            adopted: HashSet::new(),
            lease_at: None,
            not_before: None,
            lease: None,
        });
        Joined::Entered
    }

    /// Takes `breaker` out of the fleet: it publishes nothing more, adopts nothing more, and
    /// an OPEN its peers caused ends now (its next call probes). `None` if it was not in.
    pub(crate) fn leave(&mut self, breaker: &Weak<Breaker>) -> Option<Left> {
        let slots = self.by_name.values_mut().find(|slots| {
            slots
                .iter()
                .any(|s| s.member.breaker.ptr_eq(breaker) && s.member.on.load(Ordering::Acquire))
        })?;
        let slot = slots
            .iter_mut()
            .find(|s| s.member.breaker.ptr_eq(breaker))?;
        slot.member.on.store(false, Ordering::Release);
        slot.adopted.clear();
        slot.lease_at = None;
        slot.not_before = None;
        let lease = slot.lease.take().is_some();
        if let Some(breaker) = breaker.upgrade() {
            if breaker.in_fleet_open() {
                open_adopted(&breaker, Duration::ZERO);
            }
        }
        let withdraw = !slots.iter().any(|s| {
            s.member
                .live()
                .is_some_and(|b| b.state() == State::Open && !b.in_fleet_open())
        });
        Some(Left { withdraw, lease })
    }

    /// Drops the members whose breakers are gone, of `only` or of every name, and has the
    /// view forget each name no breaker of this instance is in the fleet with any more: it
    /// is read no more and takes no room. A member that left stays, switched off, for when
    /// it joins again.
    pub(crate) fn prune(&mut self, inner: &Inner, only: Option<&str>) -> Pruned {
        let mut pruned = Pruned::default();
        let mut view = inner.view.lock();
        self.by_name.retain(|name, slots| {
            if only.is_some_and(|only| only != &**name) {
                return true;
            }
            let gone = |slot: &Slot| slot.member.breaker.strong_count() == 0;
            if slots.iter().any(|slot| gone(slot) && slot.lease.is_some()) {
                pruned.leases.push(Arc::clone(name));
            }
            slots.retain(|slot| !gone(slot));
            if !slots.iter().any(|slot| slot.member.live().is_some()) && view.tracks(name) {
                view.forget(name);
                pruned.forgotten.push(Arc::clone(name));
            }
            !slots.is_empty()
        });
        pruned
    }

    /// The peers' opinions of `name` changed: opens each CLOSED member of that name whose
    /// quorum holds, until the quorum ends (plus jitter), unless it adopted that quorum.
    pub(crate) fn reconsider(&mut self, inner: &Inner, name: &str, now: Instant) {
        let Some(slots) = self.by_name.get_mut(name) else {
            return;
        };
        let view = inner.view.lock();
        for slot in slots.iter_mut() {
            // Only a CLOSED breaker adopts: asked first, it spares the view's reading of the
            // others, which most messages (renewals) would find so.
            let Some(breaker) = slot.member.live().filter(|b| b.state() == State::Closed) else {
                continue;
            };
            let Some(end) = view.quorum_until(name, now, slot.member.quorum) else {
                continue;
            };
            let voters = view.voters(name, now);
            let fresh = voters
                .iter()
                .any(|(id, seq)| !slot.adopted.contains(&(Box::from(*id), *seq)));
            if !fresh {
                continue;
            }
            // A claim longer than this breaker would ever open by itself counts only that long:
            // peers that lie cannot hold it open for longer than its own judgement would.
            let longest = later(now, longest_open(&breaker.config()));
            let until = later(end.min(longest), jitter(inner.ttl));
            if open_adopted(&breaker, until - now) {
                slot.adopted = voters
                    .iter()
                    .map(|(id, seq)| (Box::from(*id), *seq))
                    .collect();
                slot.lease_at = Some(lease_time(now, until, inner.lead));
                slot.not_before = Some(until);
            }
        }
    }
}

/// The longest OPEN `config` enters by its own judgement: its open duration after backoff.
fn longest_open(config: &crate::Config) -> Duration {
    let open = config.open_for();
    config
        .open_backoff()
        .map_or(open, |backoff| backoff.max.max(open))
}

/// Joins every breaker of the registry whose configuration has the fleet on, now and as
/// they are registered; and, as overrides turn a breaker's `fleet` on or off or change its
/// `fleet_quorum`, joins it, takes it out, or gives it its new quorum.
pub(crate) fn join_registry(fleet: &Fleet, registry: &crate::registry::Registry) {
    let join = |fleet: &Fleet, breaker: &Arc<Breaker>| {
        let config = breaker.config();
        if config.fleet() {
            fleet.join(breaker, config.fleet_quorum());
        }
    };
    let watching = fleet.clone();
    registry.watch(move |_, breaker| join(&watching, breaker));
    // Only a change of the fleet's keys: a breaker joined in code, whose configuration
    // leaves the fleet off, stays in when an override changes its rate.
    let watching = fleet.clone();
    registry.watch_reconfigured(move |breaker, before, after| {
        let fleet_keys = |c: &crate::Config| (c.fleet(), c.fleet_quorum());
        if fleet_keys(before) == fleet_keys(after) {
            return;
        }
        match after.fleet() {
            true => watching.join(breaker, after.fleet_quorum()),
            false => watching.leave(breaker),
        }
    });
    for entry in registry.list() {
        join(fleet, entry.breaker());
    }
}
