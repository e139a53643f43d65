import pytest

import shale


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "db")


@pytest.fixture
def db(path):
    d = shale.DB(path)
    yield d
    d.close()
