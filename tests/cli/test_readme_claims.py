"""What README.md and docs/getting-started.md say about the demo pipeline and CI, checked against what they do."""

from __future__ import annotations

import re
import sqlite3
import subprocess
from pathlib import Path

from engine import Engine

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
GETTING_STARTED = (ROOT / "docs" / "getting-started.md").read_text()


def _objects(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}


async def test_the_readme_says_what_a_deleted_audit_source_leaves_in_sqlite(tmp_path: Path) -> None:
    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT)")
    async with Engine() as engine:
        await engine.create_connector(
            "orders-audit",
            {
                "connector.class": "AuditTableSourceConnector",
                "audit.db.url": f"sqlite:///{db}",
                "audit.tables": "orders",
                "topic": "orders",
            },
        )
        await engine.wait_for_state("orders-audit", "RUNNING", tasks=1)
        before = _objects(db)
        assert (await engine.delete_connector("orders-audit")).succeeded
    audit = {name for name in before if name.startswith("connect_audit_orders_audit_")}
    assert len(audit) == 4  # the table and its three triggers, as the page says
    assert _objects(db) == {"orders", "sqlite_sequence"}
    assert "`orders` and `sqlite_sequence`" in GETTING_STARTED


def test_the_readme_names_the_make_target_ci_runs() -> None:
    targets = re.findall(r"^make (\w+)\s*$", (ROOT / ".ci" / "run").read_text(), re.MULTILINE)
    assert targets == ["check"]
    assert "runs `make check`" in README
    assert "what CI runs): `make test`" not in README


def test_make_install_shows_its_progress() -> None:
    """The install runs for minutes (PySpark, the test brokers): a silent terminal reads as a hang."""
    done = subprocess.run(["make", "-n", "install"], cwd=ROOT, capture_output=True, text=True, check=True)
    steps = done.stdout.splitlines()
    assert sum(line.startswith("echo ") for line in steps) >= 3, steps
    long_install = next(line for line in steps if "-e '.[dev]'" in line)
    assert "--quiet" not in long_install
