"""Repo-root shim: `python cli.py context trace run.jsonl --window 200000`."""

from contexttrace.cli.app import main

if __name__ == "__main__":
    main()
