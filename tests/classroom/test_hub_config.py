"""docs/jupyterhub_config.py, the configuration docs/classroom.md gives an administrator, read as JupyterHub
reads it: the class service it runs, the scopes it grants, and the hook that gives each server its store (the
real hub starts from it in test_hub_service.py)."""

from __future__ import annotations

import hashlib
import hmac
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from traitlets.config import Config

DOCUMENTED = Path(__file__).resolve().parents[2] / "docs" / "jupyterhub_config.py"
ENVIRONMENT = {
    "COURSE_SERVICE_DB": "postgresql://course_svc@db.example.org:5432/course?sslmode=require",
    "COURSE_SERVICE_PASSWORD": "service-secret",
    "COURSE_HUB_URL": "https://hub.example.org/",
    "COURSE_DB_SECRET": "instructors-secret",
    "COURSE_INSTRUCTORS": "teacher ta",
    "COURSE_DB_URL": "postgresql://db.example.org:5432/course?sslmode=require",
    "COURSE_TIMEZONE": "Europe/Paris",
}


def loaded(monkeypatch: pytest.MonkeyPatch, without: str = "") -> Config:
    for name, value in ENVIRONMENT.items():
        if name != without:
            monkeypatch.setenv(name, value)
    config = Config()
    exec(compile(DOCUMENTED.read_text(), str(DOCUMENTED), "exec"), {"get_config": lambda: config})
    return config


def test_it_runs_the_class_service_with_its_scope_and_no_more(monkeypatch: pytest.MonkeyPatch) -> None:
    config = loaded(monkeypatch)
    (service,) = config.JupyterHub.services.get_value([])
    assert service == {
        "name": "course",
        "url": "http://127.0.0.1:10101",
        "command": [
            sys.executable,
            "-m",
            "scheduler.service",
            "--db",
            ENVIRONMENT["COURSE_SERVICE_DB"],
            "--connections",
            "10",
            "--timezone",
            "Europe/Paris",
        ],
        "environment": {"PGPASSWORD": "service-secret"},
    }
    assert config.JupyterHub.load_roles.get_value([]) == [
        {"name": "user", "scopes": ["self", "access:services!service=course"]}
    ]
    assert config.Spawner.server_token_scopes == [
        "users:activity!user",
        "access:servers!server",
        "access:services!service=course",
    ]


def spawned(config: Config, user: str) -> dict[str, Any]:
    spawner = SimpleNamespace(user=SimpleNamespace(name=user), environment={})
    config.Spawner.pre_spawn_hook(spawner)
    return spawner.environment


def test_a_learner_stores_through_the_service_and_an_instructor_logs_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = loaded(monkeypatch)
    assert spawned(config, "ada") == {
        "COURSE_DB": "https://hub.example.org/services/course/",
        "PGCONNECT_TIMEOUT": "5",
    }  # no database credentials on a learner's server
    password = hmac.new(b"instructors-secret", b"teacher", hashlib.sha256).hexdigest()
    assert spawned(config, "teacher") == {
        "COURSE_DB": "postgresql://db.example.org:5432/course?sslmode=require",
        "PGUSER": "teacher",
        "PGPASSWORD": password,
        "PGCONNECT_TIMEOUT": "5",
    }


def test_a_missing_setting_stops_the_hub_with_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COURSE_SERVICE_PASSWORD", raising=False)
    with pytest.raises(KeyError, match="COURSE_SERVICE_PASSWORD"):
        loaded(monkeypatch, without="COURSE_SERVICE_PASSWORD")
