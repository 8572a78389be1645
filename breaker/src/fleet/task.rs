//! The background task: owns the connection and the subscription, keeps the view, writes
//! and renews this instance's own opinions, and restarts itself when the store fails.
//!
//! Nothing here runs on a caller's path: breakers hand their news over a channel, and the
//! task's failures become [`FleetEvent`](super::FleetEvent)s and log lines, never errors.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedReceiver, WeakUnboundedSender};
use tokio::time::{Instant, MissedTickBehavior};

use super::backlog::Backlog;
use super::command::{Command, Settings};
use super::connection::{Conn, Heard, Waits};
use super::layout::{self, Kind, Message};
use super::members::{Joined, Left, Members};
use super::opinions::Own;
use super::store::{bounded, later, Failure};
use super::view::Applied;
use super::Inner;
use crate::{Breaker, State};

/// The least time a connection gets, with its TLS handshake: an unoptimized build on a
/// busy machine takes more than the default `timeout` for a handshake.
const CONNECT_AT_LEAST: Duration = Duration::from_secs(2);

pub(crate) struct Task {
    pub(super) inner: Arc<Inner>,
    pub(super) settings: Settings,
    pub(super) channel: String,
    commands: UnboundedReceiver<Command>,
    /// What new members' listeners send on; weak, so that the task ends with the handles.
    sender: WeakUnboundedSender<Command>,
    pub(super) own: HashMap<Arc<str>, Own>,
    pub(super) members: Members,
    /// This process's messages, counted: every message carries `epoch + seq`.
    pub(super) seq: u64,
    /// Where this process's sequence numbers start: the store's time in microseconds at its
    /// first connection, so that an instance restarted under its fixed id speaks with higher
    /// numbers than in its former life, and its peers hear it.
    pub(super) epoch: Option<u64>,
    /// Names forgotten (their breakers left or are gone) whose own opinion is still to be
    /// withdrawn from the store.
    gone: Vec<Arc<str>>,
    /// Names whose probe lease a member that no longer uses it held: to be given back.
    leases_gone: Vec<Arc<str>>,
    /// Names forgotten whose channel (on a cluster) is still to be unsubscribed from.
    deaf: Vec<Arc<str>>,
    /// When the view, degraded by a backlog past its bound, is to be read anew.
    catch_up: Option<Instant>,
    /// When the view was last asked for whole.
    read_at: Instant,
}

impl Task {
    pub(crate) fn new(
        inner: Arc<Inner>,
        settings: Settings,
        commands: UnboundedReceiver<Command>,
        sender: WeakUnboundedSender<Command>,
    ) -> Self {
        let channel = layout::channel(&settings.prefix);
        Self {
            inner,
            settings,
            channel,
            commands,
            sender,
            own: HashMap::new(),
            members: Members::default(),
            seq: 0,
            epoch: None,
            gone: Vec::new(),
            leases_gone: Vec::new(),
            deaf: Vec::new(),
            catch_up: None,
            read_at: Instant::now(),
        }
    }

    /// Connects, serves, and after a failure waits and connects again, until every handle
    /// of the fleet is gone.
    pub(crate) async fn run(mut self) {
        let mut backoff = self.settings.timeout;
        loop {
            let failure = match self.connect().await {
                Ok((conn, stream)) => {
                    backoff = self.settings.timeout;
                    match self.serve(conn, stream).await {
                        Ok(()) => return,
                        Err(failure) => failure,
                    }
                }
                Err(failure) => failure,
            };
            self.inner.degraded(&failure);
            // Commands keep coming while the store is away: served locally until it is back.
            let until = later(Instant::now(), backoff);
            backoff = (backoff * 2).min(self.settings.ttl);
            loop {
                let deadline = self.members.next_deadline();
                tokio::select! {
                    command = self.commands.recv() => match command {
                        None => return,
                        Some(command) => self.offline(command),
                    },
                    () = tokio::time::sleep_until(until) => break,
                    // An idle lease expires in the store by its time-to-live.
                    () = at(deadline) => {
                        self.members.on_deadline(&self.inner, None, Instant::now()).await;
                    }
                }
            }
        }
    }

    async fn connect(&mut self) -> Result<(Conn, Backlog), Failure> {
        let wait = self.settings.timeout;
        // A connection, with its TLS handshake, may take longer than an answer: it is on no
        // caller's path.
        let waits = Waits {
            wait,
            connecting: (wait * 4).max(CONNECT_AT_LEAST),
            backlog: self.settings.backlog,
        };
        // Subscribed again after every reconnection: the channels of the names tracked now.
        self.deaf.clear();
        let channels = match self.settings.store.sharded() {
            false => vec![self.channel.clone()],
            true => {
                let view = self.inner.view.lock();
                let prefix = &self.settings.prefix;
                view.names()
                    .map(|name| layout::name_channel(prefix, name))
                    .collect()
            }
        };
        self.settings.store.connect(&channels, &waits).await
    }

    /// Serves one connection until it fails (`Err`) or every handle is gone (`Ok`).
    async fn serve(&mut self, mut conn: Conn, mut backlog: Backlog) -> Result<(), Failure> {
        if self.epoch.is_none() {
            let (secs, micros): (u64, u64) = bounded(
                self.settings.timeout,
                redis::cmd("TIME").query_async(&mut conn),
            )
            .await?;
            self.epoch = Some(secs.saturating_mul(1_000_000).saturating_add(micros));
        }
        // Messages were lost while unsubscribed: the snapshot makes up for them, and the
        // store may have lost this instance's opinions, which are written again.
        self.catch_up = None;
        self.read_anew(&mut conn).await?;
        self.renew(&mut conn).await?;
        self.inner.recovered();
        let mut renew = tokio::time::interval_at(
            later(Instant::now(), self.settings.ttl / 3),
            self.settings.ttl / 3,
        );
        renew.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let every = self.settings.snapshot_every;
        let mut snapshot = tokio::time::interval_at(later(Instant::now(), every), every);
        snapshot.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            let deadline = self.members.next_deadline();
            tokio::select! {
                heard = backlog.next() => match heard {
                    None => return Err("the subscription was closed".into()),
                    Some((heard, weight)) => match backlog.overflowed() {
                        None => self.heard(&mut conn, heard).await?,
                        Some(dropped) => {
                            let mut kept = match heard {
                                Heard::Message(_) => Vec::new(),
                                news => vec![news],
                            };
                            kept.extend(self.overflowed(&mut backlog, dropped + weight as u64));
                            for heard in kept {
                                self.heard(&mut conn, heard).await?;
                            }
                        }
                    },
                },
                command = self.commands.recv() => match command {
                    None => {
                        self.withdraw_all(&mut conn).await;
                        return Ok(());
                    }
                    Some(command) => {
                        self.online(&mut conn, command).await?;
                        self.withdraw_gone(&mut conn).await?;
                    }
                },
                _ = renew.tick(), if !self.own.is_empty() || self.members.holds_a_lease() => {
                    self.renew(&mut conn).await?;
                    self.members.renew_leases(&self.inner, &mut conn, &self.settings).await?;
                }
                _ = snapshot.tick() => {
                    self.prune(None);
                    self.withdraw_gone(&mut conn).await?;
                    self.read_anew(&mut conn).await?;
                }
                () = at(self.catch_up) => self.read_anew(&mut conn).await?,
                () = at(deadline) => {
                    let lease = (&mut conn, &self.settings);
                    let idle = self.members.on_deadline(&self.inner, Some(lease), Instant::now()).await;
                    self.leases_gone.extend(idle);
                    self.withdraw_gone(&mut conn).await?;
                }
            }
        }
    }

    /// Serves what the subscription heard.
    async fn heard(&mut self, conn: &mut Conn, heard: Heard) -> Result<(), Failure> {
        match heard {
            Heard::Message(message) => self.on_message(&message),
            // A node's messages were lost while its connection was made again.
            Heard::Lost => self.read_anew(conn).await?,
            Heard::Unsubscribed(channel) => self.resubscribe(conn, &channel).await?,
            Heard::Switched => {
                return Err("the sentinels named another master, or one of them was lost".into())
            }
        }
        Ok(())
    }

    /// The messages came faster than the task read them, and some were dropped: the rest of
    /// the backlog goes too (handing back the connection's news in it), and the view is
    /// degraded until it is read anew, at once, or a third of the ttl after it was last read
    /// whole: every message dropped was written to the store before it was published, and a
    /// load past what the task reads costs the store at most three readings per ttl.
    fn overflowed(&mut self, backlog: &mut Backlog, dropped: u64) -> Vec<Heard> {
        let (kept, cleared) = backlog.clear();
        self.inner
            .health
            .count(|h| &mut h.messages_dropped, dropped + cleared);
        self.inner.degraded(&format!(
            "messages came faster than they were read: more than {} waited, and were dropped; the view is read anew",
            self.settings.backlog
        ));
        if self.catch_up.is_none() {
            let at = later(self.read_at, self.settings.ttl / 3);
            self.catch_up = Some(at.max(Instant::now()));
        }
        kept
    }

    /// Reads every name tracked anew: a view degraded by its backlog is whole again.
    async fn read_anew(&mut self, conn: &mut Conn) -> Result<(), Failure> {
        self.read_at = Instant::now();
        self.snapshot(conn, None).await?;
        if self.catch_up.take().is_some() {
            self.inner.recovered();
        }
        Ok(())
    }

    /// Applies a message heard, or each message of a batch.
    fn on_message(&mut self, message: &redis::Msg) {
        let text = String::from_utf8_lossy(message.get_payload_bytes());
        match layout::unbatch(&text) {
            None => self.on_text(&text),
            Some(Ok(texts)) => texts.into_iter().for_each(|text| self.on_text(text)),
            Some(Err(layout::Malformed(what))) => {
                self.inner.health.count(|h| &mut h.messages_malformed, 1);
                #[cfg(feature = "tracing")]
                tracing::warn!(text = %text, field = what, "fleet message ignored: malformed");
                let _ = what;
            }
        }
    }

    fn on_text(&mut self, text: &str) {
        let parsed = match Message::parse(text) {
            Ok(parsed) => parsed,
            Err(layout::Malformed(what)) => {
                self.inner.health.count(|h| &mut h.messages_malformed, 1);
                #[cfg(feature = "tracing")]
                tracing::warn!(text = %text, field = what, "fleet message ignored: malformed");
                let _ = what;
                return;
            }
        };
        if let Some(signer) = &self.settings.signer {
            if !parsed.signed_by(signer) {
                self.inner.health.count(|h| &mut h.messages_forged, 1);
                #[cfg(feature = "tracing")]
                tracing::warn!(text = %text, "fleet message ignored: not signed with the fleet's secret");
                return;
            }
        }
        let now = Instant::now();
        let applied = self.inner.view.lock().apply(&parsed, now);
        match applied {
            Applied::Changed => self.members.reconsider(&self.inner, parsed.name, now),
            Applied::LeaseFreed => self.members.lease_freed(parsed.name, now),
            Applied::TrialPassed => self.members.trial_passed(&self.inner, parsed.name),
            Applied::NotMine => {}
            Applied::Stale => {
                #[cfg(feature = "tracing")]
                tracing::info!(text = %text, "fleet message ignored: older than what the view holds");
            }
            Applied::Full => {
                #[cfg(feature = "tracing")]
                tracing::warn!(text = %text, "fleet message ignored: too many instances for one name");
            }
        }
    }

    /// A node dropped this instance's subscription to `channel`: if its name is still
    /// tracked, its slot moved (a resharding), and the name is subscribed to again, on the
    /// node that holds it now, and read anew.
    async fn resubscribe(&mut self, conn: &mut Conn, channel: &str) -> Result<(), Failure> {
        let prefix = &self.settings.prefix;
        let Some(name) = layout::name_of_channel(prefix, channel) else {
            return Ok(());
        };
        if !self.inner.view.lock().tracks(name) {
            return Ok(());
        }
        let name: Arc<str> = name.into();
        conn.listen(prefix, &name, self.settings.timeout).await?;
        self.snapshot(conn, Some(&name)).await
    }

    /// A command while connected.
    pub(super) async fn online(
        &mut self,
        conn: &mut Conn,
        command: Command,
    ) -> Result<(), Failure> {
        match command {
            Command::Join { breaker, quorum } => {
                if let Some((name, own_open)) = self.join(&breaker, quorum) {
                    let (prefix, wait) = (&self.settings.prefix, self.settings.timeout);
                    conn.listen(prefix, &name, wait).await?;
                    if own_open {
                        self.write(conn, &name).await?;
                    }
                    self.snapshot(conn, Some(&name)).await?;
                }
            }
            Command::Leave(breaker) => {
                let name = breaker.upgrade().map(|b| Arc::<str>::from(b.name()));
                if let (Some(Left { withdraw, lease }), Some(name)) =
                    (self.members.leave(&breaker), name)
                {
                    if withdraw && self.own.contains_key(&name) {
                        self.withdraw(conn, &name).await?;
                    }
                    if lease {
                        self.release_lease(conn, &name).await?;
                    }
                    self.prune(Some(&name));
                }
            }
            Command::Opine { name, left } => {
                self.opine(Arc::clone(&name), left);
                self.members.own_open(&name, left, &self.inner);
                self.write(conn, &name).await?;
            }
            Command::Withdraw { name } => self.withdraw(conn, &name).await?,
            Command::Settled { name, passed } => {
                if passed && self.members.settle(&name) {
                    self.release_lease_as(conn, &name, Kind::Passed).await?;
                }
            }
            Command::Flush(done) => {
                let _ = done.send(());
            }
        }
        Ok(())
    }

    /// A command while the store is away: kept for when it is back.
    fn offline(&mut self, command: Command) {
        match command {
            Command::Join { breaker, quorum } => {
                self.join(&breaker, quorum);
                self.gone.clear();
                self.leases_gone.clear();
            }
            // The store's copy of a withdrawn opinion expires; the lease by its time-to-live.
            Command::Leave(breaker) => {
                let name = breaker.upgrade().map(|b| Arc::<str>::from(b.name()));
                if let (Some(Left { withdraw: true, .. }), Some(name)) =
                    (self.members.leave(&breaker), name.clone())
                {
                    self.own.remove(&name);
                }
                if let Some(name) = name {
                    self.prune(Some(&name));
                }
                // The store's copies expire.
                self.gone.clear();
                self.leases_gone.clear();
            }
            Command::Opine { name, left } => {
                self.members.own_open(&name, left, &self.inner);
                self.opine(name, left);
            }
            // Written again from `own` when the store is back; the store's copy expires.
            Command::Withdraw { name } => {
                self.own.remove(&name);
            }
            // The lease expires by its time-to-live.
            Command::Settled { name, passed } => {
                if passed {
                    self.members.settle(&name);
                }
            }
            Command::Flush(done) => {
                let _ = done.send(());
            }
        }
    }

    /// Puts a breaker in the fleet (see [`Members::join`]); its name, and whether it holds
    /// an OPEN of its own, now this instance's opinion, if it entered.
    fn join(&mut self, breaker: &Weak<Breaker>, quorum: usize) -> Option<(Arc<str>, bool)> {
        let breaker = breaker.upgrade()?;
        if self.inner.view.lock().is_full() {
            self.prune(None);
        }
        match self
            .members
            .join(&self.inner, &breaker, quorum, &self.sender)
        {
            Joined::Entered => {}
            Joined::Stayed => {
                let name: Arc<str> = breaker.name().into();
                self.members.reconsider(&self.inner, &name, Instant::now());
                return None;
            }
            Joined::Refused => return None,
        }
        let name: Arc<str> = breaker.name().into();
        // An OPEN it entered with: its listener heard of it before it was a member, or not
        // at all.
        let own_open = breaker.state() == State::Open && !breaker.in_fleet_open();
        let left = breaker.open_left().filter(|_| own_open);
        if let Some(left) = left {
            self.opine(Arc::clone(&name), left);
        }
        Some((name, left.is_some()))
    }

    /// Forgets the names, of `only` or all, that no breaker of this instance is in the
    /// fleet with any more (see [`Members::prune`]); their own opinions are to be withdrawn.
    fn prune(&mut self, only: Option<&str>) {
        let pruned = self.members.prune(&self.inner, only);
        self.leases_gone.extend(pruned.leases);
        for name in pruned.forgotten {
            if self.settings.store.sharded() {
                self.deaf.push(Arc::clone(&name));
            }
            if self.own.remove(&name).is_some() {
                self.gone.push(name);
            }
        }
    }

    /// Withdraws the own opinions of the names forgotten.
    async fn withdraw_gone(&mut self, conn: &mut Conn) -> Result<(), Failure> {
        while let Some(name) = self.gone.pop() {
            self.withdraw(conn, &name).await?;
        }
        while let Some(name) = self.leases_gone.pop() {
            self.release_lease(conn, &name).await?;
        }
        while let Some(name) = self.deaf.pop() {
            // Tracked again meanwhile: still heard.
            if !self.inner.view.lock().tracks(&name) {
                let (prefix, wait) = (&self.settings.prefix, self.settings.timeout);
                conn.unlisten(prefix, &name, wait).await?;
            }
        }
        Ok(())
    }
}

/// Waits until `deadline`, or forever without one.
async fn at(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
