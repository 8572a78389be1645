//! Asking the store: every answer bounded in time, and the line between the store failing
//! (the whole view degrades, the task connects again) and the store refusing one name's data
//! (a key of the wrong type, a value no script can read), which costs that name alone.

use std::future::Future;
use std::time::Duration;

use redis::{ErrorKind, RedisError, ServerErrorKind};
use tokio::time::{timeout, Instant};

/// Why the store failed, as the degraded event tells it.
pub(crate) type Failure = String;

/// Runs `future` for at most `wait`; a store error or the time running out is a failure.
pub(crate) async fn bounded<T>(
    wait: Duration,
    future: impl Future<Output = redis::RedisResult<T>>,
) -> Result<T, Failure> {
    match timeout(wait, future).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("no answer within {}ms", wait.as_millis())),
    }
}

/// [`bounded`] for a script on the keys of `name`: the store refusing that name's data is
/// `Ok(None)`, with a warning, so that nothing stored under one name changes what the fleet
/// does for another.
pub(crate) async fn bounded_for_name<T>(
    name: &str,
    wait: Duration,
    future: impl Future<Output = redis::RedisResult<T>>,
) -> Result<Option<T>, Failure> {
    match timeout(wait, future).await {
        Ok(Ok(value)) => Ok(Some(value)),
        Ok(Err(error)) if refuses_data(&error) => {
            #[cfg(feature = "tracing")]
            tracing::warn!(breaker = name, reason = %error, "fleet: this name's keys in the store are unreadable; skipped");
            let _ = (name, error);
            Ok(None)
        }
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("no answer within {}ms", wait.as_millis())),
    }
}

/// Whether the store answered, refusing the data under a name: a key of the wrong type, or
/// a script that stopped on a value it could not read.
fn refuses_data(error: &RedisError) -> bool {
    if error.code() == Some("WRONGTYPE") {
        return true;
    }
    error.kind() == ErrorKind::Server(ServerErrorKind::ResponseError)
        && error
            .detail()
            .is_some_and(|detail| detail.contains("script"))
}

/// `span` in ms as the store is told it, never past thirty years: the scripts add it to the
/// server's time in Lua's doubles, where that is still exact.
pub(crate) fn millis(span: Duration) -> u64 {
    u64::try_from(span.min(crate::clock::FAR).as_millis()).unwrap_or(u64::MAX)
}

/// [`millis`], rounded up: the end of an OPEN told in whole ms is never told early.
pub(crate) fn millis_rounded_up(span: Duration) -> u64 {
    millis(span.saturating_add(Duration::from_nanos(999_999)))
}

/// `at + by` on the task's clock, never past thirty years from `at` (see `clock::later`).
pub(crate) fn later(at: Instant, by: Duration) -> Instant {
    Instant::from_std(crate::clock::later(at.into_std(), by))
}

/// One stored opinion, as a snapshot read it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Row {
    pub(crate) instance: String,
    pub(crate) seq: u64,
    /// Ms until the OPEN ends, and until it stops counting.
    pub(crate) until_ms: u64,
    pub(crate) expires_ms: u64,
    /// With a secret: the ms the OPEN had left when written, and the tag of the row.
    pub(crate) signature: Option<(u64, String)>,
}

/// One name's part of a snapshot, read.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct NameRows {
    /// The live opinions.
    pub(crate) rows: Vec<Row>,
    /// How many rows were not understood, and left out.
    pub(crate) skipped: u64,
}

/// One name's part of the snapshot script's reply, `[error, skipped, instance, seq, until
/// left, expires left, ...]`: the rows it understands, or why the name could not be read.
pub(crate) fn parse_rows(reply: &[String]) -> Result<NameRows, String> {
    let (error, skipped, rows) = match reply {
        [error, skipped, rows @ ..] => (error, skipped, rows),
        _ => return Err("a reply without its header".into()),
    };
    if !error.is_empty() {
        return Err(error.clone());
    }
    let mut read = NameRows {
        skipped: skipped.parse().unwrap_or(0),
        ..NameRows::default()
    };
    read.skipped += u64::from(!rows.len().is_multiple_of(4));
    for row in rows.chunks_exact(4) {
        let number = |text: &str| text.parse::<u64>().ok();
        let mut kept = row[1].split(' ');
        let seq = kept.next().and_then(number);
        let signature = match (kept.next(), kept.next(), kept.next()) {
            (None, _, _) => Some(None),
            (Some(left), Some(tag), None) => number(left).map(|left| Some((left, tag.to_string()))),
            _ => None,
        };
        match (seq, signature, number(&row[2]), number(&row[3])) {
            (Some(seq), Some(signature), Some(until_ms), Some(expires_ms)) => read.rows.push(Row {
                instance: row[0].clone(),
                seq,
                until_ms,
                expires_ms,
                signature,
            }),
            _ => read.skipped += 1,
        }
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_row_that_is_not_understood_is_skipped_and_the_others_read() {
        let read = parse_rows(&reply(&[
            "", "1", "a", "3", "500", "200", "b", "x", "1", "1", "c", "4 600 ab", "500", "200",
            "d", "5 600", "1", "1",
        ]));
        let row = |instance: &str, seq, signature| Row {
            instance: instance.into(),
            seq,
            until_ms: 500,
            expires_ms: 200,
            signature,
        };
        assert_eq!(
            read,
            Ok(NameRows {
                rows: vec![row("a", 3, None), row("c", 4, Some((600, "ab".into())))],
                skipped: 3,
            })
        );
    }

    #[test]
    fn a_name_the_store_could_not_read_says_why() {
        let error = "WRONGTYPE Operation against a key holding the wrong kind of value";
        assert_eq!(parse_rows(&reply(&[error, "0"])), Err(error.to_string()));
        assert_eq!(
            parse_rows(&reply(&[])),
            Err("a reply without its header".to_string())
        );
    }
}
