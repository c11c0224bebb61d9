"""`cache info` and `cache clear`: the result store (docs/cache.md)."""

from __future__ import annotations

import typer

from contexttrace.errors import ExitCode


def cache_info_command() -> None:
    """Print the result store's path, its entries (one per trace file with its subagents), its size on disk,
    the reader version its entries must have, and the commands' outputs kept to be replayed. Set
    CONTEXTTRACE_CACHE_DIR to keep it elsewhere."""
    from contexttrace.storage import replay
    from contexttrace.storage.store import ResultStore

    info = ResultStore.for_path().info()
    replays, replay_bytes = replay.info(str(ResultStore.for_path().path.parent / replay.DIR_NAME))
    typer.echo(f"path: {info.path}")
    if info.state:
        typer.echo(f"state: {info.state}")
    typer.echo(f"entries: {info.entries:,}")
    if info.other_versions:
        typer.echo(f"entries of another reader version: {info.other_versions:,} (deleted by the next run)")
    typer.echo(f"size: {info.bytes / 2**20:,.1f} MiB ({info.bytes:,} bytes)")
    typer.echo(f"reader version: {info.reader_version}")
    typer.echo(f"replayed outputs: {replays:,} ({replay_bytes / 2**20:,.1f} MiB)")


def cache_clear_command() -> None:
    """Delete the result store and the outputs kept to be replayed: the next run reads every trace file again
    (and keeps what it reads)."""
    from contexttrace.storage import replay
    from contexttrace.storage.store import ResultStore

    store = ResultStore.for_path()
    try:
        freed = store.clear() + replay.clear(str(store.path.parent / replay.DIR_NAME))
    except OSError as exc:  # not deleted: say why, exit 1
        typer.echo(f"Error: {store.path}: cannot delete ({exc.strerror or exc})", err=True)
        raise typer.Exit(ExitCode.TRACE_ERROR) from None
    typer.echo(f"cleared {store.path} ({freed / 2**20:,.1f} MiB)")
