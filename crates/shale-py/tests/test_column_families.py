"""Column families: created, written, read, dropped, reopened, in batches."""

import pytest

import shale


def test_families_are_separate_and_persist(path):
    with shale.DB(path) as db:
        users = db.create_column_family("users", write_buffer_size=1 << 20, compression="zstd")
        counters = db.create_column_family("counters", merge_operator="uint64add")
        assert users.name == "users"
        users[b"u1"] = b"alice"
        db[b"u1"] = b"default-value"
        counters.merge(b"n", (2).to_bytes(8, "little"))
        with db.write_batch() as b:
            b.put(b"u2", b"bob", cf=users)
            b.merge(b"n", (3).to_bytes(8, "little"), cf=counters)
            b.delete(b"u1", cf=db)
        assert sorted(db.column_families()) == ["counters", "default", "users"]
        assert list(users.keys()) == [b"u1", b"u2"]
        assert b"u1" not in db
        users.flush()
        users.compact_range()
    assert shale.list_column_families(path) == ["default", "users", "counters"]
    with shale.DB(path) as db:
        users = db.column_family("users")
        assert users[b"u2"] == b"bob"
        assert int.from_bytes(db.column_family("counters")[b"n"], "little") == 5
        with users.snapshot() as s:
            users[b"u3"] = b"carol"
            assert list(s.keys()) == [b"u1", b"u2"]
        db.drop_column_family("users")
        with pytest.raises(shale.InvalidArgumentError):
            users[b"u1"]
        with pytest.raises(shale.InvalidArgumentError):
            db.column_family("users")
    assert shale.list_column_families(path) == ["default", "counters"]


def test_family_options_are_checked(db):
    with pytest.raises(shale.InvalidArgumentError, match="DB-wide"):
        db.create_column_family("x", cache_size=1 << 20)
    with pytest.raises(shale.InvalidArgumentError, match="unknown option"):
        db.create_column_family("x", frobnicate=True)
    db.create_column_family("x")
    with pytest.raises(shale.InvalidArgumentError):
        db.create_column_family("x")


def test_a_family_of_another_db_is_refused_in_a_batch(path):
    with shale.DB(path) as a, shale.DB(path + "-b") as b:
        fb = b.create_column_family("f")
        batch = shale.WriteBatch()
        batch.put(b"k", b"v", cf=fb)
        with pytest.raises(shale.InvalidArgumentError):
            a.write(batch)
