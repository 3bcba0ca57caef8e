"""The paimon-cli core library: Paimon's on-disk formats and the operations over them.

Installed as ``paimon_cli.core``. Never imports typer or rich; heavy libraries (pyarrow,
fastavro, pyspark) are imported inside the functions that need them.
"""
