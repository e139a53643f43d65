use super::*;
use crate::fs::MemFileSystem;
use crate::Db;

/// A family whose persisted options this build cannot read (written by
/// a newer build, or damaged) opens with defaults, is reported in the
/// `shale.cf-options-report` property and `LOG`, and is never dropped.
#[test]
fn unreadable_persisted_options_open_with_defaults_and_are_reported() {
    let fs: Arc<dyn FileSystem> = Arc::new(MemFileSystem::new());
    let dir = Path::new("/db");
    let opts = Options {
        create_if_missing: true,
        fs: Arc::clone(&fs),
        ..Options::default()
    };
    Db::open(dir, opts.clone()).unwrap().close().unwrap();
    {
        let mut vs = VersionSet::recover(Arc::clone(&fs), dir, opts.num_levels).unwrap();
        let id = vs.new_column_family_id();
        let mut e = VersionEdit {
            column_family: id,
            cf_add: Some("future".into()),
            cf_options: Some("an_option_from_the_future=1\n".into()),
            ..VersionEdit::default()
        };
        vs.log_and_apply(&mut e).unwrap();
    }
    let db = Db::open(dir, opts.clone()).unwrap();
    let cf = db.cf("future").expect("the family still opens");
    db.put_cf(&cf, b"k", b"v").unwrap();
    let report = db.property("shale.cf-options-report").unwrap();
    assert!(
        report.contains("\"future\"") && report.contains("an_option_from_the_future"),
        "{report}"
    );
    db.close().unwrap();
    // The defaults it opened with are persisted: the next open is clean.
    let db = Db::open(dir, opts).unwrap();
    assert_eq!(db.property("shale.cf-options-report").unwrap(), "");
    assert_eq!(
        db.get_cf(&db.cf("future").unwrap(), b"k")
            .unwrap()
            .unwrap()
            .to_vec(),
        b"v"
    );
}
