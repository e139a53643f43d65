//! Fuzz target `wal`: a log file (WAL or MANIFEST framing): `LogReader` and `wal::replay` in every recovery mode; raw and with record checksums repaired.
//! All checks live in `shale_fuzz::wal`; any panic is an engine bug.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = shale_fuzz::wal(data);
});
