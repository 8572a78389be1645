//! Breakers that learn from their peers through Redis, with the hot path local.
//!
//! Every instance of a service judges its downstream alone; with the fleet on, each instance
//! also publishes its own *opinion* when its breaker opens by its own judgement ("I am OPEN
//! until T", with a time-to-live, renewed every third of it) and withdraws it when the
//! breaker closes. A background task keeps a local view of the peers' opinions from a
//! subscription and from snapshots; when at least `fleet_quorum` live peers hold a breaker's
//! name OPEN, the local breaker of that name opens until the earliest of their OPENs ends
//! (plus jitter), and rejects with [`RejectReason::FleetOpen`](crate::RejectReason::FleetOpen).
//! It then half-opens and closes by its own probes; a lease in Redis lets one instance probe
//! at a time after any OPEN, its own or adopted, and when its trial passes the others
//! half-open at once. `docs/fleet.md` draws the data layout, the failure modes and what each costs.
//!
//! Admission and recording do no network I/O: the fleet acts on a breaker only through the
//! breaker's own change path, from the background task. A store that is down, paused, slow or
//! unreachable leaves every call to local judgement; a [`FleetEvent`] and a log line say so.
//!
//! ```no_run
//! use breakerbox::fleet::Fleet;
//!
//! # async fn start() -> Result<(), breakerbox::fleet::FleetError> {
//! // At start-up, inside a tokio runtime: every breaker configured with `fleet = true`
//! // joins the fleet, those registered later too.
//! let fleet = Fleet::builder("redis://127.0.0.1:6379").join(breakerbox::registry()).start()?;
//! fleet.on_event(|event| eprintln!("{event}"));
//! # Ok(()) }
//! ```

mod address;
mod backlog;
mod command;
mod connection;
mod health;
mod layout;
mod lease;
mod members;
mod nodes;
mod opinions;
mod sentinels;
mod sign;
mod snapshot;
mod store;
mod task;
#[cfg(feature = "fleet-tls")]
mod tls;
mod view;

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::mpsc::{self, UnboundedSender};

use crate::registry::Registry;
use crate::sync::process::Mutex;
use crate::Breaker;

use self::command::{Command, Settings};
use self::health::Health;
pub use self::health::{FleetEvent, FleetHealth};
use self::task::Task;
use self::view::View;

/// The environment variable [`Fleet::from_env`] reads the store's URL from.
pub const URL_VARIABLE: &str = "BREAKER_FLEET_URL";

/// A running fleet: the handle to this instance's background task. Cloning it is cheap;
/// the task stops, withdrawing this instance's opinions, when every handle is dropped.
#[derive(Clone)]
pub struct Fleet {
    inner: Arc<Inner>,
    commands: UnboundedSender<Command>,
}

/// What the handles and the task share.
pub(crate) struct Inner {
    instance: Arc<str>,
    view: Mutex<View>,
    health: Health,
    max_instances: usize,
    ttl: Duration,
    /// How long before an OPEN of a member ends the lease is asked for: twice the timeout.
    lead: Duration,
}

/// A fleet that could not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum FleetError {
    /// The URL is not one the Redis client takes.
    Url(String),
    /// A setting breaks its rule.
    Invalid {
        /// The setting, as the builder names it.
        field: &'static str,
        /// The rule and the value given.
        rule: String,
    },
    /// Not called inside a tokio runtime, where the background task runs.
    NoRuntime,
    /// The registry [`FleetBuilder::join`] names has a fleet already.
    AlreadyConnected,
}

impl fmt::Display for FleetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Url(error) => write!(f, "fleet: the store's URL is not valid: {error}"),
            Self::Invalid { field, rule } => write!(f, "fleet: {field} {rule}"),
            Self::NoRuntime => f.write_str("fleet: start it inside a tokio runtime"),
            Self::AlreadyConnected => f.write_str("fleet: the registry has a fleet already"),
        }
    }
}

impl std::error::Error for FleetError {}

/// Sets up a fleet: [`Fleet::builder`].
#[derive(Clone, Debug)]
pub struct FleetBuilder {
    url: String,
    /// The nodes of [`Fleet::cluster_builder`], when given so rather than by a URL.
    cluster_nodes: Option<Vec<String>>,
    instance: Option<String>,
    prefix: String,
    ttl: Duration,
    snapshot_every: Duration,
    timeout: Duration,
    max_names: usize,
    max_instances: usize,
    backlog: usize,
    secret: Option<sign::Secret>,
    #[cfg(feature = "fleet-tls")]
    tls: tls::Trust,
    registry: Option<&'static Registry>,
}

impl Fleet {
    /// A fleet on the Redis at `url`, with the defaults below:
    ///
    /// - one node: `redis://[user:password@]host:port[/db]` (an ACL user and its password, or
    ///   the password alone of `requirepass`), `redis+unix:///path`, or with the `fleet-tls`
    ///   feature `rediss://...` (TLS, trusting the system's roots, or the CA of
    ///   [`tls_ca`](FleetBuilder::tls_ca));
    /// - the master that sentinels name (followed through failovers):
    ///   `redis+sentinel://[user:password@]host[:port][,host[:port]...]/master[/db]`, the
    ///   userinfo the master's credentials, and the sentinels' own, for a sentinel with a
    ///   password, in the query: `?sentinel_password=...` (and `&sentinel_username=...`),
    ///   percent-encoded; `rediss+sentinel://` over TLS to both;
    /// - a Redis Cluster: `redis+cluster://[user:password@]host[:port][,host[:port]...]`, some
    ///   of its nodes, or `rediss+cluster://` over TLS to every node (and see
    ///   [`cluster_builder`](Fleet::cluster_builder)).
    ///
    /// A wrong password or an untrusted certificate is a store failure like any other: a
    /// [`FleetEvent::Degraded`] saying so, and breakers that judge alone (`docs/fleet.md`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::fleet::{Fleet, FleetError};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let fleet = Fleet::builder("redis://127.0.0.1:6379")
    ///     .instance("web-7")
    ///     .ttl(Duration::from_secs(3))
    ///     .start()?;
    /// assert_eq!(fleet.instance(), "web-7");
    /// let bad = Fleet::builder("redis://127.0.0.1:6379").ttl(Duration::from_millis(10)).start();
    /// assert_eq!(bad.err().unwrap().to_string(), "fleet: ttl must be at least 100ms, got 10ms");
    ///
    /// // The master's ACL user, and the sentinels' password `watch&see`.
    /// let url = "redis+sentinel://fleet:secret@10.0.0.1,10.0.0.2/cache?sentinel_password=watch%26see";
    /// Fleet::builder(url).instance("web-8").start()?;
    /// let empty = Fleet::builder("redis+sentinel://10.0.0.1/cache?sentinel_password=").start();
    /// assert!(matches!(empty, Err(FleetError::Invalid { field: "sentinel_password", .. })));
    /// # Ok::<(), FleetError>(())
    /// # }).unwrap();
    /// ```
    pub fn builder(url: impl Into<String>) -> FleetBuilder {
        FleetBuilder {
            url: url.into(),
            cluster_nodes: None,
            instance: None,
            prefix: "breaker:fleet".into(),
            ttl: Duration::from_secs(5),
            snapshot_every: Duration::from_secs(10),
            timeout: Duration::from_millis(250),
            max_names: 10_000,
            max_instances: 1_000,
            backlog: 10_000,
            secret: None,
            #[cfg(feature = "fleet-tls")]
            tls: tls::Trust::default(),
            registry: None,
        }
    }

    /// A fleet on the Redis Cluster that `nodes` belong to, each a URL of one node
    /// (`redis://[user:password@]host:port`, or `rediss://` over TLS with the `fleet-tls`
    /// feature); some nodes are enough, they tell of the others. The same as the URL
    /// `redis+cluster://[user:password@]host:port,host:port,...` (`rediss+cluster://`). The
    /// nodes are all TLS or all plain (see [`tls_ca`](FleetBuilder::tls_ca)). Every script touches the keys of one name, in one hash
    /// slot, and opinions travel over sharded pub/sub (Redis 7), one channel per name
    /// (`docs/fleet.md`).
    ///
    /// ```
    /// use breakerbox::fleet::Fleet;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let nodes = ["redis://10.0.0.1:6379", "redis://10.0.0.2:6379"];
    /// let fleet = Fleet::cluster_builder(nodes).instance("web-7").start()?;
    /// assert_eq!(fleet.instance(), "web-7");
    /// let none = Fleet::cluster_builder(Vec::<String>::new()).start();
    /// assert_eq!(none.err().unwrap().to_string(), "fleet: cluster nodes must name at least one node");
    /// # Ok::<(), breakerbox::fleet::FleetError>(())
    /// # }).unwrap();
    /// ```
    pub fn cluster_builder<S: Into<String>>(nodes: impl IntoIterator<Item = S>) -> FleetBuilder {
        let mut builder = Fleet::builder("");
        builder.cluster_nodes = Some(nodes.into_iter().map(Into::into).collect());
        builder
    }

    /// This instance's id in the store.
    pub fn instance(&self) -> &str {
        &self.inner.instance
    }

    /// Makes `breaker` one of the fleet's: its own OPENs are published (one it holds now
    /// too), and its peers' opinions of its name (for a keyed family's member, `family[key]`)
    /// may open it, by a quorum of `quorum` live peers (at least 2; a smaller number counts
    /// as 2). Joining a breaker already in gives it this quorum.
    ///
    /// [`FleetBuilder::join`] joins a registry's breakers configured with `fleet = true`, and follows
    /// overrides that turn `fleet` on or off or change `fleet_quorum`; call this for a
    /// breaker of your own, or one you reconfigure in code.
    pub fn join(&self, breaker: &Arc<Breaker>, quorum: u32) {
        let _ = self.commands.send(Command::Join {
            breaker: Arc::downgrade(breaker),
            quorum: quorum.max(2) as usize,
        });
    }

    /// Takes `breaker` out of the fleet: its opinion, if it holds one, is withdrawn, its
    /// peers' opinions no longer open it, and an OPEN they caused ends now, so that its
    /// next call is a probe. It judges alone until it joins again. Nothing happens to a
    /// breaker that is not in the fleet.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breakerbox::fleet::Fleet;
    /// use breakerbox::{Breaker, Config};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let fleet = Fleet::builder("redis://127.0.0.1:6379").start()?;
    /// let b = Arc::new(Breaker::new("inventory", Config::builder().fleet(true).build().unwrap()));
    /// fleet.join(&b, 2);
    /// fleet.leave(&b);
    /// # Ok::<(), breakerbox::fleet::FleetError>(())
    /// # }).unwrap();
    /// ```
    pub fn leave(&self, breaker: &Arc<Breaker>) {
        let _ = self.commands.send(Command::Leave(Arc::downgrade(breaker)));
    }

    /// How many peers hold `name` OPEN in this instance's view now (0 for a name no breaker
    /// of this instance is in the fleet with: one that left, or whose breakers are gone, is
    /// forgotten).
    pub fn peers_open(&self, name: &str) -> usize {
        let now = tokio::time::Instant::now();
        self.inner.view.lock().live(name, now).len()
    }

    /// Whether the store failed and has not answered since (see [`FleetEvent::Degraded`]).
    pub fn is_degraded(&self) -> bool {
        self.inner.health.is_degraded()
    }

    /// The fleet's health now: whether the store failed and why, and what this instance
    /// refused to believe.
    pub fn health(&self) -> FleetHealth {
        self.inner.health.now()
    }

    /// Calls `listener` on every [`FleetEvent`], from the background task; first, at once,
    /// with [`FleetEvent::Degraded`] if the store is failing now, so that a listener that
    /// subscribes after [`start`](FleetBuilder::start) misses nothing. Every change reaches
    /// every listener once, in order. A listener must not call `on_event` itself.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use breakerbox::fleet::{Fleet, FleetEvent};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// // Nothing listens on port 1: the fleet degrades before anyone subscribes.
    /// let fleet = Fleet::builder("redis://127.0.0.1:1").start()?;
    /// while !fleet.is_degraded() {
    ///     tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    /// }
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&seen);
    /// fleet.on_event(move |event| log.lock().unwrap().push(event.clone()));
    /// assert!(matches!(seen.lock().unwrap()[..], [FleetEvent::Degraded { .. }]));
    /// # Ok::<(), breakerbox::fleet::FleetError>(())
    /// # }).unwrap();
    /// ```
    pub fn on_event(&self, listener: impl Fn(&FleetEvent) + Send + Sync + 'static) {
        self.inner.health.subscribe(Arc::new(listener));
    }

    /// Resolves once the background task has served everything sent to it before: the
    /// breakers' news and the joins.
    pub async fn flush(&self) {
        let (done, served) = tokio::sync::oneshot::channel();
        if self.commands.send(Command::Flush(done)).is_ok() {
            let _ = served.await;
        }
    }
}

impl fmt::Debug for Fleet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fleet")
            .field("instance", &self.instance())
            .field("degraded", &self.is_degraded())
            .finish_non_exhaustive()
    }
}

impl FleetBuilder {
    /// This instance's id; by default the host name, the process id and a random suffix.
    /// At most 64 bytes, without `|`.
    pub fn instance(mut self, id: impl Into<String>) -> Self {
        self.instance = Some(id.into());
        self
    }

    /// The prefix of every key and of the channel; `breaker:fleet` by default. Fleets with
    /// different prefixes on one store do not see each other.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How long an opinion counts unless renewed (every third of it); 5 s by default. An
    /// instance that dies stops counting after it.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// How often the view is read whole from the store, besides at every (re)subscription,
    /// to heal lost messages; 10 s by default.
    pub fn snapshot_every(mut self, every: Duration) -> Self {
        self.snapshot_every = every;
        self
    }

    /// How long the task waits for any answer of the store before it calls it failed;
    /// 250 ms by default. A connection, with its TLS handshake over `rediss://`, gets four
    /// times as long, and at least 2 s.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The most breaker names the view tracks (10,000 by default) and peers per name (1,000).
    pub fn bounds(mut self, names: usize, instances_per_name: usize) -> Self {
        self.max_names = names;
        self.max_instances = instances_per_name;
        self
    }

    /// The most messages heard from the store and not read yet by this instance's task
    /// (10,000 by default; a batch of renewals counts as the messages it carries, so that
    /// the bound holds the bytes to a few megabytes too). When its peers' messages come faster than it reads them, the
    /// task drops what waits past this bound, and reads the view anew from the store
    /// instead (at once, or a third of the ttl after its last whole reading): a [`FleetEvent::Degraded`] then a [`FleetEvent::Recovered`] say so, and
    /// [`FleetHealth::messages_dropped`] counts them. The process's memory stays bounded
    /// whatever the load; a view read anew is as exact as one that heard every message.
    ///
    /// ```
    /// use breakerbox::fleet::Fleet;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let fleet = Fleet::builder("redis://127.0.0.1:6379").backlog(1_000).start()?;
    /// assert_eq!(fleet.health().messages_dropped, 0);
    /// let none = Fleet::builder("redis://127.0.0.1:6379").backlog(0).start();
    /// assert_eq!(none.err().unwrap().to_string(), "fleet: backlog must be above 0, got 0");
    /// # Ok::<(), breakerbox::fleet::FleetError>(())
    /// # }).unwrap();
    /// ```
    pub fn backlog(mut self, messages: usize) -> Self {
        self.backlog = messages;
        self
    }

    /// A key the instances of one service share: every message and every stored opinion is
    /// signed with HMAC-SHA256 under it, and what is not signed with it (by a writer to the
    /// store without the key, or an instance with another) is ignored and counted
    /// ([`FleetHealth::messages_forged`], [`FleetHealth::rows_forged`]). Give every instance
    /// of the service the same key, and keep it as a password is kept; an empty key is an
    /// error. Without it, anyone who may write to the fleet's keys and channel may pose as
    /// peers: give each service a Redis ACL user of its own (`docs/fleet.md`).
    ///
    /// ```
    /// use breakerbox::fleet::Fleet;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let fleet = Fleet::builder("redis://127.0.0.1:6379").secret("a long random key").start()?;
    /// assert_eq!(fleet.health().messages_forged, 0);
    /// let empty = Fleet::builder("redis://127.0.0.1:6379").secret("").start();
    /// assert_eq!(empty.err().unwrap().to_string(), "fleet: secret must not be empty");
    /// # Ok::<(), breakerbox::fleet::FleetError>(())
    /// # }).unwrap();
    /// ```
    pub fn secret(mut self, key: impl AsRef<[u8]>) -> Self {
        self.secret = Some(sign::Secret(key.as_ref().to_vec()));
        self
    }

    /// Joins every breaker of `registry` whose configuration has the fleet on (`fleet =
    /// true`), those registered later too (a keyed family's members as they are made), and
    /// follows the overrides that turn a breaker's `fleet` on or off. A registry has at most
    /// one fleet: [`start`](FleetBuilder::start) refuses a second with
    /// [`FleetError::AlreadyConnected`]. Without it, the fleet joins the breakers given to
    /// [`Fleet::join`] only.
    ///
    /// ```
    /// use breakerbox::fleet::{Fleet, FleetError};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let fleet = Fleet::builder("redis://127.0.0.1:6379").join(breakerbox::registry()).start()?;
    /// assert_eq!(Fleet::of(breakerbox::registry()).unwrap().instance(), fleet.instance());
    /// let again = Fleet::builder("redis://127.0.0.1:6379").join(breakerbox::registry()).start();
    /// assert!(matches!(again, Err(FleetError::AlreadyConnected)));
    /// # Ok::<(), FleetError>(())
    /// # }).unwrap();
    /// ```
    pub fn join(mut self, registry: &'static Registry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Starts the background task on the current tokio runtime, and joins the registry of
    /// [`join`](FleetBuilder::join) if one was given. The store need not be up: the task
    /// connects when it can, and breakers judge alone until then.
    pub fn start(self) -> Result<Fleet, FleetError> {
        let registry = self.registry;
        if registry.is_some_and(|r| Fleet::of(r).is_some()) {
            return Err(FleetError::AlreadyConnected);
        }
        let fleet = self.spawn()?;
        if let Some(registry) = registry {
            if registry.part::<JoinedBy>().0.set(fleet.clone()).is_err() {
                return Err(FleetError::AlreadyConnected);
            }
            members::join_registry(&fleet, registry);
        }
        Ok(fleet)
    }

    /// Checks the settings and spawns the task.
    fn spawn(self) -> Result<Fleet, FleetError> {
        let invalid = |field, rule: String| Err(FleetError::Invalid { field, rule });
        if self.ttl < Duration::from_millis(100) {
            return invalid(
                "ttl",
                format!("must be at least 100ms, got {}ms", self.ttl.as_millis()),
            );
        }
        if self.timeout.is_zero() || self.timeout >= self.ttl / 3 {
            let rule = format!(
                "must be above 0 and below a third of the ttl ({}ms), got {}ms",
                (self.ttl / 3).as_millis(),
                self.timeout.as_millis()
            );
            return invalid("timeout", rule);
        }
        if self.snapshot_every < self.ttl / 3 {
            let rule = format!(
                "must be at least a third of the ttl ({}ms), got {}ms",
                (self.ttl / 3).as_millis(),
                self.snapshot_every.as_millis()
            );
            return invalid("snapshot_every", rule);
        }
        if self.max_names == 0 || self.max_instances == 0 {
            return invalid("bounds", "must be above 0".into());
        }
        if self.backlog == 0 {
            return invalid("backlog", format!("must be above 0, got {}", self.backlog));
        }
        if self.prefix.is_empty() || self.prefix.contains(['{', '}']) {
            return invalid(
                "prefix",
                format!("must be non-empty, without braces, got {:?}", self.prefix),
            );
        }
        let signer = match &self.secret {
            None => None,
            Some(secret) => match sign::Signer::new(&secret.0) {
                Some(signer) => Some(signer),
                None => return invalid("secret", "must not be empty".into()),
            },
        };
        let store = self.store()?;
        let instance = match self.instance {
            Some(id) => id,
            None => default_instance(),
        };
        if instance.is_empty() || instance.len() > 64 || instance.contains('|') {
            let rule = format!("must be 1 to 64 bytes without '|', got {instance:?}");
            return invalid("instance", rule);
        }
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| FleetError::NoRuntime)?;
        let instance: Arc<str> = instance.into();
        let inner = Arc::new(Inner {
            view: Mutex::new(View::new(
                Arc::clone(&instance),
                self.max_names,
                self.max_instances,
            )),
            instance,
            health: Health::default(),
            max_instances: self.max_instances,
            ttl: self.ttl,
            lead: self.timeout * 2,
        });
        let settings = Settings {
            store,
            prefix: self.prefix,
            ttl: self.ttl,
            snapshot_every: self.snapshot_every,
            timeout: self.timeout,
            lease_ttl: self.ttl,
            backlog: self.backlog,
            signer,
        };
        let (commands, receiver) = mpsc::unbounded_channel();
        let task = Task::new(Arc::clone(&inner), settings, receiver, commands.downgrade());
        runtime.spawn(task.run());
        Ok(Fleet { inner, commands })
    }
}

impl FleetBuilder {
    /// The store of the URL: several hosts behind Sentinel or in a Cluster, or one node.
    fn store(&self) -> Result<connection::Store, FleetError> {
        let store = match &self.cluster_nodes {
            Some(nodes) if nodes.is_empty() => {
                let rule = "must name at least one node".into();
                return Err(FleetError::Invalid {
                    field: "cluster nodes",
                    rule,
                });
            }
            Some(nodes) => address::nodes(nodes)?,
            None => match address::parse(&self.url)? {
                Some(store) => store,
                None => return self.client().map(connection::Store::Node),
            },
        };
        self.trusted(store)
    }

    /// A store of several hosts with the builder's TLS: its CA and client certificate for
    /// TLS hosts, and an error for either of them with plain ones.
    fn trusted(&self, store: connection::Store) -> Result<connection::Store, FleetError> {
        let tls = match &store {
            connection::Store::Sentinel(sentinels) => sentinels.tls,
            connection::Store::Cluster(nodes) => nodes.tls(),
            connection::Store::Node(_) => false,
        };
        #[cfg(feature = "fleet-tls")]
        {
            let certificates = self.tls.certificates(tls)?;
            Ok(match store {
                connection::Store::Sentinel(mut sentinels) => {
                    sentinels.certificates = certificates;
                    connection::Store::Sentinel(sentinels)
                }
                connection::Store::Cluster(mut nodes) => {
                    nodes.certificates = certificates;
                    connection::Store::Cluster(nodes)
                }
                node => node,
            })
        }
        // Without the feature, the URLs of TLS were refused as they were read.
        #[cfg(not(feature = "fleet-tls"))]
        {
            let _ = tls;
            Ok(store)
        }
    }

    /// The Redis client of a URL of one node, with TLS as the builder says.
    fn client(&self) -> Result<redis::Client, FleetError> {
        let tls_url = self.url.starts_with("rediss://");
        #[cfg(feature = "fleet-tls")]
        if let Some(client) = self.tls.client(&self.url, tls_url)? {
            return Ok(client);
        }
        #[cfg(not(feature = "fleet-tls"))]
        if tls_url {
            return Err(FleetError::Url(
                "a rediss:// URL needs TLS: enable the `fleet-tls` feature of breaker".into(),
            ));
        }
        let _ = tls_url;
        redis::Client::open(self.url.as_str()).map_err(|e| FleetError::Url(e.to_string()))
    }
}

/// `host-pid-random`: unique among the instances of a fleet.
fn default_instance() -> String {
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "host".into());
    let host: String = host.chars().filter(|c| *c != '|').take(40).collect();
    format!("{host}-{}-{:08x}", std::process::id(), fastrand::u32(..))
}

impl Inner {
    /// The store failed: said once, until it recovers.
    pub(crate) fn degraded(&self, reason: &str) {
        if self.health.degraded(reason) {
            #[cfg(feature = "tracing")]
            tracing::warn!(
                instance = &*self.instance,
                reason,
                "fleet view degraded: breakers judge alone"
            );
        }
    }

    /// The store answers; said if it had failed.
    pub(crate) fn recovered(&self) {
        if self.health.recovered() {
            #[cfg(feature = "tracing")]
            tracing::info!(instance = &*self.instance, "fleet view recovered");
        }
    }
}

/// The fleet that joined a registry: a part of the registry, set once.
#[derive(Default)]
struct JoinedBy(OnceLock<Fleet>);

impl crate::registry::Watch for JoinedBy {}

impl Fleet {
    /// The fleet that joined `registry` ([`FleetBuilder::join`]), if one did.
    ///
    /// ```
    /// use breakerbox::fleet::Fleet;
    /// use breakerbox::registry::Registry;
    ///
    /// assert!(Fleet::of(&Registry::default()).is_none());
    /// ```
    pub fn of(registry: &Registry) -> Option<Fleet> {
        registry.part::<JoinedBy>().0.get().cloned()
    }

    /// A builder for the Redis at the URL in the `BREAKER_FLEET_URL` environment variable;
    /// `Ok(None)` when it is not set. With the `fleet-tls` feature, `BREAKER_FLEET_TLS_CA`
    /// names a PEM file of CAs to trust ([`FleetBuilder::tls_ca`]), and
    /// `BREAKER_FLEET_TLS_CERT` and `BREAKER_FLEET_TLS_KEY` the files of a client
    /// certificate and its key ([`FleetBuilder::tls_client`]); a file that cannot be read is
    /// an error naming its variable.
    ///
    /// ```no_run
    /// use breakerbox::fleet::Fleet;
    ///
    /// # async fn start() -> Result<(), breakerbox::fleet::FleetError> {
    /// if let Some(builder) = Fleet::from_env()? {
    ///     builder.join(breakerbox::registry()).start()?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn from_env() -> Result<Option<FleetBuilder>, FleetError> {
        let Ok(url) = std::env::var(URL_VARIABLE) else {
            return Ok(None);
        };
        let builder = Fleet::builder(url);
        #[cfg(feature = "fleet-tls")]
        let builder = tls::from_env(builder)?;
        Ok(Some(builder))
    }
}
