//! Keyed families: which key a full family evicts, and what a new member is born with.

use breaker::{circuit_breaker, registry, Classify, Outcome, Rejected};

#[derive(Debug)]
struct Down;

impl Classify for Down {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for Down {
    fn from(_: Rejected) -> Self {
        Down
    }
}

#[circuit_breaker(name = "fam::lru", key = host, max_keys = 2)]
async fn lru(host: &str) -> Result<(), Down> {
    let _ = host;
    Ok(())
}

#[tokio::test]
async fn a_full_family_evicts_the_least_recently_used_key_never_one_just_looked_up() {
    // Where two keys tie in recency, the table's order picks the victim: a key order that
    // changes with every key's hash, so many rounds catch a tie.
    for round in 0..400 {
        let (x, y, z) = (
            format!("x{round}"),
            format!("y{round}"),
            format!("z{round}"),
        );
        for host in [&x, &y, &x, &z] {
            lru(host).await.unwrap();
        }
        let kept = |host: &str| registry().get_keyed("fam::lru", host).is_some();
        assert_eq!(
            (kept(&x), kept(&y), kept(&z)),
            (true, false, true),
            "round {round}"
        );
    }
}
