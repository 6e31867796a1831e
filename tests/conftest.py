"""Shared pytest fixtures."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from depparse.paths import corpora_dir as corpora_dir_of_package

REPO_ROOT = Path(__file__).resolve().parent.parent

#: The fixture modules (``syn``: tiny models and data; ``server``: a real ``depparse serve``),
#: available to every test module by name; their work is done only where a test asks.
pytest_plugins = ["fixtures_models", "fixtures_serve"]


def corpora_path() -> Path:
    """The UD corpora directory (it may not exist): :func:`depparse.paths.corpora_dir`."""
    return corpora_dir_of_package()


# ---------------------------------------------------------------------------------------------
# Scheduling under pytest-xdist (`make test`: pytest -n 2 --dist loadgroup)
#
# Every test that uses the trained model ``syn`` (directly or through a fixture) joins the xdist
# group ``syn``; the tests of the server, and those of a module's once-built fixture, form groups
# of their own (_group_of).  The scheduler below sends a group to one worker as one unit, the
# ``syn`` group first: one worker starts with the ``syn`` tests while the other runs the rest.
# ``syn`` is trained once per session in any case (fixtures_models.shared_once), but a worker
# that needs it while the other trains it would wait, and before it was shared both workers
# compiled the same training kernels at the same moment (about 100 s of a cold run, twice).
#
# The scheduler is xdist's own ``loadgroup`` (LoadScopeScheduling, scope = group), reading the
# groups from a file: xdist 3.8 marks a group by appending ``@group`` to the test's node id,
# which pytest 9 ignores (``Node.nodeid`` no longer reads ``_nodeid``), so ``--dist loadgroup``
# alone would silently schedule test by test.  The workers write ``{node id: group}`` into the
# controller's base temporary folder (xdist makes theirs subfolders of it) when they collect;
# the controller reads it when it schedules, after every worker has collected.
# ---------------------------------------------------------------------------------------------

GROUPS_FILE = "xdist_groups.json"


def _groups_path(config) -> Path:
    """The groups file: in the controller's base temporary folder (shared by the workers)."""
    base = config._tmp_path_factory.getbasetemp()  # as xdist itself finds it (workermanage)
    return (base.parent if hasattr(config, "workerinput") else base) / GROUPS_FILE


#: Session fixtures whose users form one group each: the trained model (minutes cold) and the
#: server (a subprocess that loads the shipped model).
SESSION_GROUPS = ("syn", "server")


def _group_of(item) -> str | None:
    """The xdist group of a test: a fixture of :data:`SESSION_GROUPS` it uses, else its module's
    name when it uses a fixture set up once per module (a model trained or loaded, a cluster:
    built once, on one worker, instead of once on each), else none."""
    names = getattr(item, "fixturenames", ())
    for name in SESSION_GROUPS:
        if name in names:
            return name
    info = getattr(item, "_fixtureinfo", None)
    for defs in (info.name2fixturedefs.values() if info is not None else ()):
        if defs and defs[-1].scope == "module":
            return item.nodeid.split("::", 1)[0]
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Marks each test with ``xdist_group`` (:func:`_group_of`); in an xdist worker, writes every
    test's group (its ``xdist_group`` marks) to the groups file."""
    for item in items:
        group = _group_of(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    if not hasattr(config, "workerinput"):
        return
    groups = {}
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        if names:
            groups[item.nodeid] = "_".join(names)
    path = _groups_path(config)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(groups), encoding="utf-8")
    os.replace(tmp, path)  # both workers write the same content; each write is whole


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup``: xdist's scheduler with the groups from the groups file, the units
    (a group, or a test of none) in the order of collection but the ``syn`` group first."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FileGroupScheduling(LoadScopeScheduling):
        """LoadScopeScheduling whose scope is the test's group (the test itself if none)."""

        _groups: dict | None = None
        _ordered = False

        def _split_scope(self, nodeid: str) -> str:
            if self._groups is None:
                path = _groups_path(config)
                self._groups = (json.loads(path.read_text(encoding="utf-8"))
                                if path.exists() else {})
            return self._groups.get(nodeid, nodeid)

        def _assign_work_unit(self, node) -> None:
            if not self._ordered:  # the queue is complete at the first assignment
                self._ordered = True
                for scope in [s for s in self.workqueue if s != "syn"]:
                    self.workqueue.move_to_end(scope)
            super()._assign_work_unit(node)

    # the collection's order, not xdist's largest-unit-first: that would start the server
    # (whose two worker processes compile the parse kernels) beside the training of syn
    config.option.loadscopereorder = False
    return FileGroupScheduling(config, log)


@pytest.fixture(scope="session")
def corpora_dir() -> Path:
    """The UD corpora directory; skips the test when it is absent."""
    path = corpora_path()
    if not path.is_dir():
        pytest.skip(
            f"UD corpora not found at {path}: set DEPPARSE_CORPORA to the directory "
            "holding the treebanks (e.g. ../shared/corpora)"
        )
    return path
