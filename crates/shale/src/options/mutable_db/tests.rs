use super::*;

#[test]
fn every_name_sets_its_field_and_stores_and_reads_back() {
    let mut o = Options::default();
    let names = names();
    assert_eq!(names.len(), 7);
    for (i, name) in names.iter().enumerate() {
        let name = name.as_str();
        set(&mut o, name, &(1000 + i).to_string()).unwrap();
    }
    let m = MutableDbOptions::new(&Options::default());
    m.store(&o);
    let mut back = Options::default();
    m.apply_to(&mut back);
    let got = [
        back.max_background_jobs as u64,
        back.max_subcompactions as u64,
        back.delayed_write_rate,
        back.max_total_wal_size,
        back.bytes_per_sync,
        back.wal_bytes_per_sync,
        back.compaction_readahead_size as u64,
    ];
    // Names in OPTIONS-file order: jobs, subcompactions, the bytes_per_sync
    // pair, delayed_write_rate, max_total_wal_size, readahead.
    assert_eq!(got, [1000, 1001, 1004, 1005, 1002, 1003, 1006]);
    assert!(set(&mut o, "max_open_files", "10").is_err());
    assert!(set(&mut o, "delayed_write_rate", "fast").is_err());
}
