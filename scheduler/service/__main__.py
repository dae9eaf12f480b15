"""``python -m scheduler.service --db URL``: run the class service (as a JupyterHub-managed service, it
listens where ``$JUPYTERHUB_SERVICE_URL`` says and serves under ``$JUPYTERHUB_SERVICE_PREFIX``; else on
``--port``). ``--db`` is the service role's URL (``scheduler.postgres.add_service``), its password from
``PGPASSWORD`` or ``~/.pgpass``; ``--connections`` the most server connections it holds; ``--timezone`` the
class's time zone (an IANA name, UTC by default), in which FSRS counts the learners' days when it merges
answers sent late."""

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
from scheduler.service._server import ClassService


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scheduler.service", description=__doc__)
    parser.add_argument("--db", required=True, help="the service role's postgresql:// URL")
    parser.add_argument("--connections", type=int, default=10, help="server connections at most (10)")
    parser.add_argument("--port", type=int, default=10101, help="without $JUPYTERHUB_SERVICE_URL (10101)")
    parser.add_argument(
        "--timezone", default="UTC", help="the class's time zone, e.g. Europe/Paris (default UTC)"
    )
    args = parser.parse_args(argv)
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
    service = ClassService(pool, tokens, tz=zone)

    async def serve() -> None:
        service.application(prefix).listen(where.port or 80, address=where.hostname or "127.0.0.1")
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
