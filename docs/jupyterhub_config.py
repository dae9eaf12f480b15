"""The JupyterHub configuration of a class on the class service (docs/classroom.md, "The class service").

Load it from your hub's own configuration, after your authenticator and spawner:

    load_subconfig("/path/to/attention-course/docs/jupyterhub_config.py")

and give the hub's process these environment variables (from a secret store, never from a file in git):

- ``COURSE_SERVICE_DB``: the service role's URL, without its password
  (``postgresql://course_svc@DBHOST:5432/course?sslmode=require``; ``scheduler.postgres.add_service``
  made the role);
- ``COURSE_SERVICE_PASSWORD``: that role's password (the hub passes it to the service alone);
- ``COURSE_HUB_URL``: the hub's address as the learners' servers reach it (``https://HUB.example.org``);
- ``COURSE_DB_SECRET``: the secret each instructor's database password is derived from
  (docs/classroom.md, "Deploying on Zero to JupyterHub", step 2);
- ``COURSE_INSTRUCTORS``: the instructors' user names, separated by spaces;
- ``COURSE_DB_URL``: the database's URL for the instructors' direct connection, without a user
  (``postgresql://DBHOST:5432/course?sslmode=require``);
- optional: ``COURSE_SERVICE_PORT`` (10101), ``COURSE_SERVICE_CONNECTIONS`` (10), ``COURSE_TIMEZONE`` (UTC).

What it sets: the class service as a hub-managed service named ``course``, started by the hub (which gives it
``$JUPYTERHUB_SERVICE_NAME``: without it the service refuses to start); every user's tokens, their server's
included, may reach that service and nothing more of it; each learner's server names the service as its
store (``COURSE_DB``), so learners hold no database credentials; each instructor's server gets the
instructor's own role and password for the projector and the class report. The hub test
(tests/classroom/test_hub_service.py) starts its hub from this file.
"""

import hashlib
import hmac
import os
import sys

c = get_config()  # noqa: F821 (JupyterHub's configuration loader defines it)

PORT = int(os.environ.get("COURSE_SERVICE_PORT", "10101"))
INSTRUCTORS = frozenset(os.environ.get("COURSE_INSTRUCTORS", "").split())

c.JupyterHub.services.append(
    {
        "name": "course",
        "url": f"http://127.0.0.1:{PORT}",
        "command": [
            sys.executable,
            "-m",
            "scheduler.service",
            "--db",
            os.environ["COURSE_SERVICE_DB"],
            "--connections",
            os.environ.get("COURSE_SERVICE_CONNECTIONS", "10"),
            "--timezone",
            os.environ.get("COURSE_TIMEZONE", "UTC"),
        ],
        "environment": {"PGPASSWORD": os.environ["COURSE_SERVICE_PASSWORD"]},  # the hub passes no other
    }
)
# every user's tokens may reach the service; a server's token too (the kernel's $JUPYTERHUB_API_TOKEN)
c.JupyterHub.load_roles.append({"name": "user", "scopes": ["self", "access:services!service=course"]})
c.Spawner.server_token_scopes = [
    "users:activity!user",
    "access:servers!server",
    "access:services!service=course",
]


def course_environment(spawner):
    """A learner's server stores through the class service; an instructor's logs in as the instructor."""
    user = spawner.user.name
    if user in INSTRUCTORS:
        secret = os.environ["COURSE_DB_SECRET"].encode()
        spawner.environment["COURSE_DB"] = os.environ["COURSE_DB_URL"]
        spawner.environment["PGUSER"] = user
        spawner.environment["PGPASSWORD"] = hmac.new(secret, user.encode(), hashlib.sha256).hexdigest()
    else:
        spawner.environment["COURSE_DB"] = os.environ["COURSE_HUB_URL"].rstrip("/") + "/services/course/"
    spawner.environment.setdefault("PGCONNECT_TIMEOUT", "5")


c.Spawner.pre_spawn_hook = course_environment
