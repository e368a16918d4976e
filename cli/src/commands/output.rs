//! What the client commands print: [`Out`] (stdout, text or JSON), and the shapes shared by
//! several commands: a node's stat ([`StatJson`], [`write_stat`]) and its data ([`Data`]).
//!
//! Invariants: JSON field names are ZooKeeper's own (`Stat`'s Java fields: `ephemeralOwner`,
//! `dataLength`, …), so that output can be compared with other ZooKeeper tools; 64-bit ids
//! (zxids, session ids) are hex strings (`"0x6b093d52000000d2"`), as the test controls write
//! them, because jq and JavaScript read JSON numbers as doubles and round anything above 2^53
//! ([`hex_id`]); data is never
//! mangled: it is written as UTF-8 only when it is valid UTF-8 (and allowed), otherwise as
//! base64, and the `encoding` field says which.

use std::io::{BufWriter, Stdout, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use shepherd_client::Stat;

use super::error::CliError;

/// The command's stdout, buffered; text or JSON as `--json` says.
pub struct Out {
    inner: BufWriter<Stdout>,
    /// Whether the user asked for JSON.
    pub json: bool,
}

impl Out {
    /// stdout, for text or JSON.
    pub fn new(json: bool) -> Out {
        Out {
            inner: BufWriter::new(std::io::stdout()),
            json,
        }
    }

    /// Writes one line of text.
    pub fn line(&mut self, text: impl AsRef<str>) -> Result<(), CliError> {
        self.inner.write_all(text.as_ref().as_bytes())?;
        self.inner.write_all(b"\n")?;
        Ok(())
    }

    /// Writes one value as a line of JSON.
    pub fn json_line(&mut self, value: &impl Serialize) -> Result<(), CliError> {
        serde_json::to_writer(&mut self.inner, value).map_err(std::io::Error::from)?;
        self.inner.write_all(b"\n")?;
        Ok(())
    }

    /// Writes raw bytes (node data as it is).
    pub fn bytes(&mut self, bytes: &[u8]) -> Result<(), CliError> {
        self.inner.write_all(bytes)?;
        Ok(())
    }

    /// Pushes what is buffered to stdout (after each event of a command that runs on).
    pub fn flush(&mut self) -> Result<(), CliError> {
        self.inner.flush()?;
        Ok(())
    }
}

/// A `Stat` with ZooKeeper's Java field names, for JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatJson {
    /// Creating transaction.
    #[serde(with = "hex_id")]
    pub czxid: i64,
    /// Last modifying transaction.
    #[serde(with = "hex_id")]
    pub mzxid: i64,
    /// Creation time, ms since the epoch.
    pub ctime: i64,
    /// Last modification time, ms since the epoch.
    pub mtime: i64,
    /// Data version.
    pub version: i32,
    /// Children version.
    pub cversion: i32,
    /// ACL version.
    pub aversion: i32,
    /// Owning session of an ephemeral node, 0 otherwise.
    #[serde(with = "hex_id")]
    pub ephemeral_owner: i64,
    /// Data length in bytes.
    pub data_length: i32,
    /// Number of children.
    pub num_children: i32,
    /// Last transaction that changed the children.
    #[serde(with = "hex_id")]
    pub pzxid: i64,
}

impl From<&Stat> for StatJson {
    fn from(s: &Stat) -> StatJson {
        StatJson {
            czxid: s.czxid,
            mzxid: s.mzxid,
            ctime: s.ctime,
            mtime: s.mtime,
            version: s.version,
            cversion: s.cversion,
            aversion: s.aversion,
            ephemeral_owner: s.ephemeral_owner,
            data_length: s.data_length,
            num_children: s.num_children,
            pzxid: s.pzxid,
        }
    }
}

/// A time in ms since the epoch, as RFC 3339 in UTC (ms precision).
pub fn time_text(ms: i64) -> String {
    // RFC 3339 stops at year 9999 (the formatter fails past it): a later time, which only a
    // broken or hostile server sends, is printed as the number it is.
    const LAST_RFC3339_MS: u64 = 253_402_300_799_999;
    match u64::try_from(ms) {
        Ok(ms) if ms <= LAST_RFC3339_MS => {
            humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
        }
        Ok(_) => format!("{ms} ms since the epoch"),
        Err(_) => humantime::format_rfc3339_millis(UNIX_EPOCH).to_string(),
    }
}

/// How long ago a time in ms since the epoch was, by this machine's clock (zero if later).
pub fn age(ms: i64) -> Duration {
    let then = UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    SystemTime::now().duration_since(then).unwrap_or_default()
}

/// 64-bit ids in JSON: written as `"0x…"` strings; read from such a string, a decimal string,
/// or a plain number (dumps written before ids were strings).
pub mod hex_id {
    use serde::{Deserialize, Deserializer, Serializer, de::Error as _};

    /// Writes `"0x…"`.
    pub fn serialize<S: Serializer>(id: &i64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format!("{id:#x}"))
    }

    /// Reads a string (hex with `0x`, or decimal) or a number.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Id {
            Number(i64),
            Text(String),
        }
        match Id::deserialize(deserializer)? {
            Id::Number(n) => Ok(n),
            Id::Text(text) => match text.strip_prefix("0x") {
                // Two's complement, as ZooKeeper prints a negative id in hex.
                Some(hex) => u64::from_str_radix(hex, 16).map(|n| n as i64),
                None => text.parse::<i64>(),
            }
            .map_err(|e| D::Error::custom(format!("not an id: {text:?}: {e}"))),
        }
    }
}

/// A session id as ZooKeeper prints it (`0x…`).
pub fn session_text(id: i64) -> String {
    format!("0x{id:x}")
}

/// Writes a stat as zkCli's `stat` does (`cZxid = 0x…`), with times in RFC 3339.
pub fn write_stat(out: &mut Out, s: &Stat) -> Result<(), CliError> {
    out.line(format!("cZxid = 0x{:x}", s.czxid))?;
    out.line(format!("ctime = {}", time_text(s.ctime)))?;
    out.line(format!("mZxid = 0x{:x}", s.mzxid))?;
    out.line(format!("mtime = {}", time_text(s.mtime)))?;
    out.line(format!("pZxid = 0x{:x}", s.pzxid))?;
    out.line(format!("cversion = {}", s.cversion))?;
    out.line(format!("dataVersion = {}", s.version))?;
    out.line(format!("aclVersion = {}", s.aversion))?;
    out.line(format!("ephemeralOwner = 0x{:x}", s.ephemeral_owner))?;
    out.line(format!("dataLength = {}", s.data_length))?;
    out.line(format!("numChildren = {}", s.num_children))
}

/// How node data is written in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// The bytes are valid UTF-8 and written as they are.
    Utf8,
    /// Base64 (standard alphabet, padded).
    Base64,
}

/// Node data as JSON carries it: the text and how to read it back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Data {
    /// The data, encoded as `encoding` says.
    pub data: String,
    /// How `data` is encoded.
    pub encoding: Encoding,
}

impl Data {
    /// `bytes` as UTF-8 text when `utf8` is allowed and they are valid UTF-8, else base64.
    pub fn encode(bytes: &[u8], utf8: bool) -> Data {
        match std::str::from_utf8(bytes) {
            Ok(text) if utf8 => Data {
                data: text.to_owned(),
                encoding: Encoding::Utf8,
            },
            _ => Data {
                data: BASE64.encode(bytes),
                encoding: Encoding::Base64,
            },
        }
    }

    /// The bytes back.
    ///
    /// # Errors
    /// A message when base64 data does not decode.
    pub fn decode(&self) -> Result<Vec<u8>, String> {
        match self.encoding {
            Encoding::Utf8 => Ok(self.data.clone().into_bytes()),
            Encoding::Base64 => BASE64
                .decode(&self.data)
                .map_err(|e| format!("bad base64 data: {e}")),
        }
    }
}

/// What a write prints: `{path, stat}` with `--json`, the stat's lines with `-s`, else nothing.
pub fn write_result(
    out: &mut Out,
    path: &str,
    stat: &Stat,
    show_stat: bool,
) -> Result<(), CliError> {
    #[derive(Serialize)]
    struct Written<'a> {
        path: &'a str,
        stat: StatJson,
    }
    if out.json {
        out.json_line(&Written {
            path,
            stat: StatJson::from(stat),
        })
    } else if show_stat {
        write_stat(out, stat)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_round_trips_and_binary_stays_base64() {
        for (bytes, utf8, encoding) in [
            (&b"hello"[..], true, Encoding::Utf8),
            (&b"hello"[..], false, Encoding::Base64),
            (&[0xff, 0x00, 0x80][..], true, Encoding::Base64),
        ] {
            let data = Data::encode(bytes, utf8);
            assert_eq!(data.encoding, encoding);
            assert_eq!(data.decode().unwrap(), bytes);
        }
        assert!(
            Data {
                data: "*".into(),
                encoding: Encoding::Base64
            }
            .decode()
            .is_err()
        );
    }

    #[test]
    fn times_and_sessions_print_as_zookeeper_does() {
        assert_eq!(time_text(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(time_text(-5), "1970-01-01T00:00:00.000Z");
        assert_eq!(session_text(0x1000_00ab), "0x100000ab");
        let json = serde_json::to_value(StatJson::from(&Stat::default())).unwrap();
        assert!(json.get("ephemeralOwner").is_some() && json.get("numChildren").is_some());
    }

    #[test]
    fn ids_are_hex_strings_in_json_and_old_numbers_still_load() {
        let stat = Stat {
            czxid: 0x6b09_3d52_0000_00d2,
            ephemeral_owner: -1,
            ..Stat::default()
        };
        let json = serde_json::to_value(StatJson::from(&stat)).unwrap();
        // jq would print 7712763259245298000 for the bare number.
        assert_eq!(json["czxid"], "0x6b093d52000000d2");
        assert_eq!(json["ephemeralOwner"], "0xffffffffffffffff");
        assert_eq!(json["mzxid"], "0x0");
        assert_eq!(json["version"], 0, "versions and counts stay numbers");
        let back: StatJson = serde_json::from_value(json).unwrap();
        assert_eq!(back, StatJson::from(&stat));
        let mut old = serde_json::to_value(StatJson::from(&stat)).unwrap();
        old["czxid"] = serde_json::json!(12);
        old["pzxid"] = serde_json::json!("34");
        let old: StatJson = serde_json::from_value(old).unwrap();
        assert_eq!((old.czxid, old.pzxid), (12, 34));
        let mut bad = serde_json::to_value(StatJson::from(&stat)).unwrap();
        bad["mzxid"] = serde_json::json!("0xzz");
        assert!(serde_json::from_value::<StatJson>(bad).is_err());
    }

    #[test]
    fn a_time_past_year_9999_prints_as_a_number() {
        assert_eq!(
            super::time_text(i64::MAX),
            format!("{} ms since the epoch", i64::MAX)
        );
        assert_eq!(super::time_text(0), "1970-01-01T00:00:00.000Z");
        assert!(super::time_text(253_402_300_799_999).starts_with("9999-12-31T23:59:59.999"));
    }
}
