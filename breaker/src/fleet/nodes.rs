//! A Redis Cluster's seed nodes, all plain or all TLS, and the certificates of the builder,
//! as redis-rs's `ClusterClientBuilder` takes them.

use redis::cluster::ClusterClientBuilder;
use redis::{ConnectionAddr, ConnectionInfo};

/// Some of the cluster's nodes (they tell of the others): `redis+cluster://`,
/// `rediss+cluster://` or [`Fleet::cluster_builder`](super::Fleet::cluster_builder).
#[derive(Clone, Debug)]
pub(crate) struct Nodes {
    pub(crate) nodes: Vec<ConnectionInfo>,
    /// The CA and client certificate of the builder, for every node.
    #[cfg(feature = "fleet-tls")]
    pub(crate) certificates: Option<redis::TlsCertificates>,
}

impl Nodes {
    /// The nodes, with no certificates yet.
    pub(crate) fn new(nodes: Vec<ConnectionInfo>) -> Self {
        Self {
            nodes,
            #[cfg(feature = "fleet-tls")]
            certificates: None,
        }
    }

    /// Whether the nodes speak TLS (all of them do, or none).
    pub(crate) fn tls(&self) -> bool {
        self.nodes
            .first()
            .is_some_and(|node| matches!(node.addr(), ConnectionAddr::TcpTls { .. }))
    }

    /// A client builder on these nodes, trusting the builder's CA (the system's roots
    /// without one) and showing its client certificate.
    pub(crate) fn builder(&self) -> ClusterClientBuilder {
        let builder = ClusterClientBuilder::new(self.nodes.clone());
        #[cfg(feature = "fleet-tls")]
        if let Some(certificates) = &self.certificates {
            return builder.certs(certificates.clone());
        }
        builder
    }
}
