//! The shipped trace `docs/trace.csv` is the recovery simulation's, and a recording
//! round-trips through its CSV file.

use breaker_workspace::simulation::{classic, record, Scenario};
use breakerbox::recording::Recording;

#[test]
fn a_recording_round_trips_through_its_csv_file() {
    let recording = record(classic(), &Scenario::outage());
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("round_trip.csv");
    recording.write_csv(&path).unwrap();
    let read = Recording::read_csv(&path).unwrap();
    // Times are written to the microsecond, as the simulation records them.
    assert_eq!(read, recording);
    assert_eq!(read.calls().len(), 8991);
}

#[test]
fn the_shipped_trace_is_the_recovery_simulations() {
    let shipped =
        Recording::read_csv(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/trace.csv")).unwrap();
    assert_eq!(shipped, record(classic(), &Scenario::outage()));
    assert_eq!(shipped.name(), Some("app::get_book"));
}
