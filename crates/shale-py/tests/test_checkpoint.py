"""DB.checkpoint: an openable copy of every column family, tables
hard-linked; an existing target is refused; later writes are not in it."""

import os

import pytest

import shale


def test_checkpoint_copies_every_family(tmp_path):
    with shale.DB(tmp_path / "db", enable_blob_files=True, min_blob_size=50) as db:
        users = db.create_column_family("users")
        for i in range(200):
            db[b"k%04d" % i] = b"v%d" % i * 20
        db.flush()
        users[b"u1"] = b"alice"
        db.delete(b"k0003")
        report = db.checkpoint(tmp_path / "cp")
        assert report["flushed"] is True
        assert report["files_linked"] >= 2
        assert report["files_copied"] == 0
        db[b"later"] = b"x"
        with pytest.raises(shale.InvalidArgumentError):
            db.checkpoint(str(tmp_path / "cp"))
        report = db.checkpoint(tmp_path / "cp2", log_size_for_flush=1 << 40)
        assert report["flushed"] is False and report["wal_files"] >= 1
    assert not os.path.exists(tmp_path / "cp.tmp")
    with shale.DB(tmp_path / "cp", create_if_missing=False) as copy:
        assert copy[b"k0010"] == b"v10" * 20
        assert b"k0003" not in copy
        assert b"later" not in copy
        assert copy.column_family("users")[b"u1"] == b"alice"
    with shale.DB(tmp_path / "cp2", create_if_missing=False) as copy:
        assert copy[b"later"] == b"x"
