//! What the subscription heard and the task has not read yet, bounded: the connection's side
//! feeds it as fast as the store sends, the task reads it at its own pace, and past the bound
//! a message is dropped and the queue marked overflowed, so that the task reads the view anew
//! from the store instead (`Task::catch_up`). Memory stays bounded whatever the load; Redis's
//! own `client-output-buffer-limit pubsub` cannot act on messages already in this process.
//!
//! Only the messages count and drop, a batch as the messages it carries, so that the bound
//! bounds the bytes too: the rare news of the connection itself (a node lost, a channel
//! unsubscribed, a failover) always gets through.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use futures_util::StreamExt;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use super::connection::{Heard, Messages};
use super::layout;

/// The counts the feeding and the reading sides share.
struct Counts {
    bound: usize,
    /// Messages queued and not read yet, a batch as the messages it carries.
    waiting: AtomicUsize,
    /// Whether a message was dropped since the task last asked.
    overflowed: AtomicBool,
    /// Messages dropped since the task last asked.
    dropped: AtomicU64,
}

/// The feeding side: the cluster client's push sender, or the task that drains a node's
/// subscription.
#[derive(Clone)]
pub(crate) struct Feed {
    sender: UnboundedSender<(Heard, usize)>,
    counts: Arc<Counts>,
}

/// The reading side, the task's: what was heard, with the messages it counts for.
pub(crate) struct Backlog {
    receiver: UnboundedReceiver<(Heard, usize)>,
    counts: Arc<Counts>,
}

/// The reader is gone: the connection it fed is to be let go.
#[derive(Debug)]
pub(crate) struct Gone;

/// A backlog of at most `bound` messages, with its feed.
pub(crate) fn bounded(bound: usize) -> (Feed, Backlog) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let counts = Arc::new(Counts {
        bound,
        waiting: AtomicUsize::new(0),
        overflowed: AtomicBool::new(false),
        dropped: AtomicU64::new(0),
    });
    let feed = Feed {
        sender,
        counts: Arc::clone(&counts),
    };
    (feed, Backlog { receiver, counts })
}

impl Feed {
    /// Queues what was heard; a message past the bound is dropped instead, and the backlog
    /// marked overflowed.
    pub(crate) fn push(&self, heard: Heard) -> Result<(), Gone> {
        let weight = match &heard {
            Heard::Message(message) => layout::carried(message.get_payload_bytes()),
            _ => 0,
        };
        let counts = &self.counts;
        if weight > 0 && counts.waiting.fetch_add(weight, Ordering::AcqRel) + weight > counts.bound
        {
            counts.waiting.fetch_sub(weight, Ordering::AcqRel);
            counts.dropped.fetch_add(weight as u64, Ordering::Relaxed);
            counts.overflowed.store(true, Ordering::Release);
            return match self.sender.is_closed() {
                true => Err(Gone),
                false => Ok(()),
            };
        }
        self.sender.send((heard, weight)).map_err(|_| Gone)
    }

    /// Drains `stream` into the backlog on a task of its own, until the stream ends or the
    /// reader is gone: the stream's own queue (redis-rs's, unbounded) stays as short as this
    /// loop is quick.
    pub(crate) fn drain(self, mut stream: Messages) {
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    heard = stream.next() => {
                        let Some(heard) = heard else { return };
                        if self.push(heard).is_err() {
                            return;
                        }
                    }
                    () = self.sender.closed() => return,
                }
            }
        });
    }
}

impl Backlog {
    /// The next thing heard, with the messages it carries (0 for the connection's news);
    /// `None` when the connection's side is gone.
    pub(crate) async fn next(&mut self) -> Option<(Heard, usize)> {
        let (heard, weight) = self.receiver.recv().await?;
        self.counts.waiting.fetch_sub(weight, Ordering::AcqRel);
        Some((heard, weight))
    }

    /// How many messages were dropped since the last time it said, if any were: `Some` once
    /// per overflow. What was dropped before this answer is in the store before a snapshot
    /// asked for after it.
    pub(crate) fn overflowed(&self) -> Option<u64> {
        if !self.counts.overflowed.swap(false, Ordering::AcqRel) {
            return None;
        }
        Some(self.counts.dropped.swap(0, Ordering::AcqRel))
    }

    /// Drops every message queued, and hands back the rest, in order; with how many it dropped.
    pub(crate) fn clear(&mut self) -> (Vec<Heard>, u64) {
        let (mut kept, mut dropped) = (Vec::new(), 0);
        while let Ok((heard, weight)) = self.receiver.try_recv() {
            self.counts.waiting.fetch_sub(weight, Ordering::AcqRel);
            match heard {
                Heard::Message(_) => dropped += weight as u64,
                other => kept.push(other),
            }
        }
        (kept, dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(text: &str) -> Heard {
        let value = redis::Value::Array(vec![
            redis::Value::BulkString(b"message".to_vec()),
            redis::Value::BulkString(b"breaker:fleet:opinions".to_vec()),
            redis::Value::BulkString(text.as_bytes().to_vec()),
        ]);
        Heard::Message(redis::Msg::from_owned_value(value).expect("a message"))
    }

    fn text(heard: &Heard) -> String {
        match heard {
            Heard::Message(msg) => String::from_utf8_lossy(msg.get_payload_bytes()).into(),
            Heard::Lost => "lost".into(),
            Heard::Unsubscribed(channel) => format!("unsubscribed {channel}"),
            Heard::Switched => "switched".into(),
        }
    }

    #[tokio::test]
    async fn past_the_bound_messages_drop_and_the_news_of_the_connection_gets_through() {
        let (feed, mut backlog) = bounded(2);
        for heard in [message("1"), message("2"), message("3"), Heard::Lost] {
            feed.push(heard).unwrap();
        }
        feed.push(message("4")).unwrap();
        assert_eq!(backlog.overflowed(), Some(2));
        assert_eq!(backlog.overflowed(), None, "said once");
        assert_eq!(text(&backlog.next().await.unwrap().0), "1");
        // One read: room for one more.
        feed.push(message("5")).unwrap();
        assert_eq!(backlog.overflowed(), None);
        let (kept, dropped) = backlog.clear();
        assert_eq!(kept.iter().map(text).collect::<Vec<_>>(), ["lost"]);
        assert_eq!(dropped, 2);
        // Cleared: the whole bound again, which a batch fills as the messages it carries.
        feed.push(message("6")).unwrap();
        feed.push(message("3|1|a1|b")).unwrap();
        assert_eq!(backlog.overflowed(), Some(2));
        let (_, dropped) = backlog.clear();
        assert_eq!(dropped, 1);
        feed.push(message("3|1|a1|b")).unwrap();
        assert_eq!(backlog.overflowed(), None);
        assert_eq!(text(&backlog.next().await.unwrap().0), "3|1|a1|b");
        drop(backlog);
        assert!(feed.push(message("8")).is_err(), "the reader is gone");
    }
}
