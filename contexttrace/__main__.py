"""`python -m contexttrace`: the same entry point as the `contexttrace` console script."""

from contexttrace.cli import console

if __name__ == "__main__":
    console()
