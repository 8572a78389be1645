//! The snapshot: the live opinions of the names this instance tracks, read whole from the
//! store, to heal lost messages. Bad data under one name costs that name alone; with a
//! secret, only the rows signed with it are believed.

use std::sync::Arc;

use futures_util::StreamExt;
use tokio::time::Instant;

use super::connection::Conn;

use super::layout::{self, Keys};
use super::sign;
use super::store::{self, bounded, parse_rows, Failure};
use super::task::Task;

impl Task {
    /// Reads the live opinions of `only`, or of every name tracked, into the view.
    pub(super) async fn snapshot(
        &mut self,
        conn: &mut Conn,
        only: Option<&Arc<str>>,
    ) -> Result<(), Failure> {
        let names: Vec<Arc<str>> = match only {
            Some(name) => vec![Arc::clone(name)],
            None => self.inner.view.lock().names().cloned().collect(),
        };
        // One node reads 64 names per script; a cluster one name per script, since the keys
        // of two names may live on two nodes, and up to 64 scripts in flight at once.
        let (per_script, in_flight) = match self.settings.store.sharded() {
            false => (64, 1),
            true => (1, 64),
        };
        let (prefix, wait) = (&self.settings.prefix, self.settings.timeout);
        let max_instances = self.inner.max_instances;
        let asked = Instant::now();
        // Collected before the stream is built, each call owning what it needs: with the
        // closure inside the stream, rustc cannot prove the task's future `Send`.
        let mut calls = Vec::new();
        for chunk in names.chunks(per_script) {
            let mut conn = conn.clone();
            let mut script = layout::SNAPSHOT.prepare_invoke();
            for name in chunk {
                let keys = Keys::new(prefix, name);
                script.key(keys.live).key(keys.until);
            }
            script.arg(max_instances);
            calls.push(async move {
                let reply: Vec<Vec<String>> = bounded(wait, script.invoke_async(&mut conn)).await?;
                Ok::<_, Failure>(reply)
            });
        }
        let replies = futures_util::stream::iter(calls)
            .buffered(in_flight)
            .collect::<Vec<_>>()
            .await;
        for (chunk, replied) in names.chunks(per_script).zip(replies) {
            let reply = replied?;
            let now = Instant::now();
            for (name, row) in chunk.iter().zip(&reply) {
                let read = match parse_rows(row) {
                    Ok(read) => read,
                    Err(_why) => {
                        self.inner.health.count(|h| &mut h.rows_skipped, 1);
                        #[cfg(feature = "tracing")]
                        tracing::warn!(
                            breaker = &**name,
                            reason = %_why,
                            "fleet snapshot of a name skipped: its keys are unreadable"
                        );
                        continue;
                    }
                };
                if read.skipped > 0 {
                    self.inner
                        .health
                        .count(|h| &mut h.rows_skipped, read.skipped);
                    #[cfg(feature = "tracing")]
                    tracing::warn!(
                        breaker = &**name,
                        skipped = read.skipped,
                        "fleet snapshot rows skipped: malformed"
                    );
                }
                let rows = self.believed(name, read.rows);
                let stale = self
                    .inner
                    .view
                    .lock()
                    .apply_snapshot(name, &rows, asked, now);
                if stale > 0 {
                    #[cfg(feature = "tracing")]
                    tracing::info!(
                        breaker = &**name,
                        stale,
                        "fleet snapshot rows ignored: older than what the view holds"
                    );
                }
                self.members.reconsider(&self.inner, name, now);
            }
        }
        Ok(())
    }

    /// The rows of `name` to believe: with a secret, those whose tag is the fleet's and that
    /// claim no more time than they were written with; the others are counted and dropped.
    fn believed(&self, name: &str, rows: Vec<store::Row>) -> Vec<(String, u64, u64, u64)> {
        let mut forged = 0;
        let rows: Vec<_> = rows
            .into_iter()
            .filter(|row| {
                let Some(signer) = &self.settings.signer else {
                    return true;
                };
                let genuine = row.signature.as_ref().is_some_and(|(left, tag)| {
                    let text = sign::row_text(&row.instance, row.seq, *left, name);
                    row.until_ms <= *left && signer.verify(&text, tag)
                });
                forged += u64::from(!genuine);
                genuine
            })
            .map(|row| (row.instance, row.seq, row.until_ms, row.expires_ms))
            .collect();
        if forged > 0 {
            self.inner.health.count(|h| &mut h.rows_forged, forged);
            #[cfg(feature = "tracing")]
            tracing::warn!(
                breaker = name,
                forged,
                "fleet snapshot rows ignored: not signed with the fleet's secret"
            );
        }
        rows
    }
}
