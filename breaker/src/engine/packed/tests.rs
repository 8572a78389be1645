use super::*;

/// A threshold no window reaches.
fn never() -> Threshold {
    Threshold {
        min_calls: u32::MAX,
        failure_rate: 1.0,
        when_full: u32::MAX,
    }
}

#[test]
fn keeps_only_the_last_n_outcomes() {
    let w = PackedWindow::new();
    w.store(7, PackedCalls::empty(3), true);
    for failure in [true, true, false, false] {
        assert_eq!(w.record(7, 3, failure, never), Packed::Counted);
    }
    assert_eq!(
        (w.read().totals(3).calls, w.read().totals(3).failures),
        (3, 1)
    );
    assert_eq!(
        w.read().outcomes(3).collect::<Vec<_>>(),
        [true, false, false]
    );
    for _ in 0..3 {
        w.record(7, 3, false, never);
    }
    assert_eq!(
        (w.read().totals(3).calls, w.read().totals(3).failures),
        (3, 0)
    );
    assert!(w.holds(PackedWindow::full_of_successes(7)));
}

#[test]
fn failures_are_counted_as_they_enter_and_leave() {
    let w = PackedWindow::new();
    w.store(9, PackedCalls::empty(5), true);
    let mut model = std::collections::VecDeque::new();
    let mut x = 0x9E37_79B9_u32;
    for _ in 0..500 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let failure = x.is_multiple_of(3);
        w.record(9, 5, failure, never);
        model.push_back(failure);
        if model.len() > 5 {
            model.pop_front();
        }
        let failures = model.iter().filter(|f| **f).count() as u32;
        let totals = w.read().totals(5);
        assert_eq!(
            (totals.calls, totals.failures),
            (model.len() as u32, failures)
        );
        assert!(w.read().outcomes(5).eq(model.iter().copied()));
    }
}

#[test]
fn racing_recorders_lose_nothing_and_stale_ones_count_nothing() {
    let w = PackedWindow::new();
    w.store(2, PackedCalls::empty(20), true);
    std::thread::scope(|s| {
        for t in 0..4 {
            let w = &w;
            s.spawn(move || {
                for i in 0..5_000 {
                    if t % 2 == 0 {
                        // A permit of the generation before: never counted.
                        assert_eq!(w.record(1, 20, true, never), Packed::Stale);
                    } else if i < 8 {
                        assert_eq!(w.record(2, 20, i % 4 == 0, never), Packed::Counted);
                    }
                }
            });
        }
    });
    let totals = w.read().totals(20);
    assert_eq!((totals.calls, totals.failures), (16, 4));
}

#[test]
fn a_full_window_of_the_largest_size_fits() {
    let w = PackedWindow::new();
    w.store(u64::MAX, PackedCalls::empty(MAX_PACKED), true);
    for i in 0..100 {
        w.record(u64::MAX, MAX_PACKED, i % 2 == 0, never);
    }
    assert_eq!(w.read().totals(MAX_PACKED).calls, MAX_PACKED);
    assert_eq!(w.read().totals(MAX_PACKED).failures, MAX_PACKED / 2);
    assert!(!w.is_sealed());
}

/// The credit at both ends: a full window of failures, at every size, then of successes;
/// a window of one call is filled by its first result.
#[test]
fn a_window_of_failures_then_of_successes_at_every_size() {
    for capacity in 1..=MAX_PACKED {
        let w = PackedWindow::new();
        w.store(5, PackedCalls::empty(capacity), true);
        for i in 1..=capacity {
            assert_eq!(w.record(5, capacity, true, never), Packed::Counted);
            assert_eq!(
                (
                    w.read().totals(capacity).calls,
                    w.read().totals(capacity).failures
                ),
                (i, i)
            );
        }
        assert!(w.word() & FULL != 0, "{capacity}: full");
        for i in 1..=capacity {
            assert_eq!(w.record(5, capacity, false, never), Packed::Counted);
            let totals = w.read().totals(capacity);
            assert_eq!((totals.calls, totals.failures), (capacity, capacity - i));
        }
        assert!(w.holds(PackedWindow::full_of_successes(5)), "{capacity}");
        assert!(w.read().outcomes(capacity).all(|failure| !failure));
    }
}

#[test]
fn other_generations_and_sealed_windows_count_nothing() {
    let w = PackedWindow::new();
    assert_eq!(
        w.record(0, 4, true, never),
        Packed::Sealed,
        "not opened yet"
    );
    w.store(0, PackedCalls::empty(4), true);
    assert_eq!(w.record(1, 4, true, never), Packed::Stale);
    assert_eq!(w.record(0, 4, true, never), Packed::Counted);
    w.seal();
    assert_eq!(w.record(0, 4, true, never), Packed::Sealed);
    assert_eq!(
        w.read().totals(4).failures,
        1,
        "a sealed window keeps its counts"
    );
}

#[test]
fn the_tripping_result_seals_the_window() {
    let w = PackedWindow::new();
    w.store(3, PackedCalls::empty(4), true);
    let half = || Threshold::new(4, 2, 0.5);
    assert_eq!(w.record(3, 4, true, half), Packed::Counted, "below min");
    assert_eq!(
        w.record(3, 4, false, half),
        Packed::Tripped,
        "1 of 2 >= 0.5"
    );
    assert_eq!(w.record(3, 4, false, half), Packed::Sealed);
    assert_eq!(w.read().totals(4).calls, 2);
}

#[test]
fn a_full_window_trips_as_the_division_says() {
    for (capacity, min, rate) in [(20, 10, 0.5), (3, 1, 0.34), (7, 7, 1.0), (10, 10, 0.3)] {
        let t = Threshold::new(capacity, min, rate);
        for failures in 0..=capacity {
            let ring = FULL | ((1 << failures) - 1) << (MAX_PACKED - capacity);
            let divided = f64::from(failures) / f64::from(capacity) >= rate && failures > 0;
            let tripped = t.trips(ring, failures, capacity);
            assert_eq!(tripped, divided, "{failures} of {capacity} at {rate}");
        }
    }
}

/// `record_once` adds what `record` would, or writes nothing: compared, outcome by
/// outcome, with a window recorded only through `record`.
#[test]
fn record_once_adds_what_record_would_or_nothing() {
    // 9 failures of 10 trip: never reached here, so every outcome is counted.
    let t = Threshold::new(10, 5, 0.9);
    let (once, model) = (PackedWindow::new(), PackedWindow::new());
    once.store(4, PackedCalls::empty(10), true);
    model.store(4, PackedCalls::empty(10), true);
    let mut x = 0x2545_F491_u32;
    let (mut at_once, mut declined) = (0, 0);
    for _ in 0..400 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let failure = x.is_multiple_of(4);
        let before = once.word();
        if once
            .record_once(before, 4, failure, || 10, || t.when_full)
            .is_ok()
        {
            at_once += 1;
        } else {
            declined += 1;
            assert_eq!(once.word(), before, "declined: nothing written");
            assert_eq!(once.record(4, 10, failure, || t), Packed::Counted);
        }
        assert_eq!(model.record(4, 10, failure, || t), Packed::Counted);
        assert_eq!(once.word(), model.word());
    }
    assert!(
        at_once > 0 && declined > 0,
        "{at_once} at once, {declined} declined"
    );
}

#[test]
fn record_once_declines_what_only_record_may_judge() {
    let t = Threshold::new(4, 2, 0.5);
    let w = PackedWindow::new();
    let once = |generation, failure| {
        w.record_once(w.word(), generation, failure, || 4, || t.when_full)
            .is_ok()
    };
    assert!(!once(0, false), "sealed: not opened yet");
    w.store(6, PackedCalls::empty(4), true);
    assert!(!once(5, false), "another generation's window");
    assert!(!once(6, true), "a failure into a window not yet full");
    assert!(once(6, false));
    for _ in 0..3 {
        assert!(once(6, false));
    }
    assert_eq!(w.read().totals(4).calls, 4);
    assert!(once(6, true), "1 of 4 is below 0.5");
    assert!(
        !once(6, true),
        "2 of 4 trips: left to `record`, which seals"
    );
    assert_eq!(
        (w.read().totals(4).calls, w.read().totals(4).failures),
        (4, 1)
    );
    assert_eq!(w.record(6, 4, true, || t), Packed::Tripped);
    assert!(!once(6, false), "sealed");

    w.store(7, PackedCalls::empty(4), true);
    assert_eq!(w.record(7, 4, true, never), Packed::Counted);
    assert!(
        !once(7, false),
        "a success into a window still filling, holding a failure"
    );
}

/// `record_once` from a word the window no longer holds (a caller's guess, the word its last
/// swap left) writes nothing and hands back the word the window holds; from that word it
/// records as from a fresh reading.
#[test]
fn record_once_from_a_stale_word_writes_nothing_and_returns_the_word_held() {
    let t = Threshold::new(4, 2, 0.75);
    let w = PackedWindow::new();
    w.store(3, PackedCalls::empty(4), true);
    for _ in 0..4 {
        assert_eq!(w.record(3, 4, false, never), Packed::Counted);
    }
    let guess = w.word();
    // Another caller's failure moves the window on.
    assert_eq!(w.record(3, 4, true, never), Packed::Counted);
    let held = w.word();
    assert_ne!(held, guess);
    for failure in [false, true] {
        assert_eq!(
            w.record_once(guess, 3, failure, || 4, || t.when_full),
            Err(held),
            "failure {failure}: the swap from the stale word fails"
        );
        assert_eq!(w.word(), held, "nothing written");
    }
    let swapped = w.record_once(held, 3, true, || 4, || t.when_full);
    assert_eq!(swapped, Ok(w.word()), "the word swapped in");
    assert_eq!(
        w.read().outcomes(4).collect::<Vec<_>>(),
        [false, false, true, true]
    );
    // Declined without a swap (a failure that trips a window at 1 failure is `record`'s):
    // the word it was given.
    assert_eq!(
        w.record_once(guess, 3, true, || 4, || 1),
        Err(guess),
        "declined from the guess itself"
    );
}

/// A success into a full window is taken without being judged, even one holding as many
/// failures as trip it (as after a reconfiguration lowered the rate, which the breaker
/// judges itself): it cannot raise the window's rate.
#[test]
fn record_once_takes_a_success_into_a_full_window_unjudged() {
    let t = Threshold::new(4, 2, 0.5);
    let w = PackedWindow::new();
    w.store(8, PackedCalls::empty(4), true);
    for failure in [false, false, true, true] {
        assert_eq!(w.record(8, 4, failure, never), Packed::Counted);
    }
    let once = |failure| {
        w.record_once(w.word(), 8, failure, || 4, || t.when_full)
            .is_ok()
    };
    assert!(once(false), "the oldest success leaves, a success enters");
    assert_eq!(
        w.read().outcomes(4).collect::<Vec<_>>(),
        [false, true, true, false]
    );
    assert!(
        once(false),
        "the other success leaves: still 2 failures of 4"
    );
    assert_eq!(
        w.read().outcomes(4).collect::<Vec<_>>(),
        [true, true, false, false]
    );
    assert!(!once(true), "a failure is judged: 2 of 4 trips");
    assert!(!w.is_sealed());
}

/// What the lock does with a window: seal it and read its calls, which no result changes
/// from then on, then store them back, sealed or open.
#[test]
fn seal_returns_the_calls_and_store_writes_them_back() {
    let w = PackedWindow::new();
    w.store(3, PackedCalls::empty(4), true);
    for failure in [true, false, true] {
        assert_eq!(w.record(3, 4, failure, never), Packed::Counted);
    }
    let calls = w.seal();
    assert_eq!(calls, PackedCalls::of(4, [true, false, true].into_iter()));
    assert_eq!(
        calls.totals(4),
        Totals {
            calls: 3,
            failures: 2,
            slow: 0
        }
    );
    assert_eq!(w.record(3, 4, false, never), Packed::Sealed);
    w.store(3, calls, false);
    assert_eq!(
        w.record(3, 4, false, never),
        Packed::Sealed,
        "stored sealed"
    );
    w.store(3, calls, true);
    assert_eq!(w.record(3, 4, false, never), Packed::Counted, "stored open");
    assert_eq!(
        w.read().outcomes(4).collect::<Vec<_>>(),
        [true, false, true, false]
    );
    assert_eq!(
        w.read(),
        PackedCalls::of(4, [true, false, true, false].into_iter())
    );
}
