//! `max_open_percent`: at most ⌊members × percent / 100⌋ of a keyed family's members, but
//! never fewer than one, are out of the pool (OPEN, HALF_OPEN, FORCED_OPEN) at once. A trip
//! of a member's own judgement past the cap is refused: the member stays CLOSED, keeps its
//! window and reports `Event::TripRefused`. Time is tokio's paused clock, which keyed
//! members follow under `test-util`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breakerbox::__private::{Action, Keyed};
use breakerbox::events::{Event, TransitionReason};
use breakerbox::testing::fail_n;
use breakerbox::{Breaker, Config, State};

const OPEN_FOR: Duration = Duration::from_secs(5);

/// A count window of 2 judged from 2 calls at 0.5 (two failures trip it), one probe.
fn capped(percent: u32) -> Config {
    Config::builder()
        .count_window(2)
        .min_calls(2)
        .open_for(OPEN_FOR)
        .probes(1)
        .max_open_percent(percent)
        .build()
        .unwrap()
}

/// A family of `members` members, `10.0.0.1` on; with the events each reports.
fn family(config: Config, members: usize) -> (Keyed, Vec<Arc<Breaker>>, Events) {
    let family = Keyed::new(Arc::from("open_cap::replicas"), config, 64);
    let events = Events::default();
    let breakers = (1..=members)
        .map(|i| {
            let b = family.breaker(&format!("10.0.0.{i}"));
            let log = events.0.clone();
            let key = i;
            b.on_event(move |e: &Event| log.lock().unwrap().push((key, *e)));
            b
        })
        .collect();
    (family, breakers, events)
}

#[derive(Default)]
struct Events(Arc<Mutex<Vec<(usize, Event)>>>);

impl Events {
    /// The members (numbered from 1) whose trips were refused, in order.
    fn refused(&self) -> Vec<usize> {
        let seen = self.0.lock().unwrap();
        let refused = seen
            .iter()
            .filter(|(_, e)| matches!(e, Event::TripRefused { .. }));
        refused.map(|(key, _)| *key).collect()
    }
}

fn states(members: &[Arc<Breaker>]) -> Vec<State> {
    members.iter().map(|b| b.state()).collect()
}

fn open(members: &[Arc<Breaker>]) -> usize {
    members
        .iter()
        .filter(|b| b.state() != State::Closed)
        .count()
}

#[test]
fn a_family_of_1_2_3_and_10_members_opens_at_most_its_cap_at_10_50_and_100_percent() {
    // (members, percent, the most OPEN at once)
    let cases = [
        (1, 10, 1),
        (1, 50, 1),
        (1, 100, 1),
        (2, 10, 1),
        (2, 50, 1),
        (2, 100, 2),
        (3, 10, 1),
        (3, 50, 1),
        (3, 100, 3),
        (10, 10, 1),
        (10, 50, 5),
        (10, 100, 10),
    ];
    for (members, percent, limit) in cases {
        let (_family, breakers, events) = family(capped(percent), members);
        for b in &breakers {
            fail_n(b, 2);
        }
        let want: Vec<State> = (0..members)
            .map(|i| {
                if i < limit {
                    State::Open
                } else {
                    State::Closed
                }
            })
            .collect();
        assert_eq!(states(&breakers), want, "{members} members at {percent}%");
        let refused: Vec<usize> = (limit + 1..=members).collect();
        assert_eq!(events.refused(), refused, "{members} members at {percent}%");
    }
}

#[test]
fn a_refused_trip_is_an_event_with_the_count_and_the_limit() {
    let (_family, breakers, events) = family(capped(50), 3);
    fail_n(&breakers[0], 2);
    fail_n(&breakers[1], 2);
    let seen = events.0.lock().unwrap();
    assert_eq!(
        seen.last(),
        Some(&(
            2,
            Event::TripRefused {
                reason: TransitionReason::FailureRate,
                open: 1,
                limit: 1,
                shadow: false,
            }
        ))
    );
}

#[test]
fn a_refused_member_keeps_its_window_and_trips_on_its_next_failure_once_a_place_is_free() {
    let (_family, breakers, events) = family(capped(50), 2);
    let (a, b) = (&breakers[0], &breakers[1]);
    fail_n(a, 2);
    fail_n(b, 2);
    assert_eq!(b.state(), State::Closed);
    let s = b.snapshot();
    assert_eq!(
        (s.calls, s.failures),
        (2, 2),
        "the refused member's window is kept"
    );
    fail_n(b, 1);
    assert_eq!(
        events.refused(),
        [2, 2],
        "every failure that trips it asks again"
    );
    a.reset();
    fail_n(b, 1); // one failure: the window still holds its failures
    assert_eq!(states(&breakers), [State::Closed, State::Open]);
}

#[test]
fn the_cap_holds_for_a_time_window_and_for_slow_calls_kept_under_the_lock() {
    let time_window = Config::builder()
        .time_window(Duration::from_secs(10), 10)
        .min_calls(2)
        .max_open_percent(50)
        .build()
        .unwrap();
    let (_family, breakers, events) = family(time_window, 2);
    for b in &breakers {
        fail_n(b, 2);
    }
    assert_eq!(states(&breakers), [State::Open, State::Closed]);
    assert_eq!(events.refused(), [2]);
}

#[tokio::test(start_paused = true)]
async fn a_half_open_member_keeps_its_place_and_its_failed_probe_reopens_it() {
    let (_family, breakers, events) = family(capped(50), 2);
    let (a, b) = (&breakers[0], &breakers[1]);
    fail_n(a, 2);
    tokio::time::advance(OPEN_FOR).await;
    let probe = a.try_acquire().unwrap();
    assert_eq!(a.state(), State::HalfOpen);
    fail_n(b, 2);
    assert_eq!(b.state(), State::Closed, "HALF_OPEN is out of the pool");
    probe.failure();
    assert_eq!(a.state(), State::Open, "a failed probe is never refused");
    tokio::time::advance(OPEN_FOR).await;
    a.try_acquire().unwrap().success();
    assert_eq!(a.state(), State::Closed);
    fail_n(b, 1);
    assert_eq!(states(&breakers), [State::Closed, State::Open]);
    assert_eq!(events.refused(), [2]);
}

#[test]
fn operator_opens_are_never_refused_and_count_toward_the_cap() {
    let (_family, breakers, events) = family(capped(50), 4);
    breakers[0].force_open();
    breakers[1].open_for(Duration::from_secs(60));
    breakers[2].force_open();
    assert_eq!(
        open(&breakers),
        3,
        "past the cap of 2: an operator is never refused"
    );
    fail_n(&breakers[3], 2);
    assert_eq!(breakers[3].state(), State::Closed);
    breakers[0].reset();
    breakers[1].reset();
    fail_n(&breakers[3], 1);
    assert_eq!(
        states(&breakers),
        [State::Closed, State::Closed, State::ForcedOpen, State::Open]
    );
    assert_eq!(events.refused(), [4]);
}

#[test]
fn a_member_removed_or_disabled_while_open_gives_its_place_back() {
    let (family, breakers, events) = family(capped(50), 4);
    fail_n(&breakers[0], 2);
    fail_n(&breakers[1], 2);
    fail_n(&breakers[2], 2);
    assert_eq!(events.refused(), [3]);
    // Removed while OPEN: its place is free, and what it does later counts nowhere.
    let gone = family.remove("10.0.0.1").unwrap();
    breakers[1].disable();
    assert_eq!(gone.state(), State::Open);
    fail_n(&breakers[2], 1);
    assert_eq!(
        breakers[2].state(),
        State::Open,
        "3 members at 50%: one may be OPEN"
    );
    gone.reset();
    fail_n(&gone, 2);
    assert_eq!(gone.state(), State::Open, "a removed breaker is no member");
    drop(gone);
    fail_n(&breakers[3], 2);
    assert_eq!(breakers[3].state(), State::Closed);
    assert_eq!(events.refused(), [3, 4]);
}

#[test]
fn an_evicted_open_member_gives_its_place_back() {
    let family = Keyed::new(Arc::from("open_cap::evicting"), capped(50), 2);
    let a = family.breaker("a");
    let b = family.breaker("b");
    fail_n(&a, 2);
    b.force_open();
    family.breaker("b");
    // Full, every member open: "a", the least recently used, is evicted, OPEN.
    let c = family.breaker("c");
    assert!(family.members().iter().all(|m| !Arc::ptr_eq(m, &a)));
    fail_n(&c, 2);
    assert_eq!(
        c.state(),
        State::Closed,
        "b, forced open, holds the one place"
    );
    b.reset();
    fail_n(&c, 1);
    assert_eq!(c.state(), State::Open, "a's place was given back with it");
}

#[test]
fn a_family_forced_open_then_reset_leaks_no_place() {
    let (family, breakers, _events) = family(capped(50), 2);
    fail_n(&breakers[0], 2);
    family.apply(None, Some(Action::ForceOpen));
    let born_forced = family.breaker("10.0.0.3");
    assert_eq!(born_forced.state(), State::ForcedOpen);
    family.apply(None, Some(Action::Reset));
    assert_eq!(open(&family.members()), 0);
    fail_n(&breakers[1], 2);
    fail_n(&born_forced, 2);
    assert_eq!(
        states(&family_of(&breakers, &born_forced)),
        [State::Closed, State::Open, State::Closed]
    );
}

fn family_of(breakers: &[Arc<Breaker>], born: &Arc<Breaker>) -> Vec<Arc<Breaker>> {
    breakers.iter().chain([born]).cloned().collect()
}

#[test]
fn a_family_shrinking_under_its_open_members_closes_none_and_refuses_until_under_its_cap() {
    let (family, breakers, events) = family(capped(50), 10);
    for b in &breakers[..5] {
        fail_n(b, 2);
    }
    assert_eq!(open(&breakers), 5);
    // Four closed members leave: 6 members, a cap of 3, and 5 OPEN stay OPEN.
    for i in 7..=10 {
        family.remove(&format!("10.0.0.{i}")).unwrap();
    }
    assert_eq!(open(&breakers[..5]), 5, "nothing closes early");
    fail_n(&breakers[5], 2);
    assert_eq!(breakers[5].state(), State::Closed);
    breakers[0].reset();
    breakers[1].reset();
    fail_n(&breakers[5], 1);
    assert_eq!(breakers[5].state(), State::Closed, "4 OPEN: still over 3");
    breakers[2].reset();
    fail_n(&breakers[5], 1);
    assert_eq!(breakers[5].state(), State::Open);
    assert_eq!(events.refused(), [6, 6]);
}

#[test]
fn a_cap_set_by_an_override_judges_the_members_open_already() {
    let uncapped = capped(100).to_builder();
    let (family, breakers, events) = family(uncapped.build().unwrap(), 4);
    for b in &breakers[..3] {
        fail_n(b, 2);
    }
    family.apply(Some(uncapped.max_open_percent(25).build().unwrap()), None);
    assert_eq!(open(&breakers), 3, "nothing closes early");
    fail_n(&breakers[3], 2);
    assert_eq!(breakers[3].state(), State::Closed);
    assert_eq!(events.refused(), [4]);
}

#[test]
fn a_shadow_member_reports_the_trip_it_would_have_had_refused() {
    let shadow = capped(50).to_builder().shadow(true).build().unwrap();
    let (_family, breakers, events) = family(shadow, 2);
    for b in &breakers {
        fail_n(b, 2);
    }
    assert_eq!(states(&breakers), [State::Open, State::Closed]);
    let seen = events.0.lock().unwrap();
    assert_eq!(
        seen.last(),
        Some(&(
            2,
            Event::TripRefused {
                reason: TransitionReason::FailureRate,
                open: 1,
                limit: 1,
                shadow: true,
            }
        ))
    );
    drop(seen);
    breakers[0]
        .try_acquire()
        .expect("a shadow admits every call")
        .success();
}

#[test]
fn a_breaker_of_its_own_is_never_capped() {
    let b = Breaker::new("open_cap::alone", capped(10));
    fail_n(&b, 2);
    assert_eq!(b.state(), State::Open);
}

#[test]
fn many_threads_tripping_members_at_once_open_exactly_the_cap() {
    let (_family, breakers, events) = family(capped(50), 10);
    std::thread::scope(|s| {
        for b in &breakers {
            s.spawn(move || fail_n(b, 2));
        }
    });
    assert_eq!(open(&breakers), 5);
    assert_eq!(events.refused().len(), 5);
}

#[test]
fn a_held_member_admits_its_calls_and_reports_each_as_per_call_events_do() {
    use breakerbox::events::{CallEnding, CallEvent};

    let (_family, breakers, events) = family(capped(50), 2);
    let endings = Arc::new(Mutex::new(Vec::new()));
    let log = endings.clone();
    breakers[1].on_call(move |e: &CallEvent| log.lock().unwrap().push(e.ending));
    fail_n(&breakers[0], 2);
    fail_n(&breakers[1], 3);
    breakers[1].try_acquire().unwrap().success();
    assert_eq!(
        *endings.lock().unwrap(),
        [
            CallEnding::Failure,
            CallEnding::Failure,
            CallEnding::Failure,
            CallEnding::Success
        ]
    );
    // The success leaves one failure of two in the window, still 50%: a third refusal.
    assert_eq!(events.refused(), [2, 2, 2]);
}

/// A replay is one breaker: it trips where the member the cap held CLOSED did not.
#[cfg(feature = "recording")]
#[test]
fn a_replay_of_a_held_member_applies_no_cap() {
    use breakerbox::replay::Replay;
    use breakerbox::Outcome;

    let (_family, breakers, _events) = family(capped(50), 2);
    fail_n(&breakers[0], 2);
    fail_n(&breakers[1], 2);
    assert_eq!(breakers[1].state(), State::Closed);
    let mut replay = Replay::new(breakers[1].config());
    for ms in [10, 20] {
        let at = Duration::from_millis(ms);
        let permit = replay.try_acquire(at).unwrap();
        replay.record(permit, Outcome::Failure, at);
    }
    assert_eq!(
        replay.transitions(),
        [(Duration::from_millis(20), State::Open)]
    );
}
