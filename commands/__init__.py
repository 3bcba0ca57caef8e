"""One thin module per subcommand: parse arguments, call one core entry point, render."""
