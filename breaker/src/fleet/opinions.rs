//! This instance's own opinions: kept, written to the store and published, renewed every
//! ttl/3, withdrawn; and its probe leases given back.
//!
//! On one node every instance hears every message on the one channel, and renewals are most
//! of them (every OPEN opinion of every instance, every ttl/3): a round of renewals goes out
//! as one message per [`BATCH`] names after their writes, each inside it the very message
//! (and signature) it would have been alone, so that a view applies them as before and hears
//! the same, in a [`BATCH`]th of the messages. New opinions and withdrawals go out alone, at
//! once, with their writes. On a cluster each name has its channel, heard only by the
//! instances that track it: there a renewal goes out with its write.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use redis::ScriptInvocation;
use tokio::time::Instant;

use super::command::Command;
use super::connection::Conn;
use super::layout::{self, Keys, Kind, Message};
use super::sign;
use super::store::{bounded, bounded_for_name, later, millis, millis_rounded_up, Failure};
use super::task::Task;

/// The most renewals one message carries on one node: a message waiting in a peer's backlog
/// stays a few kilobytes.
pub(crate) const BATCH: usize = 64;

/// The most renewals written at once: a round of many names costs a few round trips, not one
/// per name, and the task is soon free for what it hears.
const IN_FLIGHT: usize = 64;

/// An opinion of this instance's own, kept to be renewed and rewritten after a reconnection.
pub(super) struct Own {
    pub(super) until: Instant,
    pub(super) seq: u64,
}

impl Task {
    /// A message of this instance's, signed if the fleet has a secret.
    fn message(&self, kind: Kind, seq: u64, until_ms: u64, expires_ms: u64, name: &str) -> String {
        let message = Message {
            kind,
            instance: &self.inner.instance,
            seq,
            until_ms,
            expires_ms,
            name,
            tag: None,
        };
        message.text(self.settings.signer.as_ref())
    }

    /// The channel the opinions of `name` are published on, and the command that does it.
    fn channel_of(&self, name: &str) -> (String, &'static str) {
        let sharded = self.settings.store.sharded();
        let channel = match sharded {
            false => self.channel.clone(),
            true => layout::name_channel(&self.settings.prefix, name),
        };
        (channel, layout::publish(sharded))
    }

    /// The sequence number `seq` of this process as its messages carry it.
    fn wire(&self, seq: u64) -> u64 {
        self.epoch.unwrap_or(0).saturating_add(seq)
    }

    /// Keeps an opinion of this instance's: `name` OPEN for `left` from now.
    pub(super) fn opine(&mut self, name: Arc<str>, left: Duration) {
        self.seq += 1;
        let own = Own {
            until: later(Instant::now(), left),
            seq: self.seq,
        };
        self.own.insert(name, own);
    }

    /// Withdraws this instance's opinion of `name`, and publishes that.
    pub(super) async fn withdraw(
        &mut self,
        conn: &mut Conn,
        name: &Arc<str>,
    ) -> Result<(), Failure> {
        self.own.remove(name);
        let keys = Keys::new(&self.settings.prefix, name);
        self.announce(
            conn,
            name,
            &layout::WITHDRAW,
            &[&keys.live, &keys.until],
            Kind::Closed,
        )
        .await
    }

    /// Runs `script` on `keys` with this instance, the channel of `name` and a message of
    /// `kind` for it (a new sequence number, no times), which the script publishes.
    async fn announce(
        &mut self,
        conn: &mut Conn,
        name: &Arc<str>,
        script: &redis::Script,
        keys: &[&str],
        kind: Kind,
    ) -> Result<(), Failure> {
        self.seq += 1;
        let message = self.message(kind, self.wire(self.seq), 0, 0, name);
        let (channel, publish) = self.channel_of(name);
        let mut invocation = script.prepare_invoke();
        for key in keys {
            invocation.key(*key);
        }
        invocation
            .arg(&*self.inner.instance)
            .arg(channel)
            .arg(message)
            .arg(publish);
        let wait = self.settings.timeout;
        bounded_for_name(name, wait, invocation.invoke_async::<i64>(conn)).await?;
        Ok(())
    }

    /// Gives the probe lease of `name` back, and publishes that, so that waiters ask now.
    pub(super) async fn release_lease(
        &mut self,
        conn: &mut Conn,
        name: &Arc<str>,
    ) -> Result<(), Failure> {
        self.release_lease_as(conn, name, Kind::Free).await
    }

    /// Gives the probe lease of `name` back, publishing `kind`: `Free`, or `Passed` when
    /// the trial passed and the waiters half-open.
    pub(super) async fn release_lease_as(
        &mut self,
        conn: &mut Conn,
        name: &Arc<str>,
        kind: Kind,
    ) -> Result<(), Failure> {
        let keys = Keys::new(&self.settings.prefix, name);
        self.announce(conn, name, &layout::RELEASE_LEASE, &[&keys.lease], kind)
            .await
    }

    /// Writes (renews) this instance's opinion of `name` and publishes it.
    pub(super) async fn write(&mut self, conn: &mut Conn, name: &Arc<str>) -> Result<(), Failure> {
        self.write_as(conn, name, true).await.map(|_| ())
    }

    /// Writes (renews) this instance's opinion of `name`, publishing it if `publish`;
    /// whether the store took it.
    async fn write_as(
        &mut self,
        conn: &mut Conn,
        name: &Arc<str>,
        publish: bool,
    ) -> Result<bool, Failure> {
        let Some(script) = self.opine_script(name, publish) else {
            return Ok(false);
        };
        let wait = self.settings.timeout;
        let written = bounded_for_name(name, wait, script.invoke_async::<i64>(conn)).await?;
        Ok(written.is_some())
    }

    /// The script that writes (renews) this instance's opinion of `name`, publishing it if
    /// `publish`; `None` when the opinion ended.
    fn opine_script(
        &mut self,
        name: &Arc<str>,
        publish: bool,
    ) -> Option<ScriptInvocation<'static>> {
        let own = self.own.get(name)?;
        let left = own.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            self.own.remove(name);
            return None;
        }
        let keys = Keys::new(&self.settings.prefix, name);
        let (seq, left) = (self.wire(own.seq), millis_rounded_up(left).max(1));
        let ttl = millis(self.settings.ttl);
        // What the row keeps after its end: with a secret, the time left it may claim and
        // the tag of both.
        let row = match &self.settings.signer {
            None => seq.to_string(),
            Some(signer) => {
                let tag = signer.tag(&sign::row_text(&self.inner.instance, seq, left, name));
                format!("{seq} {left} {tag}")
            }
        };
        let (message, (channel, publish)) = match publish {
            true => (
                self.message(Kind::Open, seq, left, left.min(ttl), name),
                self.channel_of(name),
            ),
            false => (String::new(), (String::new(), "")),
        };
        let mut script = layout::OPINE.prepare_invoke();
        script
            .key(&keys.live)
            .key(&keys.until)
            .arg(&*self.inner.instance)
            .arg(row)
            .arg(left)
            .arg(ttl)
            .arg(channel)
            .arg(message)
            .arg(publish);
        Some(script)
    }

    /// Renews every opinion of this instance's that still holds, up to [`IN_FLIGHT`] writes
    /// at once. On one node their messages go out after the writes, [`BATCH`] to a message;
    /// on a cluster each with its write, on its name's channel.
    pub(super) async fn renew(&mut self, conn: &mut Conn) -> Result<(), Failure> {
        let started = Instant::now();
        self.own.retain(|_, own| own.until > started);
        let names: Vec<Arc<str>> = self.own.keys().cloned().collect();
        let batched = !self.settings.store.sharded();
        let wait = self.settings.timeout;
        // Collected before the stream is built, each call owning what it needs (as the
        // snapshot's): with the closure inside the stream, rustc cannot prove the task's
        // future `Send`.
        let mut calls = Vec::with_capacity(names.len());
        for name in names {
            let Some(script) = self.opine_script(&name, !batched) else {
                continue;
            };
            let mut conn = conn.clone();
            calls.push(async move {
                let written = bounded_for_name(&name, wait, script.invoke_async::<i64>(&mut conn));
                (written.await, name)
            });
        }
        let written: Vec<_> = futures_util::stream::iter(calls)
            .buffered(IN_FLIGHT)
            .collect()
            .await;
        let mut renewed = Vec::with_capacity(written.len());
        for (written, name) in written {
            if written?.is_some() {
                renewed.push(name);
            }
        }
        if !batched {
            return Ok(());
        }
        // Told as the store holds them now: the times left since, and no expiry later than
        // the first write's.
        let now = Instant::now();
        let expires = millis(self.settings.ttl.saturating_sub(now - started));
        let mut texts = Vec::with_capacity(renewed.len());
        for name in &renewed {
            let Some(own) = self.own.get(name) else {
                continue;
            };
            let left = own.until.saturating_duration_since(now);
            if left.is_zero() {
                continue;
            }
            let left = millis_rounded_up(left).max(1);
            let seq = self.wire(own.seq);
            texts.push(self.message(Kind::Open, seq, left, left.min(expires), name));
        }
        for chunk in texts.chunks(BATCH) {
            let mut publish = redis::cmd("PUBLISH");
            publish.arg(&self.channel).arg(layout::batch(chunk));
            bounded(wait, publish.query_async::<i64>(conn)).await?;
        }
        Ok(())
    }

    /// On the way out: the opinions of an instance that stops stop counting now, not at the
    /// end of their time-to-live.
    pub(super) async fn withdraw_all(&mut self, conn: &mut Conn) {
        let names: Vec<Arc<str>> = self.own.keys().cloned().collect();
        for name in names {
            let _ = self.online(conn, Command::Withdraw { name }).await;
        }
        // And its leases go back, so that a waiter asks at once.
        for name in self.members.give_all_back() {
            let _ = self.release_lease(conn, &name).await;
        }
    }
}
