//! The three kinds of store the fleet speaks to (one Redis node, one behind Sentinel, a Redis
//! Cluster) and the one connection the task holds to any of them, with what it hears.
//!
//! The task asks for a connection when it starts and after every failure: behind Sentinel
//! that is when the sentinels are asked for the master, so that a failover costs one
//! reconnection; a cluster's client follows redirects and resubscribes by itself.

use std::pin::Pin;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::sentinel::SentinelClient;
use redis::{Client, Cmd, Pipeline, PushInfo, PushKind, RedisFuture, Value};

use super::backlog::{self, Backlog, Feed};
use super::layout;
use super::nodes::Nodes;
use super::sentinels::Sentinels;
use super::store::{bounded, Failure};

/// Where the store is.
#[derive(Clone)]
pub(crate) enum Store {
    /// One node: `redis://`, `rediss://`, `redis+unix://`.
    Node(Client),
    /// The master the sentinels name: `redis+sentinel://`, `rediss+sentinel://`.
    Sentinel(Sentinels),
    /// A Redis Cluster, found from any of these nodes: `redis+cluster://`,
    /// `rediss+cluster://`.
    Cluster(Nodes),
}

/// The connection to the store: commands and scripts go through it.
#[derive(Clone)]
pub(crate) enum Conn {
    Node(ConnectionManager),
    Cluster(ClusterConnection),
}

/// What the subscription hears.
pub(crate) enum Heard {
    /// A message on an opinions channel.
    Message(redis::Msg),
    /// A cluster node's connection dropped and was made again: messages may have been lost.
    Lost,
    /// A cluster node unsubscribed this instance from a channel: asked to (the name was
    /// forgotten), or because the channel's slot moved to another node (a resharding).
    Unsubscribed(String),
    /// The sentinels named another master (`+switch-master`), or the one that told of it
    /// is gone: time to ask them again.
    Switched,
}

/// A subscription's stream, before it enters the [`Backlog`]; it ends when the subscription
/// is gone.
pub(crate) type Messages = Pin<Box<dyn Stream<Item = Heard> + Send>>;

/// How long the task waits for the store: `wait` for an answer, `connecting` for a
/// connection with its handshake; and the most messages heard and not read yet.
pub(crate) struct Waits {
    pub(crate) wait: Duration,
    pub(crate) connecting: Duration,
    pub(crate) backlog: usize,
}

impl Store {
    /// Whether opinions travel on one channel per name over sharded pub/sub (a cluster), or
    /// on the prefix's one channel.
    pub(crate) fn sharded(&self) -> bool {
        matches!(self, Self::Cluster(_))
    }

    /// Connects and subscribes to `channels`: what is heard waits in the backlog.
    pub(crate) async fn connect(
        &self,
        channels: &[String],
        waits: &Waits,
    ) -> Result<(Conn, Backlog), Failure> {
        let (feed, backlog) = backlog::bounded(waits.backlog);
        let (conn, messages) = match self {
            Self::Node(client) => node(client.clone(), channels, waits).await?,
            Self::Sentinel(sentinels) => {
                let master = &sentinels.master;
                let mut sentinel = sentinels.client().map_err(|e| e.to_string())?;
                // Told of the next failover first, so that none goes unheard. Its failure is
                // the sentinels' (unreachable, a wrong password): said so, since a wrong
                // password of the master's reads the same.
                let switches = switches(&mut sentinel, master, waits)
                    .await
                    .map_err(|e| format!("the sentinels: {e}"))?;
                let client = bounded(waits.connecting, sentinel.async_get_client()).await?;
                let (mut conn, messages) = node(client, channels, waits).await?;
                let messages: Messages = Box::pin(futures_util::stream::select(messages, switches));
                // The sentinels' answer may be stale by a failover: never write to a replica.
                let role: Vec<Value> =
                    bounded(waits.wait, redis::cmd("ROLE").query_async(&mut conn)).await?;
                match role.first() {
                    Some(Value::BulkString(role)) if role == b"master" => (conn, messages),
                    _ => {
                        return Err(format!(
                            "the node the sentinels named for {master:?} is not its master (yet)"
                        ))
                    }
                }
            }
            // The cluster client pushes into the backlog itself.
            Self::Cluster(nodes) => {
                return Ok((cluster(nodes, channels, waits, feed).await?, backlog))
            }
        };
        feed.drain(messages);
        Ok((conn, backlog))
    }
}

/// One node's connection, and its subscription on a second one.
async fn node(
    client: Client,
    channels: &[String],
    waits: &Waits,
) -> Result<(Conn, Messages), Failure> {
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(waits.connecting))
        .set_response_timeout(Some(waits.wait))
        .set_number_of_retries(0);
    let manager = client.get_connection_manager_with_config(config);
    let conn = bounded(waits.connecting, manager).await?;
    let mut pubsub = bounded(waits.connecting, client.get_async_pubsub()).await?;
    for channel in channels {
        bounded(waits.wait, pubsub.subscribe(channel)).await?;
    }
    let messages = pubsub.into_on_message().map(Heard::Message);
    Ok((Conn::Node(conn), Box::pin(messages)))
}

/// The failovers of `master` a sentinel tells of, as [`Heard::Switched`]; one more when that
/// sentinel is lost. Between failovers the old master takes writes for a while (until the
/// sentinels turn it into a replica, seconds later): the fleet leaves it at once.
async fn switches(
    sentinel: &mut SentinelClient,
    master: &str,
    waits: &Waits,
) -> Result<Messages, Failure> {
    let client = bounded(waits.connecting, sentinel.async_get_sentinel_client()).await?;
    let mut pubsub = bounded(waits.connecting, client.get_async_pubsub()).await?;
    bounded(waits.wait, pubsub.subscribe("+switch-master")).await?;
    let prefix = format!("{master} ");
    let switched = pubsub.into_on_message().filter_map(move |message| {
        let ours = String::from_utf8_lossy(message.get_payload_bytes()).starts_with(&prefix);
        std::future::ready(ours.then_some(Heard::Switched))
    });
    let lost = futures_util::stream::once(std::future::ready(Heard::Switched));
    Ok(Box::pin(switched.chain(lost)))
}

/// A cluster's connection, speaking RESP3, its pushes (the sharded messages) into `feed`.
async fn cluster(
    nodes: &Nodes,
    channels: &[String],
    waits: &Waits,
    feed: Feed,
) -> Result<Conn, Failure> {
    let push = move |push: PushInfo| match heard(push) {
        Some(heard) => feed.push(heard),
        None => Ok(()),
    };
    let client = nodes
        .builder()
        .use_protocol(redis::ProtocolVersion::RESP3)
        .push_sender(push)
        .connection_timeout(waits.connecting)
        .response_timeout(waits.wait)
        .retries(2)
        .build()
        .map_err(|e| e.to_string())?;
    let mut conn = bounded(waits.connecting, client.get_async_connection()).await?;
    for channel in channels {
        bounded(waits.wait, conn.ssubscribe(channel)).await?;
    }
    Ok(Conn::Cluster(conn))
}

/// What a cluster's push tells the task, if anything.
fn heard(push: PushInfo) -> Option<Heard> {
    match push.kind {
        PushKind::Disconnection => Some(Heard::Lost),
        PushKind::SUnsubscribe => match push.data.first() {
            Some(Value::BulkString(channel)) => Some(Heard::Unsubscribed(
                String::from_utf8_lossy(channel).into_owned(),
            )),
            _ => None,
        },
        _ => redis::Msg::from_push_info(push).map(Heard::Message),
    }
}

impl Conn {
    /// Subscribes to the channel of `name`, on a cluster (elsewhere the one channel is).
    pub(crate) async fn listen(
        &mut self,
        prefix: &str,
        name: &str,
        wait: Duration,
    ) -> Result<(), Failure> {
        match self {
            Self::Node(_) => Ok(()),
            Self::Cluster(conn) => {
                bounded(wait, conn.ssubscribe(layout::name_channel(prefix, name))).await
            }
        }
    }

    /// Unsubscribes from the channel of `name`, on a cluster.
    pub(crate) async fn unlisten(
        &mut self,
        prefix: &str,
        name: &str,
        wait: Duration,
    ) -> Result<(), Failure> {
        match self {
            Self::Node(_) => Ok(()),
            Self::Cluster(conn) => {
                bounded(wait, conn.sunsubscribe(layout::name_channel(prefix, name))).await
            }
        }
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Node(conn) => conn.req_packed_command(cmd),
            Self::Cluster(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Node(conn) => conn.req_packed_commands(pipeline, offset, count),
            Self::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Node(conn) => conn.get_db(),
            Self::Cluster(conn) => conn.get_db(),
        }
    }
}
