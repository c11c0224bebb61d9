"""Repo-root shim: `python cli.py context trace run.jsonl --window 200000`."""

from contexttrace.cli import main

if __name__ == "__main__":
    main()
