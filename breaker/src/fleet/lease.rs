//! The probe lease: one instance at a time probes a name's downstream after an OPEN, its own
//! or its peers'. A member asks for it shortly before its OPEN ends; granted, it half-opens
//! when that OPEN ends and not before; refused, it stays OPEN until the lease may be free.
//! When the holder's trial passes, every waiter half-opens at once. A holder
//! keeps the lease only while it uses it: it is renewed while the holder's probe is in
//! flight, given back when the trial ends, when no probe started in time, when the member
//! leaves or is gone and when the fleet stops; a renewal the store refuses means it is lost.

use std::sync::Arc;
use std::time::Duration;

use super::connection::Conn;
use tokio::time::Instant;

use super::command::Settings;
use super::layout::{self, Keys};
use super::members::{Held, Members};
use super::store::{bounded_for_name, later, millis, Failure};
use super::Inner;
use crate::{events::TransitionReason, Breaker, State};

impl Members {
    /// A member of `name` opened by its own judgement for `left`: it asks for the lease
    /// shortly before that OPEN ends, as an adopted OPEN does, so that one instance at a
    /// time probes the downstream however each opened.
    pub(crate) fn own_open(&mut self, name: &str, left: Duration, inner: &Inner) {
        let now = Instant::now();
        let end = later(now, left);
        for slot in self.by_name.get_mut(name).into_iter().flatten() {
            let own = slot
                .member
                .live()
                .is_some_and(|b| b.state() == State::Open && !b.in_fleet_open());
            if own {
                slot.lease_at = Some(lease_time(now, end, inner.lead));
                slot.not_before = Some(end);
            }
        }
    }

    /// The holder of `name`'s lease passed its trial: every member still waiting for the
    /// lease half-opens now (jittered within a tenth of the ttl) and closes by its own probes.
    pub(crate) fn trial_passed(&mut self, inner: &Inner, name: &str) {
        for slot in self.by_name.get_mut(name).into_iter().flatten() {
            let Some(breaker) = slot.member.live() else {
                continue;
            };
            if slot.lease_at.is_some() && breaker.state() == State::Open {
                slot.lease_at = None;
                slot.not_before = None;
                open_adopted(&breaker, jitter(inner.ttl));
            }
        }
    }

    /// A lease on `name` was given back: its waiters ask at once.
    pub(crate) fn lease_freed(&mut self, name: &str, now: Instant) {
        for slot in self.by_name.get_mut(name).into_iter().flatten() {
            if slot.lease_at.is_some() {
                slot.lease_at = Some(now);
            }
        }
    }

    /// The earliest time a member asks for the probe lease, or gives an idle one back.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.by_name
            .values()
            .flatten()
            .flat_map(|slot| [slot.lease_at, slot.lease.as_ref().map(|held| held.idle_at)])
            .flatten()
            .min()
    }

    /// Asks for the probe lease for every member whose time came, and returns the names of
    /// the leases whose holders started no probe in time, to be given back. Granted, the
    /// breaker half-opens when its OPEN ends; refused, it stays OPEN until a lease may be
    /// free; with no store (`store` is `None`, or it fails), it probes on its own.
    pub(crate) async fn on_deadline(
        &mut self,
        inner: &Inner,
        mut store: Option<(&mut Conn, &Settings)>,
        now: Instant,
    ) -> Vec<Arc<str>> {
        let mut idle = Vec::new();
        for (name, slots) in &mut self.by_name {
            for slot in slots.iter_mut() {
                if let Some(held) = &slot.lease {
                    if held.idle_at <= now {
                        match slot.member.breaker.upgrade() {
                            // In flight: the renewals keep it.
                            Some(b) if probing(&b) => {
                                slot.lease = Some(Held {
                                    idle_at: later(now, inner.ttl / 3),
                                });
                            }
                            // Given back, so that a waiter asks at once; still held OPEN by
                            // the fleet, it asks again later, in turn.
                            live => {
                                slot.lease = None;
                                idle.push(Arc::clone(name));
                                if live.is_some_and(|b| b.in_fleet_open()) {
                                    slot.lease_at = Some(later(now, inner.ttl / 2));
                                }
                            }
                        }
                    }
                }
                if slot.lease_at.is_none_or(|at| at > now) {
                    continue;
                }
                slot.lease_at = None;
                let Some(breaker) = slot.member.breaker.upgrade() else {
                    continue;
                };
                // Every OPEN of a member waits for the lease, its own or its peers'.
                if breaker.state() != State::Open {
                    continue;
                }
                let Some((conn, settings)) = store.as_mut() else {
                    continue;
                };
                let keys = Keys::new(&settings.prefix, name);
                let mut script = layout::TAKE_LEASE.prepare_invoke();
                script
                    .key(&keys.lease)
                    .arg(&*inner.instance)
                    .arg(1)
                    .arg(millis(settings.lease_ttl));
                let asked = script.invoke_async::<u64>(*conn);
                match bounded_for_name(name, settings.timeout, asked).await {
                    // It half-opens when its OPEN (its own, or the quorum's) ends, not
                    // before: an OPEN may have been kept longer only to wait for the lease.
                    Ok(Some(0)) => {
                        let granted = Instant::now();
                        if breaker.in_fleet_open() {
                            let end = slot.not_before.unwrap_or(granted).max(granted);
                            open_adopted(&breaker, end - granted);
                        }
                        let unused = settings.lease_ttl.saturating_sub(settings.timeout);
                        slot.lease = Some(Held {
                            idle_at: later(granted, unused),
                        });
                    }
                    // Open until the lease may be free, and long enough to ask again before.
                    Ok(Some(wait)) => {
                        let wait = Duration::from_millis(wait).min(settings.lease_ttl);
                        let until =
                            later(Instant::now(), wait.max(inner.lead * 2) + jitter(inner.ttl));
                        if open_adopted(&breaker, until - Instant::now()) {
                            slot.lease_at = Some(lease_time(Instant::now(), until, inner.lead));
                        }
                    }
                    Ok(None) | Err(_) => {
                        #[cfg(feature = "tracing")]
                        tracing::warn!(
                            breaker = &**name,
                            "fleet probe lease unavailable: probing locally"
                        );
                    }
                }
            }
        }
        idle
    }

    /// Whether a member holds a probe lease.
    pub(crate) fn holds_a_lease(&self) -> bool {
        self.by_name
            .values()
            .flatten()
            .any(|slot| slot.lease.is_some())
    }

    /// The names whose probe lease a member holds, now given back (the fleet stops).
    pub(crate) fn give_all_back(&mut self) -> Vec<Arc<str>> {
        let mut names = Vec::new();
        for (name, slots) in &mut self.by_name {
            for slot in slots.iter_mut() {
                if slot.lease.take().is_some() {
                    names.push(Arc::clone(name));
                }
            }
        }
        names
    }

    /// Renews the leases whose holders' probes are in flight, so that no second instance
    /// starts one. A renewal the store refuses (the lease expired, or the store lost it)
    /// means the lease is lost: its holder stops believing it holds it.
    pub(crate) async fn renew_leases(
        &mut self,
        inner: &Inner,
        conn: &mut Conn,
        settings: &Settings,
    ) -> Result<(), Failure> {
        for (name, slots) in &mut self.by_name {
            for slot in slots.iter_mut().filter(|slot| slot.lease.is_some()) {
                let in_flight = slot.member.breaker.upgrade().is_some_and(|b| probing(&b));
                if !in_flight {
                    continue;
                }
                let keys = Keys::new(&settings.prefix, name);
                let mut script = layout::RENEW_LEASE.prepare_invoke();
                script
                    .key(&keys.lease)
                    .arg(&*inner.instance)
                    .arg(millis(settings.lease_ttl));
                let renewed = script.invoke_async::<u64>(conn);
                match bounded_for_name(name, settings.timeout, renewed).await? {
                    Some(1) => {
                        let unused = settings.lease_ttl.saturating_sub(settings.timeout);
                        slot.lease = Some(Held {
                            idle_at: later(Instant::now(), unused),
                        });
                    }
                    _ => {
                        #[cfg(feature = "tracing")]
                        tracing::warn!(
                            breaker = &**name,
                            "fleet probe lease lost: the store no longer holds it"
                        );
                        slot.lease = None;
                    }
                }
            }
        }
        Ok(())
    }

    /// Takes back the leases that members of `name` held, whose trial ended; returns
    /// whether one was held.
    pub(crate) fn settle(&mut self, name: &str) -> bool {
        let mut held = false;
        for slot in self.by_name.get_mut(name).into_iter().flatten() {
            held |= slot.lease.take().is_some();
        }
        held
    }
}

/// Whether a probe of `breaker` is in flight.
fn probing(breaker: &Breaker) -> bool {
    breaker.state() == State::HalfOpen
        && breaker
            .snapshot()
            .trial
            .is_some_and(|trial| trial.in_flight > 0)
}

/// Opens `breaker` for `left` for its peers, through its own change path; from the fleet's
/// OPEN, the period is replaced.
pub(super) fn open_adopted(breaker: &Breaker, left: Duration) -> bool {
    let until = crate::clock::later(breaker.clock().now(), left);
    breaker.open_until_because(until, TransitionReason::FleetOpen);
    true
}

/// A random delay of up to a tenth of the ttl, so that instances that adopted one quorum
/// do not all ask for the lease at once.
pub(super) fn jitter(ttl: Duration) -> Duration {
    let max = millis(ttl / 10).max(1);
    Duration::from_millis(fastrand::u64(0..=max))
}

/// When to ask for the lease before an OPEN that ends at `until`: `lead` (twice the store's
/// timeout) before, so that the answer comes before the OPEN ends; now if that is past.
pub(super) fn lease_time(now: Instant, until: Instant, lead: Duration) -> Instant {
    until.checked_sub(lead).unwrap_or(now).max(now)
}
