"""Operations (issue 39): read-only opens, bulk load by write_sst + ingest, backups."""

import os
import time

import pytest

import shale


def test_write_sst_and_ingest_newest_wins(db, tmp_path):
    db[b"a"] = b"old"
    db[b"z"] = b"kept"
    sst = tmp_path / "load.sst"
    info = shale.write_sst(sst, [(b"a", b"new"), (b"b", b"2"), (b"c", b"3")])
    assert info["num_entries"] == 3
    assert info["smallest_key"] == b"a" and info["largest_key"] == b"c"
    db.ingest([sst])
    assert db[b"a"] == b"new" and db[b"b"] == b"2" and db[b"z"] == b"kept"
    # Out of order keys are refused; a missing file changes nothing.
    with pytest.raises(shale.InvalidArgumentError):
        shale.write_sst(tmp_path / "bad.sst", [(b"b", b"1"), (b"a", b"2")])
    with pytest.raises(shale.Error):
        db.ingest([tmp_path / "absent.sst"])
    moved = tmp_path / "moved.sst"
    shale.write_sst(moved, [(b"m", b"1")])
    db.ingest([moved], move_files=True)
    assert db[b"m"] == b"1"
    assert not moved.exists()


def test_backups_list_verify_restore_and_purge(db, path, tmp_path):
    for i in range(500):
        db[b"k%04d" % i] = b"v%d" % i
    db.flush()
    bk = tmp_path / "backups"
    engine = shale.BackupEngine(bk)
    first = engine.create_backup(db, "first")
    db[b"k0000"] = b"changed"
    second = engine.create_backup(db)
    listed = engine.list()
    assert [b["id"] for b in listed] == [first, second]
    assert listed[0]["app_metadata"] == "first"
    engine.verify(first)
    target = tmp_path / "restored"
    engine.restore(first, target)
    with shale.DB(target, create_if_missing=False) as r:
        assert r[b"k0000"] == b"v0"
        assert r[b"k0499"] == b"v499"
    # A read-only engine beside the writing one.
    ro = shale.BackupEngine(bk, read_only=True)
    assert len(ro.list()) == 2
    with pytest.raises(shale.Error):
        ro.purge_old(0)
    engine.purge_old(1)
    assert [b["id"] for b in engine.list()] == [second]
    engine.delete(second)
    assert engine.list() == []
    assert os.listdir(bk / "shared") == []


def test_point_in_time_restore(tmp_path):
    src = tmp_path / "db"
    bk = tmp_path / "backups"
    with shale.DB(src, wal_size_limit_mb=1024) as db:
        engine = shale.BackupEngine(bk, backup_rate_limit=1 << 30, restore_rate_limit=1 << 30)
        db[b"a"] = b"1"
        engine.create_backup(db)
        db[b"b"] = b"2"
        point = db.latest_sequence_number()
        db[b"c"] = b"3"
        copied = engine.backup_wals(db)
        assert copied["files_copied"] >= 1
    r = engine.restore_to(tmp_path / "at", point)
    assert r["sequence"] == point
    with shale.DB(tmp_path / "at", create_if_missing=False) as at:
        assert at[b"b"] == b"2"
        assert b"c" not in at
    engine.restore_to_time(tmp_path / "now", time.time() + 5)
    with shale.DB(tmp_path / "now", create_if_missing=False) as now:
        assert now[b"c"] == b"3"
    with pytest.raises(shale.InvalidArgumentError, match="reach sequence"):
        engine.restore_to(tmp_path / "past", point + 1000)


def test_ingest_behind_lies_beneath_existing_keys(tmp_path):
    with shale.DB(tmp_path / "db", allow_ingest_behind=True) as db:
        db[b"a"] = b"newer"
        db.delete(b"b")
        db.flush()
        sst = tmp_path / "behind.sst"
        shale.write_sst(sst, [(b"a", b"old"), (b"b", b"old"), (b"c", b"old")])
        db.ingest([sst], ingest_behind=True)
        assert db[b"a"] == b"newer"
        assert b"b" not in db
        assert db[b"c"] == b"old"
        # Overlapping what is already in the last level: refused.
        again = tmp_path / "again.sst"
        shale.write_sst(again, [(b"c", b"x")])
        with pytest.raises(shale.InvalidArgumentError):
            db.ingest([again], ingest_behind=True)
    with shale.DB(tmp_path / "plain") as db:
        with pytest.raises(shale.InvalidArgumentError):
            db.ingest([tmp_path / "again.sst"], ingest_behind=True)


def test_export_and_import_a_column_family(tmp_path):
    with shale.DB(tmp_path / "a") as a:
        users = a.create_column_family("users", merge_operator="stringappend")
        for i in range(300):
            users[b"u%04d" % i] = b"v%d" % i
        users.flush()
        users.merge(b"u0001", b"m")
        meta = a.export_column_family("users", tmp_path / "export")
        assert meta["column_family"] == "users"
        assert meta["comparator"] == "leveldb.BytewiseComparator"
        assert len(meta["tables"]) >= 1
        with pytest.raises(shale.InvalidArgumentError):
            a.export_column_family("users", tmp_path / "export")
        with pytest.raises(shale.InvalidArgumentError):
            a.export_column_family("absent", tmp_path / "other")
    with shale.DB(tmp_path / "b") as b:
        # Without the merge operator the export names: refused.
        with pytest.raises(shale.InvalidArgumentError):
            b.create_column_family_with_import("copy", tmp_path / "export")
        copy = b.create_column_family_with_import(
            "copy", tmp_path / "export", merge_operator="stringappend"
        )
        assert copy[b"u0001"] == b"v1,m"
        assert copy[b"u0299"] == b"v299"
        assert len(list(copy.keys())) == 300
        with pytest.raises(shale.InvalidArgumentError):
            b.create_column_family_with_import(
                "copy", tmp_path / "export", merge_operator="stringappend"
            )
        with pytest.raises(shale.Error):
            b.create_column_family_with_import("x", tmp_path / "nowhere")
