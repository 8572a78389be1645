//! The URLs of a store of several hosts: `redis+sentinel://` and `redis+cluster://`, and
//! their TLS forms `rediss+sentinel://` and `rediss+cluster://`. A URL of one node is
//! redis-rs's own; these put a list of hosts where it has one, so that each host and the
//! credentials are still read by redis-rs. The sentinels' own credentials, which no URL of
//! one node carries, are query parameters, named as go-redis and redis-py name them:
//! `?sentinel_username=...&sentinel_password=...`.

use percent_encoding::percent_decode_str;
use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo};

use super::connection::Store;
use super::nodes::Nodes;
use super::sentinels::{Auth, Sentinels};
use super::FleetError;

/// The port of a sentinel, and of a cluster's node, when the URL gives none.
const SENTINEL_PORT: u16 = 26379;
const NODE_PORT: u16 = 6379;

/// The store of a URL of several hosts; `Ok(None)` for a URL of one node.
///
/// `redis[s]+sentinel://[user:password@]host[:port][,host[:port]...]/master[/db][?sentinel_username=...&sentinel_password=...]`:
/// the sentinels, the master's name, the credentials and database of the master, and the
/// sentinels' own credentials (none: they are asked without).
///
/// `redis[s]+cluster://[user:password@]host[:port][,host[:port]...]`: some of the cluster's
/// nodes, which tell the client of the others; every node takes the credentials.
///
/// With `rediss`, every host speaks TLS: the sentinels and the master, or every node.
pub(crate) fn parse(url: &str) -> Result<Option<Store>, FleetError> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Ok(None);
    };
    let (sentinel, tls) = match scheme {
        "redis+sentinel" => (true, false),
        "rediss+sentinel" => (true, true),
        "redis+cluster" => (false, false),
        "rediss+cluster" => (false, true),
        _ => return Ok(None),
    };
    if tls {
        tls_available(scheme)?;
    }
    let bad = |why: String| Err(FleetError::Url(why));
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (user, hosts) = match authority.rsplit_once('@') {
        Some((user, hosts)) => (format!("{user}@"), hosts),
        None => (String::new(), authority),
    };
    let default_port = if sentinel { SENTINEL_PORT } else { NODE_PORT };
    let hosts = hosts
        .split(',')
        .map(|host| with_port(host, default_port))
        .collect::<Result<Vec<_>, _>>()
        .map_err(FleetError::Url)?;
    let node_scheme = if tls { "rediss" } else { "redis" };
    let info = |url: String| {
        url.into_connection_info()
            .map_err(|e| FleetError::Url(e.to_string()))
    };
    if !sentinel {
        if !path.is_empty() {
            return bad(format!(
                "a cluster has one database: no path after the hosts, got /{path}"
            ));
        }
        if !query.is_empty() {
            return bad(format!(
                "a {scheme}:// URL takes no parameters, got {}",
                keys(query)
            ));
        }
        let nodes = hosts
            .iter()
            .map(|host| info(format!("{node_scheme}://{user}{host}")))
            .collect::<Result<Vec<ConnectionInfo>, _>>()?;
        return Ok(Some(Store::Cluster(Nodes::new(nodes))));
    }
    let (master, db) = path.split_once('/').unwrap_or((path, "0"));
    if master.is_empty() {
        return bad(format!(
            "a {scheme}:// URL names its master after the hosts: {scheme}://host:26379/mymaster"
        ));
    }
    let addrs = hosts
        .iter()
        .map(|host| info(format!("{node_scheme}://{host}")).map(|info| info.addr().clone()))
        .collect::<Result<Vec<ConnectionAddr>, _>>()?;
    // The master's credentials and database, read by redis-rs from a URL of one node.
    let master_info = info(format!("redis://{user}{}/{db}", hosts[0]))?;
    Ok(Some(Store::Sentinel(Sentinels {
        addrs,
        master: master.to_string(),
        master_auth: Auth::from(master_info.redis_settings()),
        db: master_info.redis_settings().db(),
        sentinel_auth: sentinel_auth(scheme, query)?,
        tls,
        #[cfg(feature = "fleet-tls")]
        certificates: None,
    })))
}

/// The sentinels' credentials of a sentinel URL's query, percent-decoded.
fn sentinel_auth(scheme: &str, query: &str) -> Result<Auth, FleetError> {
    let mut auth = Auth::default();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let (field, slot) = match key {
            "sentinel_username" => ("sentinel_username", &mut auth.username),
            "sentinel_password" => ("sentinel_password", &mut auth.password),
            _ => {
                return Err(FleetError::Url(format!(
                    "a {scheme}:// URL takes sentinel_username and sentinel_password, got {key:?}"
                )))
            }
        };
        let invalid = |rule: &str| {
            Err(FleetError::Invalid {
                field,
                rule: rule.into(),
            })
        };
        if slot.is_some() {
            return invalid("is given twice");
        }
        let Ok(value) = percent_decode_str(value).decode_utf8() else {
            return invalid("must be UTF-8 once percent-decoded");
        };
        if value.is_empty() {
            return invalid("must not be empty");
        }
        *slot = Some(value.into_owned());
    }
    if auth.username.is_some() && auth.password.is_none() {
        return Err(FleetError::Invalid {
            field: "sentinel_username",
            rule: "needs a sentinel_password with it".into(),
        });
    }
    Ok(auth)
}

/// Without the `fleet-tls` feature, a TLS URL is refused, saying which feature it needs.
fn tls_available(scheme: &str) -> Result<(), FleetError> {
    #[cfg(not(feature = "fleet-tls"))]
    return Err(FleetError::Url(format!(
        "a {scheme}:// URL needs TLS: enable the `fleet-tls` feature of breaker"
    )));
    #[cfg(feature = "fleet-tls")]
    {
        let _ = scheme;
        Ok(())
    }
}

/// The keys of a query, never its values (a password may be one).
fn keys(query: &str) -> String {
    query
        .split('&')
        .map(|pair| pair.split_once('=').map_or(pair, |(key, _)| key))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The cluster of [`Fleet::cluster_builder`](super::Fleet::cluster_builder): each node a
/// URL of one node, as redis-rs reads it, all of them TLS (`rediss://`) or none.
pub(crate) fn nodes(urls: &[String]) -> Result<Store, FleetError> {
    if urls.iter().any(|url| url.starts_with("rediss://")) {
        tls_available("rediss")?;
    }
    let nodes = urls
        .iter()
        .map(|url| {
            url.as_str()
                .into_connection_info()
                .map_err(|e| FleetError::Url(format!("{url}: {e}")))
        })
        .collect::<Result<Vec<ConnectionInfo>, _>>()?;
    let tls = |node: &ConnectionInfo| matches!(node.addr(), ConnectionAddr::TcpTls { .. });
    if let Some(other) = nodes.iter().position(|node| tls(node) != tls(&nodes[0])) {
        let kind = |node| {
            if tls(node) {
                "rediss:// (TLS)"
            } else {
                "plain"
            }
        };
        return Err(FleetError::Invalid {
            field: "cluster nodes",
            rule: format!(
                "must all be rediss:// (TLS) or all plain: node 1 is {}, node {} is {}",
                kind(&nodes[0]),
                other + 1,
                kind(&nodes[other]),
            ),
        });
    }
    Ok(Store::Cluster(Nodes::new(nodes)))
}

/// `host:port`, the port `default` if `host` has none.
fn with_port(host: &str, default: u16) -> Result<String, String> {
    if host.is_empty() {
        return Err("a host of the list is empty".into());
    }
    let bracketed = host.starts_with('[');
    let has_port = match host.rsplit_once(':') {
        Some((_, port)) if !bracketed || host.contains("]:") => {
            port.parse::<u16>()
                .map_err(|_| format!("the port of {host:?} is not a number"))?;
            true
        }
        _ => false,
    };
    Ok(match has_port {
        true => host.to_string(),
        false => format!("{host}:{default}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(info: &ConnectionInfo) -> String {
        info.addr().to_string()
    }

    fn sentinels(url: &str) -> Sentinels {
        match parse(url) {
            Ok(Some(Store::Sentinel(sentinels))) => sentinels,
            _ => panic!("not a sentinel store: {url}"),
        }
    }

    fn cluster(url: &str) -> Nodes {
        match parse(url) {
            Ok(Some(Store::Cluster(nodes))) => nodes,
            _ => panic!("not a cluster store: {url}"),
        }
    }

    fn auth(username: Option<&str>, password: Option<&str>) -> Auth {
        Auth {
            username: username.map(str::to_string),
            password: password.map(str::to_string),
        }
    }

    fn err(url: &str) -> String {
        parse(url).err().expect("an error").to_string()
    }

    #[test]
    fn a_sentinel_url_names_its_sentinels_its_master_and_the_masters_credentials() {
        let s = sentinels("redis+sentinel://app:s%40cret@10.0.0.1,10.0.0.2:5000/cache/2");
        let hosts: Vec<String> = s.addrs.iter().map(ToString::to_string).collect();
        assert_eq!(hosts, ["10.0.0.1:26379", "10.0.0.2:5000"]);
        assert_eq!(s.master, "cache");
        assert_eq!(s.db, 2);
        assert_eq!(s.master_auth, auth(Some("app"), Some("s@cret")));
        assert_eq!(s.sentinel_auth, Auth::default());
        assert!(!s.tls);
    }

    #[test]
    fn the_sentinels_own_credentials_are_query_parameters() {
        let s = sentinels(
            "redis+sentinel://:m@h1/cache?sentinel_username=watch&sentinel_password=p%26w%3D",
        );
        assert_eq!(s.master_auth, auth(None, Some("m")));
        assert_eq!(s.sentinel_auth, auth(Some("watch"), Some("p&w=")));
        assert_eq!(s.db, 0);
        let s = sentinels("redis+sentinel://h1/cache/3?sentinel_password=only");
        assert_eq!(s.sentinel_auth, auth(None, Some("only")));
        assert_eq!(s.db, 3);
    }

    #[test]
    #[cfg(feature = "fleet-tls")]
    fn rediss_sentinel_speaks_tls_to_the_sentinels_and_the_master() {
        let s = sentinels("rediss+sentinel://h1,h2:5000/cache");
        assert!(s.tls);
        assert!(s.addrs.iter().all(|addr| matches!(
            addr,
            ConnectionAddr::TcpTls {
                insecure: false,
                ..
            }
        )));
        let hosts: Vec<String> = s.addrs.iter().map(ToString::to_string).collect();
        assert_eq!(hosts, ["h1:26379", "h2:5000"]);
    }

    #[test]
    fn a_cluster_url_names_some_of_its_nodes() {
        let nodes = cluster("redis+cluster://h1:7000,h2");
        let hosts: Vec<String> = nodes.nodes.iter().map(addr).collect();
        assert_eq!(hosts, ["h1:7000", "h2:6379"]);
        assert!(!nodes.tls());
    }

    #[test]
    #[cfg(feature = "fleet-tls")]
    fn rediss_cluster_speaks_tls_to_every_node_with_the_credentials() {
        let nodes = cluster("rediss+cluster://fleet:pw@h1:7000,h2");
        assert!(nodes.tls());
        for node in &nodes.nodes {
            assert!(matches!(node.addr(), ConnectionAddr::TcpTls { .. }));
            assert_eq!(node.redis_settings().username(), Some("fleet"));
            assert_eq!(node.redis_settings().password(), Some("pw"));
        }
    }

    #[test]
    #[cfg(feature = "fleet-tls")]
    fn cluster_builder_nodes_are_all_tls_or_all_plain() {
        let urls = |list: &[&str]| list.iter().map(|u| u.to_string()).collect::<Vec<_>>();
        let Ok(Store::Cluster(tls)) = nodes(&urls(&["rediss://h1:7000", "rediss://h2:7000"]))
        else {
            panic!("a cluster");
        };
        assert!(tls.tls());
        let mixed = nodes(&urls(&["rediss://h1:7000", "rediss://h2", "redis://h3"]));
        assert_eq!(
            mixed.err().unwrap().to_string(),
            "fleet: cluster nodes must all be rediss:// (TLS) or all plain: node 1 is rediss:// (TLS), node 3 is plain"
        );
    }

    #[test]
    #[cfg(not(feature = "fleet-tls"))]
    fn without_the_tls_feature_a_tls_url_names_the_feature() {
        assert_eq!(
            err("rediss+cluster://h1"),
            "fleet: the store's URL is not valid: a rediss+cluster:// URL needs TLS: enable the `fleet-tls` feature of breaker"
        );
        assert_eq!(
            err("rediss+sentinel://h1/m"),
            "fleet: the store's URL is not valid: a rediss+sentinel:// URL needs TLS: enable the `fleet-tls` feature of breaker"
        );
        let tls_nodes = nodes(&["rediss://h1".to_string()]);
        assert_eq!(
            tls_nodes.err().unwrap().to_string(),
            "fleet: the store's URL is not valid: a rediss:// URL needs TLS: enable the `fleet-tls` feature of breaker"
        );
    }

    #[test]
    fn bad_urls_of_several_hosts_say_what_is_wrong() {
        let url = "fleet: the store's URL is not valid: ";
        assert_eq!(
            err("redis+sentinel://h1:26379"),
            format!("{url}a redis+sentinel:// URL names its master after the hosts: redis+sentinel://host:26379/mymaster")
        );
        #[cfg(feature = "fleet-tls")]
        assert_eq!(
            err("rediss+sentinel://h1:26379"),
            format!("{url}a rediss+sentinel:// URL names its master after the hosts: rediss+sentinel://host:26379/mymaster")
        );
        assert_eq!(
            err("redis+cluster://h1,,h2"),
            format!("{url}a host of the list is empty")
        );
        assert_eq!(
            err("redis+cluster://h1:x"),
            format!("{url}the port of \"h1:x\" is not a number")
        );
        assert_eq!(
            err("redis+cluster://h1/3"),
            format!("{url}a cluster has one database: no path after the hosts, got /3")
        );
        assert!(parse("redis://h1:6379").unwrap().is_none());
        assert!(parse("rediss://h1:6379").unwrap().is_none());
        assert!(parse("redis+unix:///tmp/redis.sock").unwrap().is_none());
    }

    #[test]
    fn bad_query_parameters_name_the_parameter_and_never_show_a_value() {
        let url = "fleet: the store's URL is not valid: ";
        assert_eq!(
            err("redis+cluster://h1?sentinel_password=secret"),
            format!("{url}a redis+cluster:// URL takes no parameters, got sentinel_password")
        );
        assert_eq!(
            err("redis+sentinel://h1/m?password=secret"),
            format!("{url}a redis+sentinel:// URL takes sentinel_username and sentinel_password, got \"password\"")
        );
        assert_eq!(
            err("redis+sentinel://h1/m?sentinel_password=a&sentinel_password=b"),
            "fleet: sentinel_password is given twice"
        );
        assert_eq!(
            err("redis+sentinel://h1/m?sentinel_password="),
            "fleet: sentinel_password must not be empty"
        );
        assert_eq!(
            err("redis+sentinel://h1/m?sentinel_username=%FF&sentinel_password=x"),
            "fleet: sentinel_username must be UTF-8 once percent-decoded"
        );
        assert_eq!(
            err("redis+sentinel://h1/m?sentinel_username=watch"),
            "fleet: sentinel_username needs a sentinel_password with it"
        );
        let bad = parse("redis+sentinel://h1/m?sentinel_password=");
        assert!(matches!(
            bad,
            Err(FleetError::Invalid {
                field: "sentinel_password",
                ..
            })
        ));
    }
}
