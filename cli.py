"""Repo-root shim: `python cli.py context trace run.jsonl --window 200000`."""

from contexttrace.cli import console

if __name__ == "__main__":
    console()
