//! Recorded calls and their CSV format: what the replay tuner reads.
//!
//! One call per line, after a header line, optionally after comment lines that name the
//! recorded breaker and its configuration (what
//! [`Breaker::recording`](crate::Breaker::recording) writes):
//!
//! ```text
//! # breaker: app::get_book
//! # config: window = 20, min = 10, rate = 0.4, open = "3s", probes = 2, timeout = "150ms", retries = 1
//! t_ms,latency_ms,outcome
//! 0,12.5,success
//! 3.25,1000,failure
//! 7,0,rejected_open
//! ```
//!
//! - `t_ms`: when the call started, in milliseconds from the start of the recording
//!   (decimals allowed; lines need not be sorted).
//! - `latency_ms`: how long it took, in milliseconds; 0 for a rejected call.
//! - `outcome`: `success`, `failure` or `ignored` as the breaker judged the call (see
//!   [`Outcome`]), or `rejected_open`, `rejected_half_open_full`, `rejected_forced_open`,
//!   `rejected_throttled`, `rejected_bulkhead`, `rejected_fleet_open`, `rejected_shed` for a
//!   call the breaker rejected (see [`RejectReason`]).
//!
//! A recording whose calls a call policy retried, or whose failures carried the downstream's
//! pushback, has two more columns, `t_ms,latency_ms,outcome,attempt,pushback_ms`:
//!
//! - `attempt`: which attempt of its call the line is, 1 for the first (see
//!   [`RecordedCall::attempt`](RecordedCall#structfield.attempt));
//! - `pushback_ms`: the pushback a failure carried, in milliseconds; empty for none.
//!
//! Both formats are read; a recording without retries or pushback is written in the first.
//!
//! Lines starting with `#` are comments; `# breaker: NAME` names the breaker (see
//! [`Recording::name`]), and `# config: KEYS` gives its configuration in the attribute's keys
//! (see [`Recording::config`] and [`config_keys`]).
//!
//! An access log converts with `awk`. For an nginx log whose fields are the time in seconds,
//! the request time in seconds and the status (`log_format trace '$msec $request_time
//! $status';`), 5xx counting as failures:
//!
//! ```text
//! awk 'NR == FNR { s = $1 - $2; if (FNR == 1 || s < t0) t0 = s; next }
//!      FNR == 1 { print "t_ms,latency_ms,outcome" }
//!      { printf "%.3f,%.3f,%s\n", ($1 - $2 - t0) * 1000, $2 * 1000, ($3 >= 500 ? "failure" : "success") }' \
//!     access.log access.log > trace.csv
//! ```
//!
//! nginx writes `$msec` when a request ends, so a call started `$request_time` earlier, and
//! a slow request is logged after faster ones that started later: the recipe reads the log
//! twice, first to find the earliest start, then to write every start from it, never below
//! zero.
//!
//! A converted log names neither the breaker nor its configuration: give the tuner both
//! (`breakerbox-tune --name app::get_book --current 'rate = 0.4, open = "3s"' trace.csv`),
//! or write them first as the comment lines above.

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use crate::{Config, Outcome, RejectReason};

mod config_line;

pub use self::config_line::{config_key_values, config_keys, parse_config_keys, ConfigLineError};

/// What became of one recorded call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallOutcome {
    /// The call ran and the breaker judged it (a business error is a `Success`).
    Completed(Outcome),
    /// The breaker rejected the call without running it.
    Rejected(RejectReason),
}

impl CallOutcome {
    /// The name the CSV format uses.
    pub const fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Completed(Outcome::Success) => "success",
            CallOutcome::Completed(Outcome::Failure) => "failure",
            CallOutcome::Completed(Outcome::Ignored) => "ignored",
            CallOutcome::Rejected(RejectReason::Open) => "rejected_open",
            CallOutcome::Rejected(RejectReason::HalfOpenFull) => "rejected_half_open_full",
            CallOutcome::Rejected(RejectReason::ForcedOpen) => "rejected_forced_open",
            CallOutcome::Rejected(RejectReason::Throttled) => "rejected_throttled",
            CallOutcome::Rejected(RejectReason::Bulkhead) => "rejected_bulkhead",
            CallOutcome::Rejected(RejectReason::FleetOpen) => "rejected_fleet_open",
            CallOutcome::Rejected(RejectReason::Shed) => "rejected_shed",
        }
    }

    const ALL: [CallOutcome; 10] = [
        CallOutcome::Completed(Outcome::Success),
        CallOutcome::Completed(Outcome::Failure),
        CallOutcome::Completed(Outcome::Ignored),
        CallOutcome::Rejected(RejectReason::Open),
        CallOutcome::Rejected(RejectReason::HalfOpenFull),
        CallOutcome::Rejected(RejectReason::ForcedOpen),
        CallOutcome::Rejected(RejectReason::Throttled),
        CallOutcome::Rejected(RejectReason::Bulkhead),
        CallOutcome::Rejected(RejectReason::FleetOpen),
        CallOutcome::Rejected(RejectReason::Shed),
    ];
}

impl fmt::Display for CallOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CallOutcome {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CallOutcome::ALL
            .into_iter()
            .find(|o| o.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<_> = CallOutcome::ALL.iter().map(|o| o.as_str()).collect();
                format!("outcome must be one of {}, got {s:?}", names.join(", "))
            })
    }
}

/// One recorded call: one attempt of a call the call policy retried.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::recording::{CallOutcome, RecordedCall};
/// use breakerbox::Outcome;
///
/// let retry = RecordedCall::new(Duration::from_millis(40), Duration::from_millis(3), CallOutcome::Completed(Outcome::Failure))
///     .attempt(2)
///     .pushback(Some(Duration::from_secs(4)));
/// assert_eq!((retry.attempt, retry.pushback), (2, Some(Duration::from_secs(4))));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecordedCall {
    /// When the call started, from the start of the recording.
    pub start: Duration,
    /// How long it took; zero for a rejected call.
    pub latency: Duration,
    /// What became of it.
    pub outcome: CallOutcome,
    /// Which attempt of its call it is: 1 for the first, 2 for the first retry (the call
    /// policy's `retries`).
    pub attempt: u32,
    /// The pushback a failure carried (an HTTP `Retry-After`, a gRPC
    /// `grpc-retry-pushback-ms`), which the breaker obeys by opening for it.
    pub pushback: Option<Duration>,
}

impl RecordedCall {
    /// A first attempt that started at `start`, took `latency` and ended as `outcome`,
    /// with no pushback.
    pub const fn new(start: Duration, latency: Duration, outcome: CallOutcome) -> Self {
        Self {
            start,
            latency,
            outcome,
            attempt: 1,
            pushback: None,
        }
    }

    /// The same call as attempt `attempt` of its call (at least 1).
    pub const fn attempt(mut self, attempt: u32) -> Self {
        self.attempt = if attempt == 0 { 1 } else { attempt };
        self
    }

    /// The same call, with the pushback its failure carried.
    pub const fn pushback(mut self, pushback: Option<Duration>) -> Self {
        self.pushback = pushback;
        self
    }
}

/// Recorded calls, in the order of their start.
///
/// ```
/// use std::time::Duration;
/// use breakerbox::recording::{CallOutcome, RecordedCall, Recording};
/// use breakerbox::Outcome;
///
/// let mut recording = Recording::new();
/// recording.push(RecordedCall::new(
///     Duration::from_millis(5),
///     Duration::from_micros(12_500),
///     CallOutcome::Completed(Outcome::Success),
/// ));
/// let mut csv = Vec::new();
/// recording.write_csv_to(&mut csv)?;
/// assert_eq!(String::from_utf8(csv.clone()).unwrap(), "t_ms,latency_ms,outcome\n5,12.5,success\n");
/// assert_eq!(Recording::read_csv_from(&csv[..])?, recording);
/// # Ok::<(), breakerbox::recording::RecordingError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recording {
    name: Option<String>,
    config: Option<Config>,
    calls: Vec<RecordedCall>,
}

impl Recording {
    /// An empty recording.
    pub const fn new() -> Self {
        Self {
            name: None,
            config: None,
            calls: Vec::new(),
        }
    }

    /// The name of the recorded breaker, when the recording knows it: a breaker's own
    /// recording does, and a CSV file carries it in a `# breaker: NAME` comment line.
    ///
    /// ```
    /// use breakerbox::recording::Recording;
    ///
    /// let text = "# breaker: app::get_book\nt_ms,latency_ms,outcome\n0,12.5,success\n";
    /// let recording = Recording::read_csv_from(text.as_bytes())?;
    /// assert_eq!(recording.name(), Some("app::get_book"));
    /// let mut csv = Vec::new();
    /// recording.write_csv_to(&mut csv)?;
    /// assert_eq!(String::from_utf8(csv).unwrap(), text);
    /// # Ok::<(), breakerbox::recording::RecordingError>(())
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The recording, naming the recorded breaker `name`.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The configuration of the recorded breaker, when the recording knows it: a breaker's
    /// own recording does, and a CSV file carries it in a `# config: KEYS` comment line, the
    /// attribute's keys (see [`config_keys`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use breakerbox::recording::Recording;
    ///
    /// let text = concat!(
    ///     "# breaker: app::get_book\n",
    ///     "# config: window = 20, min = 10, rate = 0.4, open = \"3s\", probes = 2\n",
    ///     "t_ms,latency_ms,outcome\n0,12.5,success\n",
    /// );
    /// let recording = Recording::read_csv_from(text.as_bytes())?;
    /// let config = recording.config().unwrap();
    /// assert_eq!((config.failure_rate(), config.open_for()), (0.4, Duration::from_secs(3)));
    /// let mut csv = Vec::new();
    /// recording.write_csv_to(&mut csv)?;
    /// assert_eq!(String::from_utf8(csv).unwrap(), text);
    /// # Ok::<(), breakerbox::recording::RecordingError>(())
    /// ```
    pub fn config(&self) -> Option<&Config> {
        self.config.as_ref()
    }

    /// The recording, giving the recorded breaker's configuration as `config`.
    pub fn with_config(mut self, config: Config) -> Self {
        self.config = Some(config);
        self
    }

    /// Adds a call, keeping the calls in the order of their start.
    pub fn push(&mut self, call: RecordedCall) {
        let at = self.calls.partition_point(|c| c.start <= call.start);
        self.calls.insert(at, call);
    }

    /// The calls, in the order of their start.
    pub fn calls(&self) -> &[RecordedCall] {
        &self.calls
    }

    /// Reads a recording from a CSV file in the [format](self) above.
    pub fn read_csv(path: impl AsRef<Path>) -> Result<Self, RecordingError> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| RecordingError::io(path, e))?;
        Self::read_csv_from(file).map_err(|e| e.in_file(path))
    }

    /// Reads a recording in the CSV [format](self) from any reader.
    pub fn read_csv_from(mut reader: impl Read) -> Result<Self, RecordingError> {
        let mut text = Vec::new();
        reader
            .read_to_end(&mut text)
            .map_err(|e| RecordingError::at(0, e.to_string()))?;
        let (mut name, mut config) = (None, None);
        let comments = text
            .split(|&b| b == b'\n')
            .take_while(|l| l.starts_with(b"#"));
        for (i, line) in comments.enumerate() {
            let Ok(line) = std::str::from_utf8(line) else {
                continue;
            };
            let line = line.trim_start_matches('#').trim();
            if let Some(n) = line.strip_prefix("breaker:").map(str::trim) {
                name = Some(n.to_owned()).filter(|n| !n.is_empty()).or(name);
            } else if let Some(keys) = line.strip_prefix("config:") {
                let parsed = parse_config_keys(keys).map_err(|e| {
                    RecordingError::at(i as u64 + 1, format!("the configuration line: {e}"))
                })?;
                config = Some(parsed);
            }
        }
        let mut csv = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .comment(Some(b'#'))
            .from_reader(&text[..]);
        let header = csv.headers().map_err(RecordingError::csv)?;
        let attempts = if header == HEADER.as_slice() {
            false
        } else if header == FULL_HEADER.as_slice() {
            true
        } else {
            return Err(RecordingError::at(
                1,
                format!(
                    "the header must be `{}` or `{}`, got `{}`",
                    HEADER.join(","),
                    FULL_HEADER.join(","),
                    header.iter().collect::<Vec<_>>().join(",")
                ),
            ));
        };
        let mut calls = Vec::new();
        for row in csv.records() {
            let row = row.map_err(RecordingError::csv)?;
            let line = row.position().map_or(0, |p| p.line());
            let mut call = RecordedCall::new(
                millis(&row[0], "t_ms", line)?,
                millis(&row[1], "latency_ms", line)?,
                row[2]
                    .parse()
                    .map_err(|rule| RecordingError::at(line, rule))?,
            );
            if attempts {
                call = call
                    .attempt(attempt(&row[3], line)?)
                    .pushback(match &row[4] {
                        "" => None,
                        ms => Some(millis(ms, "pushback_ms", line)?),
                    });
            }
            calls.push(call);
        }
        calls.sort_by_key(|c| c.start);
        Ok(Self {
            name,
            config,
            calls,
        })
    }

    /// Writes the recording to a CSV file in the [format](self) above.
    pub fn write_csv(&self, path: impl AsRef<Path>) -> Result<(), RecordingError> {
        let path = path.as_ref();
        let file = File::create(path).map_err(|e| RecordingError::io(path, e))?;
        let mut out = io::BufWriter::new(file);
        self.write_csv_to(&mut out)
            .and_then(|()| out.flush().map_err(|e| RecordingError::io(path, e)))
            .map_err(|e| e.in_file(path))
    }

    /// Writes the recording in the CSV [format](self) to any writer.
    pub fn write_csv_to(&self, mut writer: impl Write) -> Result<(), RecordingError> {
        if let Some(name) = &self.name {
            writeln!(writer, "# breaker: {name}")
                .map_err(|e| RecordingError::at(0, e.to_string()))?;
        }
        if let Some(config) = &self.config {
            writeln!(writer, "# config: {}", config_keys(config))
                .map_err(|e| RecordingError::at(0, e.to_string()))?;
        }
        let mut csv = csv::Writer::from_writer(writer);
        // The attempt and pushback columns only when a call has either: a recording of
        // plain calls writes what readers of the first format read.
        let full = self
            .calls
            .iter()
            .any(|c| c.attempt != 1 || c.pushback.is_some());
        if full {
            csv.write_record(FULL_HEADER)
        } else {
            csv.write_record(HEADER)
        }
        .map_err(RecordingError::csv)?;
        for call in &self.calls {
            let row = [
                format_millis(call.start),
                format_millis(call.latency),
                call.outcome.as_str().to_owned(),
            ];
            if full {
                let pushback = call.pushback.map(format_millis).unwrap_or_default();
                csv.write_record(row.into_iter().chain([call.attempt.to_string(), pushback]))
            } else {
                csv.write_record(row)
            }
            .map_err(RecordingError::csv)?;
        }
        csv.flush()
            .map_err(|e| RecordingError::at(0, e.to_string()))
    }
}

impl FromIterator<RecordedCall> for Recording {
    fn from_iter<I: IntoIterator<Item = RecordedCall>>(calls: I) -> Self {
        let mut calls: Vec<_> = calls.into_iter().collect();
        calls.sort_by_key(|c| c.start);
        Self {
            name: None,
            config: None,
            calls,
        }
    }
}

const HEADER: [&str; 3] = ["t_ms", "latency_ms", "outcome"];
/// The header of a recording whose calls say which attempt they are, and their pushback.
const FULL_HEADER: [&str; 5] = ["t_ms", "latency_ms", "outcome", "attempt", "pushback_ms"];

/// An attempt's number: 1 for the first.
fn attempt(text: &str, line: u64) -> Result<u32, RecordingError> {
    match text.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(RecordingError::at(
            line,
            format!("attempt must be a whole number from 1, got {text:?}"),
        )),
    }
}

/// Milliseconds with up to microseconds, without trailing zeros: `12.5`, `3`, `0.001`.
fn format_millis(d: Duration) -> String {
    let micros = d.as_micros();
    let (ms, frac) = (micros / 1000, micros % 1000);
    if frac == 0 {
        ms.to_string()
    } else {
        format!("{ms}.{frac:03}").trim_end_matches('0').to_owned()
    }
}

fn millis(text: &str, field: &str, line: u64) -> Result<Duration, RecordingError> {
    match text.parse::<f64>() {
        Ok(ms) if ms >= 0.0 && ms.is_finite() && ms < 1e15 => {
            Ok(Duration::from_nanos((ms * 1e6).round() as u64))
        }
        _ => Err(RecordingError::at(
            line,
            format!("{field} must be a number of milliseconds from 0 to below 1e15, got {text:?}"),
        )),
    }
}

/// The most calls [`Breaker::start_recording`](crate::Breaker::start_recording) keeps: 10 million, 400 MB of
/// ring.
pub const MAX_CAPACITY: usize = breakerbox_rules::MAX_RECORD;

/// [`Breaker::start_recording`](crate::Breaker::start_recording) was asked for a ring it cannot keep: no
/// call, more than [`MAX_CAPACITY`], or more than the allocator could give.
///
/// ```
/// use breakerbox::{Breaker, Config};
///
/// let b = Breaker::new("libraryd", Config::default());
/// let err = b.start_recording(usize::MAX).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     format!("record must be 1 to 10000000 calls, got {}", usize::MAX)
/// );
/// assert!(b.start_recording(100_000).is_ok());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapacityError {
    capacity: usize,
    allocation_failed: bool,
}

impl CapacityError {
    pub(crate) fn out_of_range(capacity: usize) -> Self {
        Self {
            capacity,
            allocation_failed: false,
        }
    }

    pub(crate) fn allocation_failed(capacity: usize) -> Self {
        Self {
            capacity,
            allocation_failed: true,
        }
    }

    /// The capacity asked for.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

impl fmt::Display for CapacityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.allocation_failed {
            write!(
                f,
                "record could not allocate a ring of {} calls: the allocator refused",
                self.capacity
            )
        } else {
            write!(
                f,
                "record must be 1 to {MAX_CAPACITY} calls, got {}",
                self.capacity
            )
        }
    }
}

impl std::error::Error for CapacityError {}

/// A recording could not be read or written: where, and why.
///
/// ```
/// use breakerbox::recording::Recording;
///
/// let err = Recording::read_csv_from("t_ms,latency_ms,outcome\n0,-1,success\n".as_bytes()).unwrap_err();
/// assert_eq!(err.to_string(), "line 2: latency_ms must be a number of milliseconds from 0 to below 1e15, got \"-1\"");
/// ```
#[derive(Debug)]
pub struct RecordingError {
    file: Option<String>,
    line: u64,
    message: String,
}

impl RecordingError {
    fn at(line: u64, message: String) -> Self {
        Self {
            file: None,
            line,
            message,
        }
    }

    fn io(path: &Path, e: io::Error) -> Self {
        Self {
            file: Some(path.display().to_string()),
            line: 0,
            message: e.to_string(),
        }
    }

    fn csv(e: csv::Error) -> Self {
        let line = e.position().map_or(0, |p| p.line());
        Self::at(line, e.to_string())
    }

    fn in_file(mut self, path: &Path) -> Self {
        self.file.get_or_insert_with(|| path.display().to_string());
        self
    }

    /// The line of the CSV text the error is on, counting the header as line 1; `None` when
    /// the error is not on a line (a file that cannot be opened).
    pub fn line(&self) -> Option<u64> {
        (self.line > 0).then_some(self.line)
    }
}

impl fmt::Display for RecordingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line()) {
            (Some(file), Some(line)) => write!(f, "{file}:{line}: {}", self.message),
            (Some(file), None) => write!(f, "{file}: {}", self.message),
            (None, Some(line)) => write!(f, "line {line}: {}", self.message),
            (None, None) => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for RecordingError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_are_written_to_the_microsecond_without_trailing_zeros() {
        let cases = [
            (0, "0"),
            (1, "0.001"),
            (12_500, "12.5"),
            (3_000, "3"),
            (1_234_567, "1234.567"),
        ];
        for (micros, text) in cases {
            assert_eq!(format_millis(Duration::from_micros(micros)), text);
            assert_eq!(
                millis(text, "t_ms", 2).unwrap(),
                Duration::from_micros(micros)
            );
        }
    }

    #[test]
    fn every_outcome_round_trips_through_its_name() {
        for outcome in CallOutcome::ALL {
            assert_eq!(outcome.as_str().parse::<CallOutcome>(), Ok(outcome));
        }
        assert_eq!(
            "rejected".parse::<CallOutcome>().unwrap_err(),
            "outcome must be one of success, failure, ignored, rejected_open, \
             rejected_half_open_full, rejected_forced_open, rejected_throttled, rejected_bulkhead, \
             rejected_fleet_open, rejected_shed, got \"rejected\""
        );
    }

    #[test]
    fn a_wrong_header_or_value_names_its_line() {
        let err = Recording::read_csv_from("t,latency,outcome\n".as_bytes()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 1: the header must be `t_ms,latency_ms,outcome` or `t_ms,latency_ms,outcome,attempt,pushback_ms`, got `t,latency,outcome`"
        );
        let err = Recording::read_csv_from(
            "t_ms,latency_ms,outcome\n0,1,success\n2,1,crashed\n".as_bytes(),
        )
        .unwrap_err();
        assert_eq!(err.line(), Some(3));
        let err = Recording::read_csv_from("t_ms,latency_ms,outcome\nnan,1,success\n".as_bytes())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 2: t_ms must be a number of milliseconds from 0 to below 1e15, got \"nan\""
        );
    }

    #[test]
    fn lines_are_counted_past_the_comment_line() {
        let text = "# breaker: a\nt_ms,latency_ms,outcome\n0,1,success\n2,x,success\n";
        let err = Recording::read_csv_from(text.as_bytes()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 4: latency_ms must be a number of milliseconds from 0 to below 1e15, got \"x\""
        );
    }

    #[test]
    fn calls_are_kept_in_the_order_of_their_start() {
        let call =
            |ms, outcome| RecordedCall::new(Duration::from_millis(ms), Duration::ZERO, outcome);
        let text = "t_ms,latency_ms,outcome\n5,0,failure\n1,0,success\n3,0,rejected_open\n";
        let read = Recording::read_csv_from(text.as_bytes()).unwrap();
        let mut pushed = Recording::new();
        pushed.push(call(5, CallOutcome::Completed(Outcome::Failure)));
        pushed.push(call(1, CallOutcome::Completed(Outcome::Success)));
        pushed.push(call(3, CallOutcome::Rejected(RejectReason::Open)));
        assert_eq!(read, pushed);
        let starts: Vec<_> = read.calls().iter().map(|c| c.start.as_millis()).collect();
        assert_eq!(starts, [1, 3, 5]);
    }

    #[test]
    fn attempts_and_pushback_round_trip_and_the_first_format_is_still_read() {
        let ms = Duration::from_millis;
        let failure = CallOutcome::Completed(Outcome::Failure);
        let recording: Recording = [
            RecordedCall::new(ms(0), ms(2), failure),
            RecordedCall::new(ms(10), ms(2), failure)
                .attempt(2)
                .pushback(Some(ms(4000))),
            RecordedCall::new(ms(20), ms(0), CallOutcome::Rejected(RejectReason::Open)).attempt(3),
        ]
        .into_iter()
        .collect();
        let mut csv = Vec::new();
        recording.write_csv_to(&mut csv).unwrap();
        assert_eq!(
            String::from_utf8(csv.clone()).unwrap(),
            "t_ms,latency_ms,outcome,attempt,pushback_ms\n0,2,failure,1,\n10,2,failure,2,4000\n20,0,rejected_open,3,\n"
        );
        assert_eq!(Recording::read_csv_from(&csv[..]).unwrap(), recording);

        let old =
            Recording::read_csv_from("t_ms,latency_ms,outcome\n0,2,failure\n".as_bytes()).unwrap();
        assert_eq!(old.calls(), [RecordedCall::new(ms(0), ms(2), failure)]);
        let err = Recording::read_csv_from(
            "t_ms,latency_ms,outcome,attempt,pushback_ms\n0,2,failure,0,\n".as_bytes(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 2: attempt must be a whole number from 1, got \"0\""
        );
    }
}
