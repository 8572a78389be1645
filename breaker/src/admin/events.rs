//! The journal of a registry's breakers, from the registry's creation: every transition, ramp
//! step and operator action with an id and a time, kept in a bounded ring for clients that
//! reconnect and per breaker for the views; and the server-sent events stream over it.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::stream::{self, Stream, StreamExt};
use serde::Serialize;
use tokio::sync::broadcast;

use crate::sync::process::Mutex;
use crate::{events::CallEvent, events::Event, registry::Registry, Breaker};

/// How many recent records the ring keeps for clients that reconnect with `Last-Event-ID`.
pub const RING: usize = 1024;
/// How many recent records each breaker's view shows.
pub const RECENT: usize = 5;

/// Something that happened to one breaker, as the event stream and the views show it.
///
/// ```json
/// {"id": 7, "at_ms": 1764874800123, "name": "app::stock", "key": null, "operator": null,
///  "type": "state_transition", "from": "closed", "to": "open", "reason": "failure_rate", "shadow": false}
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Record {
    /// Counts up from 1 in each registry; the SSE event's `id`. Call samples have none.
    pub id: Option<u64>,
    /// Wall-clock time, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// The breaker's registry name (a keyed family's name for its members).
    pub name: String,
    /// The key, for a member of a keyed family.
    pub key: Option<String>,
    /// Who did it: for an operator's action and the transition it caused, the operator the
    /// authorizer named; `null` for what the breaker did by itself.
    pub operator: Option<String>,
    /// What happened.
    #[serde(flatten)]
    pub what: What,
}

/// What a [`Record`] tells: its `type` field says which.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum What {
    /// `"type": "state_transition"`, `"type": "ramp_step"` or `"type": "trip_refused"`: the
    /// breaker's own [`Event`].
    Breaker(Event),
    /// `"type": "operator_action"`: an operator steered the breaker.
    Operator(OperatorAction),
    /// `"type": "call"`: one sampled call's end (only to streams that asked for calls).
    Call(CallSample),
}

/// An operator's action, taken through the admin router; the transition it causes follows
/// as its own record, with the action's reason (`force_open` gives `forced`; `disable` gives
/// `disabled`; `reset` and `close` give `reset`; `open_for` gives `manual_open`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename = "operator_action")]
pub struct OperatorAction {
    /// `force_open`, `open_for`, `disable`, `reset` or `close`.
    pub action: String,
    /// For `open_for`: the period, as the operator wrote it.
    #[serde(rename = "for", skip_serializing_if = "Option::is_none")]
    pub open_for: Option<String>,
    /// Who did it, as the authorizer named them.
    pub operator: String,
}

/// One call's end, sampled.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename = "call")]
pub struct CallSample {
    /// `success`, `failure`, `ignored`, `cancelled` or `rejected`.
    pub ending: &'static str,
    /// From admission to result, for a timed call.
    pub duration_ms: Option<f64>,
    /// Whether the result came from an earlier generation and was discarded.
    pub stale: bool,
}

thread_local! {
    /// The operator whose action runs on this thread: the transitions it causes are told
    /// to the listeners on the same thread, before the action returns.
    static ACTING: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `action` on behalf of `operator`: the transitions it causes carry their name.
pub(crate) fn acting<R>(operator: &str, action: impl FnOnce() -> R) -> R {
    struct Done;
    impl Drop for Done {
        fn drop(&mut self) {
            ACTING.with(|a| a.borrow_mut().take());
        }
    }
    ACTING.with(|a| *a.borrow_mut() = Some(operator.to_owned()));
    let _done = Done;
    action()
}

/// The journal of one registry (a part it is born with, so it hears every breaker that joins).
pub(crate) struct Journal {
    inner: Arc<Inner>,
}

struct Inner {
    next_id: AtomicU64,
    ring: Mutex<VecDeque<Record>>,
    /// The last records of every breaker, by its address.
    recent: Mutex<HashMap<usize, VecDeque<Record>>>,
    live: broadcast::Sender<Record>,
    /// The highest sampling rate a stream asked calls at, as `f64` bits; 0 while none did.
    call_rate: AtomicU64,
    /// Whether call listeners are on the breakers (added by the first stream to ask).
    calls_heard: AtomicBool,
}

impl Default for Journal {
    fn default() -> Self {
        let (live, _) = broadcast::channel(RING);
        Self {
            inner: Arc::new(Inner {
                next_id: AtomicU64::new(1),
                ring: Mutex::new(VecDeque::with_capacity(RING)),
                recent: Mutex::new(HashMap::new()),
                live,
                call_rate: AtomicU64::new(0),
                calls_heard: AtomicBool::new(false),
            }),
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn labels(breaker: &Breaker) -> (String, Option<String>) {
    let key = breaker.key().map(str::to_owned);
    let name = match key.as_deref() {
        Some(key) => breaker.name()[..breaker.name().len() - key.len() - 2].to_owned(),
        None => breaker.name().to_owned(),
    };
    (name, key)
}

impl Journal {
    /// Hears the calls of `breaker`, joining the registry, if a stream asked for calls.
    pub(crate) fn joined(&self, breaker: &Arc<Breaker>) {
        if self.inner.calls_heard.load(Ordering::Acquire) {
            self.inner.hear_calls(breaker);
        }
    }

    /// Records what `breaker` reported, with the operator whose action caused it, if any.
    pub(crate) fn happened(&self, breaker: &Breaker, event: &Event) {
        let (name, key) = labels(breaker);
        let operator = ACTING.with(|a| a.borrow().clone());
        let what = What::Breaker(*event);
        self.inner
            .record(breaker.address(), name, key, operator, what);
    }

    /// Forgets the breaker at `address`, being dropped.
    pub(crate) fn forget(&self, address: usize) {
        let gone = self.inner.recent.lock().remove(&address);
        drop(gone);
    }

    /// Records an operator's action on `breaker`.
    pub(crate) fn operator_action(&self, breaker: &Breaker, action: OperatorAction) {
        let (name, key) = labels(breaker);
        let operator = Some(action.operator.clone());
        self.inner.record(
            breaker.address(),
            name,
            key,
            operator,
            What::Operator(action),
        );
    }

    /// The last [`RECENT`] records of `breaker`, oldest first.
    pub(crate) fn recent(&self, breaker: &Breaker) -> Vec<Record> {
        let recent = self.inner.recent.lock();
        match recent.get(&breaker.address()) {
            Some(records) => records.iter().cloned().collect(),
            None => Vec::new(),
        }
    }

    /// The stream of records after `last_id` (the ring's, then the live ones), with call
    /// samples at `call_rate` (0: none).
    pub(crate) fn stream(
        &self,
        registry: &Registry,
        last_id: Option<u64>,
        call_rate: f64,
    ) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
        // Subscribe before reading the ring: a record sent meanwhile is in both, and the
        // ids drop the second.
        let live = self.inner.live.subscribe();
        if call_rate > 0.0 {
            self.inner.want_calls(registry, call_rate);
        }
        // A new client starts from now; one that reconnects, after its last record.
        let replay: Vec<Record> = match last_id {
            Some(last) => {
                let ring = self.inner.ring.lock();
                ring.iter()
                    .filter(|r| r.id.is_some_and(|id| id > last))
                    .cloned()
                    .collect()
            }
            None => Vec::new(),
        };
        let mut seen = match last_id {
            Some(last) => replay.iter().filter_map(|r| r.id).max().unwrap_or(last),
            // Records sent before the subscription are the ring's, not this stream's.
            None => self.inner.next_id.load(Ordering::Acquire) - 1,
        };
        // The breakers sample at the highest rate any stream asked; this stream keeps its
        // share of those.
        let inner = Arc::clone(&self.inner);
        let keep_call = move || {
            let sampled_at = f64::from_bits(inner.call_rate.load(Ordering::Relaxed));
            call_rate > 0.0 && fastrand::f64() * sampled_at < call_rate
        };
        let live = stream::unfold(live, |mut live| async move {
            loop {
                match live.recv().await {
                    Ok(record) => return Some((record, live)),
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
        .filter(move |record| {
            let keep = match (&record.what, record.id) {
                (What::Call(_), _) => keep_call(),
                (_, Some(id)) if id > seen => {
                    seen = id;
                    true
                }
                _ => false,
            };
            std::future::ready(keep)
        });
        let events = stream::iter(replay)
            .chain(live)
            .map(|record| Ok(sse_event(&record)));
        Sse::new(events).keep_alive(KeepAlive::default())
    }
}

fn sse_event(record: &Record) -> SseEvent {
    let kind = match &record.what {
        What::Breaker(Event::StateTransition { .. }) => "state_transition",
        What::Breaker(Event::TripRefused { .. }) => "trip_refused",
        What::Breaker(_) => "ramp_step",
        What::Operator(_) => "operator_action",
        What::Call(_) => "call",
    };
    let data = serde_json::to_string(record).unwrap_or_default();
    let event = SseEvent::default().event(kind).data(data);
    match record.id {
        Some(id) => event.id(id.to_string()),
        None => event,
    }
}

impl Inner {
    fn record(
        &self,
        address: usize,
        name: String,
        key: Option<String>,
        operator: Option<String>,
        what: What,
    ) {
        let id = match what {
            What::Call(_) => None,
            _ => Some(self.next_id.fetch_add(1, Ordering::Relaxed)),
        };
        let record = Record {
            id,
            at_ms: now_ms(),
            name,
            key,
            operator,
            what,
        };
        if id.is_some() {
            let mut ring = self.ring.lock();
            if ring.len() == RING {
                ring.pop_front();
            }
            ring.push_back(record.clone());
            drop(ring);
            let mut recent = self.recent.lock();
            let records = recent.entry(address).or_default();
            if records.len() == RECENT {
                records.pop_front();
            }
            records.push_back(record.clone());
        }
        // No stream listening is no error.
        let _ = self.live.send(record);
    }

    /// Raises the sampling rate to `rate`, and starts hearing every breaker's calls.
    fn want_calls(self: &Arc<Self>, registry: &Registry, rate: f64) {
        let mut current = self.call_rate.load(Ordering::Acquire);
        while f64::from_bits(current) < rate {
            match self.call_rate.compare_exchange(
                current,
                rate.to_bits(),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(seen) => current = seen,
            }
        }
        if !self.calls_heard.swap(true, Ordering::AcqRel) {
            // Those that join from now on are heard as they join.
            for entry in registry.list() {
                self.hear_calls(entry.breaker());
            }
        }
    }

    fn hear_calls(self: &Arc<Self>, breaker: &Arc<Breaker>) {
        let inner = Arc::downgrade(self);
        let address = breaker.address();
        let (name, key) = labels(breaker);
        breaker.on_call(move |call: &CallEvent| {
            let Some(inner) = inner.upgrade() else { return };
            let rate = f64::from_bits(inner.call_rate.load(Ordering::Relaxed));
            if inner.live.receiver_count() == 0 || fastrand::f64() >= rate {
                return;
            }
            let sample = CallSample {
                ending: call.ending.as_str(),
                duration_ms: call.duration.map(|d| d.as_secs_f64() * 1000.0),
                stale: call.stale,
            };
            inner.record(address, name.clone(), key.clone(), None, What::Call(sample));
        });
    }
}

impl Registry {
    /// The journal of this registry's breakers.
    pub(crate) fn journal(&self) -> Arc<Journal> {
        self.part()
    }
}

impl crate::registry::Watch for Journal {
    fn joined(&self, _name: &str, breaker: &Arc<Breaker>) {
        Journal::joined(self, breaker);
    }

    fn happened(&self, breaker: &Breaker, event: &Event) {
        Journal::happened(self, breaker, event);
    }

    fn left(&self, address: usize) {
        self.forget(address);
    }
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("next_id", &self.inner.next_id.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}
