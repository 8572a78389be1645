//! The URLs of a store of several hosts: `redis+sentinel://` and `redis+cluster://`. A URL of
//! one node is redis-rs's own; these put a list of hosts where it has one, so that each host
//! and the credentials are still read by redis-rs.

use redis::sentinel::SentinelNodeConnectionInfo;
use redis::{ConnectionInfo, IntoConnectionInfo};

use super::connection::Store;

/// The port of a sentinel, and of a cluster's node, when the URL gives none.
const SENTINEL_PORT: u16 = 26379;
const NODE_PORT: u16 = 6379;

/// The store of a URL of several hosts; `Ok(None)` for a URL of one node.
///
/// `redis+sentinel://[user:password@]host[:port][,host[:port]...]/master[/db]`: the
/// sentinels, the master's name, and the credentials and database of the master (the
/// sentinels are asked without them).
///
/// `redis+cluster://[user:password@]host[:port][,host[:port]...]`: some of the cluster's
/// nodes, which tell the client of the others; every node takes the credentials.
pub(crate) fn parse(url: &str) -> Result<Option<Store>, String> {
    let (sentinel, rest) = if let Some(rest) = url.strip_prefix("redis+sentinel://") {
        (true, rest)
    } else if let Some(rest) = url.strip_prefix("redis+cluster://") {
        (false, rest)
    } else if url.starts_with("rediss+sentinel://") || url.starts_with("rediss+cluster://") {
        return Err("TLS to a Sentinel or a Cluster is not supported yet: use redis+sentinel:// or redis+cluster:// on a trusted network".into());
    } else {
        return Ok(None);
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (user, hosts) = match authority.rsplit_once('@') {
        Some((user, hosts)) => (format!("{user}@"), hosts),
        None => (String::new(), authority),
    };
    let default_port = if sentinel { SENTINEL_PORT } else { NODE_PORT };
    let hosts = hosts
        .split(',')
        .map(|host| with_port(host, default_port))
        .collect::<Result<Vec<_>, _>>()?;
    let info = |url: String| url.into_connection_info().map_err(|e| e.to_string());
    if !sentinel {
        if !path.is_empty() {
            return Err(format!(
                "a cluster has one database: no path after the hosts, got /{path}"
            ));
        }
        let nodes = hosts
            .iter()
            .map(|host| info(format!("redis://{user}{host}")))
            .collect::<Result<Vec<ConnectionInfo>, _>>()?;
        return Ok(Some(Store::Cluster(nodes)));
    }
    let (master, db) = path.split_once('/').unwrap_or((path, "0"));
    if master.is_empty() {
        return Err("a redis+sentinel:// URL names its master after the hosts: redis+sentinel://host:26379/mymaster".into());
    }
    let sentinels = hosts
        .iter()
        .map(|host| info(format!("redis://{host}")))
        .collect::<Result<Vec<ConnectionInfo>, _>>()?;
    // The master's credentials and database, read by redis-rs from a URL of one node.
    let master_info = info(format!("redis://{user}{}/{db}", hosts[0]))?;
    let node = SentinelNodeConnectionInfo::default()
        .set_redis_connection_info(master_info.redis_settings().clone());
    Ok(Some(Store::Sentinel {
        sentinels,
        master: master.to_string(),
        node,
    }))
}

/// The cluster of [`Fleet::cluster_builder`](super::Fleet::cluster_builder): each node a
/// URL of one node, as redis-rs reads it.
pub(crate) fn nodes(urls: &[String]) -> Result<Store, String> {
    let nodes = urls
        .iter()
        .map(|url| {
            url.as_str()
                .into_connection_info()
                .map_err(|e| format!("{url}: {e}"))
        })
        .collect::<Result<Vec<ConnectionInfo>, _>>()?;
    Ok(Store::Cluster(nodes))
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

    #[test]
    fn a_sentinel_url_names_its_sentinels_its_master_and_the_masters_credentials() {
        let store = parse("redis+sentinel://app:s%40cret@10.0.0.1,10.0.0.2:5000/cache/2")
            .unwrap()
            .unwrap();
        let Store::Sentinel {
            sentinels,
            master,
            node,
        } = store
        else {
            panic!("not a sentinel store");
        };
        let hosts: Vec<String> = sentinels.iter().map(addr).collect();
        assert_eq!(hosts, ["10.0.0.1:26379", "10.0.0.2:5000"]);
        assert_eq!(master, "cache");
        let debug = format!("{node:?}");
        assert!(debug.contains("db: 2"), "{debug}");
        assert!(debug.contains("\"app\""), "{debug}");
    }

    #[test]
    fn a_cluster_url_names_some_of_its_nodes() {
        let Some(Store::Cluster(nodes)) = parse("redis+cluster://h1:7000,h2").unwrap() else {
            panic!("not a cluster store");
        };
        let hosts: Vec<String> = nodes.iter().map(addr).collect();
        assert_eq!(hosts, ["h1:7000", "h2:6379"]);
    }

    #[test]
    fn bad_urls_of_several_hosts_say_what_is_wrong() {
        let err = |url| parse(url).err().unwrap();
        assert_eq!(
            err("redis+sentinel://h1:26379"),
            "a redis+sentinel:// URL names its master after the hosts: redis+sentinel://host:26379/mymaster"
        );
        assert_eq!(err("redis+cluster://h1,,h2"), "a host of the list is empty");
        assert_eq!(
            err("redis+cluster://h1:x"),
            "the port of \"h1:x\" is not a number"
        );
        assert_eq!(
            err("redis+cluster://h1/3"),
            "a cluster has one database: no path after the hosts, got /3"
        );
        assert!(parse("redis://h1:6379").unwrap().is_none());
    }
}
