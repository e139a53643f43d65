//! Fuzz target `table`: a whole SST: `Table::open`, iteration both ways, point lookups; raw and with checksums repaired.
//! All checks live in `shale_fuzz::table`; any panic is an engine bug.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = shale_fuzz::table(data);
});
