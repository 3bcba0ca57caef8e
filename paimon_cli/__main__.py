"""``python -m paimon_cli`` and the ``paimon-cli`` console script."""

from __future__ import annotations


def main() -> None:
    from .app import run

    run()


if __name__ == "__main__":
    main()
