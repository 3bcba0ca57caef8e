"""Data files: Paimon types as Arrow schemas, data file encode/decode, user input files."""
