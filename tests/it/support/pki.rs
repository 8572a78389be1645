//! A throwaway certificate authority for the fleet's TLS tests, made for this run only
//! (rcgen): a CA, a server certificate for `127.0.0.1` and `localhost` (which the servers
//! also show each other as clients, on a cluster's bus and a sentinel's links), and a client
//! certificate; the files the servers and `redis-cli` read, in a directory removed when it
//! is dropped.

use std::path::PathBuf;

use breaker_workspace::redis_server::{free_port, RedisServer, Unavailable};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

/// A CA, and the certificates it signed, in PEM; the server's files written to a directory
/// removed when this is dropped.
pub struct Pki {
    pub dir: PathBuf,
    pub ca: String,
    pub client_cert: String,
    pub client_key: String,
}

impl Pki {
    pub fn new(tag: &str) -> Self {
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "breaker fleet test CA");
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().unwrap()).unwrap();
        let leaf = |names: &[&str], usages: &[ExtendedKeyUsagePurpose]| {
            let key = KeyPair::generate().unwrap();
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            let mut params = CertificateParams::new(names).unwrap();
            params.extended_key_usages = usages.to_vec();
            let cert = params.signed_by(&key, &ca).unwrap();
            (cert.pem(), key.serialize_pem())
        };
        let (server_cert, server_key) = leaf(
            &["127.0.0.1", "localhost"],
            &[
                ExtendedKeyUsagePurpose::ServerAuth,
                ExtendedKeyUsagePurpose::ClientAuth,
            ],
        );
        let (client_cert, client_key) =
            leaf(&["fleet-instance"], &[ExtendedKeyUsagePurpose::ClientAuth]);
        let dir =
            std::env::temp_dir().join(format!("breaker-fleet-tls-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (file, pem) in [
            ("ca.pem", ca.pem()),
            ("server.pem", server_cert),
            ("server.key", server_key),
            ("client.pem", client_cert.clone()),
            ("client.key", client_key.clone()),
        ] {
            std::fs::write(dir.join(file), pem).unwrap();
        }
        Self {
            dir,
            ca: ca.pem(),
            client_cert,
            client_key,
        }
    }

    /// The path of one of the files: `ca.pem`, `server.pem`, `server.key`, `client.pem`,
    /// `client.key`.
    pub fn file(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// A server's TLS configuration, as `redis-server` and `redis-sentinel` take it on
    /// their command line, checking clients' certificates or not.
    pub fn server_args(&self, check_clients: bool) -> Vec<String> {
        let clients = if check_clients { "yes" } else { "no" };
        [
            "--tls-cert-file",
            &self.file("server.pem"),
            "--tls-key-file",
            &self.file("server.key"),
            "--tls-ca-cert-file",
            &self.file("ca.pem"),
            "--tls-auth-clients",
            clients,
        ]
        .map(String::from)
        .to_vec()
    }

    /// `redis-cli`'s options to reach a server of this CA, with the client certificate.
    pub fn cli_args(&self) -> Vec<String> {
        [
            "--tls",
            "--cacert",
            &self.file("ca.pem"),
            "--cert",
            &self.file("client.pem"),
            "--key",
            &self.file("client.key"),
        ]
        .map(String::from)
        .to_vec()
    }

    /// A server that speaks TLS on a port of its own (`rediss://127.0.0.1:PORT`, returned),
    /// checking clients' certificates or not.
    pub fn server(&self, what: &str, check_clients: bool) -> Option<(RedisServer, String)> {
        // The TLS port is free when chosen, and may not be when the server binds it (the
        // plain port chosen after it, or another process, may take it): a few tries.
        let mut tries = 3;
        loop {
            tries -= 1;
            match self.try_server(what, check_clients) {
                Err(why) if tries > 0 => {
                    eprintln!("redis-server with TLS did not start ({why}): again")
                }
                Err(why) => panic!(
                    "redis-server did not start with TLS ({why}): these tests need a build with \
                     TLS (BUILD_TLS=yes), as Debian's and Homebrew's are"
                ),
                Ok(started) => return started,
            }
        }
    }

    fn try_server(
        &self,
        what: &str,
        check_clients: bool,
    ) -> Result<Option<(RedisServer, String)>, String> {
        let port = free_port().to_string();
        let mut args = vec!["--tls-port".to_string(), port.clone()];
        args.extend(self.server_args(check_clients));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let server = match RedisServer::start_with(&args) {
            Ok(server) => server,
            // Skipped loudly, or failed under CI, as every fleet test does.
            Err(Unavailable::Missing) => match RedisServer::start_or_skip_with(what, &args) {
                Some(server) => server,
                None => return Ok(None),
            },
            Err(Unavailable::NotReady(why)) => return Err(why),
        };
        Ok(Some((server, format!("rediss://127.0.0.1:{port}"))))
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
