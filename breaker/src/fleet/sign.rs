//! Signed opinions ([`FleetBuilder::secret`](super::FleetBuilder::secret)): every message and
//! every stored row carries an HMAC-SHA256 tag of what it says, under a key the instances of a
//! service share. Whoever can write to the store but has not the key cannot pose as a peer.

use std::fmt;

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The key as the builder keeps it, until the fleet starts. Its `Debug` never shows it.
#[derive(Clone)]
pub(crate) struct Secret(pub(crate) Vec<u8>);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// A key to sign and check tags with. Its `Debug` never shows it.
#[derive(Clone)]
pub(crate) struct Signer(Hmac<Sha256>);

impl Signer {
    /// `None` for an empty key.
    pub(crate) fn new(key: &[u8]) -> Option<Self> {
        if key.is_empty() {
            return None;
        }
        Hmac::<Sha256>::new_from_slice(key).ok().map(Self)
    }

    /// The tag of `text`, in lower-case hex.
    pub(crate) fn tag(&self, text: &str) -> String {
        let mut mac = self.0.clone();
        mac.update(text.as_bytes());
        let bytes = mac.finalize().into_bytes();
        let mut hex = String::with_capacity(bytes.len() * 2);
        for byte in bytes {
            hex.push(char::from(HEX[usize::from(byte >> 4)]));
            hex.push(char::from(HEX[usize::from(byte & 0xf)]));
        }
        hex
    }

    /// Whether `tag` is the tag of `text`, compared in constant time.
    pub(crate) fn verify(&self, text: &str, tag: &str) -> bool {
        let Some(bytes) = unhex(tag) else {
            return false;
        };
        let mut mac = self.0.clone();
        mac.update(text.as_bytes());
        mac.verify_slice(&bytes).is_ok()
    }
}

impl fmt::Debug for Signer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Signer(..)")
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn unhex(text: &str) -> Option<Vec<u8>> {
    let digits = text.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let value = |c: u8| char::from(c).to_digit(16).map(|d| d as u8);
    digits
        .chunks_exact(2)
        .map(|pair| Some(value(pair[0])? << 4 | value(pair[1])?))
        .collect()
}

/// What a stored row's tag covers: the instance, its sequence number, the name and the ms
/// its OPEN had left when written, which no row may claim more of later.
pub(crate) fn row_text(instance: &str, seq: u64, left_ms: u64, name: &str) -> String {
    format!("row|{instance}|{seq}|{left_ms}|{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_checks_under_its_key_only() {
        let signer = Signer::new(b"service key").unwrap();
        let tag = signer.tag("1|open|a|1|500|500|db");
        assert_eq!(tag.len(), 64);
        assert!(signer.verify("1|open|a|1|500|500|db", &tag));
        assert!(
            !signer.verify("1|open|a|1|900|500|db", &tag),
            "another text"
        );
        let other = Signer::new(b"another key").unwrap();
        assert!(!other.verify("1|open|a|1|500|500|db", &tag), "another key");
        assert!(!signer.verify("1|open|a|1|500|500|db", "zz"), "no tag");
        assert!(Signer::new(b"").is_none());
        assert_eq!(format!("{signer:?}"), "Signer(..)");
    }

    #[test]
    fn the_tag_is_rfc_4231s() {
        // RFC 4231, test case 2.
        let signer = Signer::new(b"Jefe").unwrap();
        assert_eq!(
            signer.tag("what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
