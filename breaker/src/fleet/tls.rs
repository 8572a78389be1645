//! TLS to the store (`rediss://`, feature `fleet-tls`): redis-rs's rustls connection, on
//! rustls's `ring` provider, trusting the system's roots or a CA given in PEM, with a client
//! certificate for a store that asks for one (Redis's `tls-auth-clients yes`, its default).

use redis::{ClientTlsConfig, TlsCertificates};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::{FleetBuilder, FleetError};

/// What the fleet's TLS trusts and shows.
#[derive(Clone, Default)]
pub(super) struct Trust {
    /// The CA certificates the store's certificate must chain to, in PEM, instead of the
    /// system's roots.
    ca: Option<Vec<u8>>,
    /// This instance's certificate chain and private key, in PEM.
    client: Option<(Vec<u8>, Vec<u8>)>,
}

// Certificates and keys are never printed.
impl std::fmt::Debug for Trust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set = |on: bool| if on { "<set>" } else { "<none>" };
        f.debug_struct("Trust")
            .field("ca", &set(self.ca.is_some()))
            .field("client", &set(self.client.is_some()))
            .finish()
    }
}

impl Trust {
    /// The TLS client of `url`, when the URL or the builder asks for TLS; `None` for a
    /// plain one.
    pub(super) fn client(
        &self,
        url: &str,
        tls_url: bool,
    ) -> Result<Option<redis::Client>, FleetError> {
        match self.certificates(tls_url)? {
            None => Ok(None),
            Some(certificates) => redis::Client::build_with_tls(url, certificates)
                .map(Some)
                .map_err(|e| FleetError::Url(e.to_string())),
        }
    }

    /// The CA and client certificate to hand redis-rs for a store of TLS URLs (`tls_url`),
    /// checked; `None` where the system's roots and no client certificate will do, or the
    /// URLs are plain. Given with plain URLs, either is an error naming it.
    pub(super) fn certificates(
        &self,
        tls_url: bool,
    ) -> Result<Option<TlsCertificates>, FleetError> {
        if !tls_url {
            if self.ca.is_some() || self.client.is_some() {
                let field = if self.ca.is_some() {
                    "tls_ca"
                } else {
                    "tls_client"
                };
                return Err(FleetError::Invalid {
                    field,
                    rule: "needs a TLS URL (rediss://, rediss+sentinel://, rediss+cluster://), got a plain one".into(),
                });
            }
            return Ok(None);
        }
        install_provider();
        if self.ca.is_none() && self.client.is_none() {
            return Ok(None);
        }
        if let Some(ca) = &self.ca {
            certificates("tls_ca", ca)?;
        }
        if let Some((chain, key)) = &self.client {
            certificates("tls_client", chain)?;
            if let Err(e) = PrivateKeyDer::from_pem_slice(key) {
                return Err(FleetError::Invalid {
                    field: "tls_client",
                    rule: format!("key must be a PEM private key: {e}"),
                });
            }
        }
        Ok(Some(TlsCertificates {
            client_tls: self
                .client
                .clone()
                .map(|(client_cert, client_key)| ClientTlsConfig {
                    client_cert,
                    client_key,
                }),
            root_cert: self.ca.clone(),
        }))
    }
}

/// Checks that `pem` holds PEM certificates, at least one.
fn certificates(field: &'static str, pem: &[u8]) -> Result<(), FleetError> {
    let invalid = |rule| Err(FleetError::Invalid { field, rule });
    let mut found = 0;
    for certificate in CertificateDer::pem_slice_iter(pem) {
        if let Err(e) = certificate {
            return invalid(format!("must be PEM certificates: {e}"));
        }
        found += 1;
    }
    match found {
        0 => invalid("must hold at least one PEM certificate, found none".into()),
        _ => Ok(()),
    }
}

/// Makes `ring` rustls's provider for this process unless one is installed already (the
/// application's own choice stands). rustls needs one, and cannot pick it alone when the
/// program's crates enable more than one.
fn install_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Lost to another thread's install: that one stands, as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

impl FleetBuilder {
    /// Trusts the certificate authorities in `pem` (one or more PEM certificates) for the
    /// store's certificates, instead of the system's roots: a private CA, as most
    /// self-hosted Redis deployments with TLS have. It serves every TLS URL: `rediss://`,
    /// the sentinels and the master of `rediss+sentinel://`, every node of
    /// `rediss+cluster://` or of [`Fleet::cluster_builder`](super::Fleet::cluster_builder)'s
    /// `rediss://` nodes. Feature `fleet-tls`.
    ///
    /// ```
    /// use breakerbox::fleet::Fleet;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let not_pem = Fleet::builder("rediss://127.0.0.1:6380").tls_ca("no certificate here").start();
    /// assert_eq!(
    ///     not_pem.err().unwrap().to_string(),
    ///     "fleet: tls_ca must hold at least one PEM certificate, found none"
    /// );
    /// let plain = Fleet::builder("redis+cluster://127.0.0.1:7000").tls_ca("...").start();
    /// assert_eq!(
    ///     plain.err().unwrap().to_string(),
    ///     "fleet: tls_ca needs a TLS URL (rediss://, rediss+sentinel://, rediss+cluster://), got a plain one"
    /// );
    /// // A cluster's nodes are all TLS or all plain.
    /// let mixed = Fleet::cluster_builder(["rediss://10.0.0.1:6380", "redis://10.0.0.2:6379"]).start();
    /// assert_eq!(
    ///     mixed.err().unwrap().to_string(),
    ///     "fleet: cluster nodes must all be rediss:// (TLS) or all plain: node 1 is rediss:// (TLS), node 2 is plain"
    /// );
    /// # });
    /// ```
    pub fn tls_ca(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.tls.ca = Some(pem.into());
        self
    }

    /// This instance's certificate chain and private key, in PEM, for a store that checks
    /// its clients' certificates (Redis's `tls-auth-clients yes`): one node, the sentinels
    /// and the master, or every node of a cluster, as [`tls_ca`](Self::tls_ca). Feature
    /// `fleet-tls`.
    ///
    /// ```no_run
    /// use breakerbox::fleet::Fleet;
    ///
    /// # async fn start() -> Result<(), Box<dyn std::error::Error>> {
    /// let (ca, chain, key) = (
    ///     std::fs::read("/etc/fleet/ca.pem")?,
    ///     std::fs::read("/etc/fleet/client.pem")?,
    ///     std::fs::read("/etc/fleet/client.key")?,
    /// );
    /// let fleet = Fleet::builder("rediss+cluster://fleet:secret@10.0.0.1:6380,10.0.0.2:6380")
    ///     .tls_ca(ca)
    ///     .tls_client(chain, key)
    ///     .start()?;
    /// # let _ = fleet;
    /// # Ok(())
    /// # }
    /// ```
    pub fn tls_client(mut self, chain: impl Into<Vec<u8>>, key: impl Into<Vec<u8>>) -> Self {
        self.tls.client = Some((chain.into(), key.into()));
        self
    }
}

/// The environment variables of [`Fleet::from_env`](super::Fleet::from_env)'s TLS: a file
/// of CAs, a client certificate's file and its key's.
const ENV_CA: &str = "BREAKER_FLEET_TLS_CA";
const ENV_CERT: &str = "BREAKER_FLEET_TLS_CERT";
const ENV_KEY: &str = "BREAKER_FLEET_TLS_KEY";

/// `builder` with the TLS files the environment names.
pub(super) fn from_env(mut builder: FleetBuilder) -> Result<FleetBuilder, FleetError> {
    if let Some(ca) = read_env(ENV_CA)? {
        builder = builder.tls_ca(ca);
    }
    match (read_env(ENV_CERT)?, read_env(ENV_KEY)?) {
        (Some(chain), Some(key)) => builder = builder.tls_client(chain, key),
        (None, None) => {}
        (Some(_), None) => return Err(missing(ENV_KEY, ENV_CERT)),
        (None, Some(_)) => return Err(missing(ENV_CERT, ENV_KEY)),
    }
    Ok(builder)
}

/// The file the variable `name` names, read; `None` when it is not set.
fn read_env(name: &'static str) -> Result<Option<Vec<u8>>, FleetError> {
    let Some(path) = std::env::var_os(name) else {
        return Ok(None);
    };
    std::fs::read(&path)
        .map(Some)
        .map_err(|e| FleetError::Invalid {
            field: name,
            rule: format!("names a file that cannot be read ({}): {e}", path.display()),
        })
}

fn missing(absent: &'static str, given: &str) -> FleetError {
    FleetError::Invalid {
        field: absent,
        rule: format!("must be set with {given}"),
    }
}
