use super::*;

#[test]
fn parses_what_the_engine_writes() {
    let d = tempfile::tempdir().unwrap();
    let opts = crate::options::Options {
        create_if_missing: true,
        ..Default::default()
    };
    crate::db::Db::open(d.path(), opts)
        .unwrap()
        .close()
        .unwrap();
    let o = OptionsFile::read(&OptionsFile::latest_in(d.path()).unwrap()).unwrap();
    assert_eq!(o.get("Version", "options_file_version"), Some("1"));
    assert_eq!(
        o.get("TableOptions/BlockBasedTable \"default\"", "block_size"),
        Some("4096")
    );
    assert_eq!(o.sections.len(), 4);
}

#[test]
fn damage_names_the_line_offset() {
    let bad = |text: &str| match OptionsFile::parse(text, "OPTIONS-000002") {
        Err(Error::Corruption { file, offset, what }) => {
            assert_eq!(file, "OPTIONS-000002");
            (offset, what)
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(bad("# c\nk=v\n").0, 4);
    assert!(bad("[A]\nk=v\nnot a line\n").1.contains("neither"));
    let (offset, what) = bad("[A]\nk=1\nk=2\n");
    assert_eq!(offset, 8);
    assert!(what.contains("twice"), "{what}");
    let ok = OptionsFile::parse("\n[A]\n k = v \n\n[B]\n", "x").unwrap();
    assert_eq!(ok.get("A", "k"), Some("v"));
    assert_eq!(ok.sections[1].entries, Vec::<(String, String)>::new());
}
