//! The fleet's data in Redis: the keys, the Lua scripts that change them atomically, and the
//! messages published on the one channel. `docs/fleet.md` draws the layout.
//!
//! Every time in Redis is the server's (`TIME` inside the scripts), and every time that
//! travels (in replies and messages) is a time *left*, in milliseconds: no instance's clock is
//! ever compared with another's.

use std::sync::LazyLock;

use redis::Script;

use super::sign::Signer;

/// The keys of one breaker name under a prefix.
pub(crate) struct Keys {
    /// Sorted set: instance id -> when its OPEN opinion stops counting (server ms), the
    /// earlier of its end and its time-to-live.
    pub(crate) live: String,
    /// Hash: instance id -> `"<until ms> <seq>"`, the end of its OPEN and its sequence number.
    pub(crate) until: String,
    /// Sorted set: instance id -> when its probe lease ends (server ms).
    pub(crate) lease: String,
}

impl Keys {
    pub(crate) fn new(prefix: &str, name: &str) -> Self {
        Self {
            live: format!("{prefix}:{{{name}}}:live"),
            until: format!("{prefix}:{{{name}}}:until"),
            lease: format!("{prefix}:{{{name}}}:lease"),
        }
    }
}

/// The channel every instance of a prefix publishes its opinions on, on one node.
pub(crate) fn channel(prefix: &str) -> String {
    format!("{prefix}:opinions")
}

/// The channel of one name's opinions on a cluster, in the hash slot of the name's keys:
/// published with `SPUBLISH` by the scripts on those keys, heard by the instances that track
/// the name only, from the node that holds them.
pub(crate) fn name_channel(prefix: &str, name: &str) -> String {
    format!("{prefix}:{{{name}}}:opinions")
}

/// The name whose [`name_channel`] `channel` is.
pub(crate) fn name_of_channel<'a>(prefix: &str, channel: &'a str) -> Option<&'a str> {
    channel
        .strip_prefix(prefix)?
        .strip_prefix(":{")?
        .strip_suffix("}:opinions")
}

/// The command that publishes on `channel`/`name_channel`: `PUBLISH` on one node,
/// `SPUBLISH` (sharded pub/sub, Redis 7) on a cluster.
pub(crate) fn publish(sharded: bool) -> &'static str {
    if sharded {
        "SPUBLISH"
    } else {
        "PUBLISH"
    }
}

/// The server's time in ms, in the scripts below.
const NOW: &str = "local t = redis.call('TIME')\nlocal now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n";

/// Drops the opinions whose time-to-live ran out, with their ends.
const SWEEP: &str = "local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)\nfor _, id in ipairs(dead) do redis.call('HDEL', KEYS[2], id) end\nredis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n";

/// `KEYS`: live, until. `ARGV`: instance, what the row keeps after the end (`seq`, or with a
/// secret `seq left tag`), ms until the OPEN ends, ttl ms, channel, the message, the publish
/// command (see [`publish`]; empty: the message goes out later, in a [`batch`]). Writes (or
/// renews) the instance's OPEN opinion and publishes the message (made by
/// [`Message::text`], whose times left are those written here), atomically; returns the ms
/// until it stops counting.
pub(crate) static OPINE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{NOW}{SWEEP}\
local until_ms = now + tonumber(ARGV[3])
local expires = math.min(until_ms, now + tonumber(ARGV[4]))
redis.call('ZADD', KEYS[1], expires, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], string.format('%d %s', until_ms, ARGV[2]))
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
local keep = math.floor(tonumber(last[2]) - now) + 1000
redis.call('PEXPIRE', KEYS[1], keep)
redis.call('PEXPIRE', KEYS[2], keep)
if ARGV[7] ~= '' then redis.call(ARGV[7], ARGV[5], ARGV[6]) end
return expires - now
"
    ))
});

/// `KEYS`: live, until. `ARGV`: instance, channel, the message, the publish command. Withdraws the instance's OPEN
/// opinion (it closed, or its OPEN was not its own any more) and publishes that.
pub(crate) static WITHDRAW: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call(ARGV[4], ARGV[2], ARGV[3])
return 1
",
    )
});

/// `KEYS`: live and until of each name, in pairs. `ARGV`: the most instances to read per name.
/// Returns, per name, `[error, skipped, ...]` and the live opinions as flat
/// `[instance, seq, until left, expires left]`: `error` is empty unless the name's keys could
/// not be read (of the wrong type), `skipped` how many of its rows were not understood. Bad
/// data under one name never fails the script: every other name is read as usual.
pub(crate) static SNAPSHOT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{NOW}\
local function left(ms)
  if ms == nil or ms ~= ms then return nil end
  return string.format('%d', math.max(0, math.min(ms - now, 1e15)))
end
local out = {{}}
for i = 1, #KEYS, 2 do
  local row = {{'', '0'}}
  local live = redis.pcall('ZRANGEBYSCORE', KEYS[i], '(' .. string.format('%d', now), '+inf', 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
  if live.err then
    row[1] = live.err
  else
    local skipped = 0
    for j = 1, #live, 2 do
      local v = redis.pcall('HGET', KEYS[i + 1], live[j])
      if type(v) == 'table' then
        row[1] = v.err
        break
      end
      if v then
        local sp = string.find(v, ' ', 1, true)
        local until_left = sp and left(tonumber(string.sub(v, 1, sp - 1)))
        local expires_left = left(tonumber(live[j + 1]))
        if until_left and expires_left then
          row[#row + 1] = live[j]
          row[#row + 1] = string.sub(v, sp + 1)
          row[#row + 1] = until_left
          row[#row + 1] = expires_left
        else
          skipped = skipped + 1
        end
      end
    end
    row[2] = string.format('%d', skipped)
  end
  if row[1] ~= '' then row = {{row[1], '0'}} end
  out[#out + 1] = row
end
return out
"
    ))
});

/// `KEYS`: lease. `ARGV`: instance, slots, ttl ms. Takes (or keeps) one of `slots` probe
/// leases: 0 when held, else the ms until the first one ends.
pub(crate) static TAKE_LEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{NOW}\
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
  return 0
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, math.floor(tonumber(first[2]) - now))
"
    ))
});

/// `KEYS`: lease. `ARGV`: instance, ttl ms. Renews the instance's probe lease if it still
/// holds it: 1 when renewed, 0 when it does not hold it (it expired, or the store lost it).
pub(crate) static RENEW_LEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{NOW}\
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
"
    ))
});

/// `KEYS`: lease. `ARGV`: instance, channel, the message, the publish command. Gives the instance's probe lease
/// back and tells the waiters.
pub(crate) static RELEASE_LEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  redis.call(ARGV[4], ARGV[2], ARGV[3])
end
return 1
",
    )
});

/// Messages sent as one on the channel (renewals on one node): `3|`, then each message's
/// text as `<bytes>|<text>`. A message's text may hold any character (a name is free), its
/// length says where it ends.
pub(crate) fn batch(texts: &[String]) -> String {
    let mut batch = String::from("3|");
    for text in texts {
        batch.push_str(&text.len().to_string());
        batch.push('|');
        batch.push_str(text);
    }
    batch
}

/// The texts of a [`batch`], in order; `None` for a message that is not one.
pub(crate) fn unbatch(text: &str) -> Option<Result<Vec<&str>, Malformed>> {
    let mut rest = text.strip_prefix("3|")?;
    let mut texts = Vec::new();
    while !rest.is_empty() {
        let Some((len, after)) = rest.split_once('|') else {
            return Some(Err(Malformed("batch")));
        };
        let len = match len.parse::<usize>() {
            Ok(len) if len <= after.len() && after.is_char_boundary(len) => len,
            _ => return Some(Err(Malformed("batch"))),
        };
        texts.push(&after[..len]);
        rest = &after[len..];
    }
    Some(Ok(texts))
}

/// How many messages `payload` carries: those of a [`batch`] (at least one), else one. Read
/// from the lengths alone, without a copy: the backlog weighs what it holds by it.
pub(crate) fn carried(payload: &[u8]) -> usize {
    let Some(mut rest) = payload.strip_prefix(b"3|") else {
        return 1;
    };
    let mut count = 0;
    while let Some(bar) = rest.iter().position(|&b| b == b'|') {
        let len = std::str::from_utf8(&rest[..bar])
            .ok()
            .and_then(|len| len.parse::<usize>().ok());
        match len {
            Some(len) if len < rest.len() - bar => {
                count += 1;
                rest = &rest[bar + 1 + len..];
            }
            _ => break,
        }
    }
    count.max(1)
}

/// A message on the channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Message<'a> {
    pub(crate) kind: Kind,
    pub(crate) instance: &'a str,
    pub(crate) seq: u64,
    /// For `Open`: ms until the OPEN ends, and until the opinion stops counting.
    pub(crate) until_ms: u64,
    pub(crate) expires_ms: u64,
    pub(crate) name: &'a str,
    /// The HMAC-SHA256 tag of a signed message (version 2), over its unsigned text.
    pub(crate) tag: Option<&'a str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// "I am OPEN until ..."
    Open,
    /// "I am not OPEN (any more)."
    Closed,
    /// "I gave my probe lease back."
    Free,
    /// "My trial passed: the downstream answers again." The lease goes back, and every
    /// instance waiting for it half-opens.
    Passed,
}

/// Why a message was not understood.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Malformed(pub(crate) &'static str);

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Closed => "closed",
            Self::Free => "free",
            Self::Passed => "passed",
        }
    }
}

impl<'a> Message<'a> {
    /// `1|kind|instance|seq|until ms|expires ms|name`, or signed
    /// `2|kind|instance|seq|until ms|expires ms|tag|name`, the tag over the first form; the
    /// name comes last, whole, so it may hold any character.
    pub(crate) fn parse(text: &'a str) -> Result<Self, Malformed> {
        let signed = text.starts_with("2|");
        let mut parts = text.splitn(if signed { 8 } else { 7 }, '|');
        let mut next = |what| parts.next().ok_or(Malformed(what));
        if !matches!(next("version")?, "1" | "2") {
            return Err(Malformed("version"));
        }
        let kind = match next("kind")? {
            "open" => Kind::Open,
            "closed" => Kind::Closed,
            "free" => Kind::Free,
            "passed" => Kind::Passed,
            _ => return Err(Malformed("kind")),
        };
        let instance = next("instance")?;
        let number = |text: &str, what| text.parse::<u64>().map_err(|_| Malformed(what));
        let seq = number(next("seq")?, "seq")?;
        let until_ms = number(next("until")?, "until")?;
        let expires_ms = number(next("expires")?, "expires")?;
        let tag = match signed {
            true => Some(next("tag")?),
            false => None,
        };
        let name = next("name")?;
        if instance.is_empty() || name.is_empty() {
            return Err(Malformed("empty instance or name"));
        }
        Ok(Self {
            kind,
            instance,
            seq,
            until_ms,
            expires_ms,
            name,
            tag,
        })
    }

    /// The message as it travels: unsigned, or signed with `signer`'s tag.
    pub(crate) fn text(&self, signer: Option<&Signer>) -> String {
        let unsigned = self.unsigned();
        match signer {
            None => unsigned,
            Some(signer) => {
                let tag = signer.tag(&unsigned);
                let (kind, instance, seq) = (self.kind.word(), self.instance, self.seq);
                let (until, expires, name) = (self.until_ms, self.expires_ms, self.name);
                format!("2|{kind}|{instance}|{seq}|{until}|{expires}|{tag}|{name}")
            }
        }
    }

    /// Whether the message is signed with `signer`'s key.
    pub(crate) fn signed_by(&self, signer: &Signer) -> bool {
        self.tag
            .is_some_and(|tag| signer.verify(&self.unsigned(), tag))
    }

    fn unsigned(&self) -> String {
        let (kind, instance, seq) = (self.kind.word(), self.instance, self.seq);
        let (until, expires, name) = (self.until_ms, self.expires_ms, self.name);
        format!("1|{kind}|{instance}|{seq}|{until}|{expires}|{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_reads_back_with_a_name_holding_bars() {
        let m = Message::parse("1|open|web-7|12|5000|1500|pay|ments[a|b]").unwrap();
        assert_eq!(
            m,
            Message {
                kind: Kind::Open,
                instance: "web-7",
                seq: 12,
                until_ms: 5000,
                expires_ms: 1500,
                name: "pay|ments[a|b]",
                tag: None,
            }
        );
    }

    #[test]
    fn a_signed_message_reads_back_and_checks_under_its_key_only() {
        let message = Message {
            kind: Kind::Open,
            instance: "web-7",
            seq: 12,
            until_ms: 5000,
            expires_ms: 1500,
            name: "pay|ments",
            tag: None,
        };
        assert_eq!(message.text(None), "1|open|web-7|12|5000|1500|pay|ments");
        let key = Signer::new(b"key").unwrap();
        let text = message.text(Some(&key));
        let read = Message::parse(&text).unwrap();
        assert_eq!((read.name, read.until_ms), ("pay|ments", 5000));
        assert!(read.signed_by(&key));
        assert!(!read.signed_by(&Signer::new(b"other").unwrap()));
        let forged = text.replace("|5000|", "|9000|");
        assert!(!Message::parse(&forged).unwrap().signed_by(&key));
        assert!(!Message::parse("1|open|web-7|12|5000|1500|pay")
            .unwrap()
            .signed_by(&key));
    }

    #[test]
    fn malformed_messages_say_what_is_wrong() {
        assert_eq!(
            Message::parse("3|open|a|1|1|1|n"),
            Err(Malformed("version"))
        );
        assert_eq!(
            Message::parse("2|open|a|1|1|1|n"),
            Err(Malformed("name")),
            "a signed message without its tag"
        );
        assert_eq!(Message::parse("1|shut|a|1|1|1|n"), Err(Malformed("kind")));
        assert_eq!(Message::parse("1|open|a|x|1|1|n"), Err(Malformed("seq")));
        assert_eq!(Message::parse("1|open|a|1|-5|1|n"), Err(Malformed("until")));
        assert_eq!(Message::parse("1|open|a|1|1"), Err(Malformed("expires")));
        assert_eq!(Message::parse("1|open|a|1|1|1"), Err(Malformed("name")));
        assert_eq!(
            Message::parse("1|open||1|1|1|n"),
            Err(Malformed("empty instance or name"))
        );
        assert_eq!(Message::parse(""), Err(Malformed("version")));
    }

    #[test]
    fn a_batch_reads_back_its_messages_whatever_their_names_hold() {
        let texts = vec![
            "1|open|a|3|500|200|pay|3|x".to_string(),
            "2|open|b|4|500|200|tag|n\n3|é".to_string(),
        ];
        let batch = batch(&texts);
        assert_eq!(
            batch,
            "3|26|1|open|a|3|500|200|pay|3|x29|2|open|b|4|500|200|tag|n\n3|é"
        );
        assert_eq!(unbatch(&batch), Some(Ok(vec![&*texts[0], &*texts[1]])));
        assert_eq!(carried(batch.as_bytes()), 2);
        assert_eq!(carried(b"1|open|a|3|500|200|n"), 1);
        assert_eq!(carried(b"3|"), 1);
        assert_eq!(carried(b"3|1|a9|short"), 1, "as far as it reads");
        assert_eq!(unbatch("3|"), Some(Ok(vec![])));
        assert_eq!(unbatch("1|open|a|3|500|200|n"), None, "not a batch");
        for broken in ["3|9|short", "3|x|1|open", "3|1", "3|1|é"] {
            assert_eq!(unbatch(broken), Some(Err(Malformed("batch"))), "{broken}");
        }
    }

    #[test]
    fn a_names_channel_names_it_back() {
        let channel = name_channel("breaker:fleet", "pay{x}");
        assert_eq!(channel, "breaker:fleet:{pay{x}}:opinions");
        assert_eq!(name_of_channel("breaker:fleet", &channel), Some("pay{x}"));
        assert_eq!(name_of_channel("other", &channel), None);
        assert_eq!(
            name_of_channel("breaker:fleet", "breaker:fleet:opinions"),
            None
        );
    }

    #[test]
    fn the_keys_of_a_name_share_one_hash_slot() {
        let keys = Keys::new("breaker:fleet", "app::get[10.0.0.1]");
        assert_eq!(keys.live, "breaker:fleet:{app::get[10.0.0.1]}:live");
        assert_eq!(keys.until, "breaker:fleet:{app::get[10.0.0.1]}:until");
        assert_eq!(keys.lease, "breaker:fleet:{app::get[10.0.0.1]}:lease");
    }
}
