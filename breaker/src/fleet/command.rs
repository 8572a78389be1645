//! What the fleet's parts hand its background task: the commands breakers and handles send
//! it, and the settings it runs with. Both the task and the members use them; neither owns
//! them.

use std::sync::{Arc, Weak};
use std::time::Duration;

use super::connection::Store;
use super::sign::Signer;
use crate::Breaker;

/// What breakers and handles tell the task.
pub(crate) enum Command {
    /// Put a breaker in the fleet with a quorum (or give it that quorum): track its name,
    /// snapshot it, publish its own OPEN if it holds one, consider it for adoption.
    Join {
        breaker: Weak<Breaker>,
        quorum: usize,
    },
    /// Take a breaker out of the fleet.
    Leave(Weak<Breaker>),
    /// This instance holds `name` OPEN by its own judgement for `left` from now.
    Opine { name: Arc<str>, left: Duration },
    /// This instance no longer holds `name` OPEN by its own judgement.
    Withdraw { name: Arc<str> },
    /// A member of `name` left HALF_OPEN: its trial is over. Passed, its probe lease goes
    /// back and its peers half-open; failed, it keeps the lease through its next OPEN
    /// unless it starts no probe in time.
    Settled { name: Arc<str>, passed: bool },
    /// Resolves when every command sent before it has been served (for tests and shutdown).
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// The task's settings, checked by the builder.
pub(crate) struct Settings {
    pub(crate) store: Store,
    pub(crate) prefix: String,
    pub(crate) ttl: Duration,
    pub(crate) snapshot_every: Duration,
    pub(crate) timeout: Duration,
    pub(crate) lease_ttl: Duration,
    /// The most messages heard and not read yet (see `backlog.rs`).
    pub(crate) backlog: usize,
    /// The key that signs and checks messages and rows, if the fleet has one.
    pub(crate) signer: Option<Signer>,
}
