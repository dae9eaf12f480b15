"""``python -m scheduler.service --db URL``: run the class service (as a JupyterHub-managed service, it
listens where ``$JUPYTERHUB_SERVICE_URL`` says and serves under ``$JUPYTERHUB_SERVICE_PREFIX``; else on
``--port``). ``--db`` is the service role's URL (``scheduler.postgres.add_service``), its password from
``PGPASSWORD`` or ``~/.pgpass``; ``--connections`` the most server connections it holds; ``--timezone`` the
class's time zone (an IANA name, UTC by default), in which FSRS counts the learners' days when it merges
answers sent late. ``--per-learner``, ``--snapshots`` and ``--max-body`` bound what one learner may take
(docs/classroom.md, "Availability")."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from scheduler.postgres import ClassPool
from scheduler.service._hub import HubTokens, NoScopeError
from scheduler.service._server import BODY_LIMIT, ClassService


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scheduler.service", description=__doc__)
    parser.add_argument("--db", required=True, help="the service role's postgresql:// URL")
    parser.add_argument("--connections", type=int, default=10, help="server connections at most (10)")
    parser.add_argument("--port", type=int, default=10101, help="without $JUPYTERHUB_SERVICE_URL (10101)")
    parser.add_argument(
        "--timezone", default="UTC", help="the class's time zone, e.g. Europe/Paris (default UTC)"
    )
    parser.add_argument(
        "--per-learner",
        type=int,
        default=None,
        help="a learner's calls run at once (a quarter of --connections)",
    )
    parser.add_argument(
        "--snapshots", type=int, default=None, help="snapshots holding a connection at once (a quarter of it)"
    )
    parser.add_argument(
        "--max-body", type=int, default=BODY_LIMIT // 1024**2, help="the largest request body, in MiB (8)"
    )
    args = parser.parse_args(argv)
    for name in ("connections", "per_learner", "max_body"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    if args.snapshots is not None and args.snapshots < 0:
        parser.error(f"--snapshots must be 0 or more, got {args.snapshots}")
    try:
        zone = ZoneInfo(args.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        parser.error(
            f"--timezone: {args.timezone!r} is not a time zone this system knows (e.g. Europe/Paris)"
        )
    where = urlsplit(os.environ.get("JUPYTERHUB_SERVICE_URL", f"http://127.0.0.1:{args.port}"))
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/")
    try:
        tokens = HubTokens()  # before any connection: without its scope the service does not start
    except NoScopeError as error:
        print(f"python -m scheduler.service: {error}", file=sys.stderr)
        return 2
    pool = ClassPool.open(args.db, min_size=min(2, args.connections), max_size=args.connections)
    service = ClassService(
        pool,
        tokens,
        tz=zone,
        per_learner=args.per_learner,
        snapshots=args.snapshots,
        body_limit=args.max_body * 1024**2,
    )

    async def serve() -> None:
        service.listen(where.port or 80, where.hostname or "127.0.0.1", prefix)
        print(f"class service on {where.geturl()} ({prefix}), {args.connections} connections", flush=True)
        await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    finally:
        service.close()
        pool.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
