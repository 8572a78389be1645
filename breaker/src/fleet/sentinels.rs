//! The store behind Sentinel: where the sentinels are, the name they know the master by, and
//! how the fleet speaks to each side (credentials, TLS), as redis-rs's `SentinelClientBuilder`
//! takes them.

use redis::sentinel::{SentinelClient, SentinelClientBuilder, SentinelServerType};
use redis::{ConnectionAddr, RedisConnectionInfo, RedisResult, TlsMode};

/// An ACL user (or none: the `default` user of `requirepass`) and its password.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct Auth {
    pub(crate) username: Option<String>,
    pub(crate) password: Option<String>,
}

// Passwords are never printed.
impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let password = self.password.as_ref().map(|_| "<set>");
        f.debug_struct("Auth")
            .field("username", &self.username)
            .field("password", &password)
            .finish()
    }
}

impl From<&RedisConnectionInfo> for Auth {
    fn from(info: &RedisConnectionInfo) -> Self {
        Self {
            username: info.username().map(str::to_string),
            password: info.password().map(str::to_string),
        }
    }
}

/// The sentinels and the master they name: `redis+sentinel://` or `rediss+sentinel://`.
#[derive(Clone, Debug)]
pub(crate) struct Sentinels {
    /// The sentinels' addresses, TLS ones for `rediss+sentinel://`.
    pub(crate) addrs: Vec<ConnectionAddr>,
    /// The name the sentinels know the master by.
    pub(crate) master: String,
    /// The master's credentials and database.
    pub(crate) master_auth: Auth,
    pub(crate) db: i64,
    /// The sentinels' own credentials (a sentinel with `requirepass`).
    pub(crate) sentinel_auth: Auth,
    /// Whether both the sentinels and the master speak TLS.
    pub(crate) tls: bool,
    /// The CA and client certificate of the builder, for both sides.
    #[cfg(feature = "fleet-tls")]
    pub(crate) certificates: Option<redis::TlsCertificates>,
}

impl Sentinels {
    /// A client that asks these sentinels for the master, with every setting of each side.
    pub(crate) fn client(&self) -> RedisResult<SentinelClient> {
        let mut builder = SentinelClientBuilder::new(
            self.addrs.clone(),
            &self.master,
            SentinelServerType::Master,
        )?
        .set_client_to_redis_db(self.db);
        if let Some(username) = &self.master_auth.username {
            builder = builder.set_client_to_redis_username(username);
        }
        if let Some(password) = &self.master_auth.password {
            builder = builder.set_client_to_redis_password(password);
        }
        if let Some(username) = &self.sentinel_auth.username {
            builder = builder.set_client_to_sentinel_username(username);
        }
        if let Some(password) = &self.sentinel_auth.password {
            builder = builder.set_client_to_sentinel_password(password);
        }
        if self.tls {
            builder = builder
                .set_client_to_redis_tls_mode(TlsMode::Secure)
                .set_client_to_sentinel_tls_mode(TlsMode::Secure);
            #[cfg(feature = "fleet-tls")]
            if let Some(certificates) = &self.certificates {
                builder = builder
                    .set_client_to_redis_certificates(certificates.clone())
                    .set_client_to_sentinel_certificates(certificates.clone());
            }
        }
        builder.build()
    }
}
