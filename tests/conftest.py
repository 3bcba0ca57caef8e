"""Shared test set-up: fixture plugins for the moto S3 server and the pypaimon peer."""

pytest_plugins = ["tests.s3_fixtures", "tests.interop.pypaimon_fixtures"]
