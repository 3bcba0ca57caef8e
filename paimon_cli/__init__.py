"""paimon-cli: maintain and inspect Apache Paimon lake tables from the shell."""

__version__ = "0.1.0"
